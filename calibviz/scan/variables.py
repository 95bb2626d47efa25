"""The variable ranking (VECE, Kelly & Smyth 2023) of a scan: sums per feature bucket, never the rows.

VECE (Eq. 7) bins the rows along a variable x and sums, per bin, the gap
between the top-label error and the predicted error ``1 - confidence``;
:func:`calibviz.variables.variable_ranking` ranks the features by it. Every
number of that ranking except max-VCE is a function of per-bin sums, so a scan
computes it with one aggregation per feature
(:func:`calibviz.scan.aggregate.variable_groups`, written once with Narwhals:
DuckDB, Polars and Spark run the same code):

* a **categorical** column (text, boolean, category) is grouped by its value:
  one group per level, pooled afterwards exactly as
  :func:`calibviz.variables.level_codes` pools them. At most
  :data:`MAX_SCAN_LEVELS` distinct values come back to the driver; a column
  with more (an id, a free-text field) is refused with an error that says so.
* a **numeric** column gets equal-mass bins over x (:func:`calibviz.metrics.variable_bins`:
  split at the sorted positions floor(j n / B), ties moved to the nearer end
  of their run). A first, shared pass reads each numeric feature's range; the
  feature's pass sums per fine bucket (2^16 equal-width buckets on that
  range; bucket order is x order). A bucket that holds a split position and
  more than one value of x is refined by a second pass restricted to that
  bucket's range: 2^16 sub-buckets, or one group per exact value once the
  bucket holds at most 2^16 rows, until each split sits in a group of one
  value. The cut points are then exact, and so are the bins: the VECE, the
  number of bins and the interval equal the in-memory ones up to the order
  of float summation (tested to 1e-9 relative).

With weights, a cut that falls inside a run of tied x values whose rows carry
different weights is placed as if the run's smallest weight came first: the
in-memory ranking decides it by the weight of the run's first row in numpy's
sort order, which is unspecified for ties (shuffling the rows of small
weighted samples with ties changed the in-memory VECE in 7 of 200 cases).
Without weights, or with weights equal within each run, the bins are exact.

What needs the rows is not computed: max-VCE and the x where it occurs are
the largest gap of two LOESS curves (Sec. 6.1), which a scan cannot fit from
sums; they are NaN for numeric features (a categorical column's max-VCE, the
largest per-level gap, is a sum and is given). The interval is always the
fixed-bin Poisson-normal bootstrap (``ci_method`` "poisson-normal, fixed
bins"), which the in-memory ranking also uses above ``bootstrap_max_rows``
(5000) rows; the row bootstrap it uses below that needs the rows.
"""
from __future__ import annotations

from typing import Callable

import narwhals as nw
import numpy as np
import pandas as pd

from ..errors import InputError
from ..stats import cumulant_abs_sum_p
from ..variables import (MAX_LEVELS, MIN_LEVEL_ROWS, MISSING_LEVEL, OTHER_LEVELS, _RANKING_COLUMNS, _fixed_bin_interval,
                         adjusted, reference_draws)
from . import aggregate as _agg
from .source import IN_MEMORY

__all__ = ["variable_ranking", "MAX_SCAN_LEVELS", "EXACT_ROWS"]

#: Most distinct values of a categorical feature a scan brings back (its per-level sums).
MAX_SCAN_LEVELS = 10_000
#: A bucket holding a split with at most this many rows is refined to its exact values, larger ones to sub-buckets.
EXACT_ROWS = 1 << 16
#: Refining passes of one numeric feature; each narrows a split's range 2^16-fold (4 suffice for 10^12 rows of
#: floats spread over 12 orders of magnitude); more means values spread over hundreds of orders of magnitude.
MAX_ROUNDS = 12
_SUMS = ("n", "sw", "sd", "sdd", "sdw", "sww", "sv", "sk")
#: Newton passes of the score's logistic recalibration before giving up (from the identity 4-8 reach round-off, a
#: steep slope or halved steps a few more; separated outcomes never settle, each pass costs one read of the rows).
MAX_RECALIBRATION_PASSES = 40
_CI_METHOD = "poisson-normal, fixed bins"
MAX_VCE_NOTE = (f"max-VCE of a numeric feature is the largest gap between two LOESS curves, which need {IN_MEMORY}: "
                "a scan leaves it empty. A categorical feature's max-VCE is its largest per-level gap.")


