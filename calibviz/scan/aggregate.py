"""The one aggregation of a scan, written once with Narwhals' lazy API.

Every binned view of calibviz is a function of per-bin sums (DESIGN.md §2,
§8). A scan therefore asks its engine (DuckDB, Polars or Spark, through
Narwhals) for one small table: the sums of the rows per *fine bucket* of the
score, ``b(p) = min(floor(p * 2**16), 2**16 - 1)``, and per label, with the
smallest and largest score of each bucket where results read them (otherwise
the bucket's bounds stand for them, ``ranged`` False). ``p * 2**16`` is exact in float64
and ``floor`` is exact, so every engine puts every row in the same bucket.
Buckets are non-decreasing in p: bucket order is score order.

Rows that fail validation are not dropped: they go to negative bucket ids
(:data:`BAD_SCORE` ...) and the label code -1 / -2, so one pass both sums the
good rows and counts the bad ones, which :mod:`calibviz.scan` then reports.

The second pass (:func:`exact_atoms`) groups the rows of a few buckets by
their exact score, for the binning decisions that buckets cannot make.

Cost (DuckDB, 10^8 rows on 2 cores, wall): the hand-written bucket query
(count, sums of p and p^2 per bucket and label) 2.9-3.7 s, 3.3-4.9 s with
the bucket's smallest and largest score. Every aggregate and every CASE
evaluated per row shows (an extra plain sum costs ~0.7 s), so the validating
pass holds only the label code and the validity of the score (one CASE each)
and those sums. An unweighted one-column binary view first runs the plain
bucket query itself (:func:`_plain_fine_table`): no CASE on the key, an integer key that
lets DuckDB aggregate into an array instead of a hash table (~2.3 s), and no
score range unless results need every bucket's (~1 s more); its groups show
any bad row, and the validating pass runs only then. A weighted view sums w,
w p, w p^2, w^2 and w^2 p (1 - p) (the last for the exact variance of the
calibrated-model reference's weighted draw,
:func:`calibviz.scan.reference.positive_weight`; one more sum per row).
Spiegelhalter's sums and the log loss are derived from the bucket moments
afterwards, except the log loss of confident mistakes (the outcome given less
than 1/64), summed per row where the moments cannot give it: in the plain
pass by one CASE per row (+0.7 s at 10^8 rows, +0.05 s at 10^7: what the
filtered pass costs, and one read of the rows fewer), in multiclass
views' first pass (their score is an expression of every class column, costly
to evaluate twice), and for the other binary views by a pass filtered on the
raw label and score (:func:`tail_losses`, ~0.6 s; inside their validating
pass, which already holds two CASEs per row, it cost ~1.2 s; merged with the
refining pass, one pass with an OR filter, 2 s against 1.2 s).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

import narwhals as nw
import numpy as np
import pandas as pd

from ..errors import InputError
from ..metrics.goodness import LOGIT_CLIP
from ..metrics.scores import LOG_LOSS_EPS
from ..validation import ROW_SUM_ATOL

__all__ = ["FINE_BUCKETS", "Roles", "fine_table", "tail_losses", "with_tail_losses", "entropy_tails", "certain_mistakes",
           "column_ranges", "row_sums", "unknown_labels", "exact_atoms", "cell_table", "renormalised", "row_total",
           "SUMS", "collect"]

#: Fine score buckets of the first pass (2**16; a multiple of smECE's 2**14 grid).
FINE_BUCKETS = 1 << 16
#: Bucket ids of rows that are no valid prediction.
BAD_SCORE = -1  # probability missing, NaN or infinite
OUT_OF_RANGE = -2  # probability outside [0, 1]
BAD_WEIGHT = -3  # weight missing, NaN or infinite
ZERO_WEIGHT = -4  # weight 0: an absent row (DESIGN.md §4), counted, never summed
BAD_SUM = -5  # class columns that do not sum to 1 (tolerance as load_predictions), or to 0 when renormalising
NEGATIVE_WEIGHT = -6  # weight finite and below 0 (a wrong value; BAD_WEIGHT is a missing one, calibviz.io.cleaning)
#: Label codes of rows whose label is no class (-1) or missing (-2).
UNKNOWN_LABEL, MISSING_LABEL = -1, -2

#: The sums of every group (a bucket or an exact score, and a label), in this order.
SUMS = ("n", "sw", "swp", "swpp", "sww", "swwv", "sll", "pmin", "pmax")


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
    #: divide rows off 1 by their sums, as ``load_predictions(renormalize=True)``: only rows summing to 0 are refused
    renormalize: bool = False
    #: "binary", or "confidence": the top-class view of K >= 3 class columns (``probs``, in ``classes`` order):
    #: p = max_k P_k (rows renormalised), y = 1 iff the label is the argmax class (ties to the first class)
    view: str = "binary"
    classes: tuple = ()
    #: the class of a "class" view (one-vs-rest of K >= 3 class columns): p = P_target, y = 1{label = target};
    #: or of a "toplabel" view: the confidence view of the rows whose predicted class is the target
    target: int | None = None
    #: leave out invalid rows with a note instead of refusing them (calibviz.io.cleaning's rule; Scan._validate)
    drop_invalid: bool = False


#: The confidence view's score of a row whose class probabilities do not sum to 1 (see :func:`_confidence`)
BAD_SUM_SCORE = float("-inf")


#: The confidence view's score and label columns; a source column of either name is refused (:func:`_confidence`).
CONFIDENCE, CORRECT = "__calibviz_confidence__", "__calibviz_correct__"


def _confidence(frame: nw.LazyFrame, roles: Roles, extra=()) -> nw.LazyFrame:
    """The confidence view of K class columns: a score column :data:`CONFIDENCE` and a label column :data:`CORRECT`.

    The source's weight and ``extra`` columns are carried by their names: a source column named as the view's own
    columns would be read in their place (a weight named ``_conf`` was, in an earlier version), so it is refused.
    """
    schema = frame.collect_schema()
    clash = sorted({CONFIDENCE, CORRECT} & set(schema.names()))
    if clash:
        raise InputError(f"the source has a column named {clash[0]!r}, a name calibviz uses for the confidence view; "
                         "rename the column.")
    cols = [nw.col(c).cast(nw.Float64) for c in roles.probs]
    total = row_total(cols)
    q = renormalised(cols, total)
    label, classes = comparable_labels(schema, roles.label, roles.classes)
    if roles.view == "class":  # one-vs-rest: the target class's probability against 1{label = target}
        top, pred = q[roles.target], nw.lit(classes[roles.target])
    else:
        top = nw.max_horizontal(*q)
        pred = nw.when(q[0] == top).then(nw.lit(classes[0]))
        for qk, cls in zip(q[1:], classes[1:]):
            pred = pred.when(qk == top).then(nw.lit(cls))
        if roles.view == "toplabel":  # the rows whose predicted class (argmax, ties to the first) is the target
            frame = frame.filter(pred == nw.lit(classes[roles.target]))
    correct = (nw.when(is_missing(schema, roles.label)).then(nw.lit(None))
               .when(~label.is_in(classes)).then(nw.lit(-1))
               .when(label == pred).then(nw.lit(1)).otherwise(nw.lit(0)))
    bad = nw.lit(False)
    out = nw.lit(False)
    for c in cols:
        bad = bad | c.is_null() | ~c.is_finite()
        out = out | (c < 0) | (c > 1)
    # a row with a cell outside [0, 1] carries that cell (its smallest if below 0, else its largest), so the
    # message shows the values; rows that do not sum to 1 carry -inf (BAD_SUM_SCORE), which no finite cell can be
    lowest, highest = nw.min_horizontal(*cols), nw.max_horizontal(*cols)
    outside = nw.when(lowest < 0).then(lowest).otherwise(highest)
    score = (nw.when(bad).then(nw.lit(float("nan"))).when(out).then(outside)
             .when(~_sums_ok(total, roles)).then(nw.lit(BAD_SUM_SCORE)).otherwise(top))
    keep = ([roles.weight] if roles.weight else []) + [c for c in extra if c != roles.weight]
    return frame.select(*keep, **{CONFIDENCE: score, CORRECT: correct.cast(nw.Int64)})


def is_missing(schema, name: str):
    """Whether a column's value is missing: null, or NaN in a float column (pyarrow, Polars and Spark write NaN
    where pandas wrote a missing value; in memory both are missing).

    NaN is told as neither finite nor infinite: DuckDB 2.0 answered ``isnan`` from Parquet statistics (which
    leave NaN out) and found no NaN in a column of them, where ``isfinite`` reads the values."""
    col = nw.col(name)
    if schema.get(name) not in (nw.Float64, nw.Float32):
        return col.is_null()
    return col.is_null() | (~col.is_finite() & (col.abs() != float("inf")))


def comparable_labels(schema, label: str, classes) -> tuple:
    """(label expression, classes) that compare alike on every engine: classes named by the columns (p_01, p_02;
    text) against labels an engine read as numbers (1, 2) are compared as text, so that such rows are reported as
    labels outside the classes, as load_predictions reports them; classes of mixed kinds (a class named only by its
    column beside numeric labels) as text too, which no engine mixes with numbers in one expression."""
    if any(isinstance(c, str) for c in classes) and schema[label] != nw.String:
        return nw.col(label).cast(nw.String), [str(c) for c in classes]
    return nw.col(label), list(classes)


def renormalised(cols: list, total) -> list:
    """Class columns as :func:`calibviz.load_predictions` gives them: a row whose sum ``total`` is 1 up to float
    rounding (:data:`calibviz.validation.ROW_SUM_ATOL`) as written, another divided by its sum (sums added left to
    right, as :func:`calibviz.validation.row_sums`; rows far from 1 are refused unless ``roles.renormalize``)."""
    kept = (total - 1.0).abs() <= ROW_SUM_ATOL
    return [nw.when(kept).then(c).otherwise(c / total) for c in cols]


def row_total(cols: list):
    """The sum of class columns added left to right, as :func:`calibviz.validation.row_sums` adds them."""
    total = cols[0]
    for c in cols[1:]:
        total = total + c
    return total


def _sums_ok(total, roles: Roles):
    """Whether rows of class columns summing to ``total`` are valid: within the tolerance of 1, or, renormalising,
    above 0 (a row of zeros cannot be divided by its sum)."""
    return total > 0 if roles.renormalize else (total - 1.0).abs() <= roles.sum_tolerance


def _float(schema, name: str):
    """A column as float64 (cast only when it is not float64 already)."""
    col = nw.col(name)
    return col if schema.get(name) == nw.Float64 else col.cast(nw.Float64)


def _bucket_key(p):
    """``floor(p 2^16)`` (a float expression): the fine bucket of a score, 2^16 for p = 1."""
    return (p * float(FINE_BUCKETS)).floor()


def _bucket(p):
    """The fine bucket of a valid score: :func:`_bucket_key` with p = 1 in the last bucket."""
    return nw.min_horizontal(_bucket_key(p), nw.lit(float(FINE_BUCKETS - 1)))


def _one_model(frame: nw.LazyFrame, roles: Roles):
    """(rows, roles) of the roles' model: a long-format log filtered on its model column, the roles without it."""
    if roles.model is None:
        return frame, roles
    return frame.filter(nw.col(roles.model[0]) == roles.model[1]), replace(roles, model=None)


