"""Non-parametric recalibration maps: isotonic regression and uniform-mass histogram binning.

Both work on groups of equal scores: tied predictions are pooled (one group,
its weighted label mean), so labels and row order never split a tie
(DESIGN.md §4).
"""
from __future__ import annotations

import numpy as np

from ..binning import EqualMass
from ._base import Recalibrator, _check_positive_int
from .._lazy import lazy

isotonic_regression = lazy("scipy.optimize", "isotonic_regression")

__all__ = ["Isotonic", "HistogramBinning", "isotonic_knots"]


def _groups(p, y, w):
    """Distinct sorted scores, their total weights and weighted label sums (order within ties is irrelevant)."""
    order = np.argsort(p)
    ps = p[order]
    starts = np.flatnonzero(np.r_[True, ps[1:] != ps[:-1]])
    ww = np.ones_like(ps) if w is None else w[order]
    return ps[starts], np.add.reduceat(ww, starts), np.add.reduceat(ww * y[order], starts)


def isotonic_knots(p, y, w=None) -> tuple[np.ndarray, np.ndarray]:
    """Knots (x, f) of the isotonic (PAV) fit of y on p, ties pooled; two knots per constant block.

    Parameters
    ----------
    p, y : ndarray of shape (n,)
    w : ndarray of shape (n,), optional

    Returns
    -------
    (x, f) : ndarrays
        The first and last distinct score of every block of the fit and the
        block's value; ``np.interp(t, x, f)`` is the interpolated map
        (constant outside [x[0], x[-1]]).

    References
    ----------
    Ayer, Brunk, Ewing, Reid & Silverman (1955), Ann. Math. Statist. 26
    (pool-adjacent-violators); Zadrozny & Elkan (2002), KDD (isotonic
    calibration).

    Examples
    --------
    >>> import numpy as np
    >>> x, f = isotonic_knots(np.array([0.1, 0.2, 0.3, 0.4]), np.array([0.0, 1.0, 0.0, 1.0]))
    >>> x.tolist(), f.tolist()
    ([0.1, 0.1, 0.2, 0.3, 0.4, 0.4], [0.0, 0.0, 0.5, 0.5, 1.0, 1.0])
    """
    xs, gw, gy = _groups(p, y, w)
    res = isotonic_regression(gy / gw, weights=gw)
    blocks = res.blocks
    first, last = blocks[:-1], blocks[1:] - 1
    vals = res.x[first]
    x = np.column_stack([xs[first], xs[last]]).ravel()
    f = np.repeat(vals, 2)
    return x, f


class Isotonic(Recalibrator):
    """Isotonic recalibration: the monotone map that minimises the squared error (PAV), ties pooled.

    The fit is the pool-adjacent-violators solution on groups of equal
    scores; between the fitted scores the map interpolates linearly, and
    outside the fitted range it is constant (clipped), as
    ``sklearn.isotonic.IsotonicRegression(out_of_bounds="clip")``. The JSON
    map holds the two end scores of every constant block and its value.

    References
    ----------
    B. Zadrozny & C. Elkan (2002), "Transforming classifier scores into
    accurate multiclass probability estimates", KDD, Sec. 3 (PAV); Ayer et
    al. (1955) for the algorithm.

    Examples
    --------
    >>> m = Isotonic().fit([0.1, 0.2, 0.3, 0.4], [0, 1, 0, 1])
    >>> m.predict([0.0, 0.25, 0.5]).tolist()
    [0.0, 0.5, 1.0]
    """

    name = "isotonic"
    label = "Isotonic regression"

    def __init__(self, *, multiclass: str = "top_label"):
        super().__init__(multiclass=multiclass)

    def _fit_binary(self, p, y, w):
        x, f = isotonic_knots(p, y, w)
        return {"x": x, "y": f}

    def _predict_binary(self, state, p):
        return np.interp(p, np.asarray(state["x"], dtype=np.float64), np.asarray(state["y"], dtype=np.float64))

    def describe(self) -> str:
        s = self.state_.get("binary") if self.state_ else None
        if s is None:
            return "Isotonic regression: the best monotone step map (PAV), interpolated between fitted scores."
        return (f"Isotonic regression: a monotone map with {len(s['x']) // 2} constant blocks (PAV), interpolated "
                "between them.")


