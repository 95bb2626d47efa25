"""Comparing models: differences to a chosen reference model, better/worse verdicts, a leaderboard.

One place decides whether a model is better or worse than the reference on a
metric (:func:`difference_verdict`, applied by :func:`compare_models`), and
one place says it in words (:func:`comparison_sentences`): the Compare page,
the HTML report and notebooks read the same verdicts.

How a difference is tested
    Every model is bootstrapped on the *same* resampled rows when it shares
    the reference's rows (same labels and weights: the usual case of several
    models scored on one test set). The value of each model on each resample
    is kept, so one set of resamples gives each model's interval and the
    *paired* distribution of every difference to the reference (the shared
    noise of the rows cancels). Each model's interval is the metric panel's
    (:func:`calibviz.panel.metric_panel`, same seed): both come from
    :func:`calibviz.metrics.intervals.bootstrap_metric`, so on small data the
    small-sample methods apply here too (the double bootstrap, the
    debiased-basic interval, one-sided bounds; they resample on their own,
    as in the panel). The difference interval is two-sided, the hull of
    its percentile and basic intervals (:func:`calibviz.metrics.resampling.difference_interval`): the basic one
    removes each model's bootstrap bias, which differs between models (a
    sharp, calibrated model has a larger binning bias than a coarse one: the
    percentile interval of their difference would call them different), the
    percentile one guards against the basic one's over-rejection when both
    models are near calibrated; the two mirror each other about the observed
    difference, so their hull always contains it (TCE's percentile interval
    of a difference could miss it). AUC uses DeLong's paired test (DeLong,
    DeLong & Clarke-Pearson 1988), or independent DeLong variances when the
    rows differ. A model on other rows is bootstrapped on its own; its
    resampled values are paired with the reference's in a shuffled order
    (independent samples).

What "better" means
    ``lower`` is better for calibration errors and losses, ``higher`` for
    discrimination (AUC, DSC, accuracy); calibration slope (ideal 1),
    calibration-in-the-large and Spiegelhalter's Z (ideal 0) are better when
    *closer to the ideal*: their verdict comes from the interval of
    ``|value - ideal| - |reference - ideal|`` (same resamples). UNC is the
    uncertainty of the labels, not a property of a model: never ranked. MCE
    gets no verdict (:data:`NO_VERDICT`): a maximum over bins is ruled by the
    emptiest bin, and no bootstrap interval of its difference held its level.

A verdict says "better" or "worse" only when the difference interval
excludes 0 (beyond the bootstrap noise at the interval's level), else "no
clear difference". For calibration errors a second condition: the model
found worse must itself show evidence of miscalibration against a perfectly
calibrated model with its predictions (consistency resampling, p <= alpha,
:func:`calibration_gate`). Without it, two perfectly calibrated models of
different sharpness (a smooth model and a coarse one) were called different
in 14% (ECE) to 31% (ACE) of simulated cases: the binning noise of the
sharper model inflates its estimate more than the bootstrap can see. ``benchmarks/bench_compare_null.py`` measures how often
two models of equal calibration are called different (the false alarm rate
of this test; README of benchmarks/).

Differences shown together are judged together
    A comparison shows one verdict per metric and model: the 6 tested metrics
    of the default set against one other model are 6 chances to call equal
    models different. Read alone, two equally miscalibrated models got at
    least one "better" or "worse" in 7.2% of 400 simulated comparisons
    (n = 2,000, 100 resamples, ``benchmarks/bench_compare_family.py``), more
    with more models. Every tested difference therefore also has a two-sided
    p-value (``p_value``: DeLong's for AUC; for the bootstrapped metrics
    exactly the level at which the verdict's interval, the hull of the
    percentile and basic intervals, would reach 0, :func:`_difference_p`),
    and :func:`family_verdicts` adjusts them by Holm's method over all the
    differences shown together (:func:`calibviz.stats.holm_adjusted`, as the
    metric panel does for its tests against a calibrated model). "Better"
    or "worse" then needs all three: the interval excludes 0, the adjusted
    p-value is at most 1 - confidence (a lone difference is not adjusted),
    and (calibration errors) the worse model fails its calibrated-model
    reference. ``verdict_alone`` keeps the verdict the difference would get
    shown alone.
"""
from __future__ import annotations

import math
import zlib
from typing import Callable, Mapping

import numpy as np
import pandas as pd
from scipy import stats

from . import metrics as M
from .errors import InputError
from .metrics.intervals import bootstrap_metric, difference_span
from .metrics.resampling import (_row_resamples, beyond_resamples_p, difference_interval,
                                 interval_from_distribution, quantile_level_at_least,
                                 quantile_level_at_most)
from .panel import (BINARY_METRICS, DEFAULT_BINARY_METRICS, MULTICLASS_METRICS, PanelConfig, _outside_note,
                    _reference, _spec, _wald_interval, format_difference, format_p_value, format_value,
                    interval_binning, resample_order)