def _raw_score(frame: nw.LazyFrame, roles: Roles):
    """A binary view's score on its raw columns (two columns renormalised by their sum, as in
    :func:`_prepared`), for the filters that engines evaluate before anything else."""
    schema = dict(frame.collect_schema())
    cols = [_float(schema, c) for c in roles.probs]
    return cols[0] if len(cols) == 1 else renormalised(cols, cols[0] + cols[1])[1]


def _prepared(frame: nw.LazyFrame, roles: Roles, extra=None) -> nw.LazyFrame:
    """Columns ``_p`` (score), ``_y`` (label code), ``_w`` (weight), ``_b`` (bucket or a bad-row code), ``_g``.

    ``extra`` (``{alias: source column}``) carries more columns (features, for
    :mod:`calibviz.scan.variables`) through, renamed.

    The bucket is one CASE whose first branch is a valid row (each column
    checked once: finite, in range, weight finite and positive); the later
    branches name what is wrong. A missing, NaN or infinite score gives a null
    bucket, :data:`BAD_SCORE` after the pass.
    """
    if roles.model is not None:
        frame = frame.filter(nw.col(roles.model[0]) == roles.model[1])
    if roles.view in ("confidence", "class", "toplabel"):
        # reduce to a binary view (CONFIDENCE, CORRECT): a NaN score marks bad cells, 2 a cell outside [0, 1],
        # -1 rows that do not sum to 1; the binary code below turns them into the bad-row codes
        frame = _confidence(frame, roles, tuple((extra or {}).values()))
        roles = Roles(CORRECT, (CONFIDENCE,), 0, 1, roles.weight)
    schema = dict(frame.collect_schema())
    cols = [_float(schema, c) for c in roles.probs]
    label = nw.col(roles.label)
    y = (nw.when(label == roles.positive).then(nw.lit(1))
         .when(label == roles.negative).then(nw.lit(0))
         .when(is_missing(schema, roles.label)).then(nw.lit(MISSING_LABEL))
         .otherwise(nw.lit(UNKNOWN_LABEL)))
    if len(cols) == 1:
        p = cols[0]
        finite = p.is_finite()  # null for a missing score, False for NaN and +-inf (every engine)
        ok = finite & (p >= 0) & (p <= 1)
    else:  # P(negative), P(positive): renormalised as load_predictions does
        total = cols[0] + cols[1]
        p = renormalised(cols, total)[1]
        finite = cols[0].is_finite() & cols[1].is_finite()
        in_range = finite & (cols[0] >= 0) & (cols[0] <= 1) & (cols[1] >= 0) & (cols[1] <= 1)
        ok = in_range & _sums_ok(total, roles)
    # least(), not clip(): clip adds a null check per row, and a valid row's score is never null
    bucket = _bucket(p)
    if roles.weight:
        w = _float(schema, roles.weight)
        chain = (nw.when(ok & w.is_finite() & (w > 0)).then(bucket)
                 .when(ok & (w == 0)).then(nw.lit(ZERO_WEIGHT))
                 .when(ok & w.is_finite()).then(nw.lit(NEGATIVE_WEIGHT))
                 .when(ok).then(nw.lit(BAD_WEIGHT)))
    else:
        w = nw.lit(1.0)
        chain = nw.when(ok).then(bucket)
    if len(cols) == 2:
        chain = chain.when(in_range).then(nw.lit(BAD_SUM))
    elif roles.label == CORRECT:  # the confidence view marks rows that do not sum to 1 with -inf
        chain = chain.when(p == BAD_SUM_SCORE).then(nw.lit(BAD_SUM))
    chain = chain.when(finite).then(nw.lit(OUT_OF_RANGE))  # otherwise null: a bad score
    carried = {alias: nw.col(c) for alias, c in (extra or {}).items()}
    return frame.select(_p=p, _y=y.cast(nw.Int64), _w=w, _b=chain.cast(nw.Int64), **carried)


#: Log loss per row only where the probability given to the outcome is below 1/64 (score buckets below
#: LOSS_LOW for label 1, from LOSS_HIGH for label 0); elsewhere it comes from the bucket moments
#: (:func:`log_loss_terms`). 1/64 and 63/64 are bucket boundaries, so a group is either side entirely.
LOSS_LOW, LOSS_HIGH = FINE_BUCKETS // 64, FINE_BUCKETS - FINE_BUCKETS // 64


