"""Plotly figures built from calibviz's tables and curves (DESIGN.md §2, §3).

Every builder returns a :class:`plotly.graph_objects.Figure`. Called with
predictions, a builder takes the matching metric's positional arguments
(``reliability_diagram(y_true, y_prob)``, ``top_label_diagram(y_true,
y_prob_matrix)``, ``variable_curves(x, y_true, y_prob)``, ...); called with a
precomputed table or curve (``table=``, ``curves=``, ``ranking=``) it draws
exactly that. Figures compute no statistics of their own: the numbers come
from :mod:`calibviz.summary`, :mod:`calibviz.distributions`,
:mod:`calibviz.sensitivity`, :mod:`calibviz.variables`,
:mod:`calibviz.multiclass` and :mod:`calibviz.metrics` (CORP, ROC). One theme (:mod:`calibviz.figures.theme`).
"""
from ._base import outcome_labels
from .corp import CORP_BAND_READING, corp_diagram, mcb_dsc_plot, murphy_diagram, roc_curves
from .recalibration import recalibration_maps
from .multiclass import bin_zoom, classwise_grid, top_label_diagram, top_label_small_multiples
from .reliability import BAND_READING, reliability_diagram
from .sensitivity import binning_sensitivity
from .testbased import (TCE_BARS_READING, TCE_BARS_READING_NO_RANGE, VIOLIN_READING, binning_comparison, tce_diagram,
                        violin_per_bin)
from .theme import apply_theme
from .variable import level_reliability, variable_curves, vece_ranking

__all__ = [
    "reliability_diagram",
    "BAND_READING",
    "TCE_BARS_READING",
    "TCE_BARS_READING_NO_RANGE",
    "VIOLIN_READING",
    "CORP_BAND_READING",
    "tce_diagram",
    "violin_per_bin",
    "binning_comparison",
    "top_label_diagram",
    "top_label_small_multiples",
    "classwise_grid",
    "bin_zoom",
    "variable_curves",
    "vece_ranking",
    "level_reliability",
    "binning_sensitivity",
    "corp_diagram",
    "mcb_dsc_plot",
    "roc_curves",
    "murphy_diagram",
    "recalibration_maps",
    "apply_theme",
    "outcome_labels",
]
