"""Bootstrap intervals of a scan's metrics from its bucket table: a Poisson bootstrap, no pass over the rows.

The bootstrap of :func:`calibviz.panel.metric_panel` resamples rows; a scan
has no rows, only sums per *atom* (a fine score bucket 2^-16 wide, or one
exact score of a refined bucket, and a label; :class:`calibviz.scan.refine.Atoms`).
The Poisson bootstrap, the standard bootstrap for streams and distributed
data, gives every row an independent weight ``W_i ~ Poisson(1)`` instead of a
multinomial count (Hanley & MacGibbon 2006; Chamandy, Muralidharan, Najmi &
Naidu 2012, "Estimating uncertainty for massive data streams"). Summed over
the rows of an atom it needs no rows:

* rows: ``n* = sum_i W_i ~ Poisson(n)``, **exactly** (a sum of independent
  Poisson variables);
* weights (weighted scans): ``sum_i W_i w_i`` is a compound Poisson sum of
  the atom's weights. It is drawn as ``Gamma`` with the conditional mean
  ``n* mean(w)`` and variance ``n* var(w)`` given ``n*`` (the atom's ``sum w``
  and ``sum w^2``); so its first two moments are exact (mean ``sum w``,
  variance ``sum w^2``, as the row bootstrap's) and it stays positive; its
  shape for an atom of few very unequal weights is approximate (the
  distribution of the sum of ``n*`` draws from those weights is discrete);
* scores and losses: ``sum_i W_i w_i p_i`` is the resampled weight times
  the atom's weighted mean score (likewise ``p^2`` and the log loss). An atom
  of one score (a refined bucket, or scores with at most 4 decimals) is
  exact; inside a bucket of several scores the rows' resampled mean score is
  replaced by the bucket's mean, which lies in the bucket's score range, so a
  bin's resampled mean prediction is off by at most the bucket width,
  2^-16 = 1.5e-5 (``BUCKET_BOUND``; tested on exact row Poisson weights:
  ECE moves by less than that). The spread of the scores inside a bucket is
  not drawn: it adds at most ``h^2 / 4`` (h <= 2^-16, so below 6e-11) per
  unit weight to the variance of a bin's mean prediction, against
  ``p (1 - p) / n`` for its observed rate; drawing it doubled the cost of
  the draw for nothing measurable.

Every metric of the panel that a scan computes from buckets is then
recomputed on each resampled bucket table by the same reductions as in
memory (:func:`calibviz.metrics.binned._norm_of_gaps`, the Brier
decomposition, Kumar et al.'s debiased error, smECE's fixed point on the
residual nodes), with the bins refitted on each
resample as :func:`~calibviz.panel.metric_panel` refits them:

* fixed edges (Uniform, Custom): every atom keeps its bin; per-bin sums of
  all resamples at once (segment sums of a resamples x atoms array);
* equal-mass bins (ACE, debiased ECE, an equal-mass panel): cut positions
  ``floor(j N* / B)`` in each resample's cumulative row counts, vectorised
  across resamples; a cut inside an atom of one score moves to the nearer end
  of it (the tie rule of :func:`calibviz.binning._snap_to_runs`), a cut inside
  a bucket of several scores splits its resampled sums in proportion to rows
  (the rows' order inside the bucket is not known without them): each cut
  moves at most one bucket's rows (2^-16 of the score range) between two
  neighbouring bins;
* PAVA-BC or PAVA bins of the panel's binning (``binning="pavabc"`` /
  ``"pava"``): the scan's own block code on each resampled bucket table
  (:func:`calibviz.scan.refine.pavabc_bins`, :func:`~calibviz.scan.refine.pava_bins`),
  one resample at a time (TCE's binomial tests of a chunk of resamples in one
  call; about 0.03 s per resample at 2^16 buckets; on a view of at most 2^20 rows the blocks are
  fitted on exact scores, as in memory, and cost what they cost there); top-label
  metrics get none with these bins;
* smECE: the residual nodes of each resample
  (:func:`calibviz.scan.refine.smece_residual_nodes`) and the fixed point on
  the 2^14 grid, one resample at a time.

* TCE: PAVA-BC refitted on each resampled bucket table and every atom
  tested against its resampled bin, at its exact score or, for a whole
  bucket of several scores, at its mean (a resample cannot refine the few
  buckets whose rows the tests would split; the point estimate does), one
  resample at a time: about 0.15 s per resample at 2^16 buckets (30 s for
  200; on a view of at most 2^20 rows, exact blocks on every refined score,
  as costly as in memory), so the dashboard asks before it starts. Hosmer-Lemeshow and
Spiegelhalter's Z have their tests' p-values and no interval, as in memory.
Multiclass scans: confidence ECE as ECE of the confidence view; top-label
ECE and MCE from independent draws per top-label view (the views partition
the rows, so this is the Poisson bootstrap of the whole log; bins refitted
per view); class-wise ECE from a joint draw (the one-vs-rest views share
every row): one more aggregation groups the rows by their cell tuple (the
bin of every class's probability and the label) and every tuple draws one
Poisson count shared by all K classes (:mod:`calibviz.scan.classwise`, fixed
bins only; equal-mass, PAVA and PAVA-BC bins, or more than 2^20 tuples, get
no interval and a note saying why).

The resampled values are read with the interval each metric's coverage
study chose (:mod:`calibviz.metrics.intervals`: :func:`interval_options`, the
small-sample switch of :func:`chosen_method`), through
:func:`calibviz.metrics.resampling.interval_from_distribution` and
:func:`calibviz.metrics.intervals.debiased_l2_from_distribution`: the same
code as in memory. ECE's and class-wise ECE's double bootstrap (below 100
rows per bin with fixed edges, so scans of at most 100 x bins rows) needs
inner resamples of rows: such a scan is read whole (a few thousand rows at
most) and bootstrapped in memory by
:func:`calibviz.metrics.intervals.bootstrap_metric`, exactly as the panel does.

Poisson against multinomial: the resampled total ``N*`` varies (sd
``sqrt(N)``), which changes the distribution of ratio metrics only by terms
of order ``1/N``; measured against the in-memory row bootstrap at 10^4 -
10^5 rows (tests/test_scan_intervals.py): same mean and standard deviation
within Monte Carlo error, Kolmogorov-Smirnov tests do not reject.

References
----------
J. A. Hanley and B. J. MacGibbon, "Creating non-parametric bootstrap samples
using Poisson frequencies", Comput. Methods Programs Biomed. 83(1), 2006.
N. Chamandy, O. Muralidharan, A. Najmi and S. Naidu, "Estimating uncertainty
for massive data streams", Google technical report, 2012.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..binning import PAVABC, Custom, EqualMass, Uniform, _snap_to_runs
from ..errors import InputError
from ..metrics.binned import _debiased_from_stats, _decomposition, _norm_of_gaps
from ..metrics.intervals import (DEBIASED_BASIC, DOUBLE_BASIC, DOUBLE_UPPER, INTERVALS, bootstrap_metric,
                                 chosen_method, coverage_note, debiased_l2_from_distribution, method_alternative,
                                 rows_per_bin)
from ..metrics.resampling import BootstrapResult, interval_from_distribution
from ..summary import BinStatistics
from . import refine as _ref
from .aggregate import FINE_BUCKETS
from .source import IN_MEMORY

__all__ = ["RESAMPLE_METRICS", "BUCKET_BOUND", "poisson_draw", "resample_distributions", "scan_intervals"]

#: Metrics of a binary scan (and the confidence view's ECE) with bootstrap intervals from the bucket table.
RESAMPLE_METRICS = ("ece", "ace", "mce", "rmsce", "debiased_ece", "brier", "brier_reliability", "log_loss",
                    "smooth_ece", "tce", "confidence_ece", "top_label_ece", "top_label_mce", "classwise_ece")
_TOP_LABEL = ("top_label_ece", "top_label_mce")
#: Largest error of a resampled bin's mean prediction from the unknown order of rows inside a fine bucket.
BUCKET_BOUND = 1.0 / FINE_BUCKETS
_CHUNK_ELEMENTS = 1 << 20  # resamples x atoms drawn at once (8 MB per array)
_SUMS = ("n", "sw", "swy", "swp", "swpy", "swpp", "sww", "pos")


# -- the draw --------------------------------------------------------------------------------------------------


def poisson_draw(atoms: _ref.Atoms, m: int, rng: np.random.Generator, weighted: bool) -> dict:
    """Resampled sums of every atom for ``m`` Poisson-bootstrap resamples: arrays of shape (m, atoms).

    Keys ``n`` (rows, exact Poisson), ``sw``, ``swp``, ``swpp``, ``sww``,
    ``sll`` (see the module docstring for the draw and its bounds). Unweighted,
    ``sw`` and ``sww`` are ``n`` itself (the same array).

    Examples
    --------
    >>> import calibviz as cv, numpy as np, pandas as pd
    >>> s = cv.scan(pd.DataFrame({"y": [0, 1] * 50, "p": [0.25, 0.75] * 50}))
    >>> d = poisson_draw(s._atoms(), 4000, np.random.default_rng(0), False)
    >>> d["n"].shape, bool(abs(d["n"].mean(axis=0) - 50).max() < 1)
    ((4000, 2), True)
    """
    n = atoms.n.astype(np.float64)
    ns = rng.poisson(n, size=(m, n.shape[0])).astype(np.float64)
    if weighted:
        mw = atoms.sw / n
        vw = np.maximum(atoms.sww / n - mw * mw, 0.0)
        sw = ns * mw
        cols = np.flatnonzero(vw > 1e-12 * mw * mw)
        if cols.size:  # Gamma with mean n* mean(w) and variance n* var(w); shape 0 (n* = 0) gives 0
            shape = ns[:, cols] * (mw[cols] ** 2 / vw[cols])
            sw[:, cols] = rng.gamma(shape, vw[cols] / mw[cols])
        sww = ns * (atoms.sww / n)
    else:
        sw = sww = ns
    # scores and losses at the atom's weighted means (the bound of the module docstring)
    return {"n": ns, "sw": sw, "swp": sw * (atoms.swp / atoms.sw), "swpp": sw * (atoms.swpp / atoms.sw),
            "sww": sww, "sll": sw * (atoms.sll / atoms.sw)}


# -- bins of every resample ------------------------------------------------------------------------------------


def _segments(X: np.ndarray, seg: np.ndarray, n_seg: int) -> np.ndarray:
    """Sums of the columns of X (m, k) per segment id ``seg`` (k,), non-decreasing: shape (m, n_seg)."""
    out = np.zeros((X.shape[0], n_seg))
    if seg.shape[0]:
        starts = np.flatnonzero(np.r_[True, seg[1:] != seg[:-1]])
        out[:, seg[starts]] = np.add.reduceat(X, starts, axis=1)
    return out


def _group_sums(atoms: _ref.Atoms, draw: dict, starts: np.ndarray) -> dict:
    """Sums per rank group (a bucket or an exact score, labels merged), shape (m, groups)."""
    y = atoms.y.astype(np.float64)

    def red(v):
        return np.add.reduceat(v, starts, axis=1)

    n, pos = red(draw["n"]), red(draw["n"] * y)
    out = {"n": n, "pos": pos, "swp": red(draw["swp"]), "swpy": red(draw["swp"] * y), "swpp": red(draw["swpp"])}
    if draw["sw"] is draw["n"]:  # unweighted: weights are the counts
        out.update(sw=n, swy=pos, sww=n)
    else:
        out.update(sw=red(draw["sw"]), swy=red(draw["sw"] * y), sww=red(draw["sww"]))
    return out


def _fixed_bins(groups: dict, bin_of_group: np.ndarray, n_bins: int) -> dict:
    done = {}  # unweighted, sw / swy / sww are n / pos themselves
    for v in groups.values():
        if id(v) not in done:
            done[id(v)] = _segments(v, bin_of_group, n_bins)
    return {k: done[id(v)] for k, v in groups.items()}


def _equal_mass(groups: dict, n_bins: int, tie: np.ndarray) -> dict:
    """Per-bin sums (m, n_bins) of equal-mass bins refitted on every resample (see the module docstring)."""
    cnt = groups["n"]
    m, G = cnt.shape
    K = np.zeros((m, G + 1))
    np.cumsum(cnt, axis=1, out=K[:, 1:])
    N = np.rint(K[:, -1]).astype(np.int64)
    span = float(N.max()) + 1.0
    off = np.arange(m)[:, None] * span
    flat_end = (K[:, 1:] + off).ravel()

    def group_at(x):  # group holding sorted position x (first <= x < end), per resample
        g = np.searchsorted(flat_end, (x + off).ravel(), side="right").reshape(x.shape) - np.arange(m)[:, None] * G
        return np.clip(g, 0, G - 1)

    cuts = ((np.arange(1, n_bins, dtype=np.int64)[None, :] * N[:, None]) // n_bins).astype(np.float64)
    rows = np.arange(m)[:, None]
    if n_bins > 1:
        g = group_at(cuts)
        first, end = K[rows, g], K[rows, g + 1]
        inside = (cuts > first) & (cuts < end) & tie[g]
        cuts = _snap_to_runs(cuts, np.where(inside, first, cuts), np.where(inside, end, cuts))
    x = np.concatenate([np.zeros((m, 1)), cuts, N[:, None].astype(np.float64)], axis=1)
    g = group_at(x)
    size = cnt[rows, g]
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.where(size > 0, np.clip((x - K[rows, g]) / size, 0.0, 1.0), 0.0)
    out, done = {}, {}
    for k, v in groups.items():
        if id(v) not in done:  # unweighted, sw / swy / sww are n / pos themselves
            Q = np.zeros((m, G + 1))
            np.cumsum(v, axis=1, out=Q[:, 1:])
            done[id(v)] = np.diff(Q[rows, g] + frac * v[rows, g], axis=1)
        out[k] = done[id(v)]
    return out


def _stats(sums: dict, r: int) -> BinStatistics:
    return BinStatistics(count=sums["n"][r], positives=sums["pos"][r], weight=sums["sw"][r], sum_pred=sums["swp"][r],
                         sum_true=sums["swy"][r], sum_pred_sq=sums["swpp"][r], sum_pred_true=sums["swpy"][r],
                         sum_weight_sq=sums["sww"][r])


def _finite(f) -> float:
    try:
        v = float(f())
    except (ValueError, ZeroDivisionError, FloatingPointError):
        return math.nan
    return v


# -- the metrics of a resample ---------------------------------------------------------------------------------

#: metric key -> (bins: "config" / "equal_mass" / "total" / "smooth" / "tce", reduction of BinStatistics)
_REDUCE = {
    "ece": ("config", lambda s: _norm_of_gaps(s, "l1")),
    "confidence_ece": ("config", lambda s: _norm_of_gaps(s, "l1")),
    "mce": ("config", lambda s: _norm_of_gaps(s, "max")),
    "rmsce": ("config", lambda s: _norm_of_gaps(s, "l2")),
    "brier_reliability": ("config", lambda s: _decomposition(s).reliability),
    "ace": ("equal_mass", lambda s: _norm_of_gaps(s, "l1")),
    "debiased_ece": ("equal_mass", lambda s: _debiased_from_stats(s)),
    "brier": ("total", lambda s: _decomposition(s).brier),
    "log_loss": ("total", None),
    "smooth_ece": ("smooth", None),
    "tce": ("tce", None),
}
#: the squared debiased error of the small-sample interval (debiased_basic) of these metrics
_L2_SMALL = {"rmsce": "config", "debiased_ece": "equal_mass"}


def _binner(scan, scheme, atoms, starts):
    """A function (groups of one chunk) -> per-bin sums for ``scheme``; None for PAVA-BC (per resample)."""
    kind = _ref.scheme_kind(scheme)
    if kind == "edges":
        edges, index, _, _ = scan._bins(scheme, atoms)
        bin_of_group, n_bins = index[starts], edges.shape[0] - 1
        return lambda groups: _fixed_bins(groups, bin_of_group, n_bins)
    if kind == "equal_mass":
        lo, hi = np.minimum.reduceat(atoms.lo, starts), np.maximum.reduceat(atoms.hi, starts)
        tie = lo == hi
        return lambda groups: _equal_mass(groups, scheme.n_bins, tie)
    return None


def _top_label_distributions(scan, keys, config, n_resamples: int, random_state=None) -> dict:
    """Resampled top-label ECE / MCE of a multiclass scan from its top-label views (one per predicted class).

    The views partition the rows (each row has one predicted class), so
    independent Poisson draws per view are the Poisson bootstrap of the whole
    log; each view's bins are refitted on its own resampled rows (the
    "per_class" fit of :meth:`calibviz.scan.Scan._top_label`), and
    TL-ECE = sum |S_true - S_pred| / W, TL-MCE = max over bins of
    sum_l |S_true - S_pred| / sum_l W, as on the data.
    """
    scheme = config.scheme()
    if _ref.scheme_kind(scheme) in _ref.BLOCK_KINDS:  # per-resample refits of K views: too slow
        return {}
    weighted = scan._roles.weight is not None
    n_bins = scheme.n_bins if isinstance(scheme, EqualMass) else None
    absdiff, weight = None, None
    rng = np.random.default_rng(random_state)
    for view in (scan.top_label_view(c) for c in scan._roles.classes):
        if view.n == 0:
            continue
        atoms = view._atoms_for([scheme])
        starts, _ = _ref._groups(atoms)
        binner = _binner(view, scheme, atoms, starts)
        chunk = max(1, min(n_resamples, _CHUNK_ELEMENTS // max(atoms.size, 1)))
        done = 0
        while done < n_resamples:
            m = min(chunk, n_resamples - done)
            sums = binner(_group_sums(atoms, poisson_draw(atoms, m, rng, weighted), starts))
            if absdiff is None:
                nb = n_bins or sums["sw"].shape[1]
                absdiff, weight = np.zeros((n_resamples, nb)), np.zeros((n_resamples, nb))
            k = sums["sw"].shape[1]
            absdiff[done:done + m, :k] += np.abs(sums["swy"] - sums["swp"])
            weight[done:done + m, :k] += sums["sw"]
            done += m
    out = {}
    with np.errstate(invalid="ignore", divide="ignore"):
        if "top_label_ece" in keys:
            out["top_label_ece"] = absdiff.sum(axis=1) / weight.sum(axis=1)
        if "top_label_mce" in keys:
            out["top_label_mce"] = np.where(weight > 0, absdiff / np.where(weight > 0, weight, 1.0),
                                            -np.inf).max(axis=1)
            out["top_label_mce"][~np.isfinite(out["top_label_mce"])] = np.nan
    return out


def resample_distributions(scan, keys, config, n_resamples: int, random_state=None, progress=None) -> dict:
    """Resampled values of ``keys`` on ``n_resamples`` Poisson-bootstrap resamples of the scan's buckets.

    Returns ``{key: array (n_resamples,)}`` (NaN where a resample leaves the
    metric undefined) plus ``{key + "^2": ...}``, the debiased squared errors
    of RMSCE and debiased ECE for their small-sample interval. One draw per
    resample serves every metric (as the panel's one seed does), over the
    atoms that every metric asked for needs: with TCE (or PAVA / PAVA-BC
    bins) those include its exact rows (views up to 2^20 rows) or the cells
    of full buckets (larger views), so an interval depends on the seed and
    on the metrics drawn with it (two valid Monte Carlo draws of one
    interval), not on what was computed before. The panel, the CLI, the
    report and the dashboard always draw their whole panel together.

    Examples
    --------
    >>> import calibviz as cv, numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0); p = rng.uniform(size=4000)
    >>> s = cv.scan(pd.DataFrame({"y": (rng.uniform(size=4000) < p).astype(int), "p": p}))
    >>> from calibviz.panel import PanelConfig
    >>> d = resample_distributions(s, ["brier"], PanelConfig(), 200, random_state=0)
    >>> bool(abs(d["brier"].mean() - s.metric("brier")[0]) < 3e-3)
    True
    """
    keys = [k for k in keys if k in _REDUCE]
    weighted = scan._roles.weight is not None
    need = {_REDUCE[k][0] for k in keys} | {_L2_SMALL[k] for k in keys if k in _L2_SMALL}
    schemes = {"config": config.scheme(), "equal_mass": EqualMass(config.n_bins)}
    scan._ensure_ranges()  # ties of equal-mass bins and the refits of PAVA-BC read every bucket's range
    tce_scheme = PAVABC(config.n_min, config.n_max)
    exact = scan._exact_blocks
    # TCE's refits need its bins' atoms too: on a small view every bucket of several scores is refined for them
    atoms = scan._atoms_for([schemes[b] for b in ("config", "equal_mass") if b in need]
                            + ([tce_scheme] if "tce" in need else []))
    starts, _ = _ref._groups(atoms)
    binners = {b: _binner(scan, schemes[b], atoms, starts) for b in ("config", "equal_mass") if b in need}
    out = {k: np.full(n_resamples, np.nan) for k in keys}
    out.update({k + "^2": np.full(n_resamples, np.nan) for k in keys if k in _L2_SMALL})
    rng = np.random.default_rng(random_state)
    chunk = max(1, min(n_resamples, _CHUNK_ELEMENTS // max(atoms.size, 1)))
    per_resample = ("smooth" in need) or ("tce" in need) or (
        any(binners.get(b) is None for b in ("config", "equal_mass") if b in need))
    if per_resample:
        from ..metrics.smooth import _GRID_SIZES, _masses_from_nodes, _solve_fixed_point
    done = 0
    while done < n_resamples:
        m = min(chunk, n_resamples - done)
        draw = poisson_draw(atoms, m, rng, weighted)
        groups = _group_sums(atoms, draw, starts)
        sums = {b: f(groups) for b, f in binners.items() if f is not None}
        if "total" in need:
            sums["total"] = {k: v.sum(axis=1, keepdims=True) for k, v in groups.items()}
        tce_tables = []  # this chunk's TCE resamples, tested together after the loop (refine.redrawn_tces)
        for r in range(m):
            i = done + r
            atoms_r = None
            for key in keys:
                kind, reduce = _REDUCE[key]
                if key == "log_loss":
                    out[key][i] = float(draw["sll"][r].sum() / draw["sw"][r].sum())
                    continue
                if kind in ("smooth", "tce") or (kind in binners and binners[kind] is None):
                    if atoms_r is None:
                        atoms_r = replace(atoms, n=np.rint(draw["n"][r]).astype(np.int64), sw=draw["sw"][r],
                                          swp=draw["swp"][r], swpp=draw["swpp"][r], sww=draw["sww"][r],
                                          sll=draw["sll"][r])
                if kind == "tce":
                    tce_tables.append((key, i, atoms_r))
                elif kind == "smooth":
                    k = _GRID_SIZES[0]
                    total = float(atoms_r.sw.sum())
                    nodes = _ref.smece_residual_nodes(atoms_r, k)
                    out[key][i] = _finite(lambda: _solve_fixed_point(
                        lambda kk: _masses_from_nodes(kk, nodes, total), sizes=(k,))[1])
                else:
                    if kind in sums:
                        s = _stats(sums[kind], r)
                    else:  # PAVA-BC or PAVA bins of the panel's binning: refitted on this resample
                        s = _ref.refit_blocks(atoms_r, schemes[kind], weighted, exact=exact)[2]
                    if not (s.weight > 0).any():
                        continue
                    out[key][i] = _finite(lambda: reduce(s))
                    if key in _L2_SMALL:  # the same bins (_L2_SMALL[key] == kind)
                        out[key + "^2"][i] = _finite(lambda: _debiased_from_stats(s, squared=True))
        if tce_tables:
            values = _ref.redrawn_tces([(a, None) for _, _, a in tce_tables], tce_scheme, alpha=config.alpha,
                                       weighted=weighted, exact=exact)
            for (key, i, _), v in zip(tce_tables, values):
                out[key][i] = v
        done += m
        if progress is not None:
            progress(done, n_resamples)
    return out


# -- intervals -------------------------------------------------------------------------------------------------


def _rows_of(scan):
    """(y, p, w) of a small scan's valid rows (ECE's double bootstrap; at most 100 x bins rows)."""
    import narwhals as nw

    from . import aggregate as _agg

    prepared = _agg._prepared(scan._frame, scan._roles)
    df = _agg.collect(prepared.filter((nw.col("_b") >= 0) & (nw.col("_y") >= 0)).select("_y", "_p", "_w"))
    w = df["_w"].to_numpy(np.float64) if scan._roles.weight is not None else None
    return df["_y"].to_numpy(np.int64), df["_p"].to_numpy(np.float64), w


def scan_intervals(scan, keys, values: dict, config, n_resamples: int, confidence: float = 0.95,
                   random_state=None, progress=None) -> dict:
    """``{key: BootstrapResult}`` of each key with a bootstrap interval, read as the panel reads it.

    Parameters
    ----------
    scan : calibviz.scan.Scan
    keys : sequence of str
        Panel keys; those outside :data:`RESAMPLE_METRICS` are skipped.
    values : dict
        ``{key: the scan's value}`` (the estimate the interval is about).
    config : calibviz.panel.PanelConfig
    n_resamples, confidence, random_state, progress
        As in :func:`calibviz.panel.metric_panel`.

    Returns
    -------
    dict
        ``{key: BootstrapResult}`` with the method :mod:`calibviz.metrics.intervals`
        chooses at the scan's size (Kish's effective size with weights);
        ``n_failed`` counts resamples on which the metric was undefined.

    Examples
    --------
    >>> import calibviz as cv, numpy as np, pandas as pd
    >>> from calibviz.panel import PanelConfig
    >>> rng = np.random.default_rng(0); p = rng.uniform(size=30000)
    >>> s = cv.scan(pd.DataFrame({"y": (rng.uniform(size=30000) < p).astype(int), "p": p}))
    >>> r = scan_intervals(s, ["ece"], {"ece": s.metric("ece")[0]}, PanelConfig(), 100, random_state=0)["ece"]
    >>> r.method, bool(r.low <= r.point <= r.high)
    ('bias_corrected', True)
    """
    import numbers

    if isinstance(n_resamples, bool) or not isinstance(n_resamples, numbers.Integral) or n_resamples < 0:
        raise InputError(f"n_resamples must be a whole number >= 0 (0: no intervals; e.g. 200), got {n_resamples!r}.")
    if isinstance(confidence, bool) or not isinstance(confidence, numbers.Real) or not 0 < confidence < 1:
        raise InputError(f"confidence must lie strictly between 0 and 1 (e.g. 0.95), got {confidence!r}.")
    keys = [k for k in keys if k in RESAMPLE_METRICS and k in INTERVALS]
    if not keys or not n_resamples:
        return {}
    sw, sww = scan.total_weight, float(scan._fine()["sww"].sum())
    n_rows = scan.n
    n_eff = float(n_rows) if scan._roles.weight is None else (sw * sw / sww if sww > 0 else 0.0)
    n_classes = 2 if scan.is_binary else len(scan._roles.classes)
    methods = {k: chosen_method(k, rows_per_bin(k, n_eff, n_bins=config.n_bins, n_classes=n_classes)) for k in keys}
    out = {}
    fixed = isinstance(config.scheme(), (Uniform, Custom))
    # binary ECE and ACE below their size switch: the panel's double bootstrap (bootstrap_metric) on the rows
    double = [k for k in keys if method_alternative(methods[k])[0] == DOUBLE_BASIC and scan.is_binary
              and k in ("ece", "ace") and (fixed or k == "ace")
              and rows_per_bin(k, n_rows, n_bins=config.n_bins) < INTERVALS[k].small_below]
    if double:  # a scan of at most 100 x bins rows: the panel's double bootstrap on its rows
        from ..panel import BINARY_METRICS

        y, p, w = _rows_of(scan)
        for k in double:
            out[k] = bootstrap_metric(k, lambda yy, pp, sample_weight=None, _s=BINARY_METRICS[k]: _s.compute(
                yy, pp, sample_weight, config), y, p, binning=config.scheme(), n_bins=config.n_bins, sample_weight=w,
                n_resamples=n_resamples, confidence=confidence, random_state=random_state)
    cw = "classwise_ece"
    if cw in keys and not scan.is_binary and method_alternative(methods[cw])[0] == DOUBLE_BASIC and fixed and \
            rows_per_bin(cw, n_rows, n_bins=config.n_bins) < INTERVALS[cw].small_below:
        from ..panel import MULTICLASS_METRICS
        from .classwise import class_rows

        y, P, w = class_rows(scan)  # a small scan (at most 100 x bins rows): the panel's double bootstrap
        out[cw] = bootstrap_metric(cw, lambda yy, pp, sample_weight=None, _s=MULTICLASS_METRICS[cw]: _s.compute(
            yy, pp, sample_weight, config), y, P, binning=config.scheme(), n_bins=config.n_bins,
            n_classes=n_classes, sample_weight=w, n_resamples=n_resamples, confidence=confidence,
            random_state=random_state)
    rest = [k for k in keys if k not in out]
    top = [k for k in rest if k in _TOP_LABEL]
    rest_binary = [k for k in rest if k not in _TOP_LABEL and k != cw]
    dists = resample_distributions(scan, rest_binary, config, n_resamples, random_state, progress) if rest_binary else {}
    if top:
        dists.update(_top_label_distributions(scan, top, config, n_resamples, random_state))
    if cw in rest and not scan.is_binary:  # the joint draw of the K one-vs-rest views (calibviz.scan.classwise)
        from .classwise import NoInterval, cell_table, classwise_distribution

        try:
            dists[cw] = classwise_distribution(cell_table(scan, config.scheme()), n_resamples, random_state)
        except NoInterval:
            pass  # fill_intervals shows the reason
    for k in rest:
        if k not in dists:  # top-label metrics with block bins, class-wise ECE without fixed bins (_NO_INTERVAL)
            continue
        c, dist = INTERVALS[k], dists[k]
        finite = np.isfinite(dist)
        if methods[k] == DEBIASED_BASIC:
            scheme = config.scheme() if _L2_SMALL[k] == "config" else EqualMass(config.n_bins)
            stats = scan.bin_statistics(scheme)
            res = debiased_l2_from_distribution(dists[k + "^2"][np.isfinite(dists[k + "^2"])],
                                                _debiased_from_stats(stats, squared=True),
                                                _norm_of_gaps(stats, "l2") ** 2, confidence=confidence,
                                                squared=False, estimate="debiased" if k == "debiased_ece" else "plugin",
                                                n_failed=int((~np.isfinite(dists[k + "^2"])).sum()))
        else:  # the main method, or a single-level small-sample one (a one-sided bound: method_alternative)
            method, alternative = ((c.method, c.alternative) if methods[k] in (c.method, DOUBLE_BASIC, DOUBLE_UPPER)
                                   else method_alternative(methods[k]))
            res = interval_from_distribution(dist[finite], values[k], method=method, confidence=confidence,
                                             alternative=alternative, bounds=c.bounds)
            res = replace(res, n_resamples=int(n_resamples), n_failed=int((~finite).sum()))
        out[k] = res
    return out


#: Why a scan's metric has no bootstrap interval (shown in its note).
_NO_INTERVAL = {
    "top_label_ece": "No bootstrap interval for top-label metrics with PAVA, PAVA-BC or median-variance bins on a "
                     "scan (a refit per class view and resample); choose uniform or equal-mass bins for one.",
    None: f"No bootstrap interval for this metric on a scan yet; analyse {IN_MEMORY} for one.",
}


def fill_intervals(scan, rows: list, specs, config, n_resamples: int, confidence: float, random_state,
                   progress=None) -> list:
    """Fill ``low``, ``high``, ``interval`` and ``note`` of a scan's panel rows as :func:`metric_panel` does."""
    from ..panel import _outside_note

    values = {r["metric"]: r["value"] for r in rows}
    keys = [s.key for s in specs if s.bootstrap and np.isfinite(values.get(s.key, np.nan))]
    if not scan.is_binary:
        keys = [k for k in keys if k in ("confidence_ece", "classwise_ece", *_TOP_LABEL)]
    results = scan_intervals(scan, keys, values, config, n_resamples, confidence, random_state, progress)
    sw, sww = scan.total_weight, float(scan._fine()["sww"].sum())
    n_eff = float(scan.n) if scan._roles.weight is None else (sw * sw / sww if sww > 0 else 0.0)
    n_classes = 2 if scan.is_binary else len(scan._roles.classes)
    for row, spec in zip(rows, specs):
        res: BootstrapResult | None = results.get(spec.key)
        if res is None:
            if spec.bootstrap and np.isfinite(row["value"]):
                if spec.key == "classwise_ece" and not scan.is_binary:
                    from .classwise import no_interval_reason

                    why = no_interval_reason(scan, config) or _NO_INTERVAL[None]
                else:
                    why = _NO_INTERVAL.get("top_label_ece" if spec.key in _TOP_LABEL else spec.key,
                                           _NO_INTERVAL[None])
                row["note"] = " ".join(t for t in (row["note"], why) if t)
            continue
        low, high, method = res.low, res.high, res.method
        if res.alternative == "less":
            low, method = -np.inf, f"{method}, upper bound"
        approx = coverage_note(spec.key, n_eff, n_bins=config.n_bins, n_classes=n_classes, method=res.method,
                               alternative=res.alternative)
        outside = _outside_note(spec, row["value"], low, high, method, res.debiased)
        row.update(low=float(low), high=float(high), interval=method,
                   note=" ".join(t for t in (row["note"], outside, approx) if t))
    return rows