def _tail_groups(b: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The groups whose outcome got a probability below 1/64: label 1 below bucket LOSS_LOW, label 0 from LOSS_HIGH."""
    return ((y == 1) & (b >= 0) & (b < LOSS_LOW)) | ((y == 0) & (b >= LOSS_HIGH))


#: Bound on the error per unit weight of the log loss from a fine bucket's moments (given probability >= 1/64):
#: the Taylor remainder |f'''| / 6 |u|^3 with f = -log, |f'''| = 2 / g^3 <= 2 * 64^3, |u| <= 2^-17: 2^-33 / 3.
LOG_LOSS_BOUND = 2.0 ** -33 / 3.0


def _loss(loss_rows: str, *, raw=None):
    """-log of the probability given to the observed outcome per row (``"all"``), or only where the outcome got
    less than 1/64 (``"tails"``; 0 elsewhere).

    On the prepared columns (score ``_p``, label code ``_y``, bucket ``_b``), or with ``raw = (score,
    positive rows, negative rows)`` on a source's own columns (the plain first pass); the tails are then told
    by the score, ``p < LOSS_LOW 2^-16`` iff ``floor(p 2^16) < LOSS_LOW`` (a power of two: exact), so they are
    the rows of the same groups.

    metrics.log_loss's float operations (clip, then 1 - p), written inside the branches so that engines evaluate
    them only on the rows that take them (clip, not min/max_horizontal: those inside an aggregation take Polars
    off its streaming engine, 2.3 GB at 10^8 rows).
    """
    if raw is None:
        p, b = nw.col("_p"), nw.col("_b")
        positive, negative = nw.col("_y") == 1, nw.col("_y") == 0
        low, high = (b >= 0) & (b < LOSS_LOW), b >= LOSS_HIGH
    else:
        p, positive, negative = raw
        low, high = p < LOSS_LOW / FINE_BUCKETS, p >= LOSS_HIGH / FINE_BUCKETS
    clipped = p.clip(LOG_LOSS_EPS, 1.0 - LOG_LOSS_EPS)
    if loss_rows == "tails":
        return (nw.when(positive & low).then(-clipped.log())
                .when(negative & high).then(-(1.0 - clipped).log()).otherwise(nw.lit(0.0)))
    return nw.when(positive).then(-clipped.log()).otherwise(-(1.0 - clipped).log())


def _sums(weighted: bool, loss_rows: str = "all", ranges: bool = True) -> list:
    """:func:`_named_sums` as a list of aggregations."""
    return list(_named_sums(weighted, loss_rows, ranges).values())


def _named_sums(weighted: bool, loss_rows: str = "all", ranges: bool = True) -> dict:
    """The aggregations of one group by their names: count, weights, sums of p and p^2, log loss; the score range
    (``ranges``).

    Spiegelhalter's sums are derived from these when asked (:func:`spiegelhalter_sums`), and so is
    the log loss of the groups whose given probability is at least 1/64 (``loss_rows="tails"``,
    :func:`log_loss_terms`); ``loss_rows="none"`` sums no log loss (a validating binary pass's tails come
    from :func:`tail_losses`: one more aggregate with a CASE per row cost ~1.2 s of a 10^8-row validating
    pass, the filtered pass ~0.6 s).
    """
    p, w = nw.col("_p"), nw.col("_w")
    loss = [] if loss_rows == "none" else [_loss(loss_rows)]
    if weighted:
        # sum w^2 p (1 - p): the exact variance of a group's weight of positives under "calibrated"
        # (:mod:`calibviz.scan.reference`); from sum w^2 and the w-weighted mean it can be off by orders of
        # magnitude near p = 0 or 1, where the weights and scores of a bucket can differ
        # sum w^2 v^2 (v = p (1 - p)): with sum w^2 v, Spiegelhalter's variance
        # sum w^2 (1 - 2p)^2 v = sum w^2 (v - 4 v^2) exactly (:func:`spiegelhalter_sums`); the w-moments cannot
        # give a sum of w^2 terms
        v = p * (1.0 - p)
        sums = {"sw": w.sum(), "swp": (w * p).sum(), "swpp": (w * p * p).sum(), "sww": (w * w).sum(),
                "swwv": (w * w * v).sum(), "swwvv": (w * w * v * v).sum(), **{"sll": (w * x).sum() for x in loss}}
    else:
        sums = {"swp": p.sum(), "swpp": (p * p).sum(), **{"sll": x.sum() for x in loss}}
    out = {"n": nw.len(), **sums, **({"pmin": p.min(), "pmax": p.max()} if ranges else {})}
    return {name: agg.alias(name) for name, agg in out.items()}


#: Bound on the error per unit weight of Spiegelhalter's variance term derived from a fine bucket's moments:
#: the Taylor remainder |f'''| / 6 |u|^3 with |f'''| <= 48 on [0, 1] and |u| <= 2^-17, i.e. 8 * 2^-51 = 3.6e-15.
SPIEGELHALTER_BOUND = 8.0 * 2.0 ** -51


def spiegelhalter_terms(y, sw, swp, swpp, centre):
    """Sums of Spiegelhalter's (y - p)(1 - 2p) and (1 - 2p)^2 p (1 - p) over groups of one label.

    With u = p - c around the group's centre c (a fine bucket's midpoint),
    the numerator is a polynomial of degree 2 in p, exact from sum w, sum w u
    and sum w u^2; the variance term f(p) = p - 5p^2 + 8p^3 - 4p^4 is
    expanded to second order, with a remainder of at most
    :data:`SPIEGELHALTER_BOUND` per unit weight. Computing these from the
    moments saves two sums per row in the pass.
    """
    c = centre
    u1 = swp - c * sw
    u2 = swpp - 2.0 * c * swp + c * c * sw
    num = (y - c) * (1.0 - 2.0 * c) * sw - ((1.0 - 2.0 * c) + 2.0 * (y - c)) * u1 + 2.0 * u2
    f0 = c - 5.0 * c ** 2 + 8.0 * c ** 3 - 4.0 * c ** 4
    f1 = 1.0 - 10.0 * c + 24.0 * c ** 2 - 16.0 * c ** 3
    f2 = -10.0 + 48.0 * c - 48.0 * c ** 2
    den = f0 * sw + f1 * u1 + 0.5 * f2 * u2
    return num, den


def log_loss_terms(y, b, sw, swp, swpp):
    """Sums of the log loss of groups (fine bucket ``b``, label ``y``) whose given probability is >= 1/64.

    With u = p - c around the bucket's midpoint c, -log(c + u) (label 1) or
    -log(1 - c - u) (label 0) is expanded to second order from sum w, sum w u
    and sum w u^2; the remainder is at most :data:`LOG_LOSS_BOUND` (1.3e-10)
    per unit weight, against a loss of at least 0 and typically 0.1-1 per
    row. The clip of probabilities at 2.2e-16 (``metrics.log_loss``) matters
    only for scores within 2.2e-16 of 0 or 1, where it changes a loss by at
    most 2.3e-16. Other groups (tails, bad rows) get NaN here.
    """
    c = (b + 0.5) / FINE_BUCKETS
    inside = (b >= 0) & ((y == 0) | (y == 1)) & ~_tail_groups(b, y)
    g = np.where(y == 1, c, 1.0 - c)
    slope = np.where(y == 1, 1.0, -1.0)  # d g / d p
    # groups of bad rows (negative codes, infinite sums of a NaN score on Spark) give NaN and are dropped below
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        u1 = swp - c * sw
        u2 = swpp - 2.0 * c * swp + c * c * sw
        out = -np.log(g) * sw - slope / g * u1 + 0.5 / (g * g) * u2
    return np.where(inside, out, np.nan)


def _complete(out: pd.DataFrame) -> None:
    """The sums an unweighted pass leaves out (weights are the counts), the log loss of a binary view's
    validating pass, NaN until :func:`with_tail_losses` sums it, and ``ranged``: True where pmin / pmax are the
    group's smallest and largest score (False: the bounds of its bucket, :func:`_plain_fine_table`)."""
    if "sw" not in out:
        out["sw"] = out["n"].astype(np.float64)
        out["sww"] = out["sw"]
        out["swwv"] = out["swp"] - out["swpp"]
    if "sll" not in out:
        out["sll"] = np.nan
    if "ranged" not in out:
        out["ranged"] = True


def _data_errors(frame: nw.LazyFrame) -> tuple[str, tuple]:
    """(engine name, the exception types by which the engine reports rows it cannot read): a value it cannot
    cast (text in a score column of a CSV file beyond the rows its schema was inferred from), a corrupt or empty
    file. Errors of the query itself (binder, syntax) are not among them: those would be calibviz's bugs."""
    impl = frame.implementation
    if impl is nw.Implementation.DUCKDB:
        import duckdb

        return "DuckDB", (duckdb.ConversionException, duckdb.InvalidInputException, duckdb.IOException,
                          duckdb.OutOfRangeException)
    if impl is nw.Implementation.POLARS:
        import polars as pl

        # Narwhals re-raises some of Polars' errors as its own (an empty CSV file: NarwhalsError); a truncated
        # gzip file is an OSError; bytes its CSV reader does not expect can make it panic (a BaseException)
        return "Polars", (pl.exceptions.ComputeError, pl.exceptions.NoDataError, pl.exceptions.InvalidOperationError,
                          nw.exceptions.NarwhalsError, OSError, pl.exceptions.PanicException)
    if impl is nw.Implementation.PYSPARK:
        from py4j.protocol import Py4JJavaError
        from pyspark.errors import NumberFormatException, SparkRuntimeException

        # a task that fails on the data (files whose column types differ, a corrupt file) arrives as the JVM's
        # Py4JJavaError; the query's own errors (AnalysisException) are raised before any task runs
        return "Spark", (NumberFormatException, SparkRuntimeException, Py4JJavaError)
    return "the engine", ()


#: The fix of words in a numeric column of a scanned file. A scan types each column once, so such a row is no
#: invalid row that drop_invalid could leave out (a review found the option silently doing nothing for them).
TEXT_IN_NUMBERS_FIX = ("A scan types each column once, so drop_invalid (--drop-invalid) cannot leave such rows out: "
                       "fix them, or scan a DuckDB query that reads them as missing, which drop_invalid then leaves "
                       "out: SELECT * REPLACE (TRY_CAST(trim(p) AS DOUBLE) AS p) FROM read_csv('FILE', all_varchar = "
                       "true) (with your column and file).")
#: :data:`TEXT_IN_NUMBERS_FIX` in the Large data form's words (it takes paths, not queries; calibviz.ui.scan)
TEXT_IN_NUMBERS_FIX_FORM = ("A file is read with one type per column, so 'Drop invalid rows' cannot leave such rows "
                            "out: fix them in the file, or analyse it from the command line with a DuckDB query that "
                            "reads them as missing (README, 'Prediction logs larger than memory').")
#: The fix of files whose column types differ, in the library's words and in the Large data form's.
TYPES_DIFFER_FIX = "scan with engine='duckdb' (--engine duckdb), which reads them as one type."
TYPES_DIFFER_FIX_FORM = "choose DuckDB as the Engine, which reads them as one type."
# trim(): DuckDB 2.0 turns TRY_CAST(p AS DOUBLE) of a CSV column into the reader's type, which then fails on the word

#: Spark's error class in a message: "[FAILED_READ_FILE.PARQUET_COLUMN_DATA_TYPE_MISMATCH] "
_SPARK_ERROR_CLASS = re.compile(r"\[[A-Z][A-Z_.]+\] ")


def _run(frame: nw.LazyFrame) -> pd.DataFrame:
    """Collect a lazy result into pandas: the one place a scan runs the engine. Polars runs its streaming engine,
    which keeps memory bounded by the morsels, not the file (10^7 rows: 0.26 GB, 2.4 s against 0.92 GB, 4.3 s
    for its in-memory engine); the other engines stream by themselves."""
    kwargs = {"engine": "streaming"} if frame.implementation is nw.Implementation.POLARS else {}
    return frame.collect(**kwargs).to_pandas()