def _is_numeric(dtype) -> bool:
    return dtype.is_numeric() and dtype != nw.Boolean


def _sorted_groups(table: pd.DataFrame, names) -> dict:
    """Arrays of the groups of a numeric feature, in x order (groups are disjoint intervals of x); ``names``: the
    recalibrated sums (:func:`calibviz.scan.aggregate.recalibrated_sums`), NaN where not summed."""
    table = _with_recalibrated(table, names).sort_values("xmin", kind="stable")
    return {c: table[c].to_numpy(np.float64) for c in (*_SUMS, *names, "xmin", "xmax", "wmin")}


def _with_recalibrated(table: pd.DataFrame, names) -> pd.DataFrame:
    """The groups' table with the recalibrated sums ``names`` NaN where they were not summed."""
    missing = [c for c in names if c not in table]
    return table.assign(**{c: np.nan for c in missing}) if missing else table


def _recalibrations(scan, numeric, ranges) -> tuple[list, object]:
    """The score's logistic recalibration (:func:`calibviz.metrics.variable.score_recalibrated_errors`) over each
    numeric feature's rows with a value, and over every row (the categorical features'): per fit a dict of its
    coefficients ``coef``, ``m = sum w v x x^T`` and ``var_c = sum w^2 v x x^T`` (v = q (1 - q)), or None where it
    has no maximum. Damped Newton steps as :func:`calibviz.metrics.logistic.logistic_fit` takes them (the step
    halved while the loss grows), one pass over the rows per step for all features, from the identity map, until
    the Newton decrement is round-off (the last full step then taken); None where the outcomes are all of one kind
    or the fit does not settle within :data:`MAX_RECALIBRATION_PASSES` (scores that separate the outcomes, whose
    coefficients run off: the in-memory fit raises there and the ranking gives NaN as well). ``ranges``:
    :func:`calibviz.scan.aggregate.variable_ranges`' row, whose weights and hits tell the one-kind fits apart
    before any pass (Newton's steps only creep towards an infinite intercept there)."""
    # a feature with a value on every row is fitted on every row: it shares the overall fit (its own passes made
    # the ranking of a 10^6-row log twice as slow, a review)
    partial = [i for i in range(len(numeric)) if int(ranges[f"n{i}"]) != int(ranges["n"])]
    fits, overall = _newton_fits(scan, [numeric[i] for i in partial], [str(i) for i in partial], ranges)
    shared = dict(zip(partial, fits))
    return [shared.get(i, overall) for i in range(len(numeric))], overall


