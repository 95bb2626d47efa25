"""Regenerate the demo datasets shipped in calibviz/demo/data/ (deterministic).

    python scripts/make_demos.py [--cifar-dir ../shared/data/cifar]

The synthetic demos are drawn from a fixed seed with numpy/scipy only, so the
shipped files can be rebuilt and checked byte for byte. The CIFAR-10 demo is
converted once from the published logits (MIT licence, see
calibviz/demo/README.md); it is skipped when the logits folder is absent.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import minimize
from scipy.special import expit, logit, softmax

OUT = Path(__file__).resolve().parents[1] / "calibviz" / "demo" / "data"
CIFAR10_CLASSES = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]


def hospital_readmission(rng: np.random.Generator, n: int = 20000) -> pd.DataFrame:
    """30-day readmission risk; the model ignores age and is overconfident at the top.

    True risk depends on age, but the model was fitted without it: its score is
    the risk averaged over ages (so it is calibrated on average within each
    score bin, and ECE stays small), which underestimates the risk of older
    patients and overestimates that of younger ones (Kelly & Smyth 2023,
    Fig. 1 / Theorem 1). On top, a monotone distortion makes the model
    overconfident at the top of the score range and underconfident in the
    middle, which the reliability diagram shows.
    """
    age = np.clip(rng.normal(62, 15, n), 18, 95).round()
    sex = rng.choice(["female", "male"], n)
    ward = rng.choice(["cardiology", "general", "oncology", "orthopedics"], n, p=[0.3, 0.35, 0.2, 0.15])
    prior = rng.poisson(0.8, n)
    los = np.round(rng.gamma(2.0, 2.5, n) + 1, 0)
    bmi = np.round(rng.normal(27.5, 5, n), 1)
    ward_eff = pd.Series(ward).map({"cardiology": 0.35, "general": 0.0, "oncology": 0.6, "orthopedics": -0.4}).to_numpy()
    base = -2.45 + 0.45 * prior + 0.07 * (los - 5) + ward_eff + 0.015 * (bmi - 27.5)
    age_eff = 0.045 * (age - 62)
    true_p = expit(base + age_eff)
    # What the age-blind model can learn: E[Y | other features], integrating age out.
    ages = np.clip(rng.normal(62, 15, 4000), 18, 95).round()
    marg = expit(base[:, None] + 0.045 * (ages[None, :] - 62)).mean(axis=1)
    # Overconfident at the top, underconfident in the middle: stretch the logit
    # above 0.3 and pull the middle range towards the base rate.
    z = logit(marg)
    z = z + 0.9 * np.clip(z - logit(0.3), 0, None) - 0.25 * np.exp(-((z - logit(0.15)) ** 2) / 0.5)
    p_model = expit(z)
    y = rng.binomial(1, true_p)
    return pd.DataFrame({
        "patient_id": np.arange(1, n + 1), "label": y, "p_readmit": np.round(p_model, 6),
        "age": age.astype(int), "bmi": bmi, "prior_admissions": prior, "length_of_stay": los.astype(int),
        "sex": sex, "ward": ward,
    })


def loan_recalibration(rng: np.random.Generator, n: int = 20000) -> pd.DataFrame:
    """Loan default: an overconfident boosted model before and after Platt scaling.

    The raw score is too extreme (logit scaled by 1.8 and shifted); the
    recalibrated model is Platt scaling fitted on a separate calibration
    sample of 3000 loans, as a user would do it, so it is good but not perfect.
    """
    def draw(m):
        income = np.round(rng.lognormal(10.8, 0.45, m), -2)
        amount = np.round(rng.lognormal(9.6, 0.6, m), -2)
        dti = np.clip(rng.normal(0.32, 0.12, m), 0.01, 0.95).round(3)
        term = rng.choice([36, 60], m, p=[0.7, 0.3])
        grade = rng.choice(list("ABCDE"), m, p=[0.25, 0.3, 0.25, 0.13, 0.07])
        g = pd.Series(grade).map(dict(zip("ABCDE", [-1.0, -0.4, 0.2, 0.7, 1.2]))).to_numpy()
        zt = -2.0 + 2.2 * (dti - 0.32) + 0.6 * (amount / income - 0.35) + 0.35 * (term == 60) + g
        y = rng.binomial(1, expit(zt))
        z_raw = 1.8 * (zt + rng.normal(0, 0.35, m)) + 1.1
        return income, amount, dti, term, grade, y, z_raw

    # Calibration split: fit Platt scaling (logistic regression of y on the raw logit).
    *_, y_cal, z_cal = draw(3000)

    def nll(ab):
        q = expit(ab[0] * z_cal + ab[1])
        return -np.mean(y_cal * np.log(q + 1e-12) + (1 - y_cal) * np.log(1 - q + 1e-12))

    a, b = minimize(nll, x0=[1.0, 0.0], method="Nelder-Mead", options={"xatol": 1e-8, "fatol": 1e-10}).x
    income, amount, dti, term, grade, y, z = draw(n)
    return pd.DataFrame({
        "label": y, "raw__p": np.round(expit(z), 6), "recalibrated__p": np.round(expit(a * z + b), 6),
        "income": income, "loan_amount": amount, "debt_to_income": dti, "term_months": term, "grade": grade,
    })


def cifar10_resnet50(cifar_dir: Path) -> pd.DataFrame | None:
    folder = cifar_dir / "cifar10_resnet50"
    if not folder.exists():
        return None
    logits = np.load(folder / "test_logits.npy").astype(np.float64)
    labels = np.load(folder / "test_labels.npy")
    probs = softmax(logits - logits.max(axis=1, keepdims=True), axis=1)
    df = pd.DataFrame(probs, columns=[f"p_{c}" for c in CIFAR10_CLASSES])
    df.insert(0, "label", np.array(CIFAR10_CLASSES)[labels])
    return df


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cifar-dir", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data" / "cifar")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    hospital_readmission(np.random.default_rng(20231)).to_csv(OUT / "hospital_readmission.csv", index=False)
    loan_recalibration(np.random.default_rng(20232)).to_csv(OUT / "loan_recalibration.csv", index=False)
    cifar = cifar10_resnet50(args.cifar_dir)
    if cifar is not None:
        # Parquet keeps the float64 probabilities exactly and is 3x smaller than CSV.
        cifar.to_parquet(OUT / "cifar10_resnet50.parquet", index=False, compression="zstd")
    print("wrote", sorted(p.name for p in OUT.iterdir()))


if __name__ == "__main__":
    main()
