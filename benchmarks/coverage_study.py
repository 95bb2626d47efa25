"""Coverage study: which bootstrap interval to show for which metric.

Run: nice -n 10 python benchmarks/coverage_study.py [--quick] [--workers 2] [--checkpoint FILE] [--json FILE]
     nice -n 10 python benchmarks/coverage_study.py --metrics tce --sizes 100,200,500 [--reps R] --json FILE
     python benchmarks/coverage_study.py --render-json FILE [FILE ...] --out docs/intervals.md

The full run (about 57 CPU-minutes, two worker processes) updates the generated blocks of
docs/intervals.md (``<!-- choice-table:... -->``: the choice recorded in calibviz.metrics.intervals
with its measured coverage; ``<!-- coverage-table:... -->``: every cell). ``--quick`` (about a
minute: n = 500 and 5,000, 24 replications, B = 100) writes nothing unless ``--out`` is given.
``--checkpoint`` appends each finished task to a JSON-lines file and resumes from it;
``--metrics a,b`` runs only those metrics (``--render-json`` merges runs, later cells replace);
``--metrics a,b --sizes 100,200`` runs them at those sizes instead, on every model of their kind (binary:
the three miscalibrated models and the calibrated one; 200 replications per cell up to n = 500, 100 above,
or ``--reps``); the tables show whichever sizes the merged results hold.
``--small-sample`` compares the small-sample alternatives of the L2 errors (RMSCE, Brier reliability,
debiased ECE; ECE's first double bootstrap); ``--small-sample --metrics <L1 keys>`` (ece, ace, smooth_ece,
ici, confidence_ece, top_label_ece, classwise_ece) runs the L1 cells: the library's vectorised double
bootstrap (two-sided and its calibrated upper bound) and the one-sided basic and percentile bounds, on the
same resamples; ``--summarise-checkpoint`` summarises what a stopped run finished.

For synthetic models whose population values are known (computed on 10^7
draws), draw many samples of size n, compute every metric of the dashboard's
panel (``calibviz.panel`` registries, default ``PanelConfig``: 15 equal-width
bins, TCE with PAVA-BC and alpha = 0.05), bootstrap it once (``B`` resamples,
rows resampled jointly, exactly as ``metric_panel`` does) and read every
interval method off the same resampled values with
:func:`calibviz.metrics.interval_from_distribution` (so two methods differ by
their formula only, never by resampling noise). Reported per (model, n,
metric, method):

* coverage: share of the replications whose interval contains the population
  value, with its Monte Carlo standard error sqrt(c (1 - c) / reps);
* misses above / below: intervals lying entirely above / below it;
* "estimate outside": share of intervals that do not contain the value shown
  with them (the plug-in estimate; the debiased estimate for the
  bias-corrected method).

Models
------
binary, p ~ Beta(2, 5), y ~ Bernoulli(g(p)):
  calibrated      g(p) = p               (every calibration error is 0: the boundary)
  overconfident   g(p) = expit(0.6 logit p)   (true rates pulled toward 0.5)
  mildly_overconfident  g(p) = expit(0.85 logit p)  (ECE 0.025: gaps comparable to the noise)
  underconfident  g(p) = expit(1.5 logit p)   (true rates pushed away from 0.5)
multiclass, K = 4, P ~ Dirichlet(0.5, 0.5, 0.5, 0.5), y ~ Categorical(Q):
  mc_calibrated      Q = P
  mc_overconfident   Q = softmax(log(P) / 1.5)   (truth flatter than the predictions)

Population values (the estimand of each metric), on 10^7 draws of p (or P):
binned errors (ECE, MCE, RMSCE, Brier reliability, confidence / top-label /
class-wise ECE, top-label MCE) use the per-bin |E[g(p) | bin] - E[p | bin]|,
with the true conditional probability g(p) in place of y (no label noise);
ACE and debiased ECE (equal-mass bins) use bins at the exact population
quantiles of Beta(2, 5); ICI is E|g(p) - p|; Brier score and log loss are
their expectations under g; CORP MCB = E(p - g(p))^2, DSC = Var g(p),
UNC = pi (1 - pi) with pi = E g(p); multiclass accuracy E[Q_argmax P] and
one-vs-rest AUC with the true probabilities as weights of the two classes;
smECE is its value on 10^7 draws of (y, p) (0 exactly for the calibrated
model). TCE's estimand depends on n (the power of its tests grows with n), so
its "population value" is its mean over many independent samples of that
size (class-wise TCE likewise; :func:`mean_draws` samples), and its Monte
Carlo error is printed.
"""
from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import sys
import time
import warnings
from multiprocessing import Pool
from pathlib import Path

import numpy as np
from scipy import special, stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import calibviz.smoothing  # noqa: E402,F401  (imported before the workers fork: ICI's LOESS)
from calibviz.metrics import interval_from_distribution, smooth_ece  # noqa: E402
from calibviz.metrics.intervals import metric_bounds  # noqa: E402
from calibviz.metrics.resampling import _jackknife  # noqa: E402  (the exact jackknife bootstrap(method="bca") uses)
from calibviz.panel import BINARY_METRICS, MULTICLASS_METRICS, PanelConfig  # noqa: E402

CFG = PanelConfig()
N_BINS = CFG.n_bins
CONFIDENCE = 0.95
POP_DRAWS = 10**7
POP_CHUNK = 10**6

# (column name, bootstrap method, alternative)
METHODS = [
    ("percentile", "percentile", "two-sided"),
    ("basic", "basic", "two-sided"),
    ("bca", "bca", "two-sided"),
    ("bias_corrected", "bias_corrected", "two-sided"),
    ("upper_percentile", "percentile", "less"),
    ("upper_basic", "basic", "less"),
]

BINARY_MODELS = {
    "calibrated": lambda p: p,
    "overconfident": lambda p: special.expit(0.6 * special.logit(p)),
    "mildly_overconfident": lambda p: special.expit(0.85 * special.logit(p)),
    "underconfident": lambda p: special.expit(1.5 * special.logit(p)),
}
MC_K, MC_ALPHA = 4, 0.5
MC_MODELS = {"mc_calibrated": 1.0, "mc_overconfident": 1.5}  # truth temperature T
MODEL_ORDER = list(BINARY_MODELS) + list(MC_MODELS)
# metrics whose population value is 0 for a calibrated model (the boundary)
CALIBRATION_ERRORS = {"ece", "ace", "mce", "rmsce", "debiased_ece", "smooth_ece", "ici", "brier_reliability",
                      "mcb", "confidence_ece", "top_label_ece", "top_label_mce", "classwise_ece"}
MEAN_AT_N = {"tce", "classwise_tce"}  # estimand depends on n: mean over samples of that size


def _spec(key, multiclass=False):
    return MULTICLASS_METRICS[key] if multiclass else BINARY_METRICS[key]


CORP_TERMS = ("mcb", "dsc", "unc")
_corp_memo: list = [None, None, None]  # (y, p, decomposition) of the last call; holding y and p keeps ids unique


def _corp(y, p):
    if _corp_memo[0] is not y or _corp_memo[1] is not p:
        from calibviz.metrics import corp_decomposition

        _corp_memo[:] = [y, p, corp_decomposition(y, p)]
    return _corp_memo[2]


def _metric(key, multiclass=False):
    """The panel's value of a metric (``spec.compute`` with the default PanelConfig).

    MCB, DSC and UNC are three numbers of one CORP decomposition; the study computes it once per
    resample and reads the three terms (the same numbers the panel's three calls give).
    """
    if key in CORP_TERMS:
        return lambda y, p: float(getattr(_corp(y, p), key))
    spec = _spec(key, multiclass)  # "auc" is in both registries (binary: DeLong; multiclass: one-vs-rest)
    return lambda y, p: float(spec.compute(y, p, None, CFG))


def _truth_mc(P, T):
    if T == 1.0:
        return P
    logq = np.log(np.maximum(P, 1e-300)) / T
    logq -= logq.max(axis=1, keepdims=True)
    Q = np.exp(logq)
    return Q / Q.sum(axis=1, keepdims=True)


def sample(model: str, n: int, rng: np.random.Generator):
    if model in BINARY_MODELS:
        p = rng.beta(2.0, 5.0, n)
        y = (rng.random(n) < BINARY_MODELS[model](p)).astype(np.float64)
        return y, p
    P = rng.dirichlet(np.full(MC_K, MC_ALPHA), n)
    Q = _truth_mc(P, MC_MODELS[model])
    y = (rng.random(n)[:, None] > np.cumsum(Q, axis=1)).sum(axis=1)
    return np.minimum(y, MC_K - 1).astype(np.int64), P