def _newton_fits(scan, numeric, suffixes, ranges) -> tuple[list, object]:
    """:func:`_recalibrations`' fits over the rows where each of ``numeric`` has a value (``suffixes``: their
    positions in ``ranges``) and over every row, by damped Newton passes."""
    cols = [*numeric, None]
    k = len(_agg._design(scan._roles))
    coef = np.zeros((len(cols), k))
    coef[:, 1] = 1.0
    best = [None] * len(cols)  # (coef, loss, m, var_c, step) of the last accepted point
    settled = np.zeros(len(cols), bool)
    weight, hits = (np.array([float(ranges[f"{name}{j}"]) for j in [*suffixes, ""]]) for name in ("sw", "st"))
    failed = ~((hits > 0) & (hits < weight))
    for _ in range(MAX_RECALIBRATION_PASSES):
        if (settled | failed).all():
            break
        sums = _agg.recalibration_sums(scan._frame, scan._roles, cols, coef).iloc[0]
        for j in np.flatnonzero(~(settled | failed)):
            loss = float(sums[f"loss{j}"])
            if best[j] is not None and loss > best[j][1] + 1e-12 * abs(best[j][1]):
                step = best[j][4] / 2.0  # the full step overshot: halve it from the last accepted point
                if np.abs(step).max() < 1e-14:
                    settled[j] = True
                    coef[j] = best[j][0]
                    continue
                coef[j] = best[j][0] + step
                best[j] = (*best[j][:4], step)
                continue
            grad = np.array([float(sums[f"f{j}_{a}"]) for a in range(k)])
            m, var_c = (np.array([[float(sums[f"{x}{j}_{min(a, b)}{max(a, b)}"]) for b in range(k)]
                                  for a in range(k)]) for x in ("h", "c"))
            if not np.isfinite(m).all() or np.abs(coef[j]).max() > 1e6:
                failed[j] = True
                continue
            # a design column constant or missing on these rows (one score everywhere, one side only) makes m
            # singular: its direction gets no step (rcond), as logistic_fit's least-squares fallback
            step = np.linalg.lstsq(m, grad, rcond=1e-10)[0]
            best[j] = (coef[j].copy(), loss, m, var_c, step)
            coef[j] = coef[j] + step
            if float(grad @ step) <= 1e-13 * abs(loss):  # the Newton decrement: this last full step is round-off
                settled[j] = True
                best[j] = (coef[j].copy(), *best[j][1:])
    fits = []
    for j in range(len(cols)):
        ok = settled[j] and best[j] is not None and np.isfinite(best[j][0]).all()
        fits.append(dict(coef=best[j][0], m=best[j][2], var_c=best[j][3]) if ok else None)
    return fits[:-1], fits[-1]


def _splits(g: dict, n_bins: int, weighted: bool):
    """(cut values, None) as :func:`calibviz.metrics.variable._sorted_splits` / ``_move_splits`` make them, or
    (None, indices of the groups to refine: they hold a split position and more than one value)."""
    count = g["n"]
    end = np.cumsum(count)
    first = end - count
    N = int(round(end[-1]))
    j = np.arange(1, n_bins)
    if weighted:
        cw_end = np.cumsum(g["sw"])
        cw_start = cw_end - g["sw"]
        target = j * cw_end[-1] / n_bins
        at = np.minimum(np.searchsorted(cw_end, target, side="right"), count.shape[0] - 1)
    else:
        target = j * N / n_bins
        kth = np.clip(np.floor(target).astype(np.int64), 0, N - 1)
        at = np.searchsorted(end, kth, side="right")
    wide = g["xmin"][at] < g["xmax"][at]
    if wide.any():
        return None, np.unique(at[wide])
    vals, a, b = g["xmin"][at], first[at], end[at]
    if weighted:
        # the split row is the run's first row iff the run's first row carries the target (in memory: a >= kth);
        # rows of one value come in an unspecified order there: the run's smallest weight stands for its first row
        before_a, before_b = cw_start[at], cw_end[at]
        at_start = (target < before_a + g["wmin"][at]) | ((target - before_a) <= (before_b - target))
    else:
        at_start = (a >= kth) | ((target - a) <= (b - target))
    cuts = np.where(at_start, vals, np.nextafter(vals, np.inf))
    pos = np.where(at_start, a, b)
    cuts = np.unique(cuts[(pos > 0) & (pos < N)])
    # a group that a cut would split (cannot happen once every split value is a group of its own; checked anyway)
    holder = np.maximum(np.searchsorted(g["xmin"], cuts, side="left") - 1, 0)  # last group starting below the cut
    straddle = holder[(g["xmin"][holder] < cuts) & (cuts <= g["xmax"][holder])]
    if straddle.size:
        return None, np.unique(straddle)
    return cuts, None