def collect(frame: nw.LazyFrame) -> pd.DataFrame:
    """:func:`_run`, where rows the engine cannot read raise :class:`~calibviz.InputError` with the engine's own
    words (which name the value and the column)."""
    engine, errors = _data_errors(frame)
    try:
        return _run(frame)
    except errors as exc:
        lines = [line.strip() for line in str(exc).splitlines() if line.strip()] or [type(exc).__name__]
        named = [line for line in lines if _SPARK_ERROR_CLASS.search(line)]
        if named:  # Spark: the line that names the error class, not "An error occurred while calling o52"
            lines = [_SPARK_ERROR_CLASS.sub("", re.sub(r"^(Caused by: )?[\w.$]+(Exception|Error): ", "", named[0]))]
        # the engine's first line, and the one naming the value where it comes later (DuckDB's CSV reader:
        # "CSV Error on Line: 45002", then "... Could not convert string "oops" to 'DOUBLE'")
        said = lines[:1] + [line for line in lines[1:4] if "convert" in line.lower()][:1]
        words = " ".join(said).lower()
        hint = ""
        if "mismatch" in words:  # Polars / Spark: files whose column types differ (int vs float)
            hint = (" The files store a column with different types (e.g. labels as integers in one file and as "
                    "floats in another); write them with one type, or " + TYPES_DIFFER_FIX)
        elif any(word in words for word in ("convert", "parse")):
            hint = (" Each column's values must have one type (every score and weight a number, labels as the first "
                    "rows have them). " + TEXT_IN_NUMBERS_FIX)
        raise InputError(f"{engine} cannot read the rows: {' '.join(said)}.{hint}") from None


def _collect(frame: nw.LazyFrame) -> pd.DataFrame:
    out = collect(frame)
    _complete(out)
    out["_b"] = out["_b"].fillna(BAD_SCORE).astype(np.int64)
    return out


def _derive(out: pd.DataFrame) -> pd.DataFrame:
    """For the first pass, add the log loss of the groups away from the tails (:func:`log_loss_terms`)."""
    b, y = out["_b"].to_numpy(), out["_y"].to_numpy(np.float64)
    taylor = log_loss_terms(y, b, *(out[c].to_numpy(np.float64) for c in ("sw", "swp", "swpp")))
    out["sll"] = np.where(np.isnan(taylor), out["sll"].to_numpy(np.float64), taylor)
    return out


def spiegelhalter_sums(fine: pd.DataFrame, weighted: bool) -> tuple[float, float]:
    """Spiegelhalter's numerator and variance sums over the valid groups of a first-pass table
    (:func:`spiegelhalter_terms` around each bucket's midpoint; only Spiegelhalter's Z reads them). A weighted
    table's variance sum w^2 (1 - 2p)^2 p (1 - p) is sum w^2 v - 4 sum w^2 v^2 (v = p (1 - p)), both summed by
    the weighted pass."""
    b, y = fine["_b"].to_numpy(), fine["_y"].to_numpy(np.float64)
    sw = fine["sw"].to_numpy(np.float64)
    num, den = spiegelhalter_terms(y, sw, *(fine[c].to_numpy(np.float64) for c in ("swp", "swpp")),
                                   (b + 0.5) / FINE_BUCKETS)
    if weighted:  # every weighted pass sums swwvv (a table without it is a bug: KeyError, not w-variances)
        swwv = fine["swwv"].to_numpy(np.float64)
        den = swwv - 4.0 * fine["swwvv"].to_numpy(np.float64)
        # sum w^2 v - 4 sum w^2 v^2 cancels exactly where every score is 0, 1/2 or 1: what is left is round-off
        floor = 1e-12 * float(np.nansum(swwv))
    else:  # the expansion's remainder bounds what a variance of 0 can come out as
        floor = SPIEGELHALTER_BOUND * float(np.nansum(np.abs(sw)))
    total = float(den.sum())
    # a variance within that floor is 0 (every score 0, 1/2 or 1), which the in-memory test refuses; a remainder
    # of 1e-12 read as a variance gave Z = 2.5e8 ("rejects calibration") on scores of exactly 0 and 1
    return float(num.sum()), (0.0 if abs(total) <= floor else total)


def _plain_fine_table(frame: nw.LazyFrame, roles: Roles, ranges: bool) -> pd.DataFrame | None:
    """The first pass of an unweighted one-column binary view as the plain bucket query, or None if the rows
    hold anything the validating pass must name.

    Groups by the raw ``floor(p 2^16)`` and the raw label, with no CASE for
    the validity of a row: the hand-written bucket query of the benchmark, plus
    the log loss of confident mistakes (one CASE per row). With DuckDB's array
    aggregation on the integer key it runs in about half the time of the
    validating pass. The smallest and largest score per group would add
    ~40% (10^8 rows: ~1 s), so only ``ranges=True`` sums them; otherwise
    their columns hold the bounds of each bucket (``ranged`` False): a
    decision that needs the exact range of a bucket refines it
    (:mod:`calibviz.scan.refine`), and :func:`bucket_ranges` sums them all
    when results need them (ties of every bucket).

    Bad rows still show: a NaN or infinite score has no integer key (the
    engine raises; Spark without ANSI mode casts it, but its sums are then
    not finite), a missing score gives a missing key, a score below 0 a
    negative key, a score of 1 + 2^-16 or more a key above 2^16, a label
    that is no class its own label group. Key 2^16 holds the scores in
    [1, 1 + 2^-16): a score above 1 there shows in the range, or without
    ranges in a count of the scores above 1 (a filtered pass, run only when
    that key has rows, i.e. when some score is exactly 1). Then None is
    returned and :func:`fine_table` runs the validating pass, which counts
    and names them exactly. Key 2^16 (a score of exactly 1) joins the last
    bucket, as ``least(floor(p 2^16), 2^16 - 1)`` puts it.
    """
    schema = dict(frame.collect_schema())
    p = _float(schema, roles.probs[0])
    # an integer key: DuckDB then aggregates into an array indexed by it where the source has column statistics
    # (duckdb_engine.PERFECT_HASH_BITS), about twice as fast as hashing a float key
    label = nw.col(roles.label)
    # the log loss of the tail rows in the pass itself: one read of the rows fewer than with the filtered pass
    # (:func:`tail_losses`; remote files are read once less) in the same time here (DuckDB, same connection,
    # alternating: 10^7 rows 0.26 s against 0.21 + 0.08 s, 10^8 2.2 s against 1.5 + 0.6 s)
    tails = _loss("tails", raw=(nw.col("_p"), nw.col("_l") == roles.positive, nw.col("_l") == roles.negative))
    agg = (frame.select(_k=_bucket_key(p).cast(nw.Int64), _l=label, _p=p)
           .group_by("_k", "_l").agg(*_sums(False, "none", ranges=ranges), tails.sum().alias("sll")))
    # valid rows make at most (2^16 + 1 keys) x 2 labels groups; scores that are no probabilities or labels of many
    # values could make one per row: fetch no more than that (the validating pass then names them)
    limit = 4 * (FINE_BUCKETS + 1)
    try:
        out = _run(agg.head(limit + 1))
    except Exception as exc:  # noqa: BLE001 - engines raise their own classes; only data errors are expected
        # a NaN or infinite score has no integer key, a file's column cannot be read as the others: the validating
        # pass names the rows, or reports the engine's words (:func:`collect`)
        if _is_cast_error(exc) or isinstance(exc, _data_errors(frame)[1]):
            return None
        raise
    if len(out) > limit:
        return None
    key = out["_k"].to_numpy(np.float64, na_value=np.nan)
    sums = out[["swp", "swpp", *(["pmin", "pmax"] if ranges else [])]].to_numpy(np.float64, na_value=np.nan)
    seen, which = pd.factorize(out["_l"])  # a handful of label values; a missing label gets -1
    code_of = np.array([1 if v == roles.positive else 0 if v == roles.negative else UNKNOWN_LABEL for v in which]
                       + [UNKNOWN_LABEL], dtype=np.int64)
    codes = code_of[seen]
    good = (np.isfinite(key).all() and np.isfinite(sums).all() and (key >= 0).all() and (key <= FINE_BUCKETS).all()
            and (codes >= 0).all() and (not ranges or ((sums[:, 2] >= 0).all() and (sums[:, 3] <= 1).all())))
    if not good:
        return None
    b = np.minimum(key, FINE_BUCKETS - 1).astype(np.int64)
    out = out.drop(columns=["_k", "_l"]).assign(_b=b, _y=codes)
    at_one = bool((key == FINE_BUCKETS).any())
    if at_one:  # key 2^16 (p = 1) beside 2^16 - 1: one group per (bucket, label)
        how = {c: {"pmin": "min", "pmax": "max"}.get(c, "sum") for c in out.columns if c not in ("_b", "_y")}
        out = out.groupby(["_b", "_y"], as_index=False, sort=False).agg(how)
    bucket = out["_b"].to_numpy()
    if not ranges:
        out["pmin"], out["pmax"] = _bucket_bounds(bucket)
        out["ranged"] = False
    _complete(out)
    if not ranges and at_one and collect(frame.filter(p > 1.0).select(nw.len().alias("n")))["n"].iloc[0]:
        return None  # a score in (1, 1 + 2^-16), in the key of p = 1 (one filtered pass, only when p = 1 occurs)
    return out