# ----------------------------------------------------------------------------
# population values


def _uniform_index(p):
    return np.minimum((p * N_BINS).astype(np.int64), N_BINS - 1)


def _gaps(sum_w, sum_q, sum_p):
    keep = sum_w > 0
    gap = np.abs(sum_q[keep] - sum_p[keep]) / sum_w[keep]
    return sum_w[keep] / sum_w[keep].sum(), gap


def population_binary(model: str, seed: int) -> dict:
    g = BINARY_MODELS[model]
    rng = np.random.default_rng([seed, 99, MODEL_ORDER.index(model)])
    inner = stats.beta.ppf(np.arange(1, N_BINS) / N_BINS, 2.0, 5.0)  # exact population quantiles
    acc = {k: np.zeros(N_BINS) for k in ("uw", "uq", "up", "qw", "qq", "qp")}
    ici = brier = logloss = mcb = sum_q = sum_q2 = 0.0
    eps = float(np.finfo(np.float64).eps)
    ys, ps = [], []
    for _ in range(POP_DRAWS // POP_CHUNK):
        p = rng.beta(2.0, 5.0, POP_CHUNK)
        q = g(p)
        u = _uniform_index(p)
        acc["uw"] += np.bincount(u, minlength=N_BINS)
        acc["uq"] += np.bincount(u, q, minlength=N_BINS)
        acc["up"] += np.bincount(u, p, minlength=N_BINS)
        e = np.searchsorted(inner, p, side="right")
        acc["qw"] += np.bincount(e, minlength=N_BINS)
        acc["qq"] += np.bincount(e, q, minlength=N_BINS)
        acc["qp"] += np.bincount(e, p, minlength=N_BINS)
        ici += np.abs(q - p).sum()
        mcb += ((p - q) ** 2).sum()
        sum_q += q.sum()
        sum_q2 += (q * q).sum()
        brier += ((p - q) ** 2 + q * (1 - q)).sum()
        pc = np.clip(p, eps, 1 - eps)
        logloss += (-(q * np.log(pc) + (1 - q) * np.log1p(-pc))).sum()
        ys.append((rng.random(POP_CHUNK) < q).astype(np.float64))
        ps.append(p)
    w, gap = _gaps(acc["uw"], acc["uq"], acc["up"])
    wq, gapq = _gaps(acc["qw"], acc["qq"], acc["qp"])
    sm = smooth_ece(np.concatenate(ys), np.concatenate(ps))
    out = {
        "ece": float(w @ gap),
        "mce": float(gap.max()),
        "rmsce": float(np.sqrt(w @ gap**2)),
        "brier_reliability": float(w @ gap**2),
        "ace": float(wq @ gapq),
        "debiased_ece": float(np.sqrt(wq @ gapq**2)),
        "ici": ici / POP_DRAWS,
        "brier": brier / POP_DRAWS,
        "log_loss": logloss / POP_DRAWS,
        "smooth_ece": 0.0 if model == "calibrated" else float(sm),
        # CORP: MCB = Brier(p) - Brier(g) = E(p - g)^2 (the PAV fit's limit is g, which is increasing),
        # DSC = UNC - E g(1 - g) = Var g(p), UNC = pi (1 - pi) with pi = E g(p)
        "mcb": mcb / POP_DRAWS,
        "dsc": sum_q2 / POP_DRAWS - (sum_q / POP_DRAWS) ** 2,
        "unc": (sum_q / POP_DRAWS) * (1 - sum_q / POP_DRAWS),
        "_smooth_ece_on_draws": float(sm),
        "_mce_bin_mass": float(w[np.argmax(gap)]),
    }
    return out


def population_multiclass(model: str, seed: int) -> dict:
    T = MC_MODELS[model]
    rng = np.random.default_rng([seed, 99, MODEL_ORDER.index(model)])
    K, B = MC_K, N_BINS
    cw, cq, cp = (np.zeros(B) for _ in range(3))  # confidence
    tw, tq, tp = (np.zeros(K * B) for _ in range(3))  # top-label cells
    kw, kq, kp = (np.zeros((K, B)) for _ in range(3))  # class-wise
    acc = 0.0
    cols_p = [[] for _ in range(K)]
    cols_q = [[] for _ in range(K)]
    for _ in range(POP_DRAWS // POP_CHUNK):
        P = rng.dirichlet(np.full(K, MC_ALPHA), POP_CHUNK)
        Q = _truth_mc(P, T)
        for k in range(K):
            cols_p[k].append(P[:, k].astype(np.float32))
            cols_q[k].append(Q[:, k].astype(np.float32))
        lab = P.argmax(axis=1)
        c = P[np.arange(POP_CHUNK), lab]
        a = Q[np.arange(POP_CHUNK), lab]
        acc += a.sum()
        b = _uniform_index(c)
        cw += np.bincount(b, minlength=B)
        cq += np.bincount(b, a, minlength=B)
        cp += np.bincount(b, c, minlength=B)
        cell = lab * B + b
        tw += np.bincount(cell, minlength=K * B)
        tq += np.bincount(cell, a, minlength=K * B)
        tp += np.bincount(cell, c, minlength=K * B)
        for k in range(K):
            u = _uniform_index(P[:, k])
            kw[k] += np.bincount(u, minlength=B)
            kq[k] += np.bincount(u, Q[:, k], minlength=B)
            kp[k] += np.bincount(u, P[:, k], minlength=B)
    w, gap = _gaps(cw, cq, cp)
    wt, gapt = _gaps(tw, tq, tp)
    absdiff = np.abs(tq - tp).reshape(K, B).sum(axis=0)
    wbin = tw.reshape(K, B).sum(axis=0)
    delta = absdiff[wbin > 0] / wbin[wbin > 0]
    cwe = [float(np.dot(*_gaps(kw[k], kq[k], kp[k]))) for k in range(K)]
    aucs = []
    for k in range(K):  # one-vs-rest AUC with the true probabilities as weights of "positive" and "negative"
        sp = np.concatenate(cols_p[k]).astype(np.float64)
        pos = np.concatenate(cols_q[k]).astype(np.float64)
        order = np.argsort(sp, kind="stable")
        pos = pos[order]
        neg = 1.0 - pos
        below = np.cumsum(neg) - neg  # negative mass strictly below each score (continuous scores: no ties)
        aucs.append(float(np.dot(pos, below) / (pos.sum() * neg.sum())))
    return {
        "accuracy": acc / POP_DRAWS,
        "auc": float(np.mean(aucs)),
        "confidence_ece": float(w @ gap),
        "top_label_ece": float(wt @ gapt),
        "top_label_mce": float(delta.max()),
        "classwise_ece": float(np.mean(cwe)),
    }


def mean_draws(key: str, n: int, quick: bool = False) -> int:
    """Samples behind a MEAN_AT_N population value: 2,000 up to n = 5,000 (TCE costs 2-5 ms there: its
    Monte Carlo error stays a small fraction of an interval's width), 150 at 50,000; class-wise TCE 60."""
    if quick:
        return 30
    if key == "classwise_tce":
        return 60
    return 2000 if n <= 5000 else 150


def mean_at_n(model: str, key: str, n: int, draws: int, seed: int) -> tuple[float, float]:
    """(mean, standard error) of a metric over ``draws`` independent samples of size n."""
    f = _metric(key, model in MC_MODELS)
    vals = []
    for m in range(draws):
        rng = np.random.default_rng([seed, 77, MODEL_ORDER.index(model), n, m])
        vals.append(f(*sample(model, n, rng)))
    vals = np.asarray(vals)
    return float(vals.mean()), float(vals.std(ddof=1) / math.sqrt(vals.size))


# ----------------------------------------------------------------------------
# one task: a block of replications of one (model, n)


def run_task(task: dict) -> dict:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    model, n, reps, plan, B, seed = (task[k] for k in ("model", "n", "reps", "plan", "B", "seed"))
    fns = {k: _metric(k, model in MC_MODELS) for k in plan}
    out = {k: {"est": [], "debiased": [], "rep": [], "boot_sd": [], "bias": [], **{m[0]: [] for m in METHODS}}
           for k in plan}
    t0, c0 = time.perf_counter(), time.process_time()
    for rep in reps:
        rng = np.random.default_rng([seed, MODEL_ORDER.index(model), n, rep])
        y, p = sample(model, n, rng)
        active = [k for k, (r, _) in plan.items() if rep < r]
        if not active:
            continue
        est = {k: fns[k](y, p) for k in active}
        boot = {k: np.empty(B) for k in active}
        done = 0
        while done < B:
            c = min(25, B - done)
            idx = rng.integers(0, n, size=(c, n))
            for j in range(c):
                yy, pp = y[idx[j]], p[idx[j]]
                for k in active:
                    try:
                        boot[k][done + j] = fns[k](yy, pp)
                    except ValueError:  # InputError on a degenerate resample
                        boot[k][done + j] = np.nan
            done += c
        for k in active:
            n_jack = plan[k][1]
            jack = _jackknife(lambda a, b, _f=fns[k]: _f(a, b), [y, p], None, {}, n_jack, rng) if n_jack else None
            rec = out[k]
            rec["rep"].append(rep)
            rec["est"].append(est[k])
            finite = boot[k][np.isfinite(boot[k])]
            rec["boot_sd"].append(float(finite.std(ddof=1)) if finite.size > 1 else float("nan"))
            rec["bias"].append(float(finite.mean() - est[k]) if finite.size else float("nan"))
            for name, method, alternative in METHODS:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    r = interval_from_distribution(boot[k], est[k], method=method, confidence=CONFIDENCE,
                                                   alternative=alternative, jackknife=jack, bounds=metric_bounds(k))
                rec[name].append((r.low, r.high, r.point))
                if name == "bias_corrected":
                    rec["debiased"].append(r.debiased)
    return {"id": _task_id(task), "model": model, "n": n, "out": out, "seconds": time.perf_counter() - t0,
            "cpu": time.process_time() - c0}


# ----------------------------------------------------------------------------
# small-sample alternatives (--small-sample): the binned L2 errors and ECE at n = 500 and 5,000

SMALL_KEYS = ("ece", "rmsce", "brier_reliability", "debiased_ece")
SMALL_MODELS = ("overconfident", "mildly_overconfident", "underconfident")
# method columns of the small-sample run; "current" is the main choice of calibviz.metrics.intervals
SMALL_COLUMNS = ("current", "debiased_basic", "double")
DOUBLE_MAX_N = 500  # the double bootstrap's cost grows as B x M x n: studied where it could matter
DOUBLE_INNER = 100  # inner resamples M per outer resample


def _bin_sums(bidx, y, p, idx):
    """Per-bin (count, sum y, sum p) of resamples ``idx`` (m, n) of rows with fixed bins ``bidx``: (m, 3, K)."""
    m, n = idx.shape
    key = (np.arange(m)[:, None] * N_BINS + bidx[idx]).ravel()
    out = np.empty((m, 3, N_BINS))
    out[:, 0] = np.bincount(key, minlength=m * N_BINS).reshape(m, N_BINS)
    out[:, 1] = np.bincount(key, y[idx].ravel(), minlength=m * N_BINS).reshape(m, N_BINS)
    out[:, 2] = np.bincount(key, p[idx].ravel(), minlength=m * N_BINS).reshape(m, N_BINS)
    return out


def _fixed_bin_errors(sums):
    """ECE, RMSCE and Brier reliability (Uniform bins, no weights) from per-bin sums (m, 3, K): dict of (m,)."""
    cnt, sy, sp = sums[:, 0], sums[:, 1], sums[:, 2]
    n = cnt.sum(axis=1)
    gap = np.abs(sy - sp)
    rel = np.where(cnt > 0, gap**2 / np.maximum(cnt, 1), 0.0).sum(axis=1) / n
    # Kumar et al.'s debiased squared error (calibviz.metrics.debiased_ece(squared=True) without weights)
    rate = sy / np.maximum(cnt, 1)
    corr = np.where(cnt >= 2, rate * (1 - rate) / np.maximum(cnt - 1, 1), 0.0)
    deb = rel - (cnt * corr).sum(axis=1) / n
    return {"ece": gap.sum(axis=1) / n, "rmsce": np.sqrt(rel), "brier_reliability": rel, "debiased_sq": deb}


def _double_basic(bidx, y, p, idx, outer, est, rng, alpha):
    """Calibrated (double-bootstrap) basic intervals of the fixed-bin errors: {key: (low, high)}.

    Prepivoting (Beran 1987; Davison & Hinkley 1997, Sec. 3.9 and 5.6): for each outer resample b, u_b =
    share of its inner resamples with theta** - theta*_b <= theta*_b - theta_hat (where the first-level
    root would put theta_hat); the basic interval is then read at the alpha/2 and 1 - alpha/2 quantiles of
    u instead of at alpha/2 and 1 - alpha/2. Inner resamples are vectorised bin sums (no per-row loop).
    For ECE this is calibviz.metrics.intervals.double_bootstrap_ece draw for draw (same generator, same
    results; tests/test_intervals.py checks it); here RMSCE shares the inner resamples.
    """
    B, n = idx.shape
    u = {k: np.empty(B) for k in outer}
    for b in range(B):
        inner = idx[b][rng.integers(0, n, size=(DOUBLE_INNER, n))]
        vals = _fixed_bin_errors(_bin_sums(bidx, y, p, inner))
        for k in outer:
            u[k][b] = np.mean(vals[k] - outer[k][b] <= outer[k][b] - est[k])
    out = {}
    for k in outer:
        lo_level, hi_level = np.quantile(u[k], [alpha / 2, 1 - alpha / 2])
        out[k] = (2 * est[k] - float(np.quantile(outer[k], hi_level)),
                  2 * est[k] - float(np.quantile(outer[k], lo_level)))
    return out


def run_small_task(task: dict) -> dict:
    """Replications of one (model, n): the current interval, the debiased-basic and the double-bootstrap one."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from calibviz.binning import EqualMass, Uniform
    from calibviz.metrics import debiased_ece, ece
    from calibviz.metrics.intervals import debiased_l2_from_distribution, interval_options

    model, n, reps, B, seed = (task[k] for k in ("model", "n", "reps", "B", "seed"))
    alpha = 1 - CONFIDENCE
    fns = {k: _metric(k) for k in SMALL_KEYS}
    out = {k: {"est": [], "rep": [], **{c: [] for c in SMALL_COLUMNS}} for k in SMALL_KEYS}
    t0, c0 = time.perf_counter(), time.process_time()
    uni, em = Uniform(N_BINS), EqualMass(N_BINS)
    for rep in reps:
        rng = np.random.default_rng([seed, 31, MODEL_ORDER.index(model), n, rep])
        y, p = sample(model, n, rng)
        bidx = uni.fit(p).index
        est = {k: fns[k](y, p) for k in SMALL_KEYS}
        idx = rng.integers(0, n, size=(B, n))
        fixed = _fixed_bin_errors(_bin_sums(bidx, y, p, idx))
        sq_uni = fixed.pop("debiased_sq")  # vectorised; equal to the library's value (checked on the first rep)
        if rep == reps[0]:
            check = [debiased_ece(y[i], p[i], binning=uni, squared=True) for i in idx[:3]]
            assert np.allclose(sq_uni[:3], check, rtol=1e-9, atol=1e-12), (sq_uni[:3], check)
        sq_em = np.array([debiased_ece(y[i], p[i], binning=em, squared=True) for i in idx])
        boot = {**fixed, "debiased_ece": np.sqrt(np.maximum(sq_em, 0.0))}  # exactly the panel's values
        est_sq = {"rmsce": debiased_ece(y, p, binning=uni, squared=True),
                  "debiased_ece": debiased_ece(y, p, binning=em, squared=True)}
        est_sq["brier_reliability"] = est_sq["rmsce"]
        plug_sq = {"rmsce": est["rmsce"] ** 2, "brier_reliability": est["brier_reliability"],  # t(F_hat)
                   "debiased_ece": ece(y, p, binning=em, norm="l2") ** 2}
        dbl = (_double_basic(bidx, y, p, idx, {k: fixed[k] for k in ("ece", "rmsce")}, est, rng, alpha)
               if n <= DOUBLE_MAX_N else {})
        for k in SMALL_KEYS:
            rec = out[k]
            rec["rep"].append(rep)
            rec["est"].append(est[k])
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                r = interval_from_distribution(boot[k], est[k], confidence=CONFIDENCE, **interval_options(k))
            rec["current"].append((r.low, r.high, r.point))
            if k in est_sq:
                d = debiased_l2_from_distribution(sq_em if k == "debiased_ece" else sq_uni, est_sq[k], plug_sq[k],
                                                  confidence=CONFIDENCE, squared=k == "brier_reliability",
                                                  estimate="debiased" if k == "debiased_ece" else "plugin")
                rec["debiased_basic"].append((d.low, d.high, d.point))
            else:
                rec["debiased_basic"].append((math.nan, math.nan, math.nan))
            if k in dbl:
                lo, hi = dbl[k]
                lo, hi = max(lo, 0.0), min(hi, 1.0)
                rec["double"].append((lo, hi, r.point))
            else:
                rec["double"].append((math.nan, math.nan, math.nan))
    return {"id": _task_id({**task, "plan": {k: (0, 0) for k in SMALL_KEYS}}) + "|small", "model": model, "n": n,
            "out": out, "seconds": time.perf_counter() - t0, "cpu": time.process_time() - c0}


def summarise_small(merged: dict, pops: dict, columns=SMALL_COLUMNS, order=SMALL_KEYS) -> list[dict]:
    rows = []
    for (model, n, k), rec in merged.items():
        pop = pops[(model, n, k)][0]
        row = {"model": model, "n": n, "metric": k, "reps": len(rec["est"]), "population": pop, "boundary": False}
        for c in columns:
            arr = np.asarray(rec[c], dtype=float)
            low, high, point = arr[:, 0], arr[:, 1], arr[:, 2]
            if np.isnan(low).all():
                continue
            cov = float(((low <= pop) & (pop <= high)).mean())
            row[c] = {"coverage": cov, "mcse": math.sqrt(cov * (1 - cov) / arr.shape[0]),
                      "above": float((low > pop).mean()), "below": float((high < pop).mean()),
                      "outside": float((~((low <= point) & (point <= high))).mean()),
                      "width": float(np.mean(high - low))}
        rows.append(row)
    rows.sort(key=lambda r: (order.index(r["metric"]), r["n"], MODEL_ORDER.index(r["model"])))
    return rows


def small_table(rows: list[dict]) -> str:
    from calibviz.metrics.intervals import INTERVALS

    lines = ["| metric | n | model | reps | population value | current: coverage | width | debiased-basic: "
             "coverage | width | double bootstrap: coverage | width |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        cells = []
        for c in SMALL_COLUMNS:
            d = r.get(c)
            cells += ["–", "–"] if d is None else [_cov(d), f"{d['width']:.3g}"]
        cur = INTERVALS[r["metric"]].method.replace("_", "-")
        lines.append(f"| {r['metric']} ({cur}) | {r['n']} | {r['model']} | {r['reps']} | {_num(r['population'])} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines)


# ----------------------------------------------------------------------------
# small samples, L1 errors (--small-sample --metrics ...): the double bootstrap beyond fixed-edge binary ECE,
# and one-sided upper bounds where no two-sided interval reaches the target

L1_KEYS = ("ece", "ace", "smooth_ece", "ici", "confidence_ece", "top_label_ece", "classwise_ece")
L1_COLUMNS = ("current", "double", "double_upper", "upper_basic", "upper_percentile")
#: (model, n, key) cells of the L1 run: n = 500 for every key (smECE also 5,000, where it fell short too)
L1_CELLS = tuple([(m, 500, k) for m in SMALL_MODELS for k in ("ece", "ace", "smooth_ece", "ici")]
                 + [(m, 5000, "smooth_ece") for m in SMALL_MODELS]
                 + [("mc_overconfident", 500, k) for k in ("confidence_ece", "top_label_ece", "classwise_ece")])


def run_l1_task(task: dict) -> dict:
    """Replications of one (model, n, metric): current, double-bootstrap (two-sided and upper) and upper bounds.

    The double bootstrap is calibviz.metrics.intervals' own (``resampled_values``, ``double_basic_u``,
    ``double_basic_limits``: the code the panel runs), on metrics whose vectorised value is checked
    against the panel's on the first replication; smECE and ICI (2-12 ms per evaluation, too slow for
    B x M = 20,000 of them) get the single-level intervals only.
    """
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    from calibviz.binning import Uniform
    from calibviz.metrics.intervals import (DOUBLE_KEYS, double_basic_limits, double_basic_u, interval_options,
                                            resampled_values)

    model, n, key, reps, B, seed = (task[k] for k in ("model", "n", "key", "reps", "B", "seed"))
    mc = model in MC_MODELS
    f = _metric(key, mc)
    out = {key: {"est": [], "rep": [], **{c: [] for c in L1_COLUMNS}}}
    rec = out[key]
    t0, c0 = time.perf_counter(), time.process_time()
    nan3 = (math.nan, math.nan, math.nan)
    for rep in reps:
        rng = np.random.default_rng([seed, 41, MODEL_ORDER.index(model), n, METRIC_ORDER.index(key), rep])
        y, p = sample(model, n, rng)
        est = f(y, p)
        idx = rng.integers(0, n, size=(B, n))
        if key in DOUBLE_KEYS:
            values = resampled_values(key, y, p, binning=Uniform(N_BINS), n_bins=N_BINS)
            boot = values(idx)
            if rep == reps[0]:  # the vectorised values are the panel's
                check = [f(y[i], p[i]) for i in idx[:3]]
                assert np.allclose(boot[:3], check, rtol=1e-10, atol=1e-14), (key, boot[:3], check)
        else:
            boot = np.array([f(y[i], p[i]) for i in idx])
        rec["rep"].append(rep)
        rec["est"].append(est)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            r = interval_from_distribution(boot, est, confidence=CONFIDENCE, **interval_options(key))
            rec["current"].append((r.low, r.high, r.point))
            bounds = metric_bounds(key)
            for col, method in (("upper_basic", "basic"), ("upper_percentile", "percentile")):
                u = interval_from_distribution(boot, est, method=method, alternative="less", confidence=CONFIDENCE,
                                               bounds=bounds)
                rec[col].append((u.low, u.high, r.point if method == "basic" else est))
        if key in DOUBLE_KEYS:
            u = double_basic_u(values, idx, boot, est, rng, DOUBLE_INNER)
            for col, alt in (("double", "two-sided"), ("double_upper", "less")):
                lo, hi = double_basic_limits(boot, est, u, CONFIDENCE, alt)
                rec[col].append((lo, hi, r.point))
        else:
            rec["double"].append(nan3)
            rec["double_upper"].append(nan3)
    return {"id": _l1_task_id(task), "model": model, "n": n, "out": out, "seconds": time.perf_counter() - t0,
            "cpu": time.process_time() - c0}


def _read_checkpoint(path, wanted=None) -> tuple[list, set]:
    """(results, ids) of the tasks an interrupted run finished (JSON lines of --checkpoint), each id once;
    only ids in ``wanted`` when given."""
    results, done = [], set()
    if path and Path(path).exists():
        for line in Path(path).read_text().splitlines():
            rec = json.loads(line)
            if rec["id"] not in done and (wanted is None or rec["id"] in wanted):
                results.append(rec["result"])
                done.add(rec["id"])
    return results, done


def _l1_task_id(t: dict) -> str:
    return f"{t['model']}|{t['n']}|{t['key']}|{t['reps'][0]}-{t['reps'][-1]}|B{t['B']}|seed{t['seed']}|l1"


def _saved_population(seed: int) -> dict:
    """Population values of the main run (benchmarks/coverage_results/coverage_main.json.gz) when its seed is ours.

    They take minutes to recompute (10^7 draws per model, smECE on them); the same seed and code give the
    same numbers, which ``--recompute-population`` checks.
    """
    path = Path(__file__).resolve().parent / "coverage_results" / "coverage_main.json.gz"
    if not path.exists():
        return {}
    d = json.loads(gzip.decompress(path.read_bytes()))
    return d["population"] if f"seed {seed}," in d["header"] else {}


def run_l1(args) -> None:
    """--small-sample --metrics <L1 keys>: the L1 cells of L1_CELLS, saved as JSON (kind "small_sample")."""
    B = args.resamples or (100 if args.quick else 200)
    reps = args.reps or (10 if args.quick else 200)
    keep = set(args.metrics.split(","))
    cells = [c for c in L1_CELLS if c[2] in keep]
    t_start = time.perf_counter()
    saved = {} if args.recompute_population else _saved_population(args.seed)
    pops = {}
    for model in dict.fromkeys(m for m, _, _ in cells):
        if model not in saved:
            saved[model] = (population_binary if model in BINARY_MODELS else population_multiclass)(model, args.seed)
    for model, n, k in cells:
        pops[(model, n, k)] = (saved[model][k], 0.0)
    tasks = [{"model": m, "n": n, "key": k, "reps": list(range(s, min(reps, s + 10))), "B": B, "seed": args.seed}
             for m, n, k in cells for s in range(0, reps, 10)]
    # the double-bootstrap cells first, smECE next, ICI (12 ms per evaluation) last: a checkpointed run that
    # has to stop early has finished the cheap decisions
    tasks.sort(key=lambda t: (t["key"] == "ici", t["key"] == "smooth_ece", t["reps"][0]))
    results, done_ids = _read_checkpoint(args.checkpoint)
    todo = [t for t in tasks if _l1_task_id(t) not in done_ids]
    if args.summarise_checkpoint:  # an interrupted run: summarise the finished tasks (reps per cell in the table)
        todo = []
    print(f"population values: {time.perf_counter() - t_start:.0f} s; {len(todo)} of {len(tasks)} tasks to run",
          flush=True)
    results += _run_checkpointed(run_l1_task, todo, args, t_start)
    rows = summarise_small(merge(results), pops, columns=L1_COLUMNS, order=L1_KEYS)
    cpu = sum(r.get("cpu", 0.0) for r in results)
    header = (f"Generated by `python benchmarks/coverage_study.py --small-sample --metrics {args.metrics}"
              f"{' --quick' if args.quick else ''}` on {_version()} (B = {B} resamples, {DOUBLE_INNER} inner "
              f"resamples per outer one for the double bootstrap, nominal {CONFIDENCE:.0%}, seed {args.seed}, "
              + (f"up to {reps} replications per cell (the table gives each cell's)" if args.summarise_checkpoint
                 else f"{reps} replications per cell")
              + f", {cpu / 60:.0f} CPU-minutes in {args.workers} workers"
              + (f", {len(done_ids)} of {len(tasks)} tasks resumed from a checkpoint" if done_ids else "")
              + (", stopped early: the tasks finished by then" if args.summarise_checkpoint else "")
              + "). 'current': the main method of calibviz.metrics.intervals on the same resamples; 'double "
              "bootstrap': the basic interval at levels calibrated by prepivoting (Beran 1987), two-sided and as "
              "a one-sided upper bound; 'upper': one-sided 95% upper bounds, basic (2 estimate - q(0.05)) and "
              "percentile (q(0.95)).")
    print(header)
    print(l1_table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps({"kind": "small_sample", "table": "l1", "rows": rows, "B": B,
                                               "header": header}, default=float))
        print(f"wrote {args.json}")


def l1_table(rows: list[dict]) -> str:
    from calibviz.metrics.intervals import INTERVALS

    lines = ["| metric | n | model | reps | population value | current: coverage | width | double bootstrap: "
             "coverage | width | double-bootstrap upper bound | basic upper bound | percentile upper bound |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        cells = []
        for c in L1_COLUMNS:
            d = r.get(c)
            if c in ("current", "double"):
                cells += ["–", "–"] if d is None else [_cov(d), f"{d['width']:.3g}"]
            else:
                cells.append("–" if d is None else _cov(d))
        cur = INTERVALS[r["metric"]].method.replace("_", "-")
        lines.append(f"| {r['metric']} ({cur}) | {r['n']} | {r['model']} | {r['reps']} | {_num(r['population'])} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines)


# ----------------------------------------------------------------------------
# plan


def make_plan(quick: bool) -> dict:
    """{(model, n): {metric: (reps, n_jackknife)}}; n_jackknife 0 = BCa without acceleration."""
    cheap_bin = ["ece", "ace", "mce", "rmsce", "debiased_ece", "brier", "brier_reliability", "log_loss"]
    cheap_mc = ["confidence_ece", "top_label_ece", "top_label_mce", "classwise_ece"]
    plan = {}
    if quick:
        for model in ("calibrated", "overconfident", "mildly_overconfident"):
            for n in (500, 5000):
                plan[(model, n)] = {k: (24, 10) for k in cheap_bin}
                plan[(model, n)]["smooth_ece"] = (12, 0)
                if model == "overconfident":
                    plan[(model, n)]["tce"] = (6, 0)
        for model in MC_MODELS:
            plan[(model, 500)] = {k: (24, 10) for k in cheap_mc}
        return plan
    for model in BINARY_MODELS:
        boundary = model == "calibrated"
        for n in (500, 5000, 50000):
            big = n == 50000
            reps = (60 if boundary else 80) if big else (100 if boundary else 200)
            p = {k: (reps, 30 if big else 50) for k in cheap_bin}
            p["smooth_ece"] = ((30 if boundary else 40) if big else (50 if boundary else 100), 20)
            if model == "overconfident" or (boundary and not big):
                p["tce"] = (20 if big else (30 if boundary else 40), 0)
            if not boundary and n == 500:  # ICI's LOESS costs ~15 ms at n = 500, ~70 ms at 5,000
                p["ici"] = (40, 0)
            if model == "mildly_overconfident" and n == 5000:
                p["ici"] = (20, 0)
            plan[(model, n)] = p
    for model in MC_MODELS:
        for n in (500, 5000, 50000):
            big = n == 50000
            reps = (30 if big else 100) if model == "mc_calibrated" else (40 if big else 200)
            p = {k: (reps, 20 if big else 50) for k in cheap_mc}
            if model == "mc_overconfident" and n == 500:
                p["classwise_tce"] = (20, 0)
            plan[(model, n)] = p
    # metrics added to the panel after the first run (CORP terms; multiclass accuracy and AUC): n <= 5000
    for model in ("calibrated", "overconfident", "mildly_overconfident"):
        for n in (500, 5000):
            plan[(model, n)].update({k: (100, 0) for k in CORP_TERMS})
    plan[("mc_overconfident", 500)].update({"accuracy": (100, 0), "auc": (100, 0)})
    plan[("mc_overconfident", 5000)].update({"accuracy": (40, 0), "auc": (40, 0)})
    return plan


def sizes_plan(keys, sizes, reps=None) -> dict:
    """``--sizes``: the plan of ``keys`` at ``sizes`` on every model of their kind (binary: the calibrated model
    and the three miscalibrated ones; multiclass: both), ``reps`` replications per cell (default 200 up to
    n = 500, 100 above), the jackknife groups the main plan gives the metric."""
    main = make_plan(False)
    plan: dict = {}
    for k in keys:
        planned = [(m, p[k][1]) for (m, _), p in main.items() if k in p]
        if not planned:
            raise SystemExit(f"--sizes: {k!r} is not a metric of the study")
        multiclass = planned[0][0] in MC_MODELS
        for model in MODEL_ORDER:
            if (model in MC_MODELS) == multiclass:
                for n in sizes:
                    plan.setdefault((model, n), {})[k] = (reps or (200 if n <= 500 else 100), planned[0][1])
    return plan


def _task_id(task: dict) -> str:
    return (f"{task['model']}|{task['n']}|{task['reps'][0]}-{task['reps'][-1]}|B{task['B']}|seed{task['seed']}|"
            + ",".join(f"{k}:{r}:{j}" for k, (r, j) in sorted(task["plan"].items())))


def split_tasks(plan: dict, B: int, seed: int, block: int) -> list[dict]:
    tasks = []
    for (model, n), p in plan.items():
        r_max = max(r for r, _ in p.values())
        for start in range(0, r_max, block):
            tasks.append({"model": model, "n": n, "reps": list(range(start, min(r_max, start + block))),
                          "plan": p, "B": B, "seed": seed})
    # expensive first, so the two workers finish together
    tasks.sort(key=lambda t: -t["n"] * (1 + 20 * ("tce" in t["plan"] or "classwise_tce" in t["plan"])))
    return tasks


# ----------------------------------------------------------------------------
# summary


def merge(results: list[dict]) -> dict:
    """{(model, n, metric): {field: per-replication list}} over all tasks."""
    merged: dict = {}
    for res in results:
        for k, rec in res["out"].items():
            tgt = merged.setdefault((res["model"], res["n"], k), {f: [] for f in rec})
            for f, v in rec.items():
                tgt[f].extend(v)
    return merged


def summarise(merged: dict, pops: dict) -> list[dict]:
    rows = []
    for (model, n, k), rec in merged.items():
        if not rec["est"]:
            continue
        pop, pop_se = pops[(model, n, k)]
        est = np.asarray(rec["est"])
        deb = np.asarray(rec["debiased"], dtype=float)
        reps = est.size
        row = {"model": model, "n": n, "metric": k, "reps": reps, "population": pop, "population_se": pop_se,
               "boundary": model in ("calibrated", "mc_calibrated") and k in CALIBRATION_ERRORS,
               "mean_estimate": float(est.mean()), "mean_debiased": float(np.nanmean(deb)),
               "rmse_estimate": float(np.sqrt(np.mean((est - pop) ** 2))),
               "rmse_debiased": float(np.sqrt(np.nanmean((deb - pop) ** 2)))}
        for name, *_ in METHODS:
            arr = np.asarray(rec[name], dtype=float)  # (reps, 3): low, high, point
            low, high, point = arr[:, 0], arr[:, 1], arr[:, 2]
            undefined = np.isnan(low) | np.isnan(high)
            cov = (low <= pop) & (pop <= high)
            c = float(cov.mean())
            row[name] = {
                "coverage": c, "mcse": math.sqrt(c * (1 - c) / reps),
                "above": float((low > pop).mean()), "below": float((high < pop).mean()),
                "outside": float((~((low <= point) & (point <= high)) & ~undefined).mean()),
                "undefined": float(undefined.mean()),
                "width": float(np.nanmean(np.where(np.isfinite(high - low), high - low, np.nan)))
                if np.isfinite(high - low).any() else float("nan"),
            }
        rows.append(row)
    rows.sort(key=lambda r: (METRIC_ORDER.index(r["metric"]), MODEL_ORDER.index(r["model"]), r["n"]))
    return rows


METRIC_ORDER = ["ece", "ace", "mce", "rmsce", "debiased_ece", "tce", "smooth_ece", "ici", "brier",
                "brier_reliability", "log_loss", "mcb", "dsc", "unc", "confidence_ece", "top_label_ece",
                "top_label_mce", "classwise_ece", "classwise_tce", "accuracy", "auc"]


def _pc(x):
    return f"{100 * x:.0f}"


def _cov(d):
    return f"{100 * d['coverage']:.1f} ± {100 * d['mcse']:.1f}"


def _num(x):
    if x == 0:
        return "0"
    return f"{x:.4g}" if abs(x) < 1 else f"{x:.4g}"


def markdown_table(rows: list[dict], B: int) -> str:
    lines = [
        "| metric | model | n | reps | population value | mean estimate | mean debiased | "
        "percentile | basic = bias-corr. | BCa | upper (pct) | upper (basic) | "
        "outside: pct / basic / BCa / bias-corr. | above / below: pct | above / below: basic |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        pop = "**0 (boundary)**" if r["boundary"] else _num(r["population"])
        if r["metric"] in MEAN_AT_N:
            pop = f"{_num(r['population'])} (mean at n, ± {r['population_se']:.2g})"
        out = " / ".join(_pc(r[m]["outside"]) for m in ("percentile", "basic", "bca", "bias_corrected"))
        bca = _cov(r["bca"]) + (f" ({_pc(r['bca']['undefined'])}% undef.)" if r["bca"]["undefined"] else "")
        lines.append(
            f"| {r['metric']} | {r['model']} | {r['n']} | {r['reps']} | {pop} | {_num(r['mean_estimate'])} | "
            f"{_num(r['mean_debiased'])} | {_cov(r['percentile'])} | {_cov(r['basic'])} | {bca} | "
            f"{_cov(r['upper_percentile'])} | {_cov(r['upper_basic'])} | {out} | "
            f"{_pc(r['percentile']['above'])} / {_pc(r['percentile']['below'])} | "
            f"{_pc(r['basic']['above'])} / {_pc(r['basic']['below'])} |"
        )
    return "\n".join(lines)


RATIO_EDGES = (0.0, 0.25, 0.5, 1.0, math.inf)


def _range(vals):
    vals = [100 * v for v in vals]
    if not vals:
        return ""
    lo, hi = min(vals), max(vals)
    return f"{lo:.0f}" if round(lo) == round(hi) else f"{lo:.0f}–{hi:.0f}"


def summary_table(rows: list[dict]) -> str:
    """Coverage range (min–max over the models whose population value is not on the boundary)."""
    lines = ["| metric | n | models | percentile | basic = bias-corr. | BCa | upper bound (pct) | "
             "estimate outside pct/basic interval | debiased outside its interval |",
             "|---|---|---|---|---|---|---|---|---|"]
    for k in METRIC_ORDER:
        for n in sorted({r["n"] for r in rows}):
            sel = [r for r in rows if r["metric"] == k and r["n"] == n and not r["boundary"]]
            if not sel:
                continue
            lines.append(
                f"| {k} | {n} | {len(sel)} | " + " | ".join(
                    _range([r[m]["coverage"] for r in sel]) for m in ("percentile", "basic", "bca", "upper_percentile"))
                + f" | {_range([r['percentile']['outside'] for r in sel])} | "
                f"{_range([r['bias_corrected']['outside'] for r in sel])} |")
    return "\n".join(lines)


def ratio_table(raw: list[dict]) -> str:
    """Coverage against |bootstrap bias| / bootstrap standard deviation, a number every user sees."""
    head = " | ".join(f"{lo:g}–{hi:g}" if math.isfinite(hi) else f">= {lo:g}"
                      for lo, hi in zip(RATIO_EDGES[:-1], RATIO_EDGES[1:]))
    lines = [f"| metric | {head} |", "|---|" + "---|" * (len(RATIO_EDGES) - 1)]
    for k in METRIC_ORDER:
        recs = [r for r in raw if r["metric"] == k
                and not (r["model"] in ("calibrated", "mc_calibrated") and k in CALIBRATION_ERRORS)]
        if not recs:
            continue
        cells = []
        ratio = np.concatenate([np.abs(np.asarray(r["bias"], float)) / np.asarray(r["boot_sd"], float) for r in recs])
        cov = {}
        for m in ("percentile", "basic"):
            cov[m] = np.concatenate([(np.asarray(r[m], float)[:, 0] <= r["population"])
                                     & (r["population"] <= np.asarray(r[m], float)[:, 1]) for r in recs])
        for lo, hi in zip(RATIO_EDGES[:-1], RATIO_EDGES[1:]):
            sel = (ratio >= lo) & (ratio < hi)
            cnt = int(sel.sum())
            cells.append("" if cnt == 0 else
                         f"{100 * cov['percentile'][sel].mean():.0f} / {100 * cov['basic'][sel].mean():.0f} ({cnt})")
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


_COLUMN = {("bias_corrected", "two-sided"): "basic", ("basic", "two-sided"): "basic",
           ("percentile", "two-sided"): "percentile", ("bca", "two-sided"): "bca",
           ("percentile", "less"): "upper_percentile", ("basic", "less"): "upper_basic"}


# small-sample method -> its column of the --small-sample runs
_SMALL_COLUMN = {"debiased_basic": "debiased_basic", "double_basic": "double", "double_upper": "double_upper",
                 "percentile_upper": "upper_percentile", "basic_upper": "upper_basic"}
_SMALL_LABEL = {"double_basic": "double-basic", "double_upper": "double-bootstrap upper bound",
                "debiased_basic": "debiased-basic", "percentile_upper": "percentile upper bound",
                "basic_upper": "basic upper bound"}


def _chosen_cells(rows: list[dict], small_rows: list[dict]) -> dict:
    """{(key, method): {n: (min %, max %, fewest reps), ...}} of each metric's main and small-sample method.

    The main method's cells come from the main study (``rows``), the small-sample method's from the
    ``--small-sample`` run; only models whose population value is off the boundary count.
    """
    from calibviz.metrics.intervals import INTERVALS

    out = {}
    for k, c in INTERVALS.items():
        for method, src, col in ((c.method, rows, _COLUMN[(c.method, c.alternative)]),
                                 (c.small_sample, small_rows, _SMALL_COLUMN.get(c.small_sample))):
            if method is None:
                continue
            cells = {}
            for n in sorted({r["n"] for r in src}):
                sel = [r for r in src if r["metric"] == k and r["n"] == n and not r["boundary"] and col in r]
                if sel:
                    cov = [100 * r[col]["coverage"] for r in sel]
                    cells[n] = (round(min(cov), 1), round(max(cov), 1), min(r["reps"] for r in sel))
            if cells:
                out[(k, method)] = cells
    return out


def choice_table(rows: list[dict], small_rows: list[dict] = ()) -> str:
    """The recorded choice (calibviz.metrics.intervals) with the coverage the study measured for it.

    A metric with a small-sample method shows, at each n, the coverage of the method the panel uses at
    that n (fewer than ``small_below`` rows per bin: the small-sample method).
    """
    from calibviz.metrics.intervals import INTERVALS, STUDY_CLASSES, rows_per_bin

    cells_by = _chosen_cells(rows, list(small_rows))
    sizes = sorted({r["n"] for r in [*rows, *small_rows]})  # a column per size studied
    lines = ["| metric | interval | coverage " + " | ".join(f"n = {n:,}" for n in sizes)
             + " | shown value outside | why |", "|---|---|" + "---|" * len(sizes) + "---|---|"]
    for k in METRIC_ORDER:
        if k not in INTERVALS:
            continue
        c = INTERVALS[k]
        col = _COLUMN[(c.method, c.alternative)]
        own = "bias_corrected" if c.method == "bias_corrected" else col
        label = c.method.replace("_", "-") + (" upper bound" if c.alternative == "less" else "")
        if c.small_sample:
            unit = "rows per cell" if k in ("top_label_ece", "top_label_mce") else (
                "rows per bin" if rows_per_bin(k, 1000) < 1000 else "rows")
            label = f"{_SMALL_LABEL[c.small_sample]} below {c.small_below:,.0f} {unit}, else {label}"
        cells, outside = [], []
        for n in sizes:
            small = c.small_sample is not None and rows_per_bin(k, n, n_classes=STUDY_CLASSES) < c.small_below
            method, src, scol = ((c.small_sample, small_rows, _SMALL_COLUMN[c.small_sample]) if small
                                 else (c.method, rows, own))
            cell = cells_by.get((k, method), {}).get(n)
            cells.append("–" if cell is None else (f"{cell[0]:.0f}" if round(cell[0]) == round(cell[1])
                                                   else f"{cell[0]:.0f}–{cell[1]:.0f}"))
            outside += [r[scol]["outside"] for r in src
                        if r["metric"] == k and r["n"] == n and not r["boundary"] and scol in r]
        lines.append(f"| {k} | {label} | " + " | ".join(cells) + f" | {_range(outside) or '–'} | {c.reason} |")
    return "\n".join(lines)


def write_study_coverage(cells: dict, path: Path) -> None:
    """Rewrite the generated ``STUDY_COVERAGE`` block of calibviz/metrics/intervals.py."""
    text = path.read_text()
    start, end = "# <study-coverage:start>\n", "# <study-coverage:end>"
    body = ["STUDY_COVERAGE: dict = {"]
    for (k, method), per_n in sorted(cells.items()):
        inner = ", ".join(f"{n}: {v!r}" for n, v in sorted(per_n.items()))
        body.append(f"    ({k!r}, {method!r}): {{{inner}}},")
    body.append("}")
    text = text[: text.index(start) + len(start)] + "\n".join(body) + "\n" + text[text.index(end):]
    path.write_text(text)


def render(rows: list[dict], raw: list[dict] | None, B: int, header: str) -> str:
    parts = [header, "", "#### Coverage range over the models off the boundary (percent)", "", summary_table(rows)]
    if raw:
        parts += ["", "#### Coverage (percentile / basic, percent) by |bootstrap bias| / bootstrap standard "
                  "deviation, all models off the boundary, all n (number of replications)", "", ratio_table(raw)]
    parts += ["", "#### Every cell", "", markdown_table(rows, B)]
    return "\n".join(parts)


def write_doc(path: Path, blocks: dict) -> None:
    """Replace each ``<!-- name:start -->...<!-- name:end -->`` block of ``path`` (appended if missing)."""
    text = path.read_text() if path.exists() else "# Interval methods\n"
    for name, body in blocks.items():
        start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
        block = f"{start}\n{body}\n{end}"
        if start in text and end in text:
            text = text[: text.index(start)] + block + text[text.index(end) + len(end):]
        else:
            text = text.rstrip() + "\n\n" + block + "\n"
    path.write_text(text)


def _version() -> str:
    import subprocess

    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "calibviz"], cwd=root, capture_output=True,
                               text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "calibviz (no git)"
    return f"commit {head}" + (" with uncommitted changes in calibviz/" if dirty else "")


def _run_checkpointed(fn, todo, args, t_start) -> list:
    """Run ``fn`` over ``todo`` in a process pool; each result is appended to ``--checkpoint`` as it arrives."""
    out = []
    with Pool(args.workers) as pool:
        for i, res in enumerate(pool.imap_unordered(fn, todo), 1):
            out.append(res)
            if args.checkpoint:
                with open(args.checkpoint, "a") as fh:
                    fh.write(json.dumps({"id": res["id"], "result": res}, default=float) + "\n")
            print(f"[{time.perf_counter() - t_start:6.0f} s] task {i}/{len(todo)}: {res['model']} n={res['n']} "
                  f"({res['seconds']:.0f} s, {res['cpu']:.0f} s CPU)", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 500 and 5000, few replications (< 2 minutes)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--resamples", type=int, default=None, help="bootstrap resamples B (default 200; quick 100)")
    parser.add_argument("--seed", type=int, default=20240607)
    parser.add_argument("--out", default=None, help="markdown file to update (default: docs/intervals.md; "
                        "nothing is written in --quick mode unless given)")
    parser.add_argument("--json", default=None, help="also save the summary rows as JSON")
    parser.add_argument("--metrics", default=None, help="comma-separated metric keys: run only these")
    parser.add_argument("--checkpoint", default=None,
                        help="JSON-lines file: each finished task is appended; a rerun with the same file and "
                        "options resumes where an interrupted run stopped")
    parser.add_argument("--small-sample", action="store_true",
                        help="run only the small-sample alternatives (ECE, RMSCE, Brier reliability, debiased ECE; "
                        "n = 500 and 5,000; the three miscalibrated binary models) and save them with --json; "
                        "render them with the main run's JSON through --render-json")
    parser.add_argument("--sizes", default=None,
                        help="with --metrics: comma-separated sample sizes n to run them at, on every model of "
                        "their kind, instead of the main plan (e.g. --metrics tce --sizes 100,200,500)")
    parser.add_argument("--reps", type=int, default=None,
                        help="replications per cell of --small-sample (200) and --sizes (200 up to n = 500, "
                        "100 above)")
    parser.add_argument("--render-json", nargs="+", default=None,
                        help="only re-render the markdown from saved --json files (merged; a later file's cells "
                        "replace an earlier file's)")
    parser.add_argument("--summarise-checkpoint", action="store_true",
                        help="--small-sample with L1 metrics: summarise the tasks finished in --checkpoint and run "
                        "no more (a run stopped early; the table gives the replications per cell)")
    parser.add_argument("--recompute-population", action="store_true",
                        help="--small-sample with L1 metrics: recompute the population values instead of reading "
                        "the main run's saved ones (same seed)")
    args = parser.parse_args()
    if args.small_sample:
        if args.metrics and set(args.metrics.split(",")) <= set(L1_KEYS):
            run_l1(args)
        else:
            run_small(args)
        return
    if args.render_json:
        cell = lambda r: (r["model"], r["n"], r["metric"])  # noqa: E731
        # saved results may be gzipped (benchmarks/coverage_results/coverage_*.json.gz hold the published runs)
        loaded = [json.loads(gzip.decompress(Path(f).read_bytes()) if str(f).endswith(".gz") else Path(f).read_text())
                  for f in args.render_json]
        saved = [d for d in loaded if d.get("kind") != "small_sample"]
        small_saved = [d for d in loaded if d.get("kind") == "small_sample"]
        # a later run's cell replaces an earlier one's (the L1 run re-measured ECE's double bootstrap at n = 500)
        latest = {}
        for i, d in enumerate(small_saved):
            for r in d["rows"]:
                latest[cell(r)] = (i, r)
        small_rows = [r for _, r in latest.values()]
        l2_saved = [(i, d) for i, d in enumerate(small_saved) if d.get("table") != "l1"]
        l1_saved = [(i, d) for i, d in enumerate(small_saved) if d.get("table") == "l1"]
        rows = list({cell(r): r for d in saved for r in d["rows"]}.values())  # a later file's cell replaces
        rows.sort(key=lambda r: (METRIC_ORDER.index(r["metric"]), MODEL_ORDER.index(r["model"]), r["n"]))
        raw = list({cell(r): r for d in saved for r in d.get("raw", [])}.values())
        header = "\n\n".join(d["header"] for d in saved)
        text = render(rows, raw, saved[0]["B"], header)
        print(text)
        blocks = {"choice-table": choice_table(rows, small_rows), "coverage-table": text}
        if l2_saved:
            kept = [r for i, d in l2_saved for r in d["rows"] if latest[cell(r)][0] == i]
            gone = sorted({(r["metric"], r["n"]) for i, d in l2_saved for r in d["rows"] if latest[cell(r)][0] != i})
            blocks["small-sample-table"] = "\n\n".join(d["header"] for _, d in l2_saved) + "\n\n" + small_table(
                kept) + ("\n\nLeft out here, re-measured by a later run (next table), which replaces them: "
                         + ", ".join(f"{k} at n = {n:,}" for k, n in gone) + "." if gone else "")
            print(blocks["small-sample-table"])
        if l1_saved:
            blocks["small-sample-l1-table"] = "\n\n".join(d["header"] for _, d in l1_saved) + "\n\n" + l1_table(
                [r for i, d in l1_saved for r in d["rows"] if latest[cell(r)][0] == i])
            print(blocks["small-sample-l1-table"])
        if args.out:
            write_doc(Path(args.out), blocks)
            if small_saved:  # the numbers the panel's notes quote: one source, written from the same rows
                target = Path(__file__).resolve().parents[1] / "calibviz" / "metrics" / "intervals.py"
                write_study_coverage(_chosen_cells(rows, small_rows), target)
                print(f"wrote {args.out} and the STUDY_COVERAGE block of {target}")
        return
    B = args.resamples or (100 if args.quick else 200)
    global POP_DRAWS
    if args.quick:
        POP_DRAWS = 2 * 10**6
    t_start = time.perf_counter()
    if args.sizes:
        if not args.metrics:
            parser.error("--sizes needs --metrics")
        plan = sizes_plan(args.metrics.split(","), [int(n) for n in args.sizes.split(",")], args.reps)
    else:
        plan = make_plan(args.quick)
    if args.metrics:
        keep = set(args.metrics.split(","))
        plan = {cell: {k: v for k, v in p.items() if k in keep} for cell, p in plan.items()}
        plan = {cell: p for cell, p in plan.items() if p}

    # population values
    pops = {}
    pop_cache = {}
    for model in MODEL_ORDER:
        if not any(m == model and set(p) - MEAN_AT_N for (m, _), p in plan.items()):
            continue  # no metric with a fixed population value planned on it (e.g. a TCE-only run)
        pop_cache[model] = (population_binary if model in BINARY_MODELS else population_multiclass)(model, args.seed)
    for (model, n), p in plan.items():
        for k in p:
            if k in MEAN_AT_N:
                pops[(model, n, k)] = mean_at_n(model, k, n, mean_draws(k, n, args.quick), args.seed)
            else:
                pops[(model, n, k)] = (pop_cache[model][k], 0.0)
    print(f"population values: {time.perf_counter() - t_start:.0f} s", flush=True)
    for model, vals in pop_cache.items():
        print(f"  {model}: " + ", ".join(f"{k}={v:.5g}" for k, v in vals.items()), flush=True)
    for (model, n, k), (v, se) in pops.items():
        if k in MEAN_AT_N:
            print(f"  {model} n={n}: {k} mean at n = {v:.5g} ± {se:.2g}", flush=True)

    tasks = split_tasks(plan, B, args.seed, block=10 if args.quick else 20)
    results, done_ids = _read_checkpoint(args.checkpoint, {_task_id(t) for t in tasks})
    if done_ids:
        print(f"resumed {len(done_ids)} finished tasks from {args.checkpoint}", flush=True)
    todo = [t for t in tasks if _task_id(t) not in done_ids]
    results += _run_checkpointed(run_task, todo, args, t_start)
    merged = merge(results)
    rows = summarise(merged, pops)
    elapsed = time.perf_counter() - t_start
    raw = [{"model": m, "n": n, "metric": k, "population": pops[(m, n, k)][0], **rec}
           for (m, n, k), rec in merged.items()]
    cpu = sum(r.get("cpu", 0.0) for r in results)
    flags = ((" --quick" if args.quick else "") + (f" --metrics {args.metrics}" if args.metrics else "")
             + (f" --sizes {args.sizes}" if args.sizes else "") + (f" --reps {args.reps}" if args.sizes and args.reps
                                                                    else ""))
    header = (f"Generated by `python benchmarks/coverage_study.py{flags}` on "
              f"{_version()} "
              f"(B = {B} resamples per interval, nominal {CONFIDENCE:.0%}, seed {args.seed}, "
              f"{cpu / 60:.0f} CPU-minutes in {args.workers} workers"
              + (f", {len(done_ids)} of {len(tasks)} tasks resumed from a checkpoint" if done_ids else
                 f", {elapsed / 60:.0f} min wall")
              + "). "
              "Coverage in percent ± its Monte Carlo "
              "standard error; 'outside' = % of intervals not containing the value shown with them; "
              "'above / below' = % of intervals lying entirely above / below the population value.")
    text = render(rows, raw, B, header)
    print()
    print(text)
    out = args.out or (None if args.quick or args.sizes else "docs/intervals.md")  # --sizes: merge via --render-json
    if out:
        path = Path(out)
        if not path.is_absolute():
            path = Path(__file__).resolve().parents[1] / path
        write_doc(path, {"choice-table": choice_table(rows), "coverage-table": text})
        print(f"\nwrote {path}")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "B": B, "header": header, "population": pop_cache,
                                               "plan": {f"{m} {n}": p for (m, n), p in plan.items()},
                                               "raw": raw}, default=float))
        print(f"wrote {args.json}")


def run_small(args) -> None:
    """--small-sample: the alternatives for the small-sample regime, saved as JSON (kind "small_sample")."""
    B = args.resamples or (100 if args.quick else 200)
    reps = args.reps or (10 if args.quick else 200)
    global POP_DRAWS
    if args.quick:
        POP_DRAWS = 2 * 10**6
    t_start = time.perf_counter()
    pops = {}
    for model in SMALL_MODELS:
        pop = population_binary(model, args.seed)
        for n in (500, 5000):
            for k in SMALL_KEYS:
                pops[(model, n, k)] = (pop[k], 0.0)
    tasks = []
    for model in SMALL_MODELS:
        for n in (500, 5000):
            for start in range(0, reps, 10):
                tasks.append({"model": model, "n": n, "reps": list(range(start, min(reps, start + 10))), "B": B,
                              "seed": args.seed})
    tasks.sort(key=lambda t: -t["n"])
    results, done_ids = _read_checkpoint(args.checkpoint)
    ids = {run_small_task.__name__ + str(i): t for i, t in enumerate(tasks)}
    todo = [t for t in tasks
            if _task_id({**t, "plan": {k: (0, 0) for k in SMALL_KEYS}}) + "|small" not in done_ids]
    print(f"population values: {time.perf_counter() - t_start:.0f} s; {len(todo)} of {len(ids)} tasks to run",
          flush=True)
    results += _run_checkpointed(run_small_task, todo, args, t_start)
    rows = summarise_small(merge(results), pops)
    cpu = sum(r.get("cpu", 0.0) for r in results)
    header = (f"Generated by `python benchmarks/coverage_study.py --small-sample{' --quick' if args.quick else ''}` "
              f"on {_version()} (B = {B} resamples, {DOUBLE_INNER} inner resamples per outer one for the double "
              f"bootstrap at n <= {DOUBLE_MAX_N}, nominal {CONFIDENCE:.0%}, seed {args.seed}, {reps} replications "
              f"per cell, {cpu / 60:.0f} CPU-minutes in {args.workers} workers). 'current': the main method of "
              "calibviz.metrics.intervals on the same resamples; 'debiased-basic': the basic interval of Kumar et "
              "al.'s debiased squared error about the plug-in squared error, mapped to the root; 'double "
              "bootstrap': the basic interval at levels calibrated by prepivoting (Beran 1987).")
    print(header)
    print(small_table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps({"kind": "small_sample", "rows": rows, "B": B, "header": header},
                                              default=float))
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