def _numeric_sums(scan, column: str, lo: float, hi: float, n_bins: int, recalibration=None):
    """Per-bin sums (d, W, qdd, qdw, qww), null cumulants (sv, sk), bin count, rows, and the sums of the test beyond
    the score's miscalibration (:func:`~calibviz.scan.aggregate.recalibrated_sums`; NaN without
    ``recalibration``, the fit's coefficients) of a numeric feature's equal-mass bins."""
    frame, roles = scan._frame, scan._roles
    weighted = roles.weight is not None
    names = _agg.recalibrated_sums(roles)
    g = _sorted_groups(_agg.variable_groups(frame, roles, column, kind="bucket", ranges=[(lo, hi)],
                                            recalibration=recalibration), names)
    for _ in range(MAX_ROUNDS):
        cuts, refine = _splits(g, n_bins, weighted)
        if cuts is not None:
            break
        small = [i for i in refine if g["n"][i] <= EXACT_ROWS]
        large = [i for i in refine if g["n"][i] > EXACT_ROWS]
        parts = [pd.DataFrame({c: np.delete(v, refine) for c, v in g.items()})]
        for kind, idx in (("exact", small), ("bucket", large)):
            if idx:
                ranges = [(float(g["xmin"][i]), float(g["xmax"][i])) for i in idx]
                parts.append(_with_recalibrated(_agg.variable_groups(frame, roles, column, kind=kind, ranges=ranges,
                                                                     recalibration=recalibration), names))
        g = _sorted_groups(pd.concat([p[[*_SUMS, *names, "xmin", "xmax", "wmin"]] for p in parts],
                                     ignore_index=True), names)
    else:
        raise InputError(f"feature {column!r}: its values spread over too many orders of magnitude to place the "
                         f"equal-mass cuts exactly in {MAX_ROUNDS} passes; rank a transformed column (e.g. its "
                         "logarithm) instead.")
    index = np.searchsorted(cuts, g["xmin"], side="right")
    used, index = np.unique(index, return_inverse=True)  # non-empty bins, numbered in x order
    m = used.shape[0]

    def total(c):
        return np.bincount(index, weights=g[c], minlength=m)

    return ((total("sd"), total("sw"), total("sdd"), total("sdw"), total("sww")), (total("sv"), total("sk")), m,
            int(round(g["n"].sum())), {c: total(c) for c in names})


def _level_groups(names: list, count: np.ndarray, weight: np.ndarray, max_levels, min_level_rows):
    """Group of each level and group names, as :func:`calibviz.variables.level_codes` groups rows (from counts)."""
    L = len(names)
    big = np.flatnonzero(count >= min_level_rows)
    keep = big[np.lexsort((np.array([str(names[k]) for k in big], dtype=str), -weight[big]))] if big.size else big
    if max_levels is not None:
        keep = keep[:max(1, int(max_levels))]
    n_pooled = L - keep.size
    if n_pooled == 1:  # a single leftover level keeps its name
        keep = np.concatenate([keep, np.setdiff1d(np.arange(L), keep)])
        n_pooled = 0
    group = np.full(L, keep.size, dtype=np.int64)
    group[keep] = np.arange(keep.size)
    return group, [names[k] for k in keep] + ([OTHER_LEVELS] if n_pooled else [])