#: What each engine raises for a float that has no integer value (DuckDB, Polars through Narwhals, Spark in ANSI
#: mode: pyspark's captured ArithmeticException / NumberFormatException, or the JVM's class names in the message).
_CAST_ERRORS = ("ConversionException", "InvalidOperationError", "ComputeError", "ArithmeticException",
                "NumberFormatException", "CAST_OVERFLOW", "CAST_INVALID_INPUT")


def _is_cast_error(exc: Exception) -> bool:
    names = {k.__name__ for k in type(exc).__mro__}
    return bool(names & set(_CAST_ERRORS)) or any(e in str(exc) for e in _CAST_ERRORS[-2:])


def _bucket_bounds(bucket: np.ndarray):
    """Bounds of the scores of fine buckets: b 2^-16 <= p < (b + 1) 2^-16 (exact: powers of two); the last bucket
    holds p = 1."""
    lo = bucket / FINE_BUCKETS
    return lo, np.where(bucket == FINE_BUCKETS - 1, 1.0, np.nextafter((bucket + 1) / FINE_BUCKETS, 0.0))


def bucket_ranges(frame: nw.LazyFrame, roles: Roles) -> pd.DataFrame:
    """The smallest and largest score per (fine bucket, label) of a valid unweighted one-column binary view: the
    ranges its plain first pass left out (``ranges=False``), for results that need every bucket's (ties)."""
    frame, roles = _one_model(frame, roles)
    p = _float(dict(frame.collect_schema()), roles.probs[0])
    label = nw.col(roles.label)
    out = collect(frame.select(_b=_bucket(p).cast(nw.Int64), _y=(label == roles.positive).cast(nw.Int64), _p=p)
                  .group_by("_b", "_y").agg(nw.col("_p").min().alias("pmin"), nw.col("_p").max().alias("pmax")))
    return out.astype({"_b": np.int64, "_y": np.int64})


def fine_table(frame: nw.LazyFrame, roles: Roles, *, ranges: bool = True) -> pd.DataFrame:
    """Sums per (fine bucket, label code): the first pass over the rows.

    The table has the columns ``_b``, ``_y``, :data:`SUMS` and ``ranged``
    (bad rows sit in negative buckets or label codes, see the module
    docstring). For a binary view through the validating pass the log loss of
    the tail groups (outcome given less than 1/64) is NaN here:
    :func:`with_tail_losses` completes it.
    ``ranges=False`` lets the
    plain pass leave out the score range of each group (see
    :func:`_plain_fine_table`); the validating pass always sums it.

    An unweighted one-column binary view runs the plain bucket query first
    (:func:`_plain_fine_table`); only when its groups show a bad row does the
    validating pass run, to count and name them (a second pass, paid only by
    a file that is about to be refused with a message).
    """
    if roles.view == "binary" and roles.weight is None and len(roles.probs) == 1:
        frame, roles = _one_model(frame, roles)
        plain = _plain_fine_table(frame, roles, ranges)
        if plain is not None:
            return _derive(plain)
    return _validating_fine_table(frame, roles)


def _validating_fine_table(frame: nw.LazyFrame, roles: Roles) -> pd.DataFrame:
    """The first pass with every row's validity in its bucket and label codes (bad rows counted, see
    :func:`_prepared`)."""
    prepared = _prepared(frame, roles)
    loss_rows = "none" if roles.view == "binary" else "tails"
    return _derive(_collect(prepared.group_by("_b", "_y").agg(*_sums(roles.weight is not None, loss_rows))))


def tail_losses(frame: nw.LazyFrame, roles: Roles) -> pd.DataFrame:
    """Sums of the log loss per (fine bucket, label) of a binary view's tail rows: the rows whose outcome got a
    probability below 1/64, where the bucket moments cannot give it (:func:`log_loss_terms`).

    One pass filtered on the raw label and score, which engines evaluate
    before anything else (DuckDB, 10^8 rows: ~0.6 s); such confident mistakes
    are usually few. ``floor(p 2^16) < 2^10`` iff ``p < 1/64`` and
    ``>= 2^16 - 2^10`` iff ``p >= 63/64`` (exact: powers of two), so the filter
    takes exactly the rows of the tail groups. Returns ``_b``, ``_y``, ``sll``.
    """
    frame, roles = _one_model(frame, roles)
    score, label = _raw_score(frame, roles), nw.col(roles.label)
    low, high = LOSS_LOW / FINE_BUCKETS, LOSS_HIGH / FINE_BUCKETS
    frame = frame.filter(((label == roles.positive) & (score < low)) | ((label == roles.negative) & (score >= high)))
    loss = _loss("all")
    total = (nw.col("_w") * loss).sum() if roles.weight is not None else loss.sum()
    out = collect(_prepared(frame, roles).group_by("_b", "_y").agg(total.alias("sll")))
    out = out.dropna(subset=["_b"]).astype({"_b": np.int64, "_y": np.int64})
    return out[_tail_groups(out["_b"].to_numpy(), out["_y"].to_numpy())].reset_index(drop=True)


def entropy_tails(frame: nw.LazyFrame, roles: Roles) -> pd.DataFrame:
    """Per fine bucket of the tails (scores below 1/64 or from 63/64), whatever the label: ``sh`` = sum w H(p)
    and ``sv`` = sum w^2 p (1 - p) logit(q)^2, with H(p) = -p log(q) - (1 - p) log(1 - q) and q = clip(p, eps,
    1 - eps) as :func:`calibviz.metrics.calibrated_expectation` and :func:`calibviz.metrics.log_loss` clip.

    The expectation and the per-row variance of the log loss under "calibrated" (y ~ Bernoulli(p)), which
    the calibrated-model reference of log loss needs (:mod:`calibviz.scan.reference`); elsewhere the bucket
    moments give them to a documented bound. One pass filtered on the raw score where the view has one (as
    :func:`tail_losses`), so only the tail rows are read past the filter. Returns ``_b``, ``sh``, ``sv``.
    """
    low, high = LOSS_LOW / FINE_BUCKETS, LOSS_HIGH / FINE_BUCKETS
    if roles.view == "binary" and len(roles.probs) == 1:
        frame, roles = _one_model(frame, roles)
        score = _raw_score(frame, roles)
        frame = frame.filter((score < low) | (score >= high))
    p, w, b = nw.col("_p"), nw.col("_w"), nw.col("_b")
    q = p.clip(LOG_LOSS_EPS, 1.0 - LOG_LOSS_EPS)
    log_q, log_1q = q.log(), (1.0 - q).log()
    entropy = -(p * log_q) - (1.0 - p) * log_1q
    spread = p * (1.0 - p) * (log_q - log_1q) * (log_q - log_1q)
    rows = _prepared(frame, roles).filter((b >= 0) & ((b < LOSS_LOW) | (b >= LOSS_HIGH))
                                          & ((nw.col("_y") == 0) | (nw.col("_y") == 1)))
    out = collect(rows.group_by("_b").agg((w * entropy).sum().alias("sh"), (w * w * spread).sum().alias("sv")))
    return out.astype({"_b": np.int64, "sh": np.float64, "sv": np.float64})


def column_ranges(frame: nw.LazyFrame, roles: Roles) -> pd.DataFrame:
    """Per probability column (rows, in the order of ``roles.probs``): its finite values' ``low`` and ``high``,
    how many lie ``outside`` [0, 1] and how many ``above`` 1. A pass for the message of a source about to be
    refused: which columns hold no probabilities, and their values (:func:`calibviz.io.loading.out_of_range_error`).
    """
    frame, roles = _one_model(frame, roles)
    schema = dict(frame.collect_schema())
    aggs = []
    for i, c in enumerate(roles.probs):
        x = _float(schema, c)
        fin = x.is_finite()
        aggs += [nw.when(fin).then(x).min().alias(f"lo{i}"), nw.when(fin).then(x).max().alias(f"hi{i}"),
                 nw.when(fin & ((x < 0) | (x > 1))).then(nw.lit(1)).otherwise(nw.lit(0)).sum().alias(f"out{i}"),
                 nw.when(fin & (x > 1)).then(nw.lit(1)).otherwise(nw.lit(0)).sum().alias(f"up{i}")]
    row = collect(frame.select(*aggs)).iloc[0]
    return pd.DataFrame({"column": list(roles.probs),
                         "low": [float(row[f"lo{i}"]) for i in range(len(roles.probs))],
                         "high": [float(row[f"hi{i}"]) for i in range(len(roles.probs))],
                         "outside": [int(row[f"out{i}"]) for i in range(len(roles.probs))],
                         "above": [int(row[f"up{i}"]) for i in range(len(roles.probs))]})


