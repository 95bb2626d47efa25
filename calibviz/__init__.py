"""calibviz: can I trust these probabilities?

A plotting-agnostic library of calibration diagnostics (binning schemes,
reliability tables, metrics with uncertainty, test-based calibration error,
multiclass reductions, variable-based LOESS curves) and the Plotly figures and
Streamlit dashboard built on it. Data flow (DESIGN.md §2)::

    io -> reduce -> binning -> summary -> metrics -> figures -> pages / report / cli
"""
from .errors import InputError

__version__ = "0.1.0"

__all__ = ["InputError", "__version__"]
