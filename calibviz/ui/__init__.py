"""Streamlit-aware helpers of the dashboard (the only library code that imports streamlit).

Pages call these: ``page_setup`` (config, data, shared sidebar), the data
state of :mod:`calibviz.ui.data`, and the widgets of :mod:`calibviz.ui.home`.
"""
from .data import current_models, current_predictions, current_source, ensure_data
from .sidebar import PAGES, page_setup, render_sidebar

__all__ = ["page_setup", "render_sidebar", "PAGES", "ensure_data", "current_models", "current_predictions",
           "current_source"]
