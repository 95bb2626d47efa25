"""Shared plumbing of the figure builders: inputs, formatting, bins reused across tables."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..binning import Bins, Scheme
from ..errors import InputError
from ..io import Predictions
from ..scan import Scan
from ..validation import check_binary


@dataclass(frozen=True, eq=False)
class FittedBins(Scheme):
    """A scheme that returns bins fitted earlier (the figure fits once, tables and densities reuse them).

    Fitting PAVA-BC on 10^6 rows costs about a second; the test-based diagram
    needs the bins for both the reliability table and the violins.
    """

    bins: Bins

    def _fit(self, p, y, w) -> Bins:
        if p.shape[0] != self.bins.index.shape[0]:
            raise InputError("internal: prefitted bins do not match the predictions.")
        return self.bins


@dataclass
class BinaryInput:
    """One binary model: validated arrays (or None when only a table is given)."""

    name: str
    y: np.ndarray | None = None
    p: np.ndarray | None = None
    w: np.ndarray | None = None
    table: pd.DataFrame | None = None
    scan: Scan | None = None  # a lazy source (cv.scan): tables come from its bucket sums, no rows in memory

    def reliability_table(self, **options) -> pd.DataFrame:
        """The given table, the scan's table, or the table of the arrays (options of reliability_table)."""
        if self.table is not None:
            return self.table
        if self.scan is not None:
            options.pop("sample_weight", None)
            return self.scan.reliability_table(**options)
        from ..summary import reliability_table

        return reliability_table(self.y, self.p, sample_weight=self.w, **options)


def _from_value(name: str, value) -> BinaryInput:
    if isinstance(value, pd.DataFrame):
        return BinaryInput(name, table=value)
    if isinstance(value, Scan):
        return BinaryInput(name, scan=value)
    if isinstance(value, Predictions):
        y, p, w = check_binary(value.y_true, value.y_prob, value.weights)
        return BinaryInput(name, y, p, w)
    if isinstance(value, (tuple, list)) and len(value) in (2, 3):
        y, p, w = check_binary(*value) if len(value) == 3 else check_binary(*value, None)
        return BinaryInput(name, y, p, w)
    raise InputError(f"model {name!r}: expected (y_true, y_prob), (y_true, y_prob, sample_weight), "
                     f"a binary cv.Predictions or a reliability table, got {type(value).__name__}.")


def binary_inputs(y_true, y_prob, sample_weight, table, *, default_name: str = "model") -> list[BinaryInput]:
    """Normalise the ways a figure can be called into a list of models.

    Accepted: ``(y_true, y_prob[, sample_weight])``; ``y_true`` a dict
    ``{name: (y_true, y_prob[, w]) | Predictions | Scan | table}``; ``y_true``
    a :class:`calibviz.scan.Scan` (binned figures draw from its tables);
    ``table=`` a DataFrame or a dict of DataFrames.
    """
    if table is not None:
        if y_true is not None or y_prob is not None:
            raise InputError("pass either predictions (y_true, y_prob) or table=..., not both.")
        items = table.items() if isinstance(table, dict) else [(default_name, table)]
        out = [BinaryInput(str(k), table=v) for k, v in items]
        for m in out:
            if not isinstance(m.table, pd.DataFrame):
                raise InputError(f"table for {m.name!r} must be a DataFrame from calibviz.summary.reliability_table.")
        return out
    if isinstance(y_true, dict):
        if y_prob is not None:
            raise InputError("with a dict of models, do not pass y_prob separately.")
        if not y_true:
            raise InputError("the dict of models is empty; pass at least one model.")
        return [_from_value(str(k), v) for k, v in y_true.items()]
    if isinstance(y_true, (Predictions, Scan)) and y_prob is None:
        return [_from_value(y_true.name or default_name, y_true)]
    if y_true is None or y_prob is None:
        raise InputError("pass y_true and y_prob (or a dict of models, or table=...).")
    y, p, w = check_binary(y_true, y_prob, sample_weight)
    return [BinaryInput(default_name, y, p, w)]


