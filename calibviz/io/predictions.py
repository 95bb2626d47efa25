"""The validated predictions of one model: the object every analysis starts from."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..validation import check_multiclass

__all__ = ["Predictions"]


@dataclass(frozen=True, eq=False)
class Predictions:
    """Validated predictions of one classifier on labelled data.

    Attributes
    ----------
    y : ndarray of int64, shape (n,)
        True class as an index 0..K-1 into ``classes``.
    probs : ndarray of float64, shape (n, K)
        Predicted probability vectors; rows sum to 1. Binary data has K = 2
        and ``probs[:, 1]`` = P(y = ``classes[1]``), the positive class.
    classes : tuple
        Class labels as they appear in the source, in index order.
    weights : ndarray of float64, shape (n,), or None
        Sample weights.
    features : pandas.DataFrame
        Other columns (numeric or categorical), row-aligned with ``y``.
    name : str
        Model name.
    source : str
        Where the data came from (file name or demo name).
    notes : tuple of str
        Decisions taken while loading (shown to the user).

    Examples
    --------
    >>> import numpy as np
    >>> p = Predictions(y=np.array([0, 1]), probs=np.array([[0.8, 0.2], [0.3, 0.7]]), classes=(0, 1))
    >>> p.n, p.n_classes, p.is_binary, p.y_prob.tolist()
    (2, 2, True, [0.2, 0.7])
    """

    y: np.ndarray
    probs: np.ndarray
    classes: tuple
    weights: np.ndarray | None = None
    features: pd.DataFrame = field(default_factory=pd.DataFrame)
    name: str = "model"
    source: str = ""
    notes: tuple = ()

    def __post_init__(self):
        y, probs, w = check_multiclass(self.y, self.probs, self.weights, atol=1e-3, drop_zero_weight=False)
        if len(self.classes) != probs.shape[1]:
            from ..errors import InputError

            raise InputError(f"{len(self.classes)} class names for {probs.shape[1]} probability columns.")
        for arr in (y, probs, w):
            if arr is not None:
                arr.setflags(write=False)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "probs", probs)
        object.__setattr__(self, "weights", w)
        object.__setattr__(self, "classes", tuple(self.classes))
        feats = self.features if self.features is not None else pd.DataFrame()
        if len(feats.columns) and len(feats) != len(y):
            from ..errors import InputError

            raise InputError(f"features have {len(feats)} rows but there are {len(y)} predictions.")
        object.__setattr__(self, "features", feats.reset_index(drop=True))

    @property
    def n(self) -> int:
        """Number of predictions."""
        return int(self.y.shape[0])

    @property
    def n_classes(self) -> int:
        return int(self.probs.shape[1])

    @property
    def is_binary(self) -> bool:
        return self.n_classes == 2

    @property
    def positive_label(self):
        """The positive class of binary data (``classes[1]``)."""
        return self.classes[1] if self.is_binary else None

    @property
    def y_prob(self) -> np.ndarray:
        """P(positive class) for binary data, shape (n,)."""
        if not self.is_binary:
            from ..errors import InputError

            raise InputError(
                f"y_prob is defined for binary data; this model has {self.n_classes} classes. "
                "Use a reduction (confidence, top-label, class-wise) from calibviz.reduce."
            )
        return self.probs[:, 1]

    @property
    def y_true(self) -> np.ndarray:
        """Binary outcome (1 = positive class) for binary data, else the class index."""
        return self.y

    @property
    def predicted(self) -> np.ndarray:
        """Predicted class index (argmax; ties go to the first class)."""
        return np.argmax(self.probs, axis=1)

    @property
    def numeric_features(self) -> list[str]:
        return [c for c in self.features.columns if pd.api.types.is_numeric_dtype(self.features[c])
                and not pd.api.types.is_bool_dtype(self.features[c])]

    @property
    def categorical_features(self) -> list[str]:
        numeric = set(self.numeric_features)  # once: per column it made 10^4 columns take minutes
        return [c for c in self.features.columns if c not in numeric]

    def class_counts(self) -> np.ndarray:
        """Count (or total weight) of each true class, shape (K,)."""
        return np.bincount(self.y, weights=self.weights, minlength=self.n_classes)

    def accuracy(self) -> float:
        """(Weighted) share of rows whose argmax class is the true class."""
        hit = (self.predicted == self.y).astype(np.float64)
        return float(np.average(hit, weights=self.weights))

    def fingerprint(self) -> str:
        """SHA-256 (16 hex digits) of labels, probabilities, weights, classes and features.

        Identifies the data in reports and keys the dashboard's caches; computed once (the
        object is immutable).
        """
        cached = self.__dict__.get("_fingerprint")
        if cached is not None:
            return cached
        h = hashlib.sha256()
        h.update(np.ascontiguousarray(self.y).tobytes())
        h.update(np.ascontiguousarray(self.probs).tobytes())
        if self.weights is not None:
            h.update(np.ascontiguousarray(self.weights).tobytes())
        h.update(repr(self.classes).encode())
        h.update(repr(list(self.features.columns)).encode())
        if len(self.features.columns):
            try:
                h.update(pd.util.hash_pandas_object(self.features, index=False).to_numpy().tobytes())
            except (TypeError, ValueError):  # unhashable cells (lists) in a hand-built Predictions
                h.update(pd.util.hash_pandas_object(self.features.astype(str), index=False).to_numpy().tobytes())
        value = h.hexdigest()[:16]
        object.__setattr__(self, "_fingerprint", value)
        return value

    def subset(self, rows) -> "Predictions":
        """The predictions of the selected rows (boolean mask or indices)."""
        rows = np.asarray(rows)
        feats = self.features.iloc[np.flatnonzero(rows) if rows.dtype == bool else rows]
        return Predictions(y=self.y[rows], probs=self.probs[rows], classes=self.classes,
                           weights=None if self.weights is None else self.weights[rows],
                           features=feats, name=self.name, source=self.source, notes=self.notes)

    def __repr__(self) -> str:
        kind = "binary" if self.is_binary else f"{self.n_classes} classes"
        w = ", weighted" if self.weights is not None else ""
        return (f"Predictions(name={self.name!r}, n={self.n}, {kind}{w}, "
                f"features={list(self.features.columns)[:6]!r})")
