"""calibviz: can I trust these probabilities?

A plotting-agnostic library of calibration diagnostics (binning schemes,
reliability tables, metrics with uncertainty, test-based calibration error,
multiclass reductions, variable-based LOESS curves) and the Plotly figures and
Streamlit dashboard built on it. Data flow (DESIGN.md §2)::

    io -> reduce -> binning -> summary -> metrics -> recalibration -> figures -> pages / report / cli
"""
from . import binning, metrics, recalibration, reduce
from .demo import demo_datasets, demo_info, demo_path, load_demo, load_demo_models
from .errors import InputError
from .io import Predictions, load_models, load_models_from_files, load_predictions, predictions_from_frame
from .scan import Scan, scan
from .smoothing import loess
from .summary import reliability_table

__version__ = "0.1.0"

__all__ = [
    "InputError", "Predictions", "load_predictions", "load_models", "load_models_from_files", "predictions_from_frame",
    "demo_datasets", "demo_info", "demo_path", "load_demo", "load_demo_models", "__version__",
    "binning", "metrics", "recalibration", "reduce", "reliability_table", "loess", "scan", "Scan",
]
