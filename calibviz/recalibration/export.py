"""What a recalibration hands over: the predictions file with new columns, the JSON map, a snippet applying it."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError
from ..io import Predictions
from .crossfit import CrossFit

__all__ = ["recalibrated_frame", "recalibrated_predictions", "new_columns", "python_snippet"]


def new_columns(method: str, classes, *, is_binary: bool, model: str | None = None) -> dict:
    """Names of the columns a recalibration adds: ``{"p": ..., "fold": ..., ["p0", "p1"]}``.

    Binary: ``<method>__p`` (the ``<model>__p`` column-group convention, so a
    file of its own re-reads it as a model); multiclass: ``<method>:p_<class>``
    per class. With several models in wide format the model name leads:
    ``<model>_<method>__p``.

    Examples
    --------
    >>> new_columns("isotonic", (0, 1), is_binary=True)["p"]
    'isotonic__p'
    >>> new_columns("temperature", ("cat", "dog", "eel"), is_binary=False)["p"]
    ['temperature:p_cat', 'temperature:p_dog', 'temperature:p_eel']
    """
    stem = f"{model}_{method}" if model else method
    out = {"fold": f"{stem}__fold"}
    if is_binary:
        out["p"] = f"{stem}__p"
        out["p0"], out["p1"] = f"{stem}__p0", f"{stem}__p1"
    else:
        out["p"] = [f"{stem}:p_{c}" for c in classes]
        # Venn-Abers: the interval of the predicted class's probability (top-label, confidence) ...
        out["p0"], out["p1"] = f"{stem}__p0", f"{stem}__p1"
        # ... or of each class's one-vs-rest probability (class-wise)
        out["p0_class"] = [f"{stem}:p0_{c}" for c in classes]
        out["p1_class"] = [f"{stem}:p1_{c}" for c in classes]
    return out


def recalibrated_frame(frame: pd.DataFrame, preds: Predictions, result: CrossFit, *, model_column: str | None = None,
                       model: str | None = None, prefix_model: bool = False) -> pd.DataFrame:
    """The input table with the out-of-fold recalibrated predictions appended (same rows, same columns first).

    Parameters
    ----------
    frame : pandas.DataFrame
        The table the predictions were loaded from.
    preds : Predictions
        The model that was recalibrated.
    result : CrossFit
        Its :func:`calibviz.recalibration.cross_fit` result.
    model_column : str, optional
        Long format: the model column; only the rows of ``model`` are kept.
    model : str, optional
        The model's name (long format: its value in ``model_column``).
    prefix_model : bool, default False
        Lead the new column names with the model name (wide format with several models).

    Returns
    -------
    pandas.DataFrame
        ``frame``'s rows of the model with the new columns of :func:`new_columns`:
        the recalibrated probability (binary) or one column per class, the
        fold whose map predicted the row (-1: a calibration row of a user
        split, whose probability is empty) and, for Venn-Abers on binary
        data, the interval (p0, p1).

    Examples
    --------
    >>> import calibviz as cv
    >>> from calibviz.recalibration import cross_fit
    >>> p = cv.load_demo("hospital_readmission")
    >>> frame = pd.read_csv(cv.demo_path("hospital_readmission"))
    >>> out = recalibrated_frame(frame, p, cross_fit("platt", p.y, p.y_prob))
    >>> list(out.columns[-2:]), len(out) == len(frame)
    (['platt__fold', 'platt__p'], True)
    """
    rows = frame
    if model_column is not None and model is not None and model_column in frame.columns:
        rows = frame[frame[model_column].astype(str) == str(model)]
    if len(rows) != preds.n:
        raise InputError(f"the file has {len(rows):,} rows for model {preds.name!r} but {preds.n:,} predictions were "
                         "loaded (rows were left out when loading); export from a file without such rows.")
    out = rows.reset_index(drop=True).copy()
    names = new_columns(result.method, preds.classes, is_binary=preds.is_binary,
                        model=preds.name if prefix_model else None)
    out[names["fold"]] = result.fold
    if preds.is_binary:
        q = result.y_prob if result.y_prob.ndim == 1 else result.y_prob[:, 1]
        out[names["p"]] = q
        if getattr(result, "interval", None) is not None:
            out[names["p0"]], out[names["p1"]] = result.interval
    else:
        for j, col in enumerate(names["p"]):
            out[col] = result.y_prob[:, j]
        interval = getattr(result, "interval", None)
        if interval is not None and interval[0].ndim == 1:
            out[names["p0"]], out[names["p1"]] = interval
        elif interval is not None:
            for j in range(interval[0].shape[1]):
                out[names["p0_class"][j]], out[names["p1_class"][j]] = interval[0][:, j], interval[1][:, j]
    return out


def recalibrated_predictions(preds: Predictions, result: CrossFit, *, name: str | None = None) -> Predictions:
    """The out-of-fold recalibrated predictions as a new :class:`Predictions` (a model for the Compare page).

    Only the rows that were evaluated (all rows when cross-fitting; the test
    rows of a user split) are kept, so the new model and the original can be
    compared on the same rows (subset the original with ``result.evaluated``).

    Examples
    --------
    >>> import calibviz as cv
    >>> from calibviz.recalibration import cross_fit
    >>> p = cv.load_demo("hospital_readmission")
    >>> q = recalibrated_predictions(p, cross_fit("isotonic", p.y, p.y_prob))
    >>> q.name, q.n == p.n, q.classes == p.classes
    ('isotonic', True, True)
    """
    rows = np.flatnonzero(result.evaluated)
    probs = result.y_prob[rows]
    if preds.is_binary:
        probs = np.column_stack([1.0 - probs, probs])
    return Predictions(y=preds.y[rows], probs=probs, classes=preds.classes,
                       weights=None if preds.weights is None else preds.weights[rows],
                       features=preds.features.iloc[rows].reset_index(drop=True), name=name or result.method,
                       source=preds.source, notes=(f"recalibrated with {result.method}, {result.scheme}",))


def python_snippet(map_file: str, *, is_binary: bool, data_file: str = "new_predictions.csv") -> str:
    """A few lines of Python that load the exported map and apply it with calibviz.

    Examples
    --------
    >>> print(python_snippet("platt_map.json", is_binary=True).splitlines()[0])
    import json
    """
    what = ("preds.y_prob                      # P(positive), shape (n,)" if is_binary else
            "preds.probs                       # class probabilities, shape (n, K)")
    return (
        "import json\n\nimport calibviz as cv\nfrom calibviz.recalibration import from_dict\n\n"
        f"with open({map_file!r}) as f:\n    recalibrate = from_dict(json.load(f))   # the fitted map, no pickle\n\n"
        f"preds = cv.load_predictions({data_file!r})   # same columns as the file the map was fitted on\n"
        f"y_prob = {what}\n"
        "recalibrated = recalibrate.predict(y_prob)\n"
        "print(recalibrate.describe())\n"
    )
