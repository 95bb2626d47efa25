"""How often calibrated logs get a false alarm with one fixed seed for every log, against a seed per log: the
size of the calibrated-model references (calibviz.seeding).

    python benchmarks/bench_seeds.py --test ece --n 2000 --sorted --reps 300
    python benchmarks/bench_seeds.py --test corp --scores round2 --n 5000 --reps 300
    python benchmarks/bench_seeds.py --test corp --scores ties3 --n 300 --power 0.8 --reps 100

Each replication draws a calibrated log (p from ``--scores``, y ~ Bernoulli(p); ``--power g`` shows the scores
squashed, 0.5 + g (p - 0.5): a miscalibrated model), optionally sorted by score (``--sorted``: logs written in score
order), and records whether its test rejects at 5%: ``ece`` the consistency test of ECE (200 redraws), ``corp`` the
simultaneous CORP consistency band (200 redraws) left somewhere. Three seedings: seed 0 with a digest of the
predictions (:func:`calibviz.seeding.data_seed`, what ``corp_table`` does with an int seed), a plain fixed seed 0
for every log (a :class:`numpy.random.Generator` made from 0, used as it is: what ``consistency_test`` does with an
int seed, and every CORP band before), and a fresh seed per log (the exact test). Scores: ``beta`` Beta(2, 5); ``round2`` Beta(2, 5) rounded to 2 decimals; ``ties3`` {0.1, 0.3, 0.7} with
probabilities 0.5, 0.3, 0.2. Reported: the share of logs rejected with its binomial standard error.
"""
from __future__ import annotations

import argparse
import math
import warnings

import numpy as np

from calibviz import metrics as M
from calibviz.seeding import data_seed


def _scores(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "round2":
        return np.round(rng.beta(2, 5, n), 2)
    if kind == "ties3":
        return rng.choice(np.array([0.1, 0.3, 0.7]), n, p=[0.5, 0.3, 0.2])
    return rng.beta(2, 5, n)


def _rejects(test: str, y, p, random_state) -> bool:
    if test == "ece":
        return M.consistency_test(y, p, metric="ece", n_resamples=200, random_state=random_state).p_value <= 0.05
    ct = M.corp_table(y, p, bands=("consistency",), level=0.95, coverage="simultaneous",
                      n_resamples=M.band_resamples(0.95, 200), random_state=random_state)
    return bool(((ct.cep < ct.consistency_low - 1e-12) | (ct.cep > ct.consistency_high + 1e-12)).any())


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--test", choices=["ece", "corp"], default="ece")
    ap.add_argument("--scores", choices=["beta", "round2", "ties3"], default="beta")
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--sorted", action="store_true")
    ap.add_argument("--power", type=float, default=None)
    ap.add_argument("--start", type=int, default=9000, help="seed of the first log")
    args = ap.parse_args(argv)
    warnings.filterwarnings("ignore")
    counts = {"seed 0 with the data's digest": 0, "fixed seed 0": 0, "fresh seed per log": 0}
    for r in range(args.reps):
        rng = np.random.default_rng(args.start + r)
        p = _scores(args.scores, args.n, rng)
        if args.sorted:
            p = np.sort(p)
        y = (rng.random(p.size) < p).astype(int)
        shown = p if args.power is None else 0.5 + args.power * (p - 0.5)
        # corp_table digests an int seed with the predictions itself; consistency_test is given the digest's stream
        digested = 0 if args.test == "corp" else np.random.default_rng(data_seed(0, shown))
        counts["seed 0 with the data's digest"] += _rejects(args.test, y, shown, digested)
        counts["fixed seed 0"] += _rejects(args.test, y, shown, np.random.default_rng(0))
        counts["fresh seed per log"] += _rejects(args.test, y, shown, np.random.default_rng(int(rng.integers(2**31))))
    what = f"{args.test}, {args.scores} scores, n = {args.n}{', sorted' if args.sorted else ''}" + (
        f", squashed {args.power:g}" if args.power is not None else ", calibrated")
    for k, c in counts.items():
        share = c / args.reps
        se = 100 * math.sqrt(share * (1 - share) / args.reps)
        print(f"| {what} | {k} | {c}/{args.reps} = {100 * share:.1f}% (± {se:.1f}) |", flush=True)


if __name__ == "__main__":
    main()
