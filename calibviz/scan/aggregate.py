"""The one aggregation of a scan, written once with Narwhals' lazy API.

Every binned view of calibviz is a function of per-bin sums (DESIGN.md §2,
§8). A scan therefore asks its engine (DuckDB, Polars or Spark, through
Narwhals) for one small table: the sums of the rows per *fine bucket* of the
score, ``b(p) = min(floor(p * 2**16), 2**16 - 1)``, and per label, with the
smallest and largest score of each bucket. ``p * 2**16`` is exact in float64
and ``floor`` is exact, so every engine puts every row in the same bucket.
Buckets are non-decreasing in p: bucket order is score order.

Rows that fail validation are not dropped: they go to negative bucket ids
(:data:`BAD_SCORE` ...) and the label code -1 / -2, so one pass both sums the
good rows and counts the bad ones, which :mod:`calibviz.scan` then reports.

The second pass (:func:`exact_atoms`) groups the rows of a few buckets by
their exact score, for the binning decisions that buckets cannot make.
"""
from __future__ import annotations

from dataclasses import dataclass

import narwhals as nw
import numpy as np
import pandas as pd

from ..metrics.scores import LOG_LOSS_EPS

__all__ = ["FINE_BUCKETS", "Roles", "fine_table", "exact_atoms", "SUMS"]

#: Fine score buckets of the first pass (2**16; a multiple of smECE's 2**14 grid).
FINE_BUCKETS = 1 << 16
#: Bucket ids of rows that are no valid prediction.
BAD_SCORE = -1  # probability missing, NaN or infinite
OUT_OF_RANGE = -2  # probability outside [0, 1]
BAD_WEIGHT = -3  # weight missing, NaN, infinite or negative
ZERO_WEIGHT = -4  # weight 0: an absent row (DESIGN.md §4), counted, never summed
BAD_SUM = -5  # two class columns that do not sum to 1 (tolerance as load_predictions)
#: Label codes of rows whose label is no class (-1) or missing (-2).
UNKNOWN_LABEL, MISSING_LABEL = -1, -2

#: The sums of every group (a bucket or an exact score, and a label), in this order.
SUMS = ("n", "sw", "swp", "swpp", "sww", "sll", "snum", "sden", "pmin", "pmax")


@dataclass(frozen=True)
class Roles:
    """Resolved columns of one binary model (see :func:`calibviz.scan.source.resolve_roles`).

    ``probs`` holds one column (P(positive)) or two (P(negative), P(positive)),
    renormalised by their sum as :func:`calibviz.load_predictions` does.
    ``positive`` / ``negative`` are the label values of classes 1 and 0;
    ``model`` is (column, value) of a long-format model column, or None.
    """

    label: str
    probs: tuple
    negative: object
    positive: object
    weight: str | None = None
    model: tuple | None = None
    sum_tolerance: float = 1e-3
    #: "binary", or "confidence": the top-class view of K >= 3 class columns (``probs``, in ``classes`` order):
    #: p = max_k P_k (rows renormalised), y = 1 iff the label is the argmax class (ties to the first class)
    view: str = "binary"
    classes: tuple = ()
    #: the class of a "class" view (one-vs-rest of K >= 3 class columns): p = P_target, y = 1{label = target}
    target: int | None = None


def _score(roles: Roles):
    cols = [nw.col(c).cast(nw.Float64) for c in roles.probs]
    if len(cols) == 1:
        return cols[0], None
    total = cols[0] + cols[1]
    return cols[1] / total, total


