"""Large data: a prediction log opened by path and aggregated where it lives (cv.scan), never loaded whole."""
import streamlit as st

from calibviz.errors import InputError
from calibviz.figures import tce_diagram
from calibviz.scan.refine import EXACT_BLOCK_ROWS
from calibviz.ui import page_setup
from calibviz.ui.blocks import download_table, show_dataframe, show_figure
from calibviz.ui.scan import current_scan, scan_work, source_form
from calibviz.ui.scan_pages import (banded_caption, banded_diagram, reliability_headlines, tce_bins_caption,
                                    tce_page_table)
from calibviz.ui.settings import panel_config, settings
from calibviz.ui.source import active_scan, checked_model, scan_active, use_controls
from calibviz.ui.text import md

page_setup("Large data", controls=("binning",))
st.title("Large data")
st.caption("Prediction logs too large to upload: the server reads them in place, one pass of sums per score "
           "bucket (DuckDB, Polars or Spark), and every binned number below equals what the in-memory pages "
           f"would show, except TCE on continuous scores in a view of more than {EXACT_BLOCK_ROWS:,} rows (its "
           "PAVA-BC bins are then formed from score buckets; its reading says so). The sidebar's binning applies "
           "(uniform, equal-mass, custom or PAVA-BC bins).")
source_form()
scan = current_scan()
with scan_work():  # one run of the session on the file at a time (ui.scan.scan_lock)
    if scan is not None:
        s = settings()
        cfg = panel_config(s)
        if scan_active():  # the sidebar's model picker chooses, as on every page (one picker, not two)
            scan = active_scan()
        elif len(scan.models) > 1:
            if st.session_state.get("cv_scan_pick_error"):  # models before it in the log whose rows fail
                st.warning(md(st.session_state["cv_scan_pick_error"]), icon=":material/warning:")
            names = list(scan.models)  # the model opened first: the first whose rows pass
            scan = checked_model(scan, st.selectbox("Model", names, index=names.index(scan.name), key="w_scan_model"))
            if isinstance(scan, InputError):  # opening checks the first model; another one's bad rows show here
                st.error(md(f"This model cannot be analysed: {scan.ui_message}"), icon=":material/error:")
                st.stop()
        rate = "prevalence" if scan.is_binary else "accuracy (the predicted class is right)"
        st.markdown(f"**{md(scan.source)}** · model {md(scan.name)} · {scan.n:,} rows · {rate} "
                    f"{100 * scan.prevalence:.1f}% · engine {scan.engine}")
        for note in scan.notes:  # as the Data page shows the in-memory loader's notes
            st.info(f"Note: {md(note)}.", icon=":material/info:")
        use_controls()  # make it the data of every binned page, or go back to the data in memory
        try:
            table = scan.reliability_table(cfg.scheme(), cfg.alpha)
            left, right = st.columns([3, 2], gap="medium")
            with left:
                show_figure(banded_diagram(scan.name, table, cfg, s), "reliability_diagram", key="scan_rd")
                st.caption(banded_caption(table, s))
            with right:
                # sentences, not a table: a table as narrow as this column cut every reading after a few words
                panel = reliability_headlines(scan)
            # the title short, the TCE in the caption: with the binning in the title it ran under Plotly's toolbar at
            # 1024 px (a walk-through)
            tce_table = tce_page_table(scan, s)  # the Test-based page's bins: the panel's TCE, not a second one
            show_figure(tce_diagram(table=tce_table, title="Test-based reliability diagram"), "tce_diagram",
                        key="scan_tce")
            st.caption(tce_bins_caption(scan, tce_table, panel, s))
            st.subheader("Per-bin table")
            show_dataframe(table)
            download_table(table, "reliability_table", key="scan_table")
        except InputError as err:
            st.error(md(err.ui_message), icon=":material/error:")