def row_sums(frame: nw.LazyFrame, roles: Roles) -> tuple[float, float, int]:
    """(lowest, highest) sum of the class columns (added left to right, as the views add them) over the rows whose
    cells are finite and in [0, 1], and how many of those differ from 1 by more than the tolerance. A pass for
    the message of rows that do not sum to 1, or the note of rows renormalised although their sums are far from 1,
    as :func:`calibviz.load_predictions` words them.
    """
    frame, roles = _one_model(frame, roles)
    schema = dict(frame.collect_schema())
    cols = [_float(schema, c) for c in roles.probs]
    total, ok = cols[0], cols[0].is_finite() & (cols[0] >= 0) & (cols[0] <= 1)
    for c in cols[1:]:
        total, ok = total + c, ok & c.is_finite() & (c >= 0) & (c <= 1)
    off = nw.when((total - 1.0).abs() > roles.sum_tolerance).then(nw.lit(1)).otherwise(nw.lit(0))
    row = collect(frame.filter(ok).select(lo=total.min(), hi=total.max(), off=off.sum())).iloc[0]
    return float(row["lo"]), float(row["hi"]), int(row["off"] or 0)


def unknown_labels(frame: nw.LazyFrame, roles: Roles, classes, limit: int = 6) -> list:
    """Up to ``limit`` distinct labels outside ``classes``, as text (sorted): for the message of a source about to
    be refused, which names them as the in-memory loader does."""
    frame, roles = _one_model(frame, roles)
    schema = frame.collect_schema()
    label, classes = comparable_labels(schema, roles.label, classes)  # as the views compare them
    # the first ``limit`` in sorted order, as the in-memory message names them (up to 1,000 distinct to sort)
    out = collect(frame.filter(~is_missing(schema, roles.label) & ~label.is_in(classes))
                  .select(_l=label).unique()
                  .head(1000))
    return sorted(str(v) for v in out["_l"])[:limit]


def certain_mistakes(frame: nw.LazyFrame, roles: Roles, fine: pd.DataFrame) -> int:
    """Rows (of positive weight) predicted with certainty and turned out otherwise: score exactly 0 with the
    positive label or exactly 1 with the negative one, whose log loss is infinite (clipped, as in memory:
    :func:`calibviz.panel._certain_mistakes`).

    Such rows can only sit in the first bucket with label 1 or the last with label 0; the pass that counts them
    runs only when the first-pass table ``fine`` may hold one there (a group whose exact score range is known
    and excludes 0 or 1 holds none), filtered on the raw label and score where the view has them (as
    :func:`tail_losses`), so a log without confident mistakes pays nothing. Callers cache the count.
    """
    b, y, n = (fine[c].to_numpy() for c in ("_b", "_y", "n"))
    ranged = fine["ranged"].to_numpy(bool)
    low = (b == 0) & (y == 1) & (n > 0) & ~(ranged & (fine["pmin"].to_numpy(np.float64) > 0.0))
    high = (b == FINE_BUCKETS - 1) & (y == 0) & (n > 0) & ~(ranged & (fine["pmax"].to_numpy(np.float64) < 1.0))
    if not (low.any() or high.any()):
        return 0
    if roles.view == "binary" and len(roles.probs) == 1:
        frame, roles = _one_model(frame, roles)
        score, label = _raw_score(frame, roles), nw.col(roles.label)
        frame = frame.filter(((label == roles.positive) & (score == 0.0)) | ((label == roles.negative) & (score == 1.0)))
    rows = _prepared(frame, roles).filter(((nw.col("_y") == 1) & (nw.col("_p") == 0.0))
                                          | ((nw.col("_y") == 0) & (nw.col("_p") == 1.0)))
    out = collect(rows.filter(nw.col("_b") >= 0).select(nw.len().alias("n")))
    return int(out["n"].iloc[0]) if len(out) else 0


def group_positions(source: pd.DataFrame, table: pd.DataFrame) -> np.ndarray:
    """Row of ``source`` holding each (bucket, label) group of ``table`` (-1 where none does)."""
    def key(t):
        return t["_b"].to_numpy(np.int64) * 2 + t["_y"].to_numpy(np.int64)

    return pd.Index(key(source)).get_indexer(key(table))


def with_tail_losses(table: pd.DataFrame, frame: nw.LazyFrame, roles: Roles) -> pd.DataFrame:
    """The validated first-pass ``table`` of a binary view with the log loss of its tail groups
    (:func:`tail_losses`) where the pass left it out (the validating pass; the plain pass and other views' tables
    are complete already)."""
    b, y = table["_b"].to_numpy(), table["_y"].to_numpy()
    tail = _tail_groups(b, y) & np.isnan(table["sll"].to_numpy(np.float64))
    if roles.view != "binary" or not tail.any():
        return table
    tails = tail_losses(frame, roles)
    pos = group_positions(tails, table)
    sll = table["sll"].to_numpy(np.float64, copy=True)
    sll[tail] = np.where(pos[tail] >= 0, tails["sll"].to_numpy(np.float64)[pos[tail]], np.nan)
    if np.isnan(sll[tail & (table["n"].to_numpy() > 0)]).any():  # a tail group the filtered pass did not see
        raise RuntimeError("calibviz bug: the log-loss pass missed rows of the first pass; please report it.")
    return table.assign(sll=sll)  # under copy-on-write (pandas >= 3) a shallow copy: no consolidation of the table


#: Bucket keys up to which the refining pass filters the rows by an IN list; binding a longer list costs more than
#: grouping every row of a view small enough to refine that many buckets (DuckDB: 0.9 s for 50,000 keys).
MAX_FILTER_KEYS = 1024


def exact_atoms(frame: nw.LazyFrame, roles: Roles, buckets, *, every_row: bool = False) -> pd.DataFrame:
    """Sums per (exact score, label) of the rows in ``buckets``: the refining pass.

    The rows are first filtered on ``floor(score * 2^16)`` of the raw score
    column (or of the score expression of a two-column or multiclass view),
    which engines evaluate before anything else (DuckDB: at 10^8 rows this
    pass takes ~0.6 s of wall time against 4-5 s for the first pass);
    ``every_row`` groups the view's valid rows without that filter (for more
    than :data:`MAX_FILTER_KEYS` buckets of a small view). Returns the columns
    ``_b``, ``_p``, ``_y`` and :data:`SUMS`.
    """
    ids = [int(b) for b in buckets]
    frame, roles = _one_model(frame, roles)
    if every_row:
        sub = _prepared(frame, roles).filter(nw.col("_b") >= 0)
    elif roles.view == "binary" and ids:
        score = _raw_score(frame, roles)
        # a score of exactly 1 is in the last bucket (the first pass caps floor(p 2^16) at 2^16 - 1)
        keys = ids + ([FINE_BUCKETS] if FINE_BUCKETS - 1 in ids else [])
        frame = frame.filter(_bucket_key(score).is_in([float(k) for k in keys]))
        # the rows' bucket codes are checked on the few groups after the pass: a filter on ``_b`` here is pushed
        # below the one on the raw score by DuckDB, which then evaluates the code on every row (10^8 rows: 1.1 s)
        sub = _prepared(frame, roles)
    else:
        sub = _prepared(frame, roles).filter(nw.col("_b").is_in(ids))
    weighted = roles.weight is not None
    w = nw.col("_w")
    # one score per group: its sums of p, p^2 and log loss are the score's times the group's weight (derived in
    # _exact_sums), so the engine sums only counts and weights (10^6 groups of a small view: the pass grew the
    # process by 0.33 GB with every sum, by 0.1 GB now)
    sums = [nw.len().alias("n"), *([w.sum().alias("sw"), (w * w).sum().alias("sww")] if weighted else [])]
    out = collect(sub.group_by("_b", "_p", "_y").agg(*sums))
    out["_b"] = out["_b"].fillna(BAD_SCORE).astype(np.int64)
    return _exact_sums(out[out["_b"].isin(ids)].reset_index(drop=True), weighted)


#: Finest cells of the cell pass (:func:`cell_table`): 2^6 per fine bucket, 2^-22 wide.
CELL_BITS = 6


def bucket_ranges_of(ids, max_ranges: int) -> list[tuple[int, int]]:
    """Runs ``(first, last)`` of sorted bucket ids, the smallest gaps bridged until at most ``max_ranges`` remain:
    a few range conditions for any number of buckets (an IN list of 10^4 keys costs DuckDB ~0.2 s to bind). The
    runs may cover buckets not in ``ids`` (:func:`cell_table` looks the finest level up first, so a bucket in a
    run bridged over it comes finer than its level, never coarser)."""
    ids = np.unique(np.asarray(ids, np.int64))
    if not ids.size:
        return []
    breaks = np.flatnonzero(np.diff(ids) > 1)  # a run ends after each
    if breaks.size >= max_ranges:  # keep the max_ranges - 1 widest gaps
        gaps = ids[breaks + 1] - ids[breaks]
        breaks = np.sort(breaks[np.argsort(-gaps, kind="stable")[:max_ranges - 1]])
    firsts = np.r_[ids[0], ids[breaks + 1]]
    lasts = np.r_[ids[breaks], ids[-1]]
    return [(int(a), int(b)) for a, b in zip(firsts, lasts)]


