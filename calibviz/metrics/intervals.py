"""Which bootstrap interval each metric gets (PRELIMINARY: replaced by the coverage study's choice)."""
from __future__ import annotations

from ..errors import InputError

__all__ = ["INTERVAL_METHODS_BY_METRIC", "interval_method", "metric_bounds", "interval_options"]

INTERVAL_METHODS_BY_METRIC: dict[str, str] = {
    "ece": "bias_corrected", "ace": "bias_corrected", "mce": "bias_corrected", "rmsce": "bias_corrected",
    "debiased_ece": "basic", "tce": "percentile", "smooth_ece": "bias_corrected", "ici": "bias_corrected",
    "brier": "percentile", "brier_reliability": "bias_corrected", "log_loss": "percentile",
    "confidence_ece": "bias_corrected", "top_label_ece": "bias_corrected", "top_label_mce": "bias_corrected",
    "classwise_ece": "bias_corrected", "classwise_tce": "percentile",
    # CORP terms: MCB and DSC are biased upward (a PAV fit follows the noise), as binned errors are
    "mcb": "bias_corrected", "dsc": "bias_corrected", "unc": "percentile", "accuracy": "percentile",
    "auc": "percentile",
}

_BOUNDS = {"tce": (0.0, 100.0), "classwise_tce": (0.0, 100.0), "log_loss": (0.0, None), "debiased_ece": (0.0, 1.0)}


def _check(key: str) -> None:
    if key not in INTERVAL_METHODS_BY_METRIC:
        raise InputError(f"no interval method is recorded for metric {key!r}; "
                         f"known: {', '.join(INTERVAL_METHODS_BY_METRIC)}.")


def interval_method(key: str) -> str:
    _check(key)
    return INTERVAL_METHODS_BY_METRIC[key]


def metric_bounds(key: str) -> tuple:
    _check(key)
    return _BOUNDS.get(key, (0.0, 1.0))


def interval_options(key: str) -> dict:
    return {"method": interval_method(key), "bounds": metric_bounds(key)}
