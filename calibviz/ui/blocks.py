"""Page building blocks: figures with downloads, tables with CSV export, the metric panel."""
from __future__ import annotations

import hashlib
import re

import numpy as np
import pandas as pd
import streamlit as st

from .. import __version__
from ..figures.export import SLIDE_HEIGHT, SLIDE_SCALE, SLIDE_WIDTH
from ..figures.theme import inert_links
from ..io.export import to_csv
from ..panel import (DEFAULT_MULTICLASS_METRICS, at_alpha, config_key, costly_reference, family_size,
                     format_adjusted_p, format_interval, format_p_value, format_value, interval_caption,
                     judged_together, metric_label,
                     metric_panel, redraws_needed, reference_range_words, two_sided)
from .columns import column_help
from .compute import cached, in_cache, progress_bar
from .settings import panel_config, settings

__all__ = ["BOOTSTRAP_ROW_BUDGET", "show_figure", "figure_about", "file_size", "download_table", "panel_table", "show_headlines", "show_metric_table", "slug",
           "not_applicable", "without_attrs", "show_dataframe", "TCE_PAGE_CAPTION", "reference_redraws",
           "joined_panels", "CORP_METRICS", "pages_family", "judged_family", "family_rows", "family_caption"]


def show_dataframe(data, **kwargs):
    """``st.dataframe`` with calibviz's defaults: no index, full width, and a missing value shown as "—" (Streamlit
    prints a grey "None", which reads as a bug in a review meeting: a reference row's difference, an interval a
    metric does not have). A table's ``attrs`` are left out (:func:`without_attrs`); its headers explain the
    library's column names on hover (:mod:`calibviz.ui.columns`)."""
    if getattr(data, "attrs", None):
        data = without_attrs(data)
    given = kwargs.pop("column_config", None) or {}
    config = {**column_help(getattr(data, "columns", ()), given), **given}
    rows = len(data) if hasattr(data, "__len__") else 0
    if "height" not in kwargs and 10 < rows <= SHOWN_WHOLE_ROWS:
        # Streamlit's table shows 10 rows: the CORP panel's 11th metric (log loss) hid behind a scroll bar (a
        # browser review); a short table is shown whole
        kwargs["height"] = table_height(rows)
    return st.dataframe(data, **{"hide_index": True, "width": "stretch", "placeholder": "—",
                                 "column_config": config or None, **kwargs})


#: Tables of up to this many rows are shown whole (longer ones scroll).
SHOWN_WHOLE_ROWS = 25
_ROW_PX, _HEADER_PX = 35, 38


def table_height(n_rows: int, max_rows: int = SHOWN_WHOLE_ROWS) -> int:
    """Pixels of a st.dataframe that shows ``n_rows`` rows without scrolling (up to ``max_rows``)."""
    return _HEADER_PX + _ROW_PX * max(1, min(n_rows, max_rows))