class HistogramBinning(Recalibrator):
    """Uniform-mass histogram binning: each bin of equally many calibration rows maps to its observed rate.

    The calibration scores are split into B bins of (nearly) equal size at
    the sorted positions ``floor(j n / B)`` (:class:`calibviz.binning.EqualMass`,
    tied scores never split); B = ``n_bins``, or ``floor(n / points_per_bin)``
    as Gupta & Ramdas recommend. The boundary between bins b and b+1 is the
    largest score of bin b (an order statistic of the calibration scores); a
    new score t falls in bin ``#{boundaries < t}``, so bins are ``(e_{b-1},
    e_b]``. Each bin maps to the weighted mean label of its rows, leaving out
    the rows that lie on the bin's upper boundary (the authors' choice,
    following Gupta & Ramdas 2021; ``exclude_boundary=False`` keeps them);
    a bin whose rows all lie on its boundary keeps them. The tie-breaking
    randomisation δ of the paper (needed only for its theory) is left out:
    the map is deterministic.

    Multiclass (``multiclass=``): ``"top_label"`` is the paper's Algorithm 8
    (one binning per predicted class l with ``floor(n_l / k)`` bins; a class
    predicted fewer than k times is left as it is); ``"classwise"`` is
    Algorithm 9 (one binning per class on all rows, ``floor(n / k)`` bins),
    normalised unless ``normalize=False`` (the paper's unnormalised CW-HB).

    Parameters
    ----------
    points_per_bin : int, default 50
        k, the calibration rows per bin (the paper suggests 50 to 150).
    n_bins : int, optional
        A fixed number of bins per view instead (the paper's CIFAR runs used 15).
    exclude_boundary : bool, default True
    multiclass : {"top_label", "confidence", "classwise"}, default "top_label"
    normalize : bool, default True
        Class-wise only: rescale each row to sum to 1.

    References
    ----------
    B. Zadrozny & C. Elkan (2001), ICML (histogram binning); C. Gupta &
    A. Ramdas (2021), "Distribution-free calibration guarantees for histogram
    binning without sample splitting", ICML, Algorithm 2; C. Gupta & A. Ramdas
    (2022), "Top-label calibration and multiclass-to-binary reductions", ICLR,
    Algorithms 8 and 9, App. G.3.

    Examples
    --------
    >>> import numpy as np
    >>> p = np.linspace(0.01, 0.99, 100)
    >>> y = (np.arange(100) % 3 == 0).astype(float)
    >>> m = HistogramBinning(n_bins=4).fit(p, y)
    >>> len(m.state_["binary"]["values"]), m.state_["binary"]["n_excluded"]
    (4, 3)
    """

    name = "histogram_binning"
    label = "Histogram binning"

    def __init__(self, *, points_per_bin: int = 50, n_bins: int | None = None, exclude_boundary: bool = True,
                 multiclass: str = "top_label", normalize: bool = True):
        _check_positive_int(points_per_bin, "points_per_bin")
        if n_bins is not None:
            _check_positive_int(n_bins, "n_bins")
        super().__init__(multiclass=multiclass, points_per_bin=int(points_per_bin), n_bins=n_bins,
                         exclude_boundary=bool(exclude_boundary), normalize=bool(normalize))

    def _n_bins(self, n: int) -> int:
        if self.options["n_bins"] is not None:
            return self.options["n_bins"]
        return max(1, n // self.options["points_per_bin"])

    def _fit_view(self, p, y, w):
        # Algorithm 8: a class predicted fewer than k times gets no bins and is left unrecalibrated
        if self.options["n_bins"] is None and p.shape[0] < self.options["points_per_bin"]:
            return None
        return super()._fit_view(p, y, w)

    def _fit_binary(self, p, y, w):
        B = min(self._n_bins(p.shape[0]), p.shape[0])
        bins = EqualMass(B).fit(p)
        idx = bins.index
        order = np.argsort(p, kind="stable")
        ps, bs = p[order], idx[order]
        ends = np.flatnonzero(np.r_[bs[1:] != bs[:-1], True])  # last sorted position of each non-empty bin
        upper = ps[ends]
        used = bs[ends]  # ids of the non-empty bins, increasing
        dense = np.full(B, -1, dtype=np.int64)
        dense[used] = np.arange(used.shape[0])
        b = dense[idx]  # 0..m-1 over non-empty bins
        m = used.shape[0]
        ww = np.ones_like(p) if w is None else w
        on_boundary = np.zeros(p.shape[0], dtype=bool)
        if self.options["exclude_boundary"] and m > 1:
            on_boundary = (p == upper[b]) & (b < m - 1)  # the last bin has no upper boundary (+inf)
        keep_w = np.where(on_boundary, 0.0, ww)
        sw = np.bincount(b, weights=keep_w, minlength=m)
        sy = np.bincount(b, weights=keep_w * y, minlength=m)
        empty = sw <= 0  # every row of the bin lies on its boundary: keep them
        if empty.any():
            sw_all = np.bincount(b, weights=ww, minlength=m)
            sy_all = np.bincount(b, weights=ww * y, minlength=m)
            sw = np.where(empty, sw_all, sw)
            sy = np.where(empty, sy_all, sy)
        with np.errstate(invalid="ignore", divide="ignore"):
            values = np.where(sw > 0, sy / np.where(sw > 0, sw, 1.0), 0.5)
        return {"edges": upper[:-1], "values": values, "counts": np.bincount(b, minlength=m),
                "n_excluded": int(on_boundary.sum())}

    def _predict_binary(self, state, p):
        edges = np.asarray(state["edges"], dtype=np.float64)
        values = np.asarray(state["values"], dtype=np.float64)
        return values[np.searchsorted(edges, p, side="left")]

    def describe(self) -> str:
        s = self.state_.get("binary") if self.state_ else None
        if s is None:
            return (f"Histogram binning: uniform-mass bins of about {self.options['points_per_bin']} rows, each "
                    "mapped to its observed rate (Gupta & Ramdas 2022).")
        return f"Histogram binning: {len(s['values'])} uniform-mass bins, each mapped to its observed rate."