def require_columns(table: pd.DataFrame, columns, what: str) -> None:
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise InputError(f"{what} lacks the columns {missing}; build it with the matching calibviz function "
                         f"(got columns {list(table.columns)}).")


def level_label(alpha: float) -> str:
    """'95%' for alpha = 0.05.

    Examples
    --------
    >>> level_label(0.05), level_label(0.1), level_label(0.001)
    ('95%', '90%', '99.9%')
    """
    return f"{100 * (1 - float(alpha)):.10g}%"


def bin_label(lower, upper, last) -> np.ndarray:
    """'[0.40, 0.50)' per bin; the last bin is closed: '[0.90, 1.00]'.

    Precision adapts to the narrowest bin so that neighbouring labels differ.
    """
    lower, upper = np.asarray(lower, float), np.asarray(upper, float)
    width = np.min(upper - lower) if lower.size else 1.0
    digits = 2 if width >= 0.01 else 3 if width >= 0.001 else 4
    close = np.where(np.asarray(last, bool), "]", ")")
    return np.array([f"[{a:.{digits}f}, {b:.{digits}f}{c}" for a, b, c in zip(lower, upper, close)], dtype=object)


def count_text(x) -> list[str]:
    """Integers with thousands separators; non-integers (weights) with 1 decimal."""
    x = np.asarray(x, float)
    return [f"{v:,.0f}" if float(v).is_integer() else f"{v:,.1f}" for v in x]


def segments(x0, x1, y0, y1) -> tuple[np.ndarray, np.ndarray]:
    """Coordinates of many line segments as one trace (None-separated)."""
    n = len(x0)
    xs = np.empty(3 * n, dtype=object)
    ys = np.empty(3 * n, dtype=object)
    xs[0::3], xs[1::3], xs[2::3] = x0, x1, None
    ys[0::3], ys[1::3], ys[2::3] = y0, y1, None
    return xs, ys


def rectangles(x0, x1, y0, y1) -> tuple[np.ndarray, np.ndarray]:
    """Closed polygons of many rectangles as one filled trace (None-separated)."""
    n = len(x0)
    xs = np.empty(6 * n, dtype=object)
    ys = np.empty(6 * n, dtype=object)
    for k, (a, b) in enumerate([(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)]):
        xs[k::6], ys[k::6] = a, b
    xs[5::6] = ys[5::6] = None
    return xs, ys


def histogram_outline(h: pd.DataFrame, color: str, name: str, group: str, *, horizontal: bool = False):
    """A histogram (:func:`calibviz.summary.histogram`'s ``lower``, ``upper``, ``count``) as a step outline in one
    model's colour that toggles with the model's curve (``legendgroup=group``, no legend entry of its own): the
    overlay of several models, where filled bars hide each other. ``horizontal``: counts along x (a side panel)."""
    import plotly.graph_objects as go

    edges = np.append(h["lower"].to_numpy(dtype=np.float64), float(h["upper"].iloc[-1]))
    counts = h["count"].to_numpy(dtype=np.float64)
    counts = np.append(counts, counts[-1])
    hover = [f"predictions in [{a:.3f}, {b:.3f}): {v}" for a, b, v in
             zip(h["lower"], h["upper"], count_text(h["count"]))] + [""]
    x, y = (counts, edges) if horizontal else (edges, counts)
    return go.Scatter(x=round_list(x), y=round_list(y), mode="lines", line_shape="vh" if horizontal else "hv",
                      line=dict(color=color, width=1.5), name=name, legendgroup=group, showlegend=False,
                      hovertext=hover, hovertemplate="%{hovertext}<extra>" + group + "</extra>")


