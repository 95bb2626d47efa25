"""Streamlit-aware helpers of the dashboard (the only library code that imports streamlit).

Pages call these: ``page_setup`` (config, data, shared sidebar), the data
state of :mod:`calibviz.ui.data`, and the widgets of :mod:`calibviz.ui.home`.
"""
import warnings

from .data import current_models, current_predictions, current_source, ensure_data
from .sidebar import PAGES, page_setup, render_sidebar

# Tables of the library carry their settings in DataFrame.attrs (a PanelConfig, for code that reads them);
# st.dataframe sends attrs to the browser as JSON, which they need not reach, and warned on every table.
warnings.filterwarnings("ignore", message="Could not serialize pd.DataFrame.attrs", category=UserWarning)

__all__ = ["page_setup", "render_sidebar", "PAGES", "ensure_data", "current_models", "current_predictions",
           "current_source"]
