"""Loading and validation: source (path | bytes | upload | demo) -> :class:`Predictions`."""
from .limits import ReadLimits
from .loading import (MIN_ROWS, SUM_TOLERANCE, load_models, load_models_from_files, load_predictions, models_to_frame,
                      predictions_from_frame)
from .mapping import ColumnMapping, detect_mapping
from .predictions import Predictions
from .readers import DEFAULT_MAX_BYTES, RawTable, read_table

__all__ = ["load_predictions", "load_models", "load_models_from_files", "models_to_frame", "predictions_from_frame", "Predictions", "ColumnMapping",
           "detect_mapping", "read_table", "RawTable", "ReadLimits", "DEFAULT_MAX_BYTES", "MIN_ROWS", "SUM_TOLERANCE"]