def _categorical_sums(scan, column: str, max_levels, min_level_rows, max_distinct: int, recalibration=None):
    """Per-group sums, null cumulants, group names, rows per group, total rows and the sums of the test beyond the
    score's miscalibration of a categorical feature; None if < 2 groups."""
    recal = _agg.recalibrated_sums(scan._roles)
    t = _with_recalibrated(_agg.variable_groups(scan._frame, scan._roles, column, kind="level",
                                                limit=max_distinct + 1, recalibration=recalibration), recal)
    if len(t) > max_distinct:
        raise InputError(f"feature {column!r} has more than {max_distinct} distinct values; a scan ranks a "
                         f"categorical column by its levels and brings at most {max_distinct} of them back. Leave it "
                         "out of features=, or group its values in the source (a coarser column or a SQL CASE).")
    key = t["_k"].astype(object)
    t["_k"] = key.where(key.notna(), MISSING_LEVEL)
    # "<missing>" given as text; min_count: a sum not made stays NaN
    t = t.groupby("_k", sort=False, dropna=False)[[*_SUMS, *recal]].sum(min_count=1).reset_index()
    names = [v.item() if isinstance(v, np.generic) else v for v in t["_k"]]
    count = t["n"].to_numpy(np.float64)
    n = int(round(count.sum()))
    if n < 2:
        return None
    weight = count if scan._roles.weight is None else t["sw"].to_numpy(np.float64)
    group, gnames = _level_groups(names, count, weight, max_levels, min_level_rows)
    m = len(gnames)
    if m < 2:
        return None

    def total(c):
        return np.bincount(group, weights=t[c].to_numpy(np.float64), minlength=m)

    sums = (total("sd"), total("sw"), total("sdd"), total("sdw"), total("sww"))
    return sums, (total("sv"), total("sk")), gnames, total("n"), n, {c: total(c) for c in recal}