def cell_table(frame: nw.LazyFrame, roles: Roles, level: np.ndarray) -> pd.DataFrame:
    """Sums per (fine bucket, cell, label) of the rows in the buckets of ``level > 0``: the cell pass.

    ``level`` (shape (2^16,)): a bucket of level l is cut into 2^l cells
    (:func:`calibviz.scan.refine.full_bucket_levels`). ``_c`` is a cell's
    first 2^-22 step: a row's step is ``min(floor(p 2^22), 2^22 - 1) - 2^6
    b``, exact in float64 as the bucket is, so every engine puts every row in
    the same cell (a score of 1 in the last cell). One query in two
    aggregations: the rows from the first full bucket to the last (one range
    of ``floor(score 2^16)`` of a binary view's raw score, which engines
    evaluate before anything else; class, top-label and confidence views are
    filtered on their bucket code, after their score is formed from every
    class column, so their cell pass reads every row) summed per 2^-22
    step, then the steps merged into each bucket's cells; the level is
    looked up on those groups, not per row (an OR of range
    conditions per row cost DuckDB 5 s on 2.5x10^6 rows, as the bucket code
    is a CASE evaluated at each use). Returns ``_b``, ``_c``, ``_y``,
    :data:`SUMS` and ``ranged``, for the buckets of ``level > 0`` only; the
    log loss as the first pass's (:func:`_derive`).
    """
    level = np.asarray(level)
    ids = np.flatnonzero(level)
    frame, roles = _one_model(frame, roles)
    if not ids.size:
        return pd.DataFrame(columns=["_b", "_c", "_y", *SUMS, "ranged"])
    first, last = float(ids[0]), float(FINE_BUCKETS if ids[-1] == FINE_BUCKETS - 1 else ids[-1])
    if roles.view == "binary":
        key = _bucket_key(_raw_score(frame, roles))  # a score of 1 has key 2^16, in the last bucket
        sub = _prepared(frame.filter((key >= first) & (key <= last)), roles)
    else:
        sub = _prepared(frame, roles).filter((nw.col("_b") >= first) & (nw.col("_b") <= last))
    b, steps = nw.col("_b"), float(FINE_BUCKETS << CELL_BITS)
    step = nw.min_horizontal((nw.col("_p") * steps).floor(), nw.lit(steps - 1.0)) - b * float(1 << CELL_BITS)
    # the log loss from the moments as the first pass derives it (a cell lies inside its bucket, so the bucket's
    # bound holds), per row only in the tails: a log per row cost ~40% of the pass
    sums = _named_sums(roles.weight is not None, "tails")
    # bad rows (negative bucket codes, dropped below) get step 0: no NaN score in a float key
    fine = (sub.with_columns(_c=nw.when(b >= 0).then(step).otherwise(nw.lit(0.0)))
            .group_by("_b", "_c", "_y").agg(*sums.values()))
    width = None  # 2^(6 - l) steps per cell of a bucket of level l, the finest level first; 2^6 outside them
    for lvl in range(CELL_BITS, 0, -1):
        cond = None
        for lo, hi in bucket_ranges_of(np.flatnonzero(level == lvl), 16):
            c = (b >= float(lo)) & (b <= float(hi))
            cond = c if cond is None else cond | c
        if cond is not None:
            value = nw.lit(float(1 << (CELL_BITS - lvl)))
            width = nw.when(cond).then(value) if width is None else width.when(cond).then(value)
    width = width.otherwise(nw.lit(float(1 << CELL_BITS)))
    merge = [getattr(nw.col(c), {"pmin": "min", "pmax": "max"}.get(c, "sum"))().alias(c) for c in sums]
    cells = (fine.with_columns(_c=((nw.col("_c") / width).floor() * width).cast(nw.Int64))
             .group_by("_b", "_c", "_y").agg(*merge))
    out = collect(cells)
    out["_b"] = out["_b"].fillna(BAD_SCORE).astype(np.int64)
    out = out[out["_b"].isin(ids) & (out["_y"] >= 0)].reset_index(drop=True)
    out = out.astype({"_c": np.int64, "_y": np.int64})
    _complete(out)
    return _derive(out)


def _exact_sums(out: pd.DataFrame, weighted: bool) -> pd.DataFrame:
    """:data:`SUMS` of groups of one exact score ``_p`` from their count and weights: sum w p = p sum w, and so
    on (the engine's sums of equal terms, to rounding); the log loss with metrics.log_loss's float operations."""
    p, y = out["_p"].to_numpy(np.float64), out["_y"].to_numpy()
    if not weighted:
        out["sw"] = out["n"].astype(np.float64)
        out["sww"] = out["sw"]
    sw, sww = out["sw"].to_numpy(np.float64), out["sww"].to_numpy(np.float64)
    v = p * (1.0 - p)
    clipped = np.clip(p, LOG_LOSS_EPS, 1.0 - LOG_LOSS_EPS)
    with np.errstate(divide="ignore"):
        loss = -np.log(np.where(y == 1, clipped, 1.0 - clipped))
    out["swp"], out["swpp"], out["swwv"], out["sll"] = sw * p, sw * p * p, sww * v, sw * loss
    if weighted:
        out["swwvv"] = sww * v * v
    out["pmin"], out["pmax"], out["ranged"] = p, p, True
    return out


# -- variable-based calibration (VECE, Kelly & Smyth 2023): sums per feature bucket ----------------------------

#: The sums of a feature group (:mod:`calibviz.scan.variables`): rows, weight, and with the top-label gap
#: ``g = (1 - confidence) - error`` of each row (as :func:`calibviz.metrics.variable.top_label_errors` forms it) the
#: sums of w g, (w g)^2, w (w g) and w^2 that VECE and its fixed-bin interval need; the x range and smallest weight;
#: with the predicted error q = 1 - confidence, the null cumulants of the group's sum of w (error - q) that VECE's
#: calibrated-model reference needs: ``sv = sum w^2 q (1 - q)``, ``sk = sum w^3 q (1 - q) (1 - 2q)``. With the
#: model recalibrated on its score (:func:`calibviz.metrics.variable.score_recalibrated_errors`; error
#: probabilities r, design columns x_a, s the sign of the row's error in the fit's equations) the reference beyond
#: the score's miscalibration needs :func:`recalibrated_sums`: ``so = sum w (q - r)``, ``sv1 = sum w^2 r (1 - r)``,
#: ``sk1 = sum w^3 r (1 - r) (1 - 2r)`` and per column a ``sc{a} = sum s w^2 r (1 - r) x_a`` and
#: ``sa{a} = sum s w r (1 - r) x_a``.
VARIABLE_SUMS = ("n", "sw", "sd", "sdd", "sdw", "sww", "sv", "sk", "xmin", "xmax", "wmin")


def _top_label_view(roles: Roles) -> bool:
    """Whether the scan's score is a confidence (a multiclass view) rather than a binary P(y = 1)."""
    return roles.view in ("confidence", "toplabel")


def _design(roles: Roles) -> list:
    """The columns of the score's logistic recalibration, as
    :func:`calibviz.metrics.variable.recalibration_design`: (1, l), or (1, l, side, side l) for a binary score."""
    lg = nw.col("_l")
    if _top_label_view(roles):
        return [nw.lit(1.0), lg]
    side = nw.when(nw.col("_p") > 0.5).then(nw.lit(1.0)).otherwise(nw.lit(0.0))
    return [nw.lit(1.0), lg, side, side * lg]


def recalibrated_sums(roles: Roles) -> tuple:
    """The names of a feature group's sums for the test beyond the score's miscalibration (see
    :data:`VARIABLE_SUMS`)."""
    k = len(_design(roles))
    return ("so", "sv1", "sk1", *(f"sc{a}" for a in range(k)), *(f"sa{a}" for a in range(k)))


def _variable_rows(frame: nw.LazyFrame, roles: Roles, features: dict) -> nw.LazyFrame:
    """The valid rows with their weight ``_w``, top-label gap ``_d`` and the features (``{alias: column}``).

    Top label as :func:`calibviz.metrics.variable.top_label_errors`: a binary
    (or one-vs-rest) score p predicts 1 iff p > 0.5 with confidence max(p, 1 - p);
    a multiclass (confidence or top-label) view predicts its argmax class.
    """
    rows = _prepared(frame, roles, features).filter((nw.col("_b") >= 0) & (nw.col("_y") >= 0))
    p, y = nw.col("_p"), nw.col("_y")
    if roles.view in ("confidence", "toplabel"):
        conf, correct = p, y == 1
    else:
        pred = p > 0.5
        conf = nw.when(pred).then(p).otherwise(1.0 - p)
        correct = pred == (y == 1)
    error = nw.when(correct).then(nw.lit(0.0)).otherwise(nw.lit(1.0))
    # the score, its clipped logit and the target that recalibrating the score fits (P(y = 1) and y, or
    # confidence and hit), as calibviz.metrics.variable.score_recalibrated_errors
    target = nw.when(y == 1).then(nw.lit(1.0)).otherwise(nw.lit(0.0))
    clipped = p.clip(LOGIT_CLIP, 1.0 - LOGIT_CLIP)
    return rows.with_columns(_d=(1.0 - conf) - error, _q=1.0 - conf, _t=target, _l=(clipped / (1.0 - clipped)).log())


