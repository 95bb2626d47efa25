"""The common interface of every recalibrator and the multiclass-to-binary (M2B) wrapper.

A recalibrator is fitted on held-out predictions and labels and then maps any
prediction to a recalibrated one: ``fit(y_prob, y_true, sample_weight=None)``
then ``predict(y_prob)``, binary ``(n,)`` or multiclass ``(n, K)``. Its fitted
state is plain JSON (``to_dict`` / :func:`from_dict`): parameters or knots,
never pickles, so a map exported from the dashboard can be read back and
applied anywhere.

Binary families (Platt, isotonic, beta, histogram binning, Venn-Abers) handle
multiclass inputs through Gupta & Ramdas's (2022) M2B reductions
(``multiclass=``):

* ``"top_label"`` (Algorithm 2; Algorithm 8 for histogram binning): one
  binary map per predicted class, fitted on the rows predicted as that class
  (confidence vs "the prediction is right"). The other classes share the rest
  in their old proportions, moved towards an even share where needed so that
  the predicted class is kept (always possible when the recalibrated
  confidence is at least 1/K).
* ``"confidence"`` (Algorithm 1): one binary map for the confidence of all rows.
* ``"classwise"`` (Algorithm 3, normalised as Algorithm 4; Algorithm 9 for
  histogram binning): one map per class on its one-vs-rest column, rows
  renormalised to sum to 1 (``normalize=False`` keeps the raw per-class
  outputs, as the paper's CW-HB; they are then no probability vectors).
"""
from __future__ import annotations

import json
import numbers

import numpy as np

from ..errors import InputError
from ..validation import check_binary, check_multiclass

__all__ = ["Recalibrator", "MULTICLASS_MODES", "FORMAT_VERSION"]

MULTICLASS_MODES = ("top_label", "confidence", "classwise")
#: Version of the JSON map format written by :meth:`Recalibrator.to_dict`.
FORMAT_VERSION = 1
# Probabilities are clipped to [EPS, 1 - EPS] before logs and logits (float64 machine epsilon, as betacal and
# calibviz.metrics.log_loss): a prediction of exactly 0 or 1 maps to logit -36.04 / +36.04 instead of infinity.
EPS = float(np.finfo(np.float64).eps)


def _check_choice(value, allowed, name):
    if value not in allowed:
        raise InputError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}.")
    return value


def _check_positive_int(value, name, minimum=1):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}, got {value!r}.")
    return int(value)


def _binary_input(y_prob) -> np.ndarray:
    """Validated (n,) probabilities to map (no labels needed)."""
    arr = np.asarray(y_prob)
    n = arr.shape[0] if arr.ndim >= 1 else 1
    return check_binary(np.zeros(n), arr, None)[1]


def _multiclass_input(y_prob) -> np.ndarray:
    P = np.asarray(y_prob, dtype=np.float64) if not isinstance(y_prob, np.ndarray) else y_prob
    return check_multiclass(np.zeros(P.shape[0] if P.ndim else 0, dtype=np.int64), P, None)[1]


def _rescale_others(P: np.ndarray, c: np.ndarray, h_new: np.ndarray) -> np.ndarray:
    """Probability rows with class ``c`` set to ``h_new`` and the other classes sharing ``1 - h_new``.

    The other classes keep their proportions; where one of them would then
    exceed ``h_new`` (and change the predicted class), they are moved towards
    an even share just enough to stay below it. The predicted class is kept
    whenever ``h_new >= 1/K`` (below that no probability vector can keep it).
    """
    n, K = P.shape
    rows = np.arange(n)
    h = P[rows, c]
    rest = 1.0 - h
    free = 1.0 - h_new
    Q = P.copy()
    Q[rows, c] = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(rest > 0, free / np.where(rest > 0, rest, 1.0), 0.0)
    Q *= scale[:, None]
    even = free / (K - 1)
    flat = rest <= 0  # the top class held all the mass: spread the freed mass evenly
    if flat.any():
        Q[flat] = even[flat, None]
    top_other = Q.max(axis=1)
    cap = h_new * (1.0 - 1e-12)
    over = (top_other > cap) & (top_other > even)
    if over.any():
        # mix with the even share: (1 - lam) * proportional + lam * even, largest entry = cap (or even)
        lam = np.clip((top_other[over] - cap[over]) / (top_other[over] - even[over]), 0.0, 1.0)
        Q[over] = (1.0 - lam)[:, None] * Q[over] + (lam * even[over])[:, None]
    Q[rows, c] = h_new
    return Q