from .stats import holm_adjusted_finite
from .validation import check_binary

__all__ = ["compare_models", "family_verdicts", "verdict_words", "COMPARISON_COLUMNS", "difference_verdict",
           "comparison_sentences", "comparison_metrics", "leaderboard",
           "calibration_gate", "direction", "IDEAL", "NO_VERDICT", "CALIBRATION_ERRORS", "VERDICTS"]

#: Metrics whose best value is a point inside their range: better = closer to it.
IDEAL = {"calibration_slope": 1.0, "calibration_intercept": 0.0, "spiegelhalter_z": 0.0}
#: Metrics that describe the labels, not the model: no better or worse.
_NOT_RANKED = frozenset({"unc"})
#: Metrics whose differences get no verdict, and why (shown on the page and in the report).
NO_VERDICT = {
    "mce": "MCE is ruled by its emptiest bin: comparing a sharp and a coarse model, both perfectly calibrated, the "
           "bootstrap called their MCEs different in 100% of simulated cases; no better/worse is said.",
}
#: Calibration errors: "worse calibrated" also needs the worse model to show evidence of miscalibration itself
#: (its calibrated-model reference, :func:`calibration_gate`).
CALIBRATION_ERRORS = frozenset({"ece", "ace", "mce", "rmsce", "debiased_ece", "tce", "smooth_ece", "ici",
                                "brier_reliability", "mcb", "hosmer_lemeshow"})
#: The verdicts :func:`difference_verdict` returns.
VERDICTS = ("better", "worse", "no clear difference", "reference", "")


def direction(metric: str) -> str:
    """How a metric ranks models: ``"lower"``, ``"higher"``, ``"ideal"`` (closer to :data:`IDEAL`) or ``""``.

    Examples
    --------
    >>> direction("ece"), direction("auc"), direction("calibration_slope"), direction("unc")
    ('lower', 'higher', 'ideal', '')
    """
    if metric in _NOT_RANKED:
        return ""
    if metric in IDEAL:
        return "ideal"
    spec = _spec(metric, BINARY_METRICS if metric in BINARY_METRICS else MULTICLASS_METRICS)
    return "lower" if spec.lower_is_better else "higher"


def difference_verdict(low: float, high: float, metric: str) -> str:
    """Better, worse or no clear difference, from the interval of a model's difference to the reference.

    Parameters
    ----------
    low, high : float
        Interval of ``value(model) - value(reference)``; for metrics with an
        ideal value (:data:`IDEAL`) the interval of ``|value(model) - ideal| -
        |value(reference) - ideal|``.
    metric : str
        Registry key: decides whether lower or higher is better
        (:func:`direction`).

    Returns
    -------
    str
        ``"better"`` / ``"worse"`` when the interval excludes 0, ``"no clear
        difference"`` when it contains 0, ``""`` when there is no interval
        (NaN), the metric does not rank models (UNC) or its differences cannot
        be tested reliably (:data:`NO_VERDICT`: MCE).

    Examples
    --------
    >>> difference_verdict(0.022, 0.025, "ece"), difference_verdict(0.022, 0.025, "auc")
    ('worse', 'better')
    >>> difference_verdict(-0.01, 0.02, "brier"), difference_verdict(float("nan"), 1.0, "ece")
    ('no clear difference', '')
    >>> difference_verdict(-0.3, -0.1, "calibration_slope")  # closer to slope 1
    'better'
    """
    way = direction(metric)
    if not way or metric in NO_VERDICT or low is None or high is None or not (np.isfinite(low) and np.isfinite(high)):
        return ""
    if low > 0:
        return "better" if way == "higher" else "worse"
    if high < 0:
        return "worse" if way == "higher" else "better"
    return "no clear difference"


def calibration_gate(metric: str, y, p, w, config: PanelConfig, n_reference: int, random_state) -> float:
    """The p-value of a model's calibration error against a perfectly calibrated model with its predictions.

    A calibration-error verdict "worse" stands only when the model found worse has ``p <= config.alpha``
    here (the same consistency resampling, seed and options as the metric panel's reference, so the panel
    shows the same p-value). NaN for metrics outside :data:`CALIBRATION_ERRORS` or ``n_reference = 0``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1); p = rng.uniform(0.1, 0.9, 3000); y = (rng.uniform(size=3000) < p).astype(int)
    >>> bool(calibration_gate("ece", y, p, None, PanelConfig(), 100, 0) > 0.05)   # calibrated: no evidence
    True
    >>> bool(calibration_gate("ece", y, np.clip(1.5 * p - 0.25, 0.01, 0.99), None, PanelConfig(), 100, 0) < 0.05)
    True
    """
    if metric not in CALIBRATION_ERRORS or not n_reference:
        return math.nan
    return float(_reference(_spec(metric), y, p, w, config, int(n_reference), random_state)[3])