def variable_ranking(scan, features=None, *, n_bins: int = 10, n_resamples: int = 200, confidence: float = 0.95,
                     random_state=0, progress: Callable[[int, int], None] | None = None, categorical: bool = True,
                     max_levels: int = MAX_LEVELS, min_level_rows: int = MIN_LEVEL_ROWS,
                     max_distinct: int = MAX_SCAN_LEVELS) -> pd.DataFrame:
    """:func:`calibviz.variables.variable_ranking` of a scan (see :meth:`calibviz.scan.Scan.variable_ranking`)."""
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise InputError(f"n_bins must be a positive integer, got {n_bins!r}.")
    if isinstance(max_distinct, bool) or not isinstance(max_distinct, (int, np.integer)) or max_distinct < 2:
        raise InputError(f"max_distinct must be an integer of at least 2, got {max_distinct!r}.")
    if features is None:
        features = list(scan.mapping.features) if scan.mapping is not None else []
    elif isinstance(features, str):
        features = [features]
    features = list(dict.fromkeys(features))
    schema = dict(scan._frame.collect_schema())
    unknown = [c for c in features if c not in schema]
    if unknown:
        raise InputError(f"feature column(s) {unknown!r} are not in {scan.source}; its columns are "
                         f"{list(schema)[:20]!r}{' ...' if len(schema) > 20 else ''}.")
    if not features:
        raise InputError(f"{scan.source} has no feature columns to rank; name them with features=[...].")
    numeric = [c for c in features if _is_numeric(schema[c])]
    others = [c for c in features if c not in set(numeric)] if categorical else []
    if not numeric and not others:
        raise InputError("features has no numeric columns to rank; pass categorical=True to rank the others.")
    scan._fine()  # validates the rows (bad rows are reported, never dropped); cached for every other result
    rng = np.random.default_rng(random_state)
    # the in-memory ranking's streams, one per feature: wherever both draw Gaussian bins, its p-values
    ref_streams = rng.spawn(1)[0].spawn(len(numeric) + len(others))
    gap_streams = rng.spawn(1)[0].spawn(len(numeric) + len(others))
    n_reference = reference_draws(len(numeric) + len(others), confidence)
    nan = float("nan")

    def interval(sums):
        if not n_resamples:
            return nan, nan, "none"
        return (*_fixed_bin_interval(*sums, n_resamples, confidence, rng), _CI_METHOD)

    n_design = (len(_agg.recalibrated_sums(scan._roles)) - 3) // 2  # the recalibration's design columns

    def reference(sums, cumulants, recalibrated, fit, i):
        observed = float(np.abs(sums[0]).sum())
        p_value, _, draws = cumulant_abs_sum_p(*cumulants, observed, n_draws=n_reference, random_state=ref_streams[i])
        r = recalibrated
        p_varies = float("nan")
        if fit is not None and not np.isnan(r["so"]).any():
            # the in-memory ranking's _beyond_score_p from the bins' sums (its Gaussian draws where no bin is
            # skewed): sum w (error - r) = sum w (q - r) - sum w (q - error), q the predicted error, r the
            # recalibrated one; the refit's per-bin sums sc (w^2) and sa (w), overall var_c and m from the fit
            refit = (np.column_stack([r[f"sc{a}"] for a in range(n_design)]), fit["var_c"],
                     np.column_stack([r[f"sa{a}"] for a in range(n_design)]), fit["m"])
            p_varies = cumulant_abs_sum_p(r["sv1"], r["sk1"], float(np.abs(r["so"] - sums[0]).sum()),
                                          n_draws=n_reference, random_state=gap_streams[i], refit=refit)[0]
        return dict(p_value=p_value, n_reference=draws, p_varies=p_varies)

    rows, total, done = [], len(numeric) + len(others), 0
    # one cheap pass: each numeric feature's range, and the overall gap (VECE's floor, the in-memory attrs["mean_gap"])
    ranges = _agg.variable_ranges(scan._frame, scan._roles, numeric).iloc[0]
    numeric_fits, overall_fit = _recalibrations(scan, numeric, ranges)
    for i, col in enumerate(numeric):
        lo, hi, n_finite = float(ranges[f"lo{i}"]), float(ranges[f"hi{i}"]), int(ranges[f"n{i}"])
        if n_finite >= 2 and lo < hi:  # else empty or constant: nothing to rank (as in memory)
            fit = numeric_fits[i]
            sums, cumulants, m, n, recalibrated = _numeric_sums(scan, col, lo, hi, n_bins,
                                                                None if fit is None else fit["coef"])
            vece = float(np.abs(sums[0]).sum() / sums[1].sum())
            low, high, method = interval(sums)
            rows.append(dict(feature=col, type="numeric", vece=vece, vece_low=low, vece_high=high, max_vce=nan,
                             x_at_max_vce=nan, level_at_max_vce=None, n=n, n_bins=m, ci_method=method,
                             **reference(sums, cumulants, recalibrated, fit, i)))
        done += 1
        if progress is not None:
            progress(done, total)
    for col in others:
        res = _categorical_sums(scan, col, max_levels, min_level_rows, max_distinct,
                                None if overall_fit is None else overall_fit["coef"])
        if res is not None:
            sums, cumulants, gnames, counts, n, recalibrated = res
            vece = float(np.abs(sums[0]).sum() / sums[1].sum())
            low, high, method = interval(sums)
            gap = np.abs(np.divide(sums[0], sums[1], out=np.zeros(len(gnames)), where=sums[1] > 0))
            eligible = counts >= min_level_rows
            k = int(np.argmax(np.where(eligible, gap, -1.0))) if eligible.any() else None
            rows.append(dict(feature=col, type="categorical", vece=vece, vece_low=low, vece_high=high,
                             max_vce=nan if k is None else float(gap[k]), x_at_max_vce=nan,
                             level_at_max_vce=None if k is None else gnames[k], n=n, n_bins=len(gnames),
                             ci_method=method, **reference(sums, cumulants, recalibrated, overall_fit, done)))
        done += 1
        if progress is not None:
            progress(done, total)
    out = adjusted(pd.DataFrame(rows, columns=_RANKING_COLUMNS))
    out.attrs.update(engine=scan.engine, n_bins=n_bins, note=MAX_VCE_NOTE if numeric else "",
                     mean_gap=-float(ranges["sd"]) / float(ranges["sw"]) if float(ranges["sw"]) > 0 else float("nan"))
    return out
