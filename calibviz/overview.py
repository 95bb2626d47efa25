"""A plain summary of loaded predictions: what the home page and the CLI show first."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .io import Predictions
from .stats import MaxT, bernoulli_max_t

__all__ = ["data_overview", "class_table", "mean_gap", "mean_gap_test"]


def data_overview(preds: Predictions) -> dict:
    """Rows, classes, prevalence, accuracy and mean confidence of ``preds``.

    Weighted where the data has sample weights. Headline calibration metrics
    live in :mod:`calibviz.metrics`; this is the description of the data
    (whether its mean gap is beyond chance: :func:`mean_gap`).

    Examples
    --------
    >>> import calibviz as cv
    >>> o = data_overview(cv.load_demo("hospital_readmission"))
    >>> o["rows"], o["kind"], round(o["prevalence"], 3)
    (20000, 'binary', 0.166)
    """
    w = preds.weights
    conf = preds.probs.max(axis=1)
    out = {
        "name": preds.name,
        "source": preds.source,
        "rows": preds.n,
        "kind": "binary" if preds.is_binary else "multiclass",
        "classes": preds.n_classes,
        "weighted": w is not None,
        "accuracy": preds.accuracy(),
        "mean_confidence": float(np.average(conf, weights=w)),
        "features": len(preds.features.columns),
        "numeric_features": len(preds.numeric_features),
        "fingerprint": preds.fingerprint(),
    }
    if preds.is_binary:
        out["positive_class"] = preds.positive_label
        out["prevalence"] = float(np.average(preds.y == 1, weights=w))
        out["mean_prediction"] = float(np.average(preds.y_prob, weights=w))
    return out


def mean_gap(preds: Predictions) -> MaxT:
    """:func:`mean_gap_test` of the gap :func:`data_overview` describes: prevalence against mean prediction
    (binary), accuracy against mean confidence (multiclass)."""
    if preds.is_binary:
        return mean_gap_test(preds.y == 1, preds.y_prob, preds.weights)
    return mean_gap_test(preds.predicted == preds.y, preds.probs.max(axis=1), preds.weights)


def mean_gap_test(outcome, probability, sample_weight=None, *, random_state=0) -> MaxT:
    """Calibration in the large against a calibrated model: is the mean outcome beyond chance from the mean prediction?

    The statistic is ``sum w (o - q)``: outcomes minus predictions (binary: y = 1 against P(y = 1); multiclass:
    "the top class is right" against the confidence, which a calibrated model's top class is right with). Under a
    calibrated model each ``o`` is Bernoulli(q) and independent, so the sum has mean 0 and variance
    ``sum w^2 q (1 - q)``; the test is :func:`calibviz.stats.bernoulli_max_t` with one statistic (outcomes redrawn
    from the predictions on small or skewed data, exact; Gaussian otherwise), two-sided. The sentence claims a
    direction (over- or under-predicts on average), so where the residuals' own variance exceeds the calibrated
    model's by more than 3 of its standard errors z divides by that sandwich sd, as for the levels of a column
    (a model right on average whose errors cancel is not read as off on average). Without it the Data
    page read a gap as "over-predicts" on 88-95% of calibrated logs (the gap is never exactly 0).

    Parameters
    ----------
    outcome : array-like of bool or {0, 1}, shape (n,)
    probability : array-like of float, shape (n,)
        The probability of each outcome.
    sample_weight : array-like of shape (n,), optional
    random_state : int or numpy Generator, default 0

    Returns
    -------
    calibviz.stats.MaxT
        ``z[0]`` (positive: more outcomes than predicted, i.e. under-prediction), ``p_value``, ``method``.

    References
    ----------
    D. J. Spiegelhalter, "Probabilistic prediction in patient management and clinical trials", Statistics in
    Medicine 5, 1986 (the observed-minus-expected count and its variance under calibration); Westfall & Young
    (1993) for the engine.

    Examples
    --------
    >>> q = np.full(1000, 0.2)
    >>> o = np.r_[np.ones(260), np.zeros(740)]     # 260 events against 200 expected
    >>> t = mean_gap_test(o, q)    # sandwich variance 260 * 0.8^2 + 740 * 0.2^2 = 196 against 160 calibrated
    >>> round(float(t.z[0]), 2), bool(t.p_value < 0.001)    # 60 / sqrt(196)
    (4.29, True)
    >>> mean_gap_test(np.r_[np.ones(205), np.zeros(795)], q).p_value > 0.5   # 205 against 200: chance
    True
    """
    o = np.asarray(outcome, dtype=np.float64)
    q = np.asarray(probability, dtype=np.float64)
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    resid = o - q
    # np.sum of products, not np.dot: BLAS threads contend on shared cores (benchmarks/README.md, CORP)
    statistic = np.array([resid.sum() if w is None else np.sum(w * resid)])
    square = np.array([np.sum(resid * resid) if w is None else np.sum(w * w * resid * resid)])
    return bernoulli_max_t(np.ones((1, 1)), np.zeros(1, dtype=np.int64), q, w, statistic,
                           residual_square=square, random_state=random_state)


def class_table(preds: Predictions) -> pd.DataFrame:
    """Per class: share among true labels, share among predictions, mean predicted probability.

    Examples
    --------
    >>> import calibviz as cv
    >>> t = class_table(cv.load_demo("cifar10_resnet50"))
    >>> t.shape, float(t["true_share"].sum())
    ((10, 4), 1.0)
    """
    w = preds.weights
    total = preds.n if w is None else float(w.sum())
    true_share = np.bincount(preds.y, weights=w, minlength=preds.n_classes) / total
    pred_share = np.bincount(preds.predicted, weights=w, minlength=preds.n_classes) / total
    mean_prob = np.average(preds.probs, axis=0, weights=w)
    return pd.DataFrame({"class": [str(c) for c in preds.classes], "true_share": true_share,
                         "predicted_share": pred_share, "mean_probability": mean_prob})
