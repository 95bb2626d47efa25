"""The shared sidebar every page renders: navigation, the loaded data, the model picker."""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from .data import current_models, current_source, ensure_data

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
    ("pages/6_Report.py", "Report", ":material/description:"),
]


def page_setup(title: str) -> None:
    """First call of every page: page config, data, sidebar."""
    st.set_page_config(page_title=f"calibviz · {title}", page_icon=":material/insights:", layout="wide")
    ensure_data()
    render_sidebar()


def render_sidebar() -> None:
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
        st.caption(f"**Data:** {src.get('title') or src['name']}  \n{first.n:,} rows · {kind}")
        if len(models) > 1:
            st.selectbox("Model", list(models), key="cv_model",
                         help="Which model's predictions the pages analyse; the Compare page shows all.")
