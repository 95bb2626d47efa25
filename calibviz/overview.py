"""A plain summary of loaded predictions: what the home page and the CLI show first."""
from __future__ import annotations

import numpy as np
import pandas as pd

from .io import Predictions

__all__ = ["data_overview", "class_table"]


def data_overview(preds: Predictions) -> dict:
    """Rows, classes, prevalence, accuracy and mean confidence of ``preds``.

    Weighted where the data has sample weights. Headline calibration metrics
    live in :mod:`calibviz.metrics`; this is the description of the data.

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