def slug(text: str) -> str:
    """A file-name-safe version of ``text``."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(text)).strip("_") or "calibviz"


def file_size(n_bytes: int) -> str:
    """'4.8 MB', '85 kB', '512 B' (decimal units, as browsers and file managers show them).

    Examples
    --------
    >>> file_size(4_812_345), file_size(85_400), file_size(512)
    ('4.8 MB', '85 kB', '512 B')
    """
    if n_bytes >= 1_000_000:
        return f"{n_bytes / 1e6:.1f} MB"
    if n_bytes >= 1_000:
        return f"{n_bytes / 1e3:.0f} kB"
    return f"{n_bytes} B"


def _figure_meta(fig) -> dict:
    meta = fig.layout.meta
    return dict(meta.get("calibviz", {})) if isinstance(meta, dict) else {}


def figure_about(fig, about: dict | None = None) -> dict:
    """What a figure shows, for its exported image: the data, the model, the settings the figure was drawn
    with (recorded by the figure builder from its tables, so they cannot disagree with it), then ``about``."""
    from .data import current_models, current_source
    from .source import active_scan

    scan = active_scan()
    if scan is not None:  # an opened file analysed on every page: its path and model
        out = {"data": scan.source, "model": scan.name} | _figure_meta(fig).get("about", {}) | (about or {})
        out["calibviz"] = __version__
        return out
    src = current_source()
    out = {"data": src.get("title") or src.get("name")}
    models = current_models()
    if len(models) > 1 and "models" not in _figure_meta(fig).get("about", {}):
        out["model"] = st.session_state.get("cv_model") or next(iter(models))
    out.update(_figure_meta(fig).get("about", {}))
    out.update(about or {})
    out["calibviz"] = __version__
    return out


def show_figure(fig, name: str, *, key: str | None = None, title: str | None = None,
                about: dict | None = None) -> None:
    """A Plotly figure in calibviz's own theme, with its downloads: HTML (self-contained), JSON (light), and
    PNG/SVG for slides that carry the title, data, model and settings.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
    name : str
        File name stem of the downloads.
    key : str, optional
        Widget key (unique on the page).
    title : str, optional
        What the figure is (the page's heading); default: the title the figure builder recorded.
    about : dict, optional
        More ``label: value`` pairs for the exported image (page-level choices).

    Images: with kaleido and a Chromium on the server, "PNG / SVG for slides"
    renders a 1600x900 layout (PNG at scale 2: 3200x1800) whose title and
    subtitle say what it is; the toolbar's camera is then removed, so every
    image calibviz gives out is labelled. Without a renderer, the toolbar's
    camera is the way to a PNG (1600x900, scale 2) and the figure carries the
    same description as a small caption line at its top.
    """
    from ..figures.export import describe, static_export_available, with_caption
    from .presentation import presenting, present_figure

    fig = inert_links(fig)  # a class, model or column name with <a href=...> stays text
    meta = _figure_meta(fig)
    title = title or meta.get("title") or (fig.layout.title.text if fig.layout.title else None) or name
    about = figure_about(fig, about)
    static = static_export_available()
    config = {"displaylogo": False,
              "toImageButtonOptions": {"format": "png", "filename": slug(name), "width": SLIDE_WIDTH,
                                       "height": SLIDE_HEIGHT, "scale": SLIDE_SCALE}}
    shown = fig
    if static:
        config["modeBarButtonsToRemove"] = ["toImage"]
    else:
        shown = with_caption(fig, describe(title, about))
    if presenting():
        shown = present_figure(shown)
    st.plotly_chart(shown, theme=None, config=config, key=key)
    _figure_downloads(fig, name, key or slug(name), title, about, static)


def _figure_downloads(fig, name: str, key: str, title: str, about: dict, static: bool) -> None:
    """One row of download buttons under a figure, each saying its file's size."""
    from ..figures.export import figure_html, figure_json, html_size

    spec = figure_json(fig)
    # one small popover under the figure: a row of three buttons would be cut in a half- or third-width column
    box = st.popover("Download", icon=":material/download:", help="The figure as HTML, JSON, PNG or SVG.")
    html_col, json_col, img_col = box.container(), box.container(), box.container()
    with html_col:
        # built only on click (the callable): the ~4.8 MB file is not made on every rerun; its size is known
        st.download_button(f"HTML · {file_size(html_size(spec))}", data=lambda: figure_html(fig),
                           file_name=f"{slug(name)}.html", mime="text/html", key=f"html_{key}", on_click="ignore",
                           icon=":material/download:",
                           help="Interactive figure in one self-contained file (plotly.js inside: opens offline).")
    with json_col:
        st.download_button(f"JSON · {file_size(len(spec.encode('utf-8')))}", data=spec,
                           file_name=f"{slug(name)}.json", mime="application/json", key=f"json_{key}", on_click="ignore",
                           icon=":material/data_object:",
                           help="The light version: the Plotly figure as JSON, without plotly.js. Reopen it with "
                                "plotly.io.read_json(path).show() or Plotly.newPlot(div, json) in any page that "
                                "loads plotly.js (the HTML report holds one copy for all its figures).")
    with img_col:
        if static:
            _slide_images(fig, name, key, title, about, hashlib.sha1(spec.encode("utf-8")).hexdigest())
        else:
            st.caption("PNG: the toolbar's camera (1600x900, 2x). PNG/SVG files need kaleido and Chromium on "
                       "the server.")


@st.fragment
def _slide_images(fig, name: str, key: str, title: str, about: dict, digest: str) -> None:
    """'PNG / SVG for slides': rendered on request (about 1 s; 5 s for the server's first), then two downloads
    with their sizes. A fragment: the click reruns this row only, not the page."""
    from ..figures.export import slide_png, slide_svg

    store = f"cv_slides_{key}"
    sig = (digest, title, tuple(about.items()))
    ready = st.session_state.get(store)
    if not ready or ready[0] != sig:
        if st.button("PNG / SVG for slides", key=f"slides_{key}", icon=":material/slideshow:",
                     help="Render the figure at 1600x900 (PNG at 2x: 3200x1800, and SVG) with its title, the data, "
                          "the model and the settings written on it."):
            with st.spinner("Rendering the images"):
                png = slide_png(fig, title=title, about=about)
                svg = slide_svg(fig, title=title, about=about)
            st.session_state[store] = ready = (sig, png, svg)
        else:
            return
    _, png, svg = ready
    png_col, svg_col = st.container(), st.container()
    with png_col:
        st.download_button(f"PNG · {file_size(len(png))}", data=png, file_name=f"{slug(name)}.png",
                           mime="image/png", key=f"png_{key}", on_click="ignore", icon=":material/image:",
                           help="3200x1800 pixels (1600x900 at 2x); title, data, model and settings on the image "
                                "and in its metadata.")
    with svg_col:
        st.download_button(f"SVG · {file_size(len(svg))}", data=svg, file_name=f"{slug(name)}.svg",
                           mime="image/svg+xml", key=f"svg_{key}", on_click="ignore", icon=":material/image:",
                           help="Vector image for slides and print, with the same title and settings.")


def download_table(df: pd.DataFrame, name: str, *, label: str = "Table as CSV", key: str | None = None) -> None:
    st.download_button(label, data=to_csv(df).encode("utf-8"), file_name=f"{slug(name)}.csv",
                       mime="text/csv", key=f"csv_{key or slug(name)}", icon=":material/download:",
                       help="The numbers behind the figure, one row per bin.")


def without_attrs(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` without its ``attrs``, for st.dataframe: Streamlit sends them as JSON, and a NaN among them (a
    ranking without intervals: ``overall_low``) is not valid JSON, so the browser could not draw the table; an
    object that is no JSON (a panel's config) makes Streamlit warn in the server log."""
    out = df.copy(deep=False)
    out.attrs = {}
    return out


def not_applicable(message: str) -> None:
    """Say plainly that a page does not apply to the loaded data."""
    st.info(message, icon=":material/info:")


def _format_value(row) -> str:
    return format_value(row["value"], row["unit"])


def _format_interval(row) -> str:
    """The bootstrap (or Wald) interval; '' when there is none."""
    return format_interval(row["low"], row["high"], row["unit"])


def _format_reference(row) -> str:
    """What a perfectly calibrated model with these predictions would show (central 1 - 2 alpha)."""
    return format_interval(row.get("null_low"), row.get("null_high"), row["unit"])


def _format_p(row) -> str:
    p = row.get("p_value")
    if p is None:
        return ""
    return format_p_value(p, int(row.get("n_redraws", 0) or 0))


def _format_p_adjusted(row) -> str:
    p = row.get("p_adjusted")
    if p is None:
        return ""
    return format_adjusted_p(p, row.get("p_value"), int(row.get("n_redraws", 0) or 0))


def _verdict_badge(row) -> str:
    """':red[evidence of miscalibration]' / ':green[no evidence of miscalibration]' for Markdown."""
    verdict = row.get("verdict") or ""
    if not verdict:
        return ""
    colour = "red" if verdict.startswith("evidence") else "green"
    return f":{colour}[{verdict}]"


#: The metrics of the Reliability page's CORP panel (MCB, DSC, UNC and AUC), shown beside its metric panel.
CORP_METRICS = ("mcb", "dsc", "unc", "auc")
#: Above this many resampled rows (n x resamples) the intervals wait for a click: the values show at once.
BOOTSTRAP_ROW_BUDGET = 5_000_000
#: Label redraws of the calibrated-model reference; above the row budget, the smaller number.
REFERENCE_RESAMPLES = 200
REFERENCE_RESAMPLES_LARGE = 50


def reference_redraws(n_cells: int, alpha: float, family: int = 1) -> int:
    """Label redraws of a page's calibrated-model references, for data of ``n_cells`` values (rows x classes):
    :data:`REFERENCE_RESAMPLES`, or :data:`REFERENCE_RESAMPLES_LARGE` above the row budget; raised to the
    ``1/alpha - 1`` that a verdict at ``alpha`` needs (999 at 0.001: R redraws give p >= 1/(R + 1)) while that
    stays within the budget, otherwise the readings say the level cannot be tested. ``family``: the tests shown
    together, whose verdicts are judged together (:func:`calibviz.panel.family_verdicts`: the first needs p <=
    alpha / family), so the redraws are raised to what that needs too, up to four times the base number (7 tests
    at 0.05: 139, where large data would give 50; otherwise the readings say how many it takes).

    >>> reference_redraws(2_000, 0.05), reference_redraws(2_000, 0.001), reference_redraws(20_000, 0.001)
    (200, 999, 200)
    >>> reference_redraws(10**6, 0.05), reference_redraws(10**6, 0.05, family=7), reference_redraws(0, 0.05, 16)
    (50, 139, 319)
    """
    base = REFERENCE_RESAMPLES if n_cells * REFERENCE_RESAMPLES <= BOOTSTRAP_ROW_BUDGET else REFERENCE_RESAMPLES_LARGE
    need = redraws_needed(alpha)
    single = need if need > base and n_cells * need <= BOOTSTRAP_ROW_BUDGET else base
    together = redraws_needed(alpha / max(int(family), 1))
    return together if single < together <= 4 * base else single


def metric_redraws(key: str, cfg, n_cells: int, family: int = 1) -> int:
    """Label redraws of ``key``'s calibrated-model reference on data of ``n_cells`` values: fewer on large data
    only where every redraw costs time per row (:func:`calibviz.panel.costly_reference`: TCE, class-wise
    metrics, PAVA bins), as many as on small data for the others (bin and bucket sums), as an opened file's pages
    give them, so both show the same verdict on the same file; enough for the ``family`` of tests shown together
    (:func:`reference_redraws`)."""
    return reference_redraws(n_cells if costly_reference(key, cfg) else 0, cfg.alpha, family)


def page_redraws(keys, n_cells: int, multiclass: bool = False) -> dict:
    """``{metric: redraws}`` of a page's panel of ``keys`` on data of ``n_cells`` values (rows x classes): the
    number every page gives the metric (:func:`metric_redraws` for the largest family, :func:`pages_family`), so
    that one metric shows one reference on every page (the Recalibrate page's "before" drew 100 against the
    Reliability page's 200)."""
    cfg = panel_config(settings())
    family = pages_family(keys, multiclass=multiclass)
    return {k: metric_redraws(k, cfg, n_cells, family) for k in dict.fromkeys(keys)}


def redraws_words(redraws: dict, labels, keys) -> str:
    """'200', or '200 (TCE: 50)': the redraws of :func:`page_redraws`, the most common number first."""
    names = dict(zip(keys, labels))
    counts = pd.Series(list(redraws.values())).value_counts()
    usual = int(counts.index[0])
    other = ", ".join(f"{names.get(k, k)}: {v}" for k, v in redraws.items() if v != usual)
    return f"{usual}" + (f" ({other})" if other else "")


def pages_family(keys, multiclass: bool = False) -> int:
    """The number of tests that sets the redraws of a panel of ``keys`` (:func:`metric_redraws`): the largest
    family any page shows, the sidebar's metrics with the CORP panel's and these (multiclass data: the Multiclass
    page's panel), so that every page, and the leaderboard, asks for one number of redraws and a metric's
    reference is computed once."""
    shown = DEFAULT_MULTICLASS_METRICS if multiclass else tuple(settings()["metrics"]) + CORP_METRICS
    return family_size(shown + tuple(keys))


def metric_cache_key(fingerprint: str, name: str, key: str, cfg, resamples: int, n_reference: int, seed) -> tuple:
    """The cache key of one metric's panel row (:func:`panel_table`, the leaderboard): per metric, on the settings
    it depends on, so that changing the bins does not recompute TCE and changing alpha recomputes only the metrics
    whose value depends on it (TCE); the others' ranges follow alpha (:func:`calibviz.panel.at_alpha`, applied by
    :func:`judged_at`)."""
    return ("metric", fingerprint, name, key, config_key(key, cfg, verdict=False), resamples, n_reference, seed)


def judged_at(tables, alpha: float, pending: int = 0) -> pd.DataFrame:
    """Metric rows cached one by one (:func:`metric_cache_key`), their ranges at ``alpha``, judged together
    (``pending``: tests of the family whose references wait, :func:`calibviz.panel.family_verdicts`)."""
    return judged_together(*[at_alpha(t, alpha) for t in tables], alpha=alpha, pending=pending)


def judged_family(keys, multiclass: bool = False) -> tuple:
    """The metrics whose tests the verdicts of a page's ``keys`` are judged with (Holm,
    :func:`calibviz.panel.judged_together`): the panel the pages show for the data (the sidebar's metrics;
    multiclass data: the Multiclass page's), then ``keys``. One family for every page, so that a metric reads one
    verdict wherever it is shown: TCE read "evidence of miscalibration (p = 0.05)" on the Test-based page, judged
    alone, and "no evidence (p = 0.05 on its own, p = 0.35 adjusted by Holm)" on the Reliability page (a
    walk-through); the Data page judged its three headline metrics among themselves.
    """
    shown = DEFAULT_MULTICLASS_METRICS if multiclass else (tuple(settings()["metrics"]) or ("ece",))
    return tuple(dict.fromkeys(tuple(shown) + tuple(keys)))


def family_rows(judged: pd.DataFrame, metrics) -> pd.DataFrame:
    """The rows of ``metrics`` (their ``metric`` values, in this order) of a family's judged table, with its
    attributes: a page shows its own metrics, judged with the family's (:func:`judged_family`)."""
    row_of = {m: i for i, m in enumerate(judged["metric"])}
    rows = judged.iloc[[row_of[m] for m in metrics]].reset_index(drop=True)
    rows.attrs = dict(judged.attrs)
    return rows


def family_caption(table: pd.DataFrame, multiclass: bool = False) -> str:
    """What a page that shows some of the family's metrics says of its verdicts ("" when it shows them all); the
    page whose panel is the family: the Reliability page's, multiclass data's the Multiclass page's (it named the
    Reliability page's for CIFAR-10, whose binary views judge 7 other tests, a walk-through)."""
    tests = int(pd.to_numeric(table.get("n_tests", pd.Series(dtype=float)), errors="coerce").max() or 0) \
        if len(table) else 0
    shown = int(np.isfinite(pd.to_numeric(table["p_value"], errors="coerce")).sum()) if len(table) else 0
    if tests <= max(shown, 1):
        return ""
    page = "Multiclass" if multiclass else "Reliability"
    return (f"Verdicts are judged together with the metric panel's other tests ({tests} tests in all, as on the "
            f"{page} page; Holm's adjustment), so that a metric reads the same verdict on every page"
            + ("; a test whose reference is not computed yet counts as one without evidence." if table.attrs.get(
                "pending") else "."))


def panel_table(y, p, w, name: str, fingerprint: str, *, metrics=None, references_on_request=False,
                intervals=True) -> pd.DataFrame:
    """The metric panel of (y, p, w) — a binary view, or labels and (n, K) probabilities — cached per data
    (``fingerprint`` and ``name``) and settings; the bootstrap shows its progress.

    On large data the bootstrap is not started automatically: the values are
    shown with a button that computes the intervals (and says how many
    resamples of how many rows it will draw).

    Each metric is cached on its own, keyed on the data (``fingerprint``,
    ``name``), the settings its value depends on (:func:`calibviz.panel.config_key`),
    the resamples and the seed, never on the page or on the other metrics
    asked for: intervals computed on one page (the Data page's three headline
    metrics) are taken from the cache on every other page (Reliability), and a
    metric whose intervals exist is shown with them even where the others
    still wait for the button.

    The verdicts of the metrics are judged together with the family of :func:`judged_family` (the sidebar's
    panel): the family's other metrics are computed too, with their references and without bootstrap intervals
    unless those are cached, and only ``metrics``' rows are returned. ``intervals`` False: the bootstrap of
    ``metrics`` is not started either (the Test-based page reads only TCE's verdict). The redraws are
    those the largest family of the pages needs (:func:`reference_redraws`): the sidebar's metrics with the CORP
    panel's (the Reliability page joins the two with :func:`joined_panels`) and these; one number for every
    page, so a metric's reference is computed once (multiclass data: the Multiclass page's panel).
    ``references_on_request``: on large data the references that cost time per row and redraw (TCE's PAVA-BC
    refits: ~14 s for 159 redraws of 10^6 rows) wait for a button, unless computed already (the Data page's
    headlines: the upload's first diagram stays within seconds; the Reliability page computes them).
    """
    s = settings()
    keys = tuple(metrics or s["metrics"]) or ("ece",)
    cfg = panel_config(s)
    n_boot, seed = int(s["boot"]), int(s["seed"])
    n = len(y)
    base = ("panel", fingerprint, name, keys, cfg, seed)
    consent = "cv_boot_ok_" + hashlib.sha1(repr(base).encode()).hexdigest()[:16]
    wanted = n_boot and (n * n_boot <= BOOTSTRAP_ROW_BUDGET or st.session_state.get(consent))
    n_run = n_boot if wanted else 0
    # The calibrated-model reference is what makes a value readable: it is always computed, with fewer
    # label redraws on large data for the metrics whose redraws cost time per row (the p-value's resolution is
    # 1 / (redraws + 1)); the others get as many as on small data, as an opened file's pages give them.
    cells = n * (np.shape(p)[1] if np.ndim(p) == 2 else 1)  # class-wise metrics redo every class
    family = judged_family(keys, multiclass=np.ndim(p) == 2)

    per_metric = page_redraws(family, cells, multiclass=np.ndim(p) == 2)  # the Data page's headlines: Reliability's

    def redraws(key):
        return per_metric[key]

    def cache_key(key, resamples, n_ref=None):
        return metric_cache_key(fingerprint, name, key, cfg, resamples, redraws(key) if n_ref is None else n_ref,
                                seed)

    ref_consent = "cv_ref_ok_" + hashlib.sha1(repr(("reference",) + base).encode()).hexdigest()[:16]

    def waits(key):  # a reference that costs time per row, on large data, on a page that computes it on request
        return (references_on_request and costly_reference(key, cfg) and cells * redraws(key) > BOOTSTRAP_ROW_BUDGET
                and not st.session_state.get(ref_consent) and not st.session_state.get(consent)  # asked for intervals
                and not any(in_cache(cache_key(key, r)) for r in {0, n_boot}))

    def one(key):
        n_ref = 0 if waits(key) else redraws(key)
        bootstrapped = intervals and key in keys  # the family's other metrics: for their p-values only
        resamples = n_boot if n_boot and in_cache(cache_key(key, n_boot, n_ref)) else (n_run if bootstrapped else 0)

        def compute():
            with progress_bar(f"Bootstrapping {key}" if resamples else f"Calibrated-model reference of {key}") \
                    as progress:
                return metric_panel(y, p, metrics=(key,), config=cfg, sample_weight=w, n_resamples=resamples,
                                    random_state=seed, progress=progress, n_reference=n_ref)

        return cached(cache_key(key, resamples, n_ref), compute), resamples

    waiting = [k for k in family if waits(k)]
    computed = {k: one(k) for k in family}
    # a reference that waits for its button keeps its place in the family (as p = 1): the family has one size on
    # every page, and the verdicts shown before it comes can only gain evidence when it does (a walk-through met
    # "3 tests" on the Data page before the Multiclass page had computed class-wise ECE's reference, "4" after)
    judged = judged_at([computed[k][0] for k in family], cfg.alpha, pending=len(waiting))
    table = family_rows(judged, keys)
    table.attrs["pending"] = len(waiting)
    parts = [computed[k] for k in keys]
    missing = sum(1 for _, r in parts if not r) if intervals else 0
    table.attrs.update(config=cfg,  # a cached table of a metric without a test may come from another alpha
                       n_resamples=(n_boot if n_boot and missing < len(keys) else n_run) if intervals else 0,
                       random_state=seed, confidence=0.95,
                       n_reference=max(redraws(k) for k in keys), intervals_wait=bool(n_boot and not wanted and missing))
    if n_boot and not wanted and missing:
        which = "" if missing == len(keys) else f" of the other {missing} metric{'s' if missing > 1 else ''}"
        if st.button(f"Compute 95% intervals{which} ({n_boot} bootstrap resamples of {n:,} rows)",
                     key=f"boot_{slug(name)}", icon=":material/calculate:",
                     help="On large data the bootstrap takes a while; the values above are exact."):
            st.session_state[consent] = True
            st.rerun()
    if waiting:
        if st.button(f"Compare {', '.join(metric_label(k) for k in waiting)} with a calibrated model "
                     f"({max(redraws(k) for k in waiting)} label redraws of {n:,} rows; the Reliability page "
                     "computes it too)", key=f"ref_{slug(name)}", icon=":material/calculate:",
                     help="Each redraw refits the bins on all rows, which takes a while on data this large; the "
                          "values above are exact without it."):
            st.session_state[ref_consent] = True
            st.rerun()
    return table


def joined_panels(*tables: pd.DataFrame) -> pd.DataFrame:
    """Panel tables of :func:`panel_table` one below the other, their verdicts judged together
    (:func:`calibviz.panel.judged_together`), with the attributes their caption reads (pandas keeps a
    concatenation's attrs only when all of them agree: the caption then said the intervals were turned off beside
    a table that showed them)."""
    seen, parts = set(), []
    for t in tables:  # a metric in both (MCB chosen in the sidebar and in the CORP panel) is shown, and judged, once
        parts.append(t[~t["metric"].isin(seen)])
        seen |= set(t["metric"])
    out = judged_together(*parts, alpha=tables[0].attrs["config"].alpha)
    out.attrs["n_resamples"] = max(int(t.attrs.get("n_resamples") or 0) for t in tables)
    out.attrs["intervals_wait"] = any(t.attrs.get("intervals_wait") for t in tables)
    return out


def _readings(table: pd.DataFrame) -> pd.Series:
    """The readings, an undefined metric's reason in the controls' words (``attrs["ui_readings"]``, from
    :func:`calibviz.panel.panel_frame`: the Data page read "PAVABC needs n_min <= n_max", a walk-through)."""
    ui = table.attrs.get("ui_readings") or {}
    return pd.Series([ui.get(m, r) for m, r in zip(table["metric"], table["reading"])], index=table.index)


def band_reading(table: pd.DataFrame) -> str:
    """What the reliability diagram's green band says, in a sentence: a bin outside it beside a metric table of
    "no evidence" read as mixed signals, the band's own result said nowhere (a walk-through). The band is its
    own test at α (all bins together), apart from the table's family."""
    out = int(((table["obs_rate"] < table["band_low"]) | (table["obs_rate"] > table["band_high"])).sum())
    if not out:
        every = f"All {len(table)} bins lie" if len(table) > 1 else "The bin lies"
        return f"{every} inside the green band: no evidence of miscalibration by the band's test."
    return (f"{out} of {len(table)} bins lie outside the green band: evidence of miscalibration at level α by the "
            "band's own test (all bins together), apart from the metric table, whose tests are judged together.")


def show_headlines(table: pd.DataFrame, n: int | None = 3) -> None:
    """The first ``n`` metrics (all with None) as sentences for stakeholders; each reading ends with its verdict
    against a calibrated model."""
    readings = _readings(table)
    seen: set = set()
    for i, row in (table if n is None else table.head(n)).iterrows():
        note = _unseen_sentences(row.get("note") or "", seen)
        st.markdown(f"**{row['label']} = {_format_value(row)}.** {readings[i]}" + (f" *{note}*" if note else ""))


def _unseen_sentences(text: str, seen: set) -> str:
    """``text`` without the sentences in ``seen`` (which it then joins): a note said once in a column of readings
    (ECE's and ACE's "No evidence of miscalibration, yet the interval lies above 0: ..." twice in a row, up to three
    times in one paragraph, a walk-through).

    >>> seen = set(); _unseen_sentences("A b. Same note.", seen), _unseen_sentences("Same note. C d.", seen)
    ('A b. Same note.', 'C d.')
    """
    parts = [p for p in re.split(r"(?<=[.!?])\s+(?=[A-Z])", text.strip()) if p]
    kept = [p for p in parts if p not in seen]
    seen.update(parts)
    return " ".join(kept)


def label_width(labels) -> int:
    """Pixels of a table column that holds ``labels`` whole: about 7 px per character of the longest (the
    table's 14 px font) and the cell's padding, at most 175 px ("MCB (CORP miscalibration)").

    >>> label_width(["ECE", "Confidence ECE"]), label_width(["MCB (CORP miscalibration)"]), label_width([])
    (122, 175, 80)
    """
    longest = max((len(str(x)) for x in labels), default=0)
    return int(min(175, max(80, 24 + 7 * longest)))


def show_metric_table(table: pd.DataFrame, name: str, caption: str | None = None) -> None:
    """All metrics with intervals, the calibrated-model reference and readings, CSV download and definitions.

    ``caption``: how the intervals were made, instead of :func:`calibviz.panel.interval_caption` (an opened
    file's panel, :mod:`calibviz.ui.scan_pages`)."""
    shown = pd.DataFrame({  # the verdict beside the value: last but one, it was off-screen at 1024 px (a walk-through)
        "Metric": table["label"],
        "Value": table.apply(_format_value, axis=1),
        "Verdict": table["verdict"],
        # the p-values beside the verdict they decide: after the two ranges, "p adj." was cut at the table's right
        # edge at 1280 px and both were off-screen at 1024 px (a browser check)
        "p-value": table.apply(_format_p, axis=1),
        "p adj.": table.apply(_format_p_adjusted, axis=1),  # "p adjusted" was cut at 1280 px (a walk-through)
        "Calibrated model would show": table.apply(_format_reference, axis=1),
        "95% interval": table.apply(_format_interval, axis=1),
        "What it means": (_readings(table) + table["note"].map(lambda t: f" {t}" if t else "")),
    })
    show_dataframe(shown,
                 column_config={"What it means": st.column_config.TextColumn(width="large"),
                                # auto width cut "Hosmer-Lemeshow" (a walk-through); "medium" (200 px) took a
                                # third of a 1280 px page's column for "ECE": 175 px holds "MCB (CORP
                                # miscalibration)", pinned while the table scrolls sideways (browser reviews)
                                # as wide as the longest label needs: 175 px for "Confidence ECE" cut the
                                # Multiclass page's interval column at 1280 px (a walk-through)
                                "Metric": st.column_config.TextColumn(width=label_width(shown["Metric"]),
                                                                      pinned=True),
                                "Calibrated model would show": st.column_config.TextColumn(
                                    help="What a perfectly calibrated model with these predictions would show "
                                         "when the labels are redrawn from them (y* ~ Bernoulli(p)): "
                                         + reference_range_words(panel_config(settings()).alpha,
                                                                 two_sided(table["metric"]))
                                         + ". It depends on n "
                                         "and the bins."),
                                "p adj.": st.column_config.TextColumn(
                                    help="The p-value adjusted for the tests judged together (Holm's method), "
                                         "which decides the verdict: a calibrated model gets any 'evidence' at "
                                         "most α of the time, where single tests at α each flagged one metric of "
                                         "18% of calibrated models with the default 7 tests.")})
    st.caption(caption or interval_caption(table))
    # a one-sided interval's open end (MCE: low = -inf) is written empty, as the command line's CSV and JSON write
    # it: "-inf" opened in a spreadsheet as a formula error
    download_table(table.drop(columns=["description"]).replace([np.inf, -np.inf], np.nan), f"metrics_{name}",
                   label="Metrics as CSV",
                   key=f"metrics_{slug(name)}")
    with st.expander("What each value means"):
        # the table cuts its "What it means" column after a few words (Streamlit's table does not wrap one column)
        show_headlines(table, None)
    with st.expander("Metric definitions"):
        for label, description in zip(table["label"], table["description"]):
            st.markdown(f"- **{label}**: {description}")


def tce_reference(view, fingerprint: str, scheme, alpha: float):
    """The calibrated-model reference of the Test-based page's TCE (its bins and alpha), cached.

    :func:`calibviz.metrics.consistency_test`: labels redrawn from the predictions, bins refitted, TCE
    recomputed; the redraws and seed of TCE in the metric panel (:func:`page_redraws`), so that with the same
    bins and α the page shows the Reliability page's range and p-value (it drew 50 redraws against their 159 on
    50,000 rows: two ranges for one TCE, a walk-through).
    """
    from ..metrics import consistency_test, reference_level

    s = settings()
    seed = int(s["seed"])
    n_ref = page_redraws(("tce",), len(view.y))["tce"]

    def compute():
        return consistency_test(view.y, view.p, metric="tce", n_resamples=n_ref, random_state=seed,
                                sample_weight=view.w, binning=scheme, alpha=alpha, level=reference_level(alpha))

    return cached(("tce_reference", fingerprint, view.name, repr(scheme), float(alpha), n_ref, seed), compute,
                  label="Computing what a calibrated model's TCE would be")


#: The Test-based page's caption (in memory and on an opened file).
TCE_PAGE_CAPTION = ("Each prediction is tested against the observed rate of its bin with an exact binomial test; TCE "
                    "is the percentage of predictions the test rejects (Matsubara et al. 2023). Bins default to "
                    "PAVA-BC, which the paper recommends; this page keeps its own binning in the sidebar, apart from "
                    "the other pages'.")


def tce_headline(tce: float, alpha: float, reference=None, *, n_rows: int | None = None) -> str:
    """The Test-based page's headline: TCE, then what a perfectly calibrated model with these predictions
    would show and the verdict (issue #11: a large TCE alone reads as "broken" even for a calibrated model).

    ``reference``: TCE's row of the metric panel (the page's bins are the panel's PAVA-BC), whose reading ends
    with the verdict judged with the panel's other tests, word for word the Reliability page's; or, for other
    bins, a consistency test of this TCE (``null_low``, ``null_high``, ``p_value``), judged on its own and said
    so; None where there is none (an opened file's other bins), and the headline then says how to read TCE
    without it.
    """
    from ..panel import BINARY_METRICS, _reference_sentence, split_reading

    # "rejected", not "deviate significantly": each prediction's test is at alpha, so a calibrated model's are
    # rejected too; the reference right after says how many
    head = (f"**{format_value(tce, 'percent')} of predictions are rejected by the binomial test against their bin's "
            f"observed rate** (exact, two-sided, α = {alpha:g}).")
    if isinstance(reference, pd.Series):  # the panel's row: its verdict, judged with the panel's tests
        return head + split_reading(reference["reading"])[1]
    if reference is not None and np.isfinite(reference.p_value):
        return (head + _reference_sentence(BINARY_METRICS["tce"], reference.null_low, reference.null_high,
                                           reference.p_value, alpha, reference.n_resamples - reference.n_failed)
                + " This TCE's bins are not the metric panel's (PAVA-BC), so its test is judged on its own.")
    rows = f" of {n_rows:,} rows" if n_rows else ""
    return (head + f" There is no calibrated-model reference for this TCE{rows} on these bins (an opened file has one "
            "for PAVA-BC bins without weights): TCE grows with the number of rows even for a perfectly calibrated "
            "model (bins of many rows reject predictions that are only slightly off their bin's rate), so read it "
            "beside ECE's reference on the Reliability page, which says whether there is evidence of miscalibration.")


def tce_tiles(tce: float, table, weighted: bool) -> int:
    """The TCE, rejected-rows and bins tiles of a Test-based page (in memory or an opened file); returns the rows.

    The rejected count is of rows: with sample weights TCE is the weighted share, and the tile's help says so
    (a reader dividing the two would otherwise find another number)."""
    from ..panel import format_value

    n_rej, n_all = int(table["rejected"].sum()), int(table["n"].sum())
    m1, m2, m3 = st.columns([1, 1.7, 0.6])  # the count is the long value ("293 of 4,0..." cut at 1024 px)
    m1.metric("TCE", format_value(tce, "percent"),
              help="Percentage of predictions rejected by the binomial test at level α"
                   + (", each weighted by its sample weight." if weighted else "."))
    m2.metric("Rejected rows" if weighted else "Rejected predictions", rejected_of(n_rej, n_all),
              help=f"{n_rej:,} of {n_all:,} rows; with sample weights TCE is the weighted share, so the two differ."
              if weighted else f"{n_rej:,} of {n_all:,} predictions rejected by the test.")
    m3.metric("Bins", len(table), help="Non-empty bins of the chosen scheme.")
    return n_all


def rejected_of(n_rejected: int, n_all: int) -> str:
    """'866 of 2,000' in a metric tile; from a million rows on, each count in compact form with three significant
    digits so that the tile does not cut the number ('31.5k of 1.30M': '0.03M of 1.30M' was too coarse to read, a
    walk-through), with more digits where fewer would make a part read as all or none ('1.00M of 1.00M' read for
    999,600).

    >>> rejected_of(866, 2000), rejected_of(31_512, 1_300_000), rejected_of(870_000, 1_000_000)
    ('866 of 2,000', '31.5k of 1.30M', '870k of 1.00M')
    >>> rejected_of(999_600, 1_000_000), rejected_of(40, 1_000_000), rejected_of(0, 2_500_000_000)
    ('999.6k of 1.000M', '40 of 1.00M', '0 of 2.50B')
    """
    if n_all < 1_000_000:
        return f"{n_rejected:,} of {n_all:,}"
    for digits in range(3, 10):
        part, whole = _compact(n_rejected, digits), _compact(n_all, digits)
        if (part != whole) == (n_rejected != n_all):
            break
    return f"{part} of {whole}"


def _compact(n: int, digits: int) -> str:
    """A count with ``digits`` significant digits and a unit (k, M, B); below 1,000 exact.

    >>> _compact(999, 3), _compact(1_234, 3), _compact(999_960, 3), _compact(12_345_678, 4)
    ('999', '1.23k', '1.00M', '12.35M')
    """
    if n < 1000:
        return f"{n:,}"
    units = (("k", 1e3), ("M", 1e6), ("B", 1e9))
    at = max(i for i, (_, scale) in enumerate(units) if n >= scale)
    text = ""
    for unit, scale in units[at:]:  # 999,960 rounds to '1000k': the next unit says it ('1.00M')
        value = n / scale
        text = f"{value:.{max(digits - len(str(int(value))), 0)}f}" + unit
        if float(text[:-1]) < 1000:
            break
    return text


def zoom_bin_picker(table: pd.DataFrame):
    """The Multiclass page's "Bin" picker over a top-label table (in-memory and opened-file pages); by default
    the bin that adds most to the top-label ECE (its deviation times its share of the rows: the largest
    deviation alone was often a bin of 3 rows, whose deviation is noise)."""
    bins = table["bin"].tolist()
    labels = {b: f"bin {b}: confidence {lo:.2f}-{hi:.2f} ({n:,} rows)" for b, lo, hi, n in
              zip(table["bin"], table["lower"], table["upper"], table["n"])}
    heaviest = int(table.loc[(table["deviation"] * table["frac"]).idxmax(), "bin"])
    return st.selectbox("Bin", bins, index=bins.index(heaviest), format_func=labels.get, key="w_zoom_bin",
                        help="Which confidence bin to open; by default the one that adds most to the top-label "
                             "ECE (its deviation times its share of the rows).")