def _confidence(frame: nw.LazyFrame, roles: Roles) -> nw.LazyFrame:
    """The confidence view of K class columns: a score column ``_conf`` and a label column ``_correct``."""
    cols = [nw.col(c).cast(nw.Float64) for c in roles.probs]
    total = cols[0]
    for c in cols[1:]:
        total = total + c
    q = [c / total for c in cols]  # renormalised as load_predictions does (block / row sums)
    if roles.view == "class":  # one-vs-rest: the target class's probability against 1{label = target}
        top, pred = q[roles.target], nw.lit(roles.classes[roles.target])
    else:
        top = nw.max_horizontal(*q)
        pred = nw.when(q[0] == top).then(nw.lit(roles.classes[0]))
        for qk, cls in zip(q[1:], roles.classes[1:]):
            pred = pred.when(qk == top).then(nw.lit(cls))
    label = nw.col(roles.label)
    correct = (nw.when(label.is_null()).then(nw.lit(None))
               .when(~label.is_in(list(roles.classes))).then(nw.lit(-1))
               .when(label == pred).then(nw.lit(1)).otherwise(nw.lit(0)))
    bad = nw.lit(False)
    out = nw.lit(False)
    for c in cols:
        bad = bad | c.is_null() | ~c.is_finite()
        out = out | (c < 0) | (c > 1)
    score = (nw.when(bad).then(nw.lit(float("nan"))).when(out).then(nw.lit(2.0))
             .when((total - 1.0).abs() > roles.sum_tolerance).then(nw.lit(-1.0)).otherwise(top))
    keep = [roles.weight] if roles.weight else []
    return frame.select(*keep, _conf=score, _correct=correct.cast(nw.Int64))


def _prepared(frame: nw.LazyFrame, roles: Roles) -> nw.LazyFrame:
    """Columns ``_p`` (score), ``_y`` (label code), ``_w`` (weight), ``_b`` (bucket or a bad-row code)."""
    if roles.model is not None:
        frame = frame.filter(nw.col(roles.model[0]) == roles.model[1])
    if roles.view in ("confidence", "class"):
        # reduce to a binary view (_conf, _correct): a NaN score marks bad cells, 2 a cell outside [0, 1],
        # -1 rows that do not sum to 1; the binary code below turns them into the bad-row codes
        frame = _confidence(frame, roles)
        roles = Roles("_correct", ("_conf",), 0, 1, roles.weight)
    p, total = _score(roles)
    label = nw.col(roles.label)
    y = (nw.when(label.is_null()).then(nw.lit(MISSING_LABEL))
         .when(label == roles.positive).then(nw.lit(1))
         .when(label == roles.negative).then(nw.lit(0))
         .otherwise(nw.lit(UNKNOWN_LABEL)))
    w = nw.col(roles.weight).cast(nw.Float64) if roles.weight else nw.lit(1.0)
    raw = nw.col(roles.probs[0]).cast(nw.Float64) if total is None else total
    bad = raw.is_null() | ~raw.is_finite()  # is_finite is False for NaN and +-inf on every engine
    if total is not None:
        first = nw.col(roles.probs[0]).cast(nw.Float64)
        bad = bad | first.is_null() | ~first.is_finite()
    chain = nw.when(bad).then(nw.lit(BAD_SCORE))
    if total is not None:
        both = [nw.col(c).cast(nw.Float64) for c in roles.probs]
        chain = chain.when((both[0] < 0) | (both[0] > 1) | (both[1] < 0) | (both[1] > 1)).then(nw.lit(OUT_OF_RANGE))
        chain = chain.when((total - 1.0).abs() > roles.sum_tolerance).then(nw.lit(BAD_SUM))
    else:
        if roles.label == "_correct":  # the confidence view marks rows that do not sum to 1 with -1
            chain = chain.when(p == -1.0).then(nw.lit(BAD_SUM))
        chain = chain.when((p < 0) | (p > 1)).then(nw.lit(OUT_OF_RANGE))
    if roles.weight:
        wc = nw.col(roles.weight).cast(nw.Float64)
        chain = chain.when(wc.is_null() | ~wc.is_finite() | (wc < 0)).then(nw.lit(BAD_WEIGHT))
        chain = chain.when(wc == 0).then(nw.lit(ZERO_WEIGHT))
    bucket = chain.otherwise((p * float(FINE_BUCKETS)).floor().clip(upper_bound=FINE_BUCKETS - 1)).cast(nw.Int64)
    pc = p.clip(LOG_LOSS_EPS, 1.0 - LOG_LOSS_EPS)
    # the probability given to the observed outcome (metrics.log_loss: the same float operations), once per row
    given = nw.when(label == roles.positive).then(pc).otherwise(1.0 - pc)
    return frame.select(_p=p, _y=y.cast(nw.Int64), _w=w, _b=bucket, _g=given)