class Recalibrator:
    """Base class: a map from predictions to recalibrated predictions, fitted on held-out data.

    Subclasses implement ``_fit_binary(p, y, w) -> state`` and
    ``_predict_binary(state, p) -> p'`` on clean arrays (rows of weight 0
    already dropped), or ``_fit_multiclass`` / ``_predict_multiclass`` for
    natively multiclass maps. ``state`` is a dict of JSON-able values.

    Attributes
    ----------
    name : str
        Registry name ("platt", "isotonic", ...).
    options : dict
        The constructor options (written into the JSON map).
    """

    name = ""
    label = ""
    native_multiclass = False
    binary_capable = True

    def __init__(self, *, multiclass: str = "top_label", **options):
        self.multiclass = _check_choice(multiclass, MULTICLASS_MODES, "multiclass")
        self.options = dict(options)
        self.state_ = None
        self.kind_ = None  # "binary" or "multiclass" once fitted

    # ------------------------------------------------------------------ public interface

    def get_options(self) -> dict:
        """The options that rebuild an unfitted copy (``get_recalibrator(name, **options)``)."""
        out = dict(self.options)
        if not self.native_multiclass:
            out["multiclass"] = self.multiclass
        return out

    def clone(self) -> "Recalibrator":
        """An unfitted copy with the same options."""
        return type(self)(**self.get_options())

    @property
    def is_fitted(self) -> bool:
        return self.state_ is not None

    def fit(self, y_prob, y_true, sample_weight=None) -> "Recalibrator":
        """Fit the map on held-out predictions and labels.

        Parameters
        ----------
        y_prob : array-like of shape (n,) or (n, K)
            P(y = 1) for binary data, or probability rows (summing to 1).
        y_true : array-like of shape (n,)
            Labels in {0, 1}, or class indices 0..K-1.
        sample_weight : array-like of shape (n,), optional
            Non-negative weights; a row of weight 0 is an absent row.

        Returns
        -------
        self
        """
        if np.ndim(y_prob) == 2:
            y, P, w = check_multiclass(y_true, y_prob, sample_weight)
            self._check_size(y.shape[0])
            self.kind_ = "multiclass"
            self.n_classes_ = int(P.shape[1])
            if self.native_multiclass:
                self.state_ = {"multiclass": self._fit_multiclass(P, y, w)}
            else:
                self.state_ = {"maps": self._fit_m2b(P, y, w)}
        else:
            if not self.binary_capable:
                raise InputError(f"{self.label or self.name} needs (n, K) probability rows.")
            y, p, w = check_binary(y_true, y_prob, sample_weight)
            self._check_size(y.shape[0])
            self.kind_ = "binary"
            self.n_classes_ = 2
            self.state_ = {"binary": self._fit_binary(p, y, w)}
        return self

    def predict(self, y_prob) -> np.ndarray:
        """Recalibrated predictions.

        Parameters
        ----------
        y_prob : array-like of shape (n,) or (n, K)
            Of the kind the map was fitted on.

        Returns
        -------
        ndarray of shape (n,) or (n, K)
        """
        self._require_fitted()
        if self.kind_ == "binary":
            if np.ndim(y_prob) != 1:
                raise InputError(f"this map was fitted on binary predictions (shape (n,)); got shape "
                                 f"{np.shape(y_prob)}. Pass P(y = 1) as one column.")
            return self._predict_binary(self.state_["binary"], _binary_input(y_prob))
        P = _multiclass_input(y_prob)
        if P.shape[1] != self.n_classes_:
            raise InputError(f"this map was fitted on {self.n_classes_} classes; y_prob has {P.shape[1]} columns.")
        if self.native_multiclass:
            return self._predict_multiclass(self.state_["multiclass"], P)
        return self._predict_m2b(self.state_["maps"], P)

    def to_dict(self) -> dict:
        """The fitted map as plain JSON-able data (parameters, knots), readable by :func:`from_dict`.

        Examples
        --------
        >>> from calibviz.recalibration import get_recalibrator
        >>> d = get_recalibrator("platt").fit([0.2, 0.4, 0.6, 0.8] * 5, [0, 1, 0, 1] * 5).to_dict()
        >>> d["method"], d["kind"], sorted(d["state"]["binary"])
        ('platt', 'binary', ['intercept', 'slope'])
        """
        self._require_fitted()
        return {"format": "calibviz.recalibration", "version": FORMAT_VERSION, "method": self.name,
                "options": self.get_options(), "kind": self.kind_, "n_classes": self.n_classes_,
                "state": _jsonable(self.state_)}

    def to_json(self, **kwargs) -> str:
        """:meth:`to_dict` as a JSON string."""
        return json.dumps(self.to_dict(), **kwargs)

    @classmethod
    def from_dict(cls, data: dict) -> "Recalibrator":
        """A fitted map from :meth:`to_dict`'s output (see :func:`calibviz.recalibration.from_dict`)."""
        from . import from_dict

        return from_dict(data)

    def describe(self) -> str:
        """One sentence saying what the fitted map does."""
        return self.label

    # ------------------------------------------------------------------ M2B

    def _check_size(self, n: int) -> None:
        if n < 2:
            raise InputError(f"need at least 2 rows of positive weight to fit {self.name}, got {n}.")

    def _require_fitted(self) -> None:
        if self.state_ is None:
            raise InputError(f"this {self.name} recalibrator is not fitted; call fit(y_prob, y_true) first.")

    def _fit_m2b(self, P, y, w) -> list:
        K = P.shape[1]
        c = np.argmax(P, axis=1)
        h = P[np.arange(P.shape[0]), c]
        maps = []
        if self.multiclass == "confidence":
            maps.append({"label": None, "map": self._fit_binary(h, (y == c).astype(np.float64), w)})
        elif self.multiclass == "top_label":
            for lab in range(K):
                rows = c == lab
                if not rows.any():
                    maps.append({"label": lab, "map": None})  # never predicted: left as it is
                    continue
                maps.append({"label": lab, "map": self._fit_view(h[rows], (y[rows] == lab).astype(np.float64),
                                                                  None if w is None else w[rows])})
        else:
            for lab in range(K):
                maps.append({"label": lab, "map": self._fit_view(P[:, lab], (y == lab).astype(np.float64), w)})
        return maps

    def _fit_view(self, p, y, w):
        """A binary map on one view; None (identity) when the view cannot be fitted (too few rows)."""
        if p.shape[0] < 2:
            return None
        return self._fit_binary(p, y, w)

    def _predict_m2b(self, maps, P) -> np.ndarray:
        c = np.argmax(P, axis=1)
        rows = np.arange(P.shape[0])
        h = P[rows, c]
        if self.multiclass == "classwise":
            Q = P.copy()
            for m in maps:
                if m["map"] is not None:
                    Q[:, m["label"]] = self._predict_binary(m["map"], np.ascontiguousarray(P[:, m["label"]]))
            if not self.options.get("normalize", True):
                return Q
            s = Q.sum(axis=1)
            zero = s <= 0
            Q[~zero] /= s[~zero, None]
            Q[zero] = 1.0 / P.shape[1]
            return Q
        h_new = h.copy()
        if self.multiclass == "confidence":
            h_new = self._predict_binary(maps[0]["map"], h)
        else:
            for m in maps:
                sel = c == m["label"]
                if m["map"] is not None and sel.any():
                    h_new[sel] = self._predict_binary(m["map"], h[sel])
        return _rescale_others(P, c, h_new)

    # ------------------------------------------------------------------ to implement

    def _fit_binary(self, p, y, w) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def _predict_binary(self, state: dict, p: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _fit_multiclass(self, P, y, w) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def _predict_multiclass(self, state: dict, P: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in self.get_options().items())
        return f"{type(self).__name__}({opts}){'' if self.is_fitted else ' [not fitted]'}"


def _jsonable(obj):
    """Numpy scalars and arrays as plain Python (lists, floats, ints) for json.dumps."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    return obj