def _recalibrated(roles: Roles, coef):
    """The linear predictor z = sum_a coef_a x_a, the recalibrated score expit(z), the row's error probability r
    under it, and the sign of the row's error in the fit's equations (as
    :func:`calibviz.metrics.variable.score_recalibrated_errors`)."""
    z = nw.lit(0.0)
    for c, x in zip(coef, _design(roles)):
        z = z + float(c) * x
    q = 1.0 / (1.0 + (-z).exp())
    if _top_label_view(roles):
        return z, q, 1.0 - q, nw.lit(-1.0)
    pred = nw.col("_p") > 0.5
    return z, q, nw.when(pred).then(1.0 - q).otherwise(q), nw.when(pred).then(nw.lit(-1.0)).otherwise(nw.lit(1.0))


def recalibration_sums(frame: nw.LazyFrame, roles: Roles, columns, coefs) -> pd.DataFrame:
    """One row: per entry j of ``columns`` (a numeric feature, or None for every valid row), over the rows where
    that feature is finite, what a damped Newton step of the score's logistic recalibration at ``coefs[j]`` needs
    (x its design columns, q = expit(coef . x), t the target): the mean loss's numerator ``loss{j} = sum w
    (softplus(coef . x) - t coef . x)``, ``f{j}_{a} = sum w (t - q) x_a``, ``h{j}_{a}{b} = sum w q (1 - q) x_a
    x_b`` and ``c{j}_{a}{b} = sum w^2 q (1 - q) x_a x_b`` (b >= a). Each row's terms are columns made once (one
    expression per sum re-evaluated the exponential in each: 0.9 s a pass over 20,000 rows)."""
    named = {f"_x{j}": c for j, c in enumerate(columns) if c is not None}
    rows = _variable_rows(frame, roles, named)
    design = _design(roles)
    rows = rows.with_columns(**{f"_d{a}": x for a, x in enumerate(design)})
    x = [nw.col(f"_d{a}") for a in range(len(design))]
    w, t = nw.col("_w"), nw.col("_t")
    zs = {}
    for j, (column, coef) in enumerate(zip(columns, coefs)):
        z = nw.lit(0.0)
        for c, xa in zip(coef, x):
            z = z + float(c) * xa
        # rows without the feature's value weigh 0 in its sums
        zs[f"_z{j}"] = z
        zs[f"_m{j}"] = w if column is None else nw.when(nw.col(f"_x{j}").cast(nw.Float64).is_finite()).then(w) \
            .otherwise(nw.lit(0.0))
    rows = rows.with_columns(**zs)
    rows = rows.with_columns(**{f"_q{j}": 1.0 / (1.0 + (-nw.col(f"_z{j}")).exp()) for j in range(len(columns))})
    aggs = []
    for j in range(len(columns)):
        z, q, wj = nw.col(f"_z{j}"), nw.col(f"_q{j}"), nw.col(f"_m{j}")
        h = wj * q * (1.0 - q)
        aggs.append((wj * (nw.when(z > 0).then(z).otherwise(nw.lit(0.0)) + (1.0 + (-z.abs()).exp()).log()
                           - t * z)).sum().alias(f"loss{j}"))
        for a, xa in enumerate(x):
            aggs.append((wj * (t - q) * xa).sum().alias(f"f{j}_{a}"))
            for b in range(a, len(x)):
                aggs += [(h * xa * x[b]).sum().alias(f"h{j}_{a}{b}"), (w * h * xa * x[b]).sum().alias(f"c{j}_{a}{b}")]
    return collect(rows.select(*aggs))


def variable_ranges(frame: nw.LazyFrame, roles: Roles, columns) -> pd.DataFrame:
    """One row: valid rows ``n``, their sums of ``w g`` (``sd``) and ``w`` (``sw``), the top-label gap's numerator
    and denominator over all rows, and of ``w t`` (``st``), the target of the score's recalibration
    (:func:`recalibration_sums`); per numeric column i, ``lo{i}``, ``hi{i}`` and ``n{i}`` of its finite values,
    and ``sw{i}``, ``st{i}`` over them."""
    rows = _variable_rows(frame, roles, {f"_x{i}": c for i, c in enumerate(columns)})
    w, t = nw.col("_w"), nw.col("_t")
    aggs = [nw.len().alias("n"), (w * nw.col("_d")).sum().alias("sd"), w.sum().alias("sw"),
            (w * t).sum().alias("st")]
    for i in range(len(columns)):
        x = nw.col(f"_x{i}").cast(nw.Float64)
        fin = x.is_finite()
        aggs += [nw.when(fin).then(x).min().alias(f"lo{i}"), nw.when(fin).then(x).max().alias(f"hi{i}"),
                 nw.when(fin).then(nw.lit(1)).otherwise(nw.lit(0)).sum().alias(f"n{i}"),
                 nw.when(fin).then(w).otherwise(nw.lit(0.0)).sum().alias(f"sw{i}"),
                 nw.when(fin).then(w * t).otherwise(nw.lit(0.0)).sum().alias(f"st{i}")]
    return collect(rows.select(*aggs))


def _bucket_of(x, lo: float, hi: float):
    """Fine bucket 0..2^16 - 1 of x on [lo, hi]: monotone in x (halves keep ``hi - lo`` finite)."""
    scale = float(FINE_BUCKETS) / (hi * 0.5 - lo * 0.5)
    return ((x * 0.5 - lo * 0.5) * scale).floor().clip(0.0, float(FINE_BUCKETS - 1))


def variable_groups(frame: nw.LazyFrame, roles: Roles, column: str, *, kind: str, ranges=(),
                    limit: int | None = None, recalibration=None) -> pd.DataFrame:
    """Sums :data:`VARIABLE_SUMS` per group ``_k`` of one feature: the one aggregation of a VECE; with
    ``recalibration`` (the coefficients of the score's logistic recalibration) also :func:`recalibrated_sums`.

    ``kind``: "level" (a categorical column: one group per value, missing
    values one group), "bucket" (a numeric column's finite values in the
    ``ranges`` [lo, hi]; range r gives groups r * 2^16 + its fine bucket) or
    "exact" (one group per distinct value in the ``ranges``). ``limit`` caps
    the groups brought back (the caller then knows there were more).
    """
    rows = _variable_rows(frame, roles, {"_x": column})
    weighted = roles.weight is not None
    if kind == "level":
        key = nw.col("_x")
    else:
        x = nw.col("_x").cast(nw.Float64)
        inside = [(x >= lo) & (x <= hi) for lo, hi in ranges]
        cond = inside[0]
        for c in inside[1:]:
            cond = cond | c
        rows = rows.filter(x.is_finite() & cond)
        if kind == "exact":
            key = x + 0.0  # -0.0 + 0.0 = +0.0: one group for the two zeros, as numpy's comparisons see them
        else:
            key = nw.when(inside[0]).then(_bucket_of(x, *ranges[0]))
            for r, (c, (lo, hi)) in enumerate(zip(inside[1:], ranges[1:]), start=1):
                key = key.when(c).then(_bucket_of(x, lo, hi) + float(r * FINE_BUCKETS))
    d, w, q = nw.col("_d"), nw.col("_w"), nw.col("_q")
    v = q * (1.0 - q)
    if weighted:
        wd, wwv = w * d, w * w * v
        sums = [w.sum().alias("sw"), wd.sum().alias("sd"), (wd * wd).sum().alias("sdd"), (w * wd).sum().alias("sdw"),
                (w * w).sum().alias("sww"), w.min().alias("wmin"), wwv.sum().alias("sv"),
                (wwv * w * (1.0 - 2.0 * q)).sum().alias("sk")]
    else:
        sums = [d.sum().alias("sd"), (d * d).sum().alias("sdd"), v.sum().alias("sv"),
                (v * (1.0 - 2.0 * q)).sum().alias("sk")]
    if kind != "level":
        sums += [nw.col("_x").cast(nw.Float64).min().alias("xmin"), nw.col("_x").cast(nw.Float64).max().alias("xmax")]
    if recalibration is not None:
        # the row's recalibrated error probability, its sign and design columns made once, summed below (one
        # expression per sum re-evaluated the exponential in each)
        design = _design(roles)
        _, _, r, sign = _recalibrated(roles, recalibration)
        rows = rows.with_columns(_rr=r, _rs=sign, **{f"_d{a}": x for a, x in enumerate(design)})
        r, sign = nw.col("_rr"), nw.col("_rs")
        rv = r * (1.0 - r)
        v1, v2 = (w * rv, w * w * rv) if weighted else (rv, rv)
        sums += [((w * (q - r)) if weighted else (q - r)).sum().alias("so"), v2.sum().alias("sv1"),
                 (v2 * (w if weighted else 1.0) * (1.0 - 2.0 * r)).sum().alias("sk1")]
        sums += [(sign * v2 * nw.col(f"_d{a}")).sum().alias(f"sc{a}") for a in range(len(design))]
        sums += [(sign * v1 * nw.col(f"_d{a}")).sum().alias(f"sa{a}") for a in range(len(design))]
    out = rows.with_columns(_k=key).group_by("_k").agg(nw.len().alias("n"), *sums)
    if limit is not None:
        out = out.head(limit)
    out = collect(out)
    if not weighted:  # unit weights: sum w = sum w^2 = n, sum w (w g) = sum g
        out["sw"] = out["sww"] = out["n"].astype(np.float64)
        out["sdw"] = out["sd"]
        out["wmin"] = 1.0
    return out