def round_list(a, digits: int = 6) -> list:
    """Rounded floats for the JSON (keeps 10^6-row figures small; NaN -> None)."""
    a = np.round(np.asarray(a, dtype=float), digits)
    return [None if not np.isfinite(v) else float(v) for v in a]


def round_list_obj(values) -> list:
    """Rounded floats of a None-separated coordinate array (the output of :func:`segments`/:func:`rectangles`)."""
    return [None if v is None else round(float(v), 6) for v in values]


def outcome_labels(kind: str = "binary", name: str | None = None) -> tuple[str, str]:
    """What the outcomes 0 and 1 of a binary view mean, for legends.

    Parameters
    ----------
    kind : str
        A :data:`calibviz.reduce.VIEW_KINDS` value (``BinaryView.kind``).
    name : str, optional
        The view's name (``BinaryView.name``): a class-wise view "cat vs rest" is about "cat".

    Examples
    --------
    >>> outcome_labels("confidence"), outcome_labels("binary"), outcome_labels("classwise", "cat vs rest")
    (('wrong', 'correct'), ('y = 0', 'y = 1'), ('not cat', 'cat'))
    """
    if kind in ("confidence", "top_label", "top_k_confidence", "top_k_label"):
        return ("wrong", "correct")
    if kind == "classwise" and name and name.endswith(" vs rest"):
        positive = name[: -len(" vs rest")]
        return (f"not {positive}", positive)
    return ("y = 0", "y = 1")


#: Binning schemes in words, for a figure's exported description.
SCHEME_TEXT = {"uniform": "uniform", "equal_mass": "equal mass", "pava": "PAVA", "pavabc": "PAVA-BC",
               "median_variance": "median-variance", "custom": "custom edges"}


def table_about(table: pd.DataFrame, *, interval: bool = True, alpha: bool = False) -> dict:
    """The settings a reliability table was made with, in words (binning and bins, interval, alpha).

    Examples
    --------
    >>> t = pd.DataFrame({"n": [5, 5]}); t.attrs.update(scheme="equal_mass(2)", alpha=0.05, interval="wilson")
    >>> table_about(t, alpha=True)
    {'binning': 'equal mass, 2 bins', 'interval': 'Wilson 95%', 'α': 0.05}
    >>> t.attrs.update(scheme="uniform(3)"); table_about(t)["binning"]  # a table has a row per non-empty bin
    'uniform, 3 bins (1 empty)'
    """
    a = table.attrs
    out = {}
    if a.get("scheme"):
        # Bins.scheme reads "uniform(10)", "pavabc(50,200)", "pava": the name, and PAVA-BC's size bounds
        name, _, args = str(a["scheme"]).partition("(")
        text = SCHEME_TEXT.get(name, name)
        if name == "pavabc" and "," in args:
            low, high = (int(v) for v in args.rstrip(")").split(",")[:2])
            text += f" (bins of {low:,}-{high:,} rows)"
        asked = args.rstrip(")")
        empty = int(asked) - len(table) if name in ("uniform", "equal_mass") and asked.isdigit() else 0
        out["binning"] = (f"{text}, {int(asked)} bins ({empty} empty)" if empty > 0 else f"{text}, {len(table)} bins")
    if interval and a.get("interval"):
        name = {"wilson": "Wilson", "beta": "Clopper-Pearson", "jeffreys": "Jeffreys"}.get(a["interval"], a["interval"])
        out["interval"] = f"{name} {level_label(a.get('alpha', 0.05))}"
    if alpha and "alpha" in a:
        out["α"] = float(a["alpha"])
    return out


def record_about(fig, title: str, about: dict | None = None):
    """Write what the figure is (its default title, even when drawn without one) and the settings it was drawn
    with into ``layout.meta``: :func:`calibviz.ui.blocks.show_figure` writes them on exported images."""
    fig.update_layout(meta={"calibviz": {"title": title, "about": {k: v for k, v in (about or {}).items()
                                                                   if v not in (None, "")}}})
    return fig