def comparison_metrics(metrics, is_binary: bool = True) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The metrics a comparison computes for a metric set chosen for the panel (one rule for page and report).

    Models are compared on their binary view (the positive class, or the
    confidence of multiclass models against "top class correct"), so the
    comparison takes the binary-registry keys of ``metrics``, in order;
    ``confidence_ece`` is the ECE of the confidence view and becomes
    ``ece``. Multiclass-only metrics (top-label, class-wise, accuracy) have
    no binary-view counterpart and are returned as skipped.

    Parameters
    ----------
    metrics : sequence of str or None
        The panel's metric keys (sidebar, ``--metrics``); None or empty gives
        :data:`calibviz.panel.DEFAULT_BINARY_METRICS`.
    is_binary : bool
        Whether the models are binary (for multiclass models ``auc`` is the
        AUC of the confidence view, which the binary registry names so).

    Returns
    -------
    (keys, skipped) : tuple of tuples

    Raises
    ------
    InputError
        An unknown key, or no key that applies to a binary view.

    Examples
    --------
    >>> comparison_metrics(("ece", "tce"))
    (('ece', 'tce'), ())
    >>> comparison_metrics(("confidence_ece", "top_label_ece"), is_binary=False)
    (('ece',), ('top_label_ece',))
    """
    if not metrics:
        return tuple(DEFAULT_BINARY_METRICS), ()
    keys, skipped = [], []
    for m in metrics:
        key = "ece" if (m == "confidence_ece" and not is_binary) else m
        if key in BINARY_METRICS:
            if key not in keys:
                keys.append(key)
        elif key in MULTICLASS_METRICS:
            skipped.append(key)
        else:
            raise InputError(f"unknown metric {m!r}; choose from {', '.join(BINARY_METRICS)}.")
    if not keys:
        raise InputError(f"none of the metrics {', '.join(map(str, metrics))} applies to a comparison of binary "
                         f"views; choose from {', '.join(BINARY_METRICS)}.")
    return tuple(keys), tuple(skipped)


def _same_rows(a, b) -> bool:
    (ya, _, wa), (yb, _, wb) = a, b
    if ya.shape != yb.shape or not np.array_equal(ya, yb):
        return False
    return (wa is None and wb is None) or (wa is not None and wb is not None and np.array_equal(wa, wb))


def _call(spec, config, y, p, w) -> float:
    try:
        v = float(spec.compute(y, p, w, config))
    except InputError:
        return math.nan
    return v if np.isfinite(v) else math.nan


def _resampled(spec, config, group: list, n_resamples: int, random_state, tick) -> np.ndarray:
    """Values of ``spec`` for the models of ``group`` (same rows) on the same resampled rows: (len(group), B).

    The rows are drawn exactly as :func:`calibviz.metrics.bootstrap` draws them (same seed, same chunks), so
    each model's interval equals the metric panel's.
    """
    y, _, w = group[0]
    n = y.shape[0]
    out = np.empty((len(group), n_resamples))
    # one seed for every model's draws, so that they resample the same rows (None: fresh entropy, drawn once)
    seed = np.random.SeedSequence().entropy if random_state is None else random_state
    for m, (_, p, _) in enumerate(group):
        # each model's resamples list their rows in its score order, as bootstrap_metric has them (same rows)
        done = 0
        for idx in _row_resamples(n, n_resamples, np.random.default_rng(seed),
                                  resample_order(spec, config, p)):
            for rows in idx:
                out[m, done] = _call(spec, config, y[rows], p[rows], None if w is None else w[rows])
                done += 1
            tick(idx.shape[0])
    return out


def compare_models(models: dict, *, metrics=DEFAULT_BINARY_METRICS, config: PanelConfig = PanelConfig(),
                   reference: str | None = None, n_resamples: int = 200, confidence: float = 0.95, random_state=0,
                   progress: Callable[[int, int], None] | None = None, n_reference: int = 200) -> pd.DataFrame:
    """Metrics of several binary models side by side, differences to a reference model and better/worse verdicts.

    Parameters
    ----------
    models : dict
        ``{name: (y_true, y_prob)}`` or ``{name: (y_true, y_prob, sample_weight)}``
        with binary labels and P(y = 1) of shape (n,) (or the confidence view
        of multiclass models).
    metrics : sequence of str
        Keys of :data:`calibviz.panel.BINARY_METRICS`.
    config : PanelConfig
        Binning and test options of the metrics.
    reference : str, optional
        The model the others are read against; default the first.
    n_resamples : int, default 200
        Bootstrap resamples; 0 gives values and differences only (no
        intervals, no verdicts): fast.
    confidence : float, default 0.95
        Level of the intervals; a verdict is "better"/"worse" when the
        difference interval at this level excludes 0.
    random_state : int, default 0
        Same seed, same intervals (and each model's interval equals
        :func:`calibviz.panel.metric_panel`'s with this seed).
    progress : callable(done, total), optional
        Called as the resampling advances (metric evaluations).
    n_reference : int, default 200
        Label redraws of the calibrated-model reference that a "worse"
        verdict on a calibration error needs (:func:`calibration_gate`),
        computed only for the models found worse; 0 skips that condition.

    Returns
    -------
    pandas.DataFrame
        One row per (metric, model), metrics in the order given, models in
        the order of ``models``: ``metric``, ``label``, ``unit``, ``model``,
        ``is_reference``, ``value``, ``low``, ``high`` (the metric's own
        interval: its coverage-study method; Wald/DeLong for the metrics
        without a bootstrap; ``low`` = -inf for a one-sided upper bound),
        ``diff`` (value - reference value), ``diff_low``, ``diff_high``
        (interval of the difference; 0 for the reference), ``paired`` (same
        rows as the reference), ``direction`` (:func:`direction`) and
        ``verdict`` (:func:`difference_verdict`: "better", "worse", "no
        clear difference", "reference", or "" without intervals);
        ``held_back`` names the model whose calibration error differed beyond
        the noise but is consistent with a calibrated model (the verdict is
        then "no clear difference", :func:`calibration_gate`), with
        ``held_back_p`` its p-value ("" and NaN otherwise); ``note`` says why
        a value lies outside its own interval, as the metric panel does (""
        otherwise). ``attrs``: ``reference``, ``config``, ``n_resamples``,
        ``confidence``, ``random_state``.

    Raises
    ------
    InputError
        Not a dict of binary predictions, an unknown metric or reference.

    References
    ----------
    B. Efron and R. J. Tibshirani (1993), *An Introduction to the Bootstrap*,
    Ch. 13 (percentile) and Sec. 10.6 (bias correction); A. C. Davison and
    D. V. Hinkley (1997), Sec. 5.2 (basic interval); E. R. DeLong, D. M.
    DeLong and D. L. Clarke-Pearson (1988), Biometrics 44(3) (paired AUC).

    Examples
    --------
    >>> import calibviz as cv
    >>> m = cv.load_demo_models("loan_recalibration")
    >>> t = compare_models({k: (v.y, v.y_prob) for k, v in m.items()}, metrics=("ece",), n_resamples=50)
    >>> t[["model", "paired", "verdict"]].values.tolist()
    [['raw', True, 'reference'], ['recalibrated', True, 'better']]
    >>> t = compare_models({k: (v.y, v.y_prob) for k, v in m.items()}, metrics=("ece",), n_resamples=50,
    ...                    reference="recalibrated")
    >>> t.loc[t["model"] == "raw", "verdict"].item()
    'worse'
    """
    if not isinstance(models, dict) or not models:
        raise InputError("models must be a non-empty dict {name: (y_true, y_prob[, sample_weight])}.")
    data = {}
    for name, value in models.items():
        if not isinstance(value, (tuple, list)) or len(value) not in (2, 3):
            raise InputError(f"model {name!r}: expected (y_true, y_prob[, sample_weight]).")
        data[str(name)] = check_binary(*value) if len(value) == 3 else check_binary(*value, None)
    names = list(data)
    ref = names[0] if reference is None or reference == "" else str(reference)
    if ref not in data:
        raise InputError(f"reference model {reference!r} is not among the models ({', '.join(names)}).")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 0:
        raise InputError(f"n_resamples must be a non-negative integer, got {n_resamples!r}.")
    specs = [_spec(k) for k in metrics]
    # models on the reference's rows share its resamples; any other set of rows is a group of its own
    groups: list[list[str]] = []
    for name in [ref] + [n for n in names if n != ref]:
        for g in groups:
            if _same_rows(data[g[0]], data[name]):
                g.append(name)
                break
        else:
            groups.append([name])
    paired = {name: name in groups[0] for name in names}
    boot = [s for s in specs if s.key != "auc"] if n_resamples else []
    total = max(1, len(boot) * len(names) * int(n_resamples))
    done = [0]

    def tick(k):
        done[0] += k
        if progress is not None:
            progress(min(done[0], total), total)

    z = float(stats.norm.ppf(0.5 + confidence / 2))
    rows = []
    for spec in specs:
        # seeded per metric, so that a metric's table is the same computed alone or among others (the Compare page)
        shuffle = np.random.default_rng(np.random.SeedSequence([int(random_state or 0), 7,
                                                                zlib.crc32(spec.key.encode())])).permutation
        values = {name: _call(spec, config, *data[name]) for name in names}
        way = direction(spec.key)
        nan = {n: math.nan for n in names}
        low, high, d_low, d_high, p_diff = dict(nan), dict(nan), dict(nan), dict(nan), dict(nan)
        note = dict.fromkeys(names, "")
        v_low, v_high = d_low, d_high  # the verdict's interval: the difference's, or the distance's for IDEAL
        if n_resamples and spec.key == "auc":
            ref_auc = M.auc_delong(data[ref][0], data[ref][1], sample_weight=data[ref][2], confidence=confidence)
            for name in names:
                y, p, w = data[name]
                a = ref_auc if name == ref else M.auc_delong(y, p, sample_weight=w, confidence=confidence)
                low[name], high[name] = a.low, a.high
                if name == ref:
                    continue
                if paired[name]:
                    r = M.delong_test(y, data[ref][1], p, sample_weight=w, confidence=confidence)
                    d_low[name], d_high[name], p_diff[name] = r.low, r.high, r.p_value
                else:  # independent samples: the variances add
                    se, d = math.hypot(a.se, ref_auc.se), values[name] - values[ref]
                    d_low[name], d_high[name] = d - z * se, d + z * se
                    p_diff[name] = float(2 * stats.norm.sf(abs(d) / se)) if se > 0 else math.nan
        elif n_resamples:
            dists = {}
            for g in groups:
                mat = _resampled(spec, config, [data[n] for n in g], int(n_resamples), random_state, tick)
                dists.update(zip(g, mat))
            if way == "ideal":
                v_low, v_high = dict(nan), dict(nan)
            for name in names:
                if spec.bootstrap:
                    # the metric panel's interval, small-sample methods included (one code path); read off the
                    # paired resamples when the chosen method is a single-level one (they are bootstrap's draws)
                    y_, p_, w_ = data[name]
                    r = bootstrap_metric(spec.key, lambda yy, pp, sample_weight=None, _s=spec: _s.compute(
                        yy, pp, sample_weight, config), y_, p_, binning=interval_binning(spec.key, config),
                        n_bins=config.n_bins, sample_weight=w_, n_resamples=int(n_resamples), confidence=confidence,
                        random_state=random_state, distribution=dists[name])
                    low[name], high[name] = r.low, r.high
                    method = r.method
                    if r.alternative == "less":  # an upper bound only, as in the metric panel
                        low[name], method = -math.inf, f"{method}, upper bound"
                    # a value outside its own interval says why, as in the metric panel
                    note[name] = _outside_note(spec, values[name], low[name], high[name], method,
                                               getattr(r, "debiased", None))
                else:
                    low[name], high[name] = _wald_interval(spec.key, *data[name], confidence)
                if name == ref or spec.key in NO_VERDICT:
                    continue
                other = dists[ref] if paired[name] else shuffle(dists[ref])
                diff = difference_interval(dists[name] - other, values[name] - values[ref], confidence,
                                           difference_span(spec.key))
                d_low[name], d_high[name] = diff
                if way == "ideal":  # the verdict, and so its p-value, reads the distances to the ideal
                    t = IDEAL[spec.key]
                    distance = np.abs(dists[name] - t) - np.abs(other - t)
                    closer = abs(values[name] - t) - abs(values[ref] - t)
                    v_low[name], v_high[name] = difference_interval(distance, closer, confidence)
                    p_diff[name] = _difference_p(distance, closer)
                else:
                    p_diff[name] = _difference_p(dists[name] - other, values[name] - values[ref])
        gate = {}  # model -> p-value against its calibrated reference, computed when needed
        for name in names:
            is_ref = name == ref
            verdict = "reference" if is_ref else difference_verdict(v_low[name], v_high[name], spec.key)
            held, held_p = "", math.nan
            if verdict in ("better", "worse") and spec.key in CALIBRATION_ERRORS and n_reference:
                worse = name if verdict == "worse" else ref
                if worse not in gate:
                    gate[worse] = calibration_gate(spec.key, *data[worse], config, n_reference, random_state)
                if np.isfinite(gate[worse]) and gate[worse] > config.alpha:
                    verdict, held, held_p = "no clear difference", worse, gate[worse]
            rows.append({"metric": spec.key, "label": spec.label, "unit": spec.unit, "model": name,
                         "is_reference": is_ref, "value": values[name], "low": low[name], "high": high[name],
                         "diff": 0.0 if is_ref else values[name] - values[ref],
                         "diff_low": 0.0 if is_ref and n_resamples else d_low[name],
                         "diff_high": 0.0 if is_ref and n_resamples else d_high[name],
                         "paired": paired[name], "direction": way,
                         "p_value": math.nan if is_ref or not verdict else p_diff[name], "verdict_alone": verdict,
                         "held_back": held, "held_back_p": held_p, "note": note[name]})
    out = pd.DataFrame(rows, columns=COMPARISON_COLUMNS)
    out.attrs.update(reference=ref, config=config, n_resamples=int(n_resamples), confidence=confidence,
                     random_state=random_state, n_reference=int(n_reference))
    return family_verdicts(out)


#: The columns of :func:`compare_models`, in order.
COMPARISON_COLUMNS = ("metric", "label", "unit", "model", "is_reference", "value", "low", "high", "diff", "diff_low",
                      "diff_high", "paired", "direction", "p_value", "p_adjusted", "n_tests", "verdict",
                      "verdict_alone", "held_back", "held_back_p", "note")


def family_verdicts(table: pd.DataFrame) -> pd.DataFrame:
    """The verdicts of the differences shown together, judged together (Holm's step-down adjustment).

    Every row with a tested difference (``verdict_alone`` "better", "worse" or "no clear difference" and a
    finite ``p_value``) belongs to the family; ``p_adjusted`` is Holm's adjustment of their p-values
    (:func:`calibviz.stats.holm_adjusted`), ``n_tests`` the family's size (0 outside it). A "better" or "worse"
    shown alone stays one only when its adjusted p-value is at most ``1 - confidence`` (``table.attrs``) or it
    is the only tested difference (its interval alone decides then);
    otherwise the verdict is "no clear difference" (``verdict_alone`` keeps what it would be alone, and
    :func:`comparison_sentences` says why). The chance of any false "better" or "worse" among them then stays
    at most ``1 - confidence`` whatever their dependence (a lone difference is not adjusted).

    Shared by :func:`compare_models` and by tables computed apart and shown together (the Compare page
    computes one metric at a time and judges their concatenation here); idempotent.

    Parameters
    ----------
    table : pandas.DataFrame
        Rows of :func:`compare_models` (one or several calls with the same reference and confidence,
        concatenated; ``attrs["confidence"]`` is read, default 0.95).

    Returns
    -------
    pandas.DataFrame
        A copy with ``p_adjusted``, ``n_tests`` and ``verdict`` set, columns in :data:`COMPARISON_COLUMNS`'s
        order.

    References
    ----------
    S. Holm (1979), Scandinavian Journal of Statistics 6(2), 65-70.

    Examples
    --------
    >>> t = pd.DataFrame({"metric": ["ece", "brier"], "is_reference": [False, False], "p_value": [0.03, 0.2],
    ...                   "verdict_alone": ["worse", "no clear difference"]})
    >>> family_verdicts(t)[["p_adjusted", "n_tests", "verdict"]].values.tolist()
    [[0.06, 2, 'no clear difference'], [0.2, 2, 'no clear difference']]
    """
    out = table.copy()
    alpha = 1.0 - float(table.attrs.get("confidence", 0.95))
    tested = (out["verdict_alone"].isin(["better", "worse", "no clear difference"]) & ~out["is_reference"]
              & np.isfinite(out["p_value"].astype(float)))
    out["p_adjusted"] = holm_adjusted_finite(out["p_value"].astype(float).where(tested).to_numpy())
    out["n_tests"] = np.where(tested, int(tested.sum()), 0)
    called = out["verdict_alone"].isin(["better", "worse"])
    # a lone difference is not adjusted: its interval decides, as shown alone
    kept = ~called | (out["p_adjusted"] <= alpha) | (out["n_tests"] <= 1)
    out["verdict"] = out["verdict_alone"].where(kept, "no clear difference")
    out = out[[c for c in COMPARISON_COLUMNS if c in out] + [c for c in out if c not in COMPARISON_COLUMNS]]
    out.attrs = dict(table.attrs)
    return out


def _difference_p(dist: np.ndarray, estimate: float) -> float:
    """Two-sided p-value of "no difference" that matches the verdict's interval (:func:`_interval`): the smallest
    level ``a`` at which the hull of the percentile and basic intervals at ``1 - a`` excludes 0.

    Both intervals read the resampled differences' quantile function ``Q`` (linear interpolation, as
    :func:`~calibviz.metrics.resampling.interval_from_distribution` does): the hull lies above 0 at level
    ``1 - a`` when ``Q(a/2) > 0`` (percentile) and ``Q(1 - a/2) < 2 * estimate`` (basic), below 0 when
    ``Q(1 - a/2) < 0`` and ``Q(a/2) > 2 * estimate``; inverting ``Q`` gives the levels exactly, so ``p <= a``
    exactly when the interval at ``1 - a`` excludes 0. Where it excludes 0 at every level (every resample on one
    side of 0 and of ``2 * estimate``) the resamples cannot resolve p any further: the normal reading of the
    resamples (mean m, standard deviation s: ``2 * Phi(-min(|m|, |2 * estimate - m|) / s)``) is used, capped
    at ``1 / resamples``, since Holm's adjustment of several differences needs p-values below the resamples'
    resolution (6 differences at 5%: 0.0083 for the first). NaN with fewer than two finite values.
    """
    d = np.sort(np.asarray(dist, dtype=np.float64))
    d = d[np.isfinite(d)]
    if d.size < 2 or not np.isfinite(estimate):
        return math.nan
    twice = 2.0 * float(estimate)
    above = 2.0 * max(quantile_level_at_most(d, 0.0), 1.0 - quantile_level_at_least(d, twice))
    below = 2.0 * max(1.0 - quantile_level_at_least(d, 0.0), quantile_level_at_most(d, twice))
    p = min(above, below, 1.0)
    if p > 0:
        return float(p)
    m = float(d.mean())
    return beyond_resamples_p(d, min(abs(m), abs(twice - m)))


def comparison_sentences(table: pd.DataFrame, *, name: Callable[[str], str] = str) -> list[str]:
    """Plain-language sentences of a :func:`compare_models` table: every "better" and "worse", then what did not
    differ.

    Parameters
    ----------
    table : pandas.DataFrame
        From :func:`compare_models` (with intervals).
    name : callable
        Formats a model name for the output (e.g. bold Markdown with escaping
        on a page, ``<b>`` with HTML escaping in the report); metric labels
        and numbers are plain text.

    Returns
    -------
    list of str
        One sentence per (model, metric) verdict "better" or "worse" (worse
        first, each model in table order), then one sentence listing the
        metrics on which a model showed no clear difference; empty when the
        table has no intervals.

    Examples
    --------
    >>> t = pd.DataFrame({"metric": ["ece", "ece"], "label": ["ECE", "ECE"], "unit": ["probability"] * 2,
    ...                   "model": ["a", "b"], "is_reference": [True, False], "value": [0.009, 0.033],
    ...                   "diff": [0.0, 0.024], "diff_low": [0.0, 0.022], "diff_high": [0.0, 0.025],
    ...                   "direction": ["lower"] * 2, "verdict": ["reference", "worse"]})
    >>> t.attrs.update(reference="a", confidence=0.95)
    >>> comparison_sentences(t)[0]
    'b is worse than a on ECE: 0.0330 vs 0.0090 (higher is worse; difference +0.0240, 95% interval +0.0220 to +0.0250).'
    """
    if not len(table) or not table["verdict"].isin(["better", "worse", "no clear difference"]).any():
        return []
    ref = table.attrs.get("reference") or table.loc[table["is_reference"], "model"].iloc[0]
    level = f"{100 * table.attrs.get('confidence', 0.95):g}%"
    out = []
    others = [m for m in dict.fromkeys(table["model"]) if m != ref]
    # the reference's value as its own row shows it: value - diff can round the other way (8.08% beside 8.07%)
    ref_values = dict(zip(table.loc[table["model"] == ref, "metric"], table.loc[table["model"] == ref, "value"]))
    for verdict in ("worse", "better"):
        for model in others:
            for r in table[(table["model"] == model) & (table["verdict"] == verdict)].itertuples():
                u = r.unit
                ref_value = ref_values.get(r.metric, r.value - r.diff)
                way = {"lower": f"{'lower' if verdict == 'better' else 'higher'} is {verdict}",
                       "higher": f"{'higher' if verdict == 'better' else 'lower'} is {verdict}",
                       "ideal": f"{'closer to' if verdict == 'better' else 'farther from'} the ideal "
                                f"{format_value(IDEAL.get(r.metric, 0.0), u)}"}[r.direction]
                out.append(f"{name(model)} is {verdict} than {name(ref)} on {r.label}: {format_value(r.value, u)} vs "
                           f"{format_value(ref_value, u)} ({way}; difference {format_difference(r.diff, u)}, {level} interval "
                           f"{format_difference(r.diff_low, u)} to {format_difference(r.diff_high, u)}"
                           f"{_p_text(r)}).")
    for model in others:
        # the differences withdrawn among many or held back by the calibrated-model reference get sentences of their own
        same = table[(table["model"] == model) & (table["verdict"] == "no clear difference")
                     & ~_withdrawn(table) & ~(table["held_back"].astype(bool) if "held_back" in table else False)]
        if len(same):
            out.append(f"{name(model)} and {name(ref)} do not differ beyond the bootstrap noise on "
                       f"{_listed(same['label'])}.")
    withdrawn = table[_withdrawn(table)]
    for model in others:  # beyond the noise alone, not beyond what the differences shown together give by chance
        rows = withdrawn[withdrawn["model"] == model]
        if len(rows):
            ps = "; ".join(f"{lab} p {_p_relation(p)}, {format_p_value(a)} adjusted"
                           for lab, p, a in zip(rows["label"], rows["p_value"], rows["p_adjusted"]))
            out.append(f"{name(model)} and {name(ref)} differ on {_listed(rows['label'])} beyond the bootstrap noise "
                       f"of each difference alone, but not beyond what {int(rows['n_tests'].iloc[0])} differences of "
                       f"equal models would give by chance ({ps}; Holm's method): neither is called better or worse.")
    if "held_back" in table:  # a difference beyond the noise not called a verdict, and why
        for r in table[table["held_back"].astype(bool)].itertuples():
            out.append(f"{r.label} of {name(r.model)} and {name(ref)} differ beyond the bootstrap noise of this "
                       "difference alone, but "
                       f"{name(r.held_back)}'s is within what a perfectly calibrated model with its predictions would "
                       f"show (p {_p_relation(r.held_back_p)}): neither is called worse calibrated.")
    return out


def verdict_words(table: pd.DataFrame) -> pd.Series:
    """The verdict column as tables show it (the Compare page, the report): "not tested" for no verdict, and a
    withdrawn "better" or "worse" marked as such (:func:`comparison_sentences` says why).

    >>> t = pd.DataFrame({"verdict": ["reference", "", "no clear difference"],
    ...                   "verdict_alone": ["reference", "", "worse"]})
    >>> verdict_words(t).tolist()
    ['reference', 'not tested', 'no clear difference (worse alone; not among all)']
    """
    words = table["verdict"].where(table["verdict"] != "", "not tested")
    if "verdict_alone" in table:
        marked = "no clear difference (" + table["verdict_alone"] + " alone; not among all)"
        words = words.where(~_withdrawn(table), marked)
    return words


def _listed(labels) -> str:
    """"A", "A and B", "A, B and C"."""
    labels = list(labels)
    return labels[0] if len(labels) == 1 else f"{', '.join(labels[:-1])} and {labels[-1]}"


def _withdrawn(table: pd.DataFrame) -> pd.Series:
    """Rows whose "better" or "worse" shown alone was withdrawn among the differences shown together."""
    if "verdict_alone" not in table:
        return pd.Series(False, index=table.index)
    return table["verdict_alone"].isin(["better", "worse"]) & (table["verdict"] == "no clear difference")


def _p_text(r) -> str:
    """The p-value clause of a better/worse sentence: its own p, and the adjusted one when others were shown."""
    p = getattr(r, "p_value", math.nan)
    if not np.isfinite(p):
        return ""
    n = int(getattr(r, "n_tests", 0) or 0)
    if n <= 1:
        return f"; p {_p_relation(p)}"
    own, adjusted = format_p_value(p), format_p_value(r.p_adjusted)
    if own == adjusted:
        return f"; p {_p_relation(p)}, also adjusted for {n} differences"
    return f"; p {_p_relation(p)}, {adjusted} adjusted for {n} differences"


def _p_relation(p: float) -> str:
    text = format_p_value(p)
    return text if text.startswith("<") else f"= {text}"


def leaderboard(panels: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """All models in one table: one row per model, each metric's value and its verdict against a calibrated model.

    Parameters
    ----------
    panels : mapping of {model name: DataFrame}
        Each model's :func:`calibviz.panel.metric_panel` table (the same
        metrics for every model; intervals are not needed, the calibrated-
        model reference is: ``n_reference > 0``).

    Returns
    -------
    pandas.DataFrame
        One row per model, in the mapping's order: ``model``, then for each
        metric ``<key>`` (the value, float), ``<key>_verdict`` ("evidence of
        miscalibration" / "no evidence of miscalibration" against the
        consistency reference, "" for metrics without one such as AUC) and
        ``<key>_p`` (its p-value) and ``<key>_n_redraws`` (the label redraws
        behind it, 0 for a test's own p-value: with R redraws a p-value of
        1/(R+1) means "at most", see :func:`calibviz.panel.format_p_value`).
        ``attrs["metrics"]`` lists ``(key, label, unit, direction)`` per
        metric.

    Raises
    ------
    InputError
        No panel, or panels with different metrics.

    Examples
    --------
    >>> import calibviz as cv
    >>> from calibviz.panel import metric_panel
    >>> m = cv.load_demo_models("loan_recalibration")
    >>> board = leaderboard({k: metric_panel(v.y, v.y_prob, metrics=("ece", "brier"), n_resamples=0,
    ...                                      n_reference=50) for k, v in m.items()})
    >>> list(board.columns)
    ['model', 'ece', 'ece_verdict', 'ece_p', 'ece_n_redraws', 'brier', 'brier_verdict', 'brier_p', 'brier_n_redraws']
    >>> bool(board.loc[1, "ece"] < board.loc[0, "ece"]), board.loc[0, "ece_verdict"]
    (True, 'evidence of miscalibration')
    """
    if not panels:
        raise InputError("leaderboard needs at least one model's metric panel.")
    keys = None
    rows = []
    for model, panel in panels.items():
        k = tuple(panel["metric"])
        if keys is None:
            keys = k
            info = [(r.metric, r.label, r.unit, direction(r.metric)) for r in panel.itertuples()]
        elif k != keys:
            raise InputError(f"model {model!r} has metrics {', '.join(k)}, the first model {', '.join(keys)}: "
                             "compute every model's panel with the same metrics.")
        row = {"model": str(model)}
        for r in panel.itertuples():
            row[r.metric] = float(r.value)
            row[f"{r.metric}_verdict"] = r.verdict
            row[f"{r.metric}_p"] = float(r.p_value)
            # the redraws behind it: with R of them the smallest p-value, 1/(R+1), is a bound (format_p_value)
            row[f"{r.metric}_n_redraws"] = int(getattr(r, "n_redraws", 0))
        rows.append(row)
    out = pd.DataFrame(rows)
    out.attrs["metrics"] = info
    return out