def _sums(weighted: bool):
    """The aggregations of one group: the per-row terms of every binned metric, Brier, log loss, Z."""
    p, y, w = nw.col("_p"), nw.col("_y"), nw.col("_w")
    loss = -nw.col("_g").log()  # -log of the probability given to the observed outcome
    a = 1.0 - 2.0 * p  # Spiegelhalter's Z: (y - p)(1 - 2p) and (1 - 2p)^2 p (1 - p) (metrics.spiegelhalter_z)
    num, den = (y - p) * a, a * a * p * (1.0 - p)
    if weighted:
        sums = [w.sum().alias("sw"), (w * p).sum().alias("swp"), (w * p * p).sum().alias("swpp"),
                (w * w).sum().alias("sww"), (w * loss).sum().alias("sll"), (w * num).sum().alias("snum"),
                (w * den).sum().alias("sden")]
    else:
        sums = [p.sum().alias("swp"), (p * p).sum().alias("swpp"), loss.sum().alias("sll"),
                num.sum().alias("snum"), den.sum().alias("sden")]
    return [nw.len().alias("n"), *sums, p.min().alias("pmin"), p.max().alias("pmax")]


def _collect(frame: nw.LazyFrame) -> pd.DataFrame:
    out = frame.collect().to_pandas()
    if "sw" not in out:  # unweighted: weights are the counts
        out["sw"] = out["n"].astype(np.float64)
        out["sww"] = out["sw"]
    return out


def fine_table(frame: nw.LazyFrame, roles: Roles, exact_buckets=()) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Sums per (fine bucket, label code): the first pass over the rows.

    Returns ``(fine, exact)``: ``fine`` has the columns ``_b``, ``_y`` and
    :data:`SUMS` (bad rows sit in negative buckets or label codes, see the
    module docstring); ``exact`` has the sums per exact score (``_p``) of the
    rows in ``exact_buckets``, buckets known in advance to need them (those
    holding a Uniform edge), grouped in the same pass at no extra cost.
    """
    weighted = roles.weight is not None
    ids = [int(b) for b in exact_buckets]
    prepared = _prepared(frame, roles)
    if not ids:
        return _collect(prepared.group_by("_b", "_y").agg(*_sums(weighted))), None
    keyed = prepared.with_columns(_e=nw.when(nw.col("_b").is_in(ids)).then(nw.col("_p")))
    both = _collect(keyed.group_by("_b", "_y", "_e").agg(*_sums(weighted)))
    has = both["_e"].notna()
    exact = both[has].rename(columns={"_e": "_p"}).reset_index(drop=True)
    sums = {c: ("min" if c == "pmin" else "max" if c == "pmax" else "sum") for c in SUMS}
    fine = both.groupby(["_b", "_y"], as_index=False, sort=False).agg(sums)
    return fine, exact


def exact_atoms(frame: nw.LazyFrame, roles: Roles, buckets) -> pd.DataFrame:
    """Sums per (exact score, label) of the rows in ``buckets``: the refining pass.

    Returns the columns ``_b``, ``_p``, ``_y`` and :data:`SUMS`.
    """
    weighted = roles.weight is not None
    ids = [int(b) for b in buckets]
    # cheap pre-filter on the raw score (a few narrow ranges) before the per-row terms are computed
    if len(roles.probs) == 1 and roles.model is None and roles.view == "binary" and ids:
        raw = nw.col(roles.probs[0]).cast(nw.Float64)
        h = float(FINE_BUCKETS)
        ranges = [(raw >= b / h) & (raw < (b + 1) / h) if b < FINE_BUCKETS - 1 else (raw >= b / h) for b in ids]
        keep = ranges[0]
        for r in ranges[1:]:
            keep = keep | r
        frame = frame.filter(keep)
    sub = _prepared(frame, roles).filter(nw.col("_b").is_in(ids))
    return _collect(sub.group_by("_b", "_p", "_y").agg(*_sums(weighted)))
