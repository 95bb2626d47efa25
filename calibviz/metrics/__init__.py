"""Calibration metrics: pure functions of (y_true, y_prob[, sample_weight]).

Binned metrics are computed from the per-bin sufficient statistics of
:func:`calibviz.reliability_table` (DESIGN.md §2); the rest are
estimators with their own definitions (scores, smooth ECE, goodness-of-fit
tests). Every function cites the paper and equation it implements.
"""
from .binned import *  # noqa: F401,F403
from .scores import *  # noqa: F401,F403
from .smooth import *  # noqa: F401,F403
from .goodness import *  # noqa: F401,F403
from .resampling import *  # noqa: F401,F403
from .variable import *  # noqa: F401,F403
from .multiclass import *  # noqa: F401,F403
from .consistency import *  # noqa: F401,F403
from .corp import *  # noqa: F401,F403
from .discrimination import *  # noqa: F401,F403
from .intervals import *  # noqa: F401,F403
from . import binned, scores, smooth, goodness, resampling, variable, multiclass, consistency, corp, discrimination
from . import intervals

__all__ = [
    *binned.__all__,
    *scores.__all__,
    *smooth.__all__,
    *goodness.__all__,
    *resampling.__all__,
    *variable.__all__,
    *multiclass.__all__,
    *consistency.__all__,
    *corp.__all__,
    *discrimination.__all__,
    *intervals.__all__,
]
