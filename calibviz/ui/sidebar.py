"""The shared sidebar every page renders: navigation, the loaded data, the model picker, the controls."""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from .data import current_models, current_source, ensure_data, load_demo_into_state
from .settings import binning_controls, init_from_url, metric_controls, sync_url, uncertainty_controls
from .text import md

_FAVICON = Path(__file__).parent / "assets" / "favicon.png"
#: ``data=upload:<digest>`` in a link: the data came from an upload, identified by its content digest.
_UPLOAD_PREFIX = "upload:"

__all__ = ["PAGES", "render_sidebar", "page_setup"]

_ROOT = Path(__file__).resolve().parents[2]

#: (script path relative to the app root, label, icon). Pages whose file is
#: absent (an installed library without the app) are skipped.
PAGES = [
    ("app.py", "Data", ":material/database:"),
    ("pages/1_Reliability.py", "Reliability", ":material/show_chart:"),
    ("pages/2_Test_based.py", "Test-based (TCE)", ":material/rule:"),
    ("pages/3_Multiclass.py", "Multiclass", ":material/category:"),
    ("pages/4_Variables.py", "Variables", ":material/tune:"),
    ("pages/5_Compare.py", "Compare", ":material/compare_arrows:"),
    ("pages/7_Recalibrate.py", "Recalibrate", ":material/auto_fix_high:"),
    ("pages/6_Report.py", "Report", ":material/description:"),
    ("pages/8_Large_data.py", "Large data", ":material/storage:"),
]


def page_setup(title: str, controls: tuple = ()) -> None:
    """First call of every page: page config, URL settings, data, sidebar with the page's controls.

    ``controls`` picks the sidebar groups: "binning", "tce_binning", "uncertainty", "metrics".
    """
    # the favicon is served by the app itself: a Material icon would be fetched from a font CDN
    st.set_page_config(page_title=f"calibviz · {title}", page_icon=str(_FAVICON), layout="wide")
    # Less empty space above the title: figures must fit a 1366x768 projector.
    st.markdown("<style>[data-testid=\"stMainBlockContainer\"]{padding-top:2.2rem;padding-bottom:2rem}</style>",
                unsafe_allow_html=True)
    ignored = init_from_url()
    first_run = "cv_models" not in st.session_state
    data = st.query_params.get("data")
    uploaded = bool(data) and data.startswith(_UPLOAD_PREFIX)
    if first_run and data and not uploaded:
        if not load_demo_into_state(data):
            ignored.append(f"data={data}")
    ensure_data()
    # a fresh session holds the demo (or the file `calibviz app FILE` serves): is it the linked upload?
    lost_upload = first_run and uploaded and current_source().get("digest") != data[len(_UPLOAD_PREFIX):]
    if lost_upload:
        # uploads live in the session that made them (a server-side store is issue #14): say so, never silently
        st.warning(f"This link points to an uploaded file ({md(data)}) that this server no longer holds: it was "
                   "restarted, or the link comes from another browser session. The demo data is shown instead; "
                   "upload the file again to see it.", icon=":material/cloud_off:")
    if ignored:
        st.warning(f"Ignored link settings that are not valid: {md(', '.join(ignored))}.", icon=":material/link_off:")
    render_sidebar(controls)
    from .presentation import screen_layout; screen_layout()  # noqa: E702 compact header, presentation mode
    src = current_source()
    sync_url({"data": src.get("demo") or (_UPLOAD_PREFIX + src["digest"] if src.get("digest") else None)})


def render_sidebar(controls: tuple = ()) -> None:
    with st.sidebar:
        st.markdown("### calibviz")
        for path, label, icon in PAGES:
            if (_ROOT / path).exists():
                st.page_link(path, label=label, icon=icon)
        st.divider()
        models = current_models()
        src = current_source()
        first = next(iter(models.values()))
        kind = "binary" if first.is_binary else f"{first.n_classes} classes"
        st.caption(f"**Data:** {md(src.get('title') or src['name'])}  \n{first.n:,} rows · {kind}")
        if len(models) > 1:
            # Widget state does not survive page switches: keep the pick in "cv_model" (see ui.data).
            if st.session_state.get("cv_model") not in models:
                st.session_state["cv_model"] = next(iter(models))
            st.session_state["w_model"] = st.session_state["cv_model"]
            st.selectbox("Model", list(models), key="w_model",
                         on_change=lambda: st.session_state.update(cv_model=st.session_state["w_model"]),
                         help="Which model's predictions the pages analyse; the Compare page shows all.")
        if controls:
            st.divider()
        if "binning" in controls:
            binning_controls(first.n)
        if "tce_binning" in controls:
            binning_controls(first.n, setting="tce_scheme")
        if "uncertainty" in controls:
            uncertainty_controls()
        if "metrics" in controls:
            metric_controls()
