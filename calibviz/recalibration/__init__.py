"""Recalibration: maps fitted on held-out predictions, honestly evaluated, exported as JSON (DESIGN.md §2).

After a review finds miscalibration, the next question is "can we fix it, and
by how much?". Every recalibrator here has one interface::

    m = get_recalibrator("isotonic").fit(y_prob, y_true, sample_weight=None)
    m.predict(y_prob)            # (n,) binary or (n, K) multiclass
    d = m.to_dict()              # plain JSON: parameters, knots
    from_dict(d).predict(...)    # the same map, anywhere calibviz is installed

and :func:`cross_fit` gives out-of-fold recalibrated predictions, so the
"after" is never evaluated on the rows its map was fitted on;
:func:`recalibration_table` puts before, after and the difference side by
side with intervals and the calibrated-model reference.

Methods (``get_recalibrator(name, **options)``): ``platt``, ``isotonic``,
``beta``, ``temperature``, ``histogram_binning``, ``venn_abers``. Binary
methods handle multiclass inputs through the M2B reductions
(``multiclass="top_label" | "confidence" | "classwise"``).
"""
from __future__ import annotations

from ..errors import InputError
from ._base import FORMAT_VERSION, MULTICLASS_MODES, Recalibrator
from .nonparametric import HistogramBinning, Isotonic
from .parametric import Beta, Platt, Temperature
from .venn_abers import VennAbers

#: The recalibrators by name, in the order the dashboard lists them.
RECALIBRATORS: dict[str, type[Recalibrator]] = {
    cls.name: cls for cls in (Platt, Isotonic, Beta, Temperature, HistogramBinning, VennAbers)
}


def get_recalibrator(name, **options) -> Recalibrator:
    """An unfitted recalibrator by name.

    Parameters
    ----------
    name : str or Recalibrator
        One of :data:`RECALIBRATORS` (``"platt"``, ``"isotonic"``, ``"beta"``,
        ``"temperature"``, ``"histogram_binning"``, ``"venn_abers"``); a
        recalibrator instance is returned as an unfitted copy.
    **options
        The method's options, e.g. ``targets="platt"``, ``scaling="vector"``,
        ``points_per_bin=50``, ``multiclass="classwise"``.

    Returns
    -------
    Recalibrator

    Examples
    --------
    >>> m = get_recalibrator("histogram_binning", n_bins=10)
    >>> m.name, m.options["n_bins"], m.is_fitted
    ('histogram_binning', 10, False)
    """
    if isinstance(name, Recalibrator):
        if options:
            return type(name)(**{**name.get_options(), **options})
        return name.clone()
    key = str(name).strip().lower().replace("-", "_").replace(" ", "_")
    aliases = {"sigmoid": "platt", "histogram": "histogram_binning", "hb": "histogram_binning",
               "venn": "venn_abers", "vennabers": "venn_abers", "ts": "temperature"}
    key = aliases.get(key, key)
    if key not in RECALIBRATORS:
        raise InputError(f"unknown recalibration method {name!r}; choose one of {', '.join(RECALIBRATORS)}.")
    try:
        return RECALIBRATORS[key](**options)
    except TypeError as exc:
        raise InputError(f"{key}: {exc}; see help(calibviz.recalibration.{RECALIBRATORS[key].__name__}).") from None


def from_dict(data, *, model=None, level=None) -> Recalibrator:
    """A fitted recalibrator from :meth:`Recalibrator.to_dict` output (or its JSON text).

    Parameters
    ----------
    data : dict or str
        The exported map (``json.load`` of the downloaded file, or the text).
    model : str, optional
        For a file of several models' maps (``calibviz recalibrate --map`` on a
        file with several models): whose map.
    level : str, optional
        For maps fitted per level of a column (``cross_fit_by``, the page's
        "one map per level"): which level's map.

    Returns
    -------
    Recalibrator
        Fitted; ``predict`` gives the same numbers as the map that was exported.

    Examples
    --------
    >>> m = get_recalibrator("isotonic").fit([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1])
    >>> from_dict(m.to_json()).predict([0.25]).tolist()
    [0.5]
    """
    import json

    if isinstance(data, (str, bytes)):
        try:
            data = json.loads(data)
        except ValueError as exc:
            raise InputError(f"the map is not valid JSON ({exc}).") from None
    if isinstance(data, dict) and data.get("format") in ("calibviz.recalibration.models", "calibviz.recalibration.by"):
        key, pick, what = (("models", model, "model") if data["format"].endswith("models")
                           else ("levels", level, "level"))
        maps = data.get(key) or {}
        if pick is None or str(pick) not in maps:
            raise InputError(f"this file holds one map per {what} ({', '.join(map(str, maps))}); pass "
                             f"{what}=<one of them>.")
        return from_dict(maps[str(pick)])
    if not isinstance(data, dict) or data.get("format") != "calibviz.recalibration":
        raise InputError("not a calibviz recalibration map: expected a JSON object with "
                         "\"format\": \"calibviz.recalibration\" (written by Recalibrator.to_dict).")
    if data.get("version") != FORMAT_VERSION:
        raise InputError(f"map format version {data.get('version')!r} is not supported (this calibviz reads "
                         f"version {FORMAT_VERSION}).")
    try:
        m = get_recalibrator(data["method"], **data.get("options", {}))
        m.kind_ = data["kind"]
        m.n_classes_ = int(data["n_classes"])
        m.state_ = data["state"]
        if m.kind_ not in ("binary", "multiclass"):
            raise KeyError("kind")
    except (KeyError, TypeError) as exc:
        raise InputError(f"the recalibration map is incomplete ({exc}); export it again.") from None
    return m


from .crossfit import (CrossFit, GroupedCrossFit, cross_fit, cross_fit_by, loss_gained, map_curves,  # noqa: E402
                       recalibration_table)
from .export import python_snippet, recalibrated_frame, recalibrated_predictions  # noqa: E402

__all__ = ["Recalibrator", "RECALIBRATORS", "MULTICLASS_MODES", "get_recalibrator", "from_dict", "cross_fit",
           "cross_fit_by", "CrossFit", "GroupedCrossFit", "recalibration_table", "loss_gained", "map_curves",
           "recalibrated_frame", "recalibrated_predictions", "python_snippet", "Platt", "Isotonic", "Beta",
           "Temperature", "HistogramBinning", "VennAbers"]
