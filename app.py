"""calibviz dashboard, home page: choose or upload data, check the mapping, see the summary.

Run with ``streamlit run app.py`` (opens on the hospital-readmission demo).
"""
import streamlit as st

from calibviz.ui import page_setup
from calibviz.ui.session import session_opener
from calibviz.ui.home import data_summary, headline_metrics, load_messages, mapping_editor, next_steps, source_picker
from calibviz.ui.leaderboard import show_leaderboard
from calibviz.ui.source import in_memory_heading

page_setup("Data")
st.title("Can I trust these probabilities?")
st.caption("Calibration diagnostics for probabilistic classifiers: pick a demo or upload your predictions, "
           "then open the pages on the left.")
source_picker()
load_messages()
session_opener()
mapping_editor()
st.subheader(in_memory_heading("Data summary"))
data_summary()
st.subheader(in_memory_heading("Headline calibration"))
headline_metrics()
show_leaderboard()  # several models: all of them in one sortable table
st.subheader(in_memory_heading("Where to look next"))
next_steps()
