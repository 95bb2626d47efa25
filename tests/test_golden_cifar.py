"""Golden tests: Gupta & Ramdas (2022), Tables 2-5 (Base, TS) and Figure 1, on the real CIFAR predictions.

Expected values are the paper's printed numbers (TL-ECE, TL-MCE to 3
decimals, CW-ECE x 100 to 2 decimals) and, where finer, the independent
reproduction of shared/research/top_label_paper_digest.md §6.2-6.3 (copied
here as literals). Data: tests/data/cifar/ (vendored, MIT, see README there).
The CIFAR-100 models other than ResNet-50 are not vendored; their test runs
only where the shared data folder of the project exists.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from calibviz.binning import Uniform
from calibviz.metrics import (
    classwise_ece,
    confidence_ece,
    top_label_ece,
    top_label_ece_per_class,
    top_label_mce,
)
from calibviz.multiclass import bin_zoom, top_label_table

pytestmark = pytest.mark.golden

DATA = Path(__file__).resolve().parent / "data" / "cifar"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "cifar"


def softmax(z):
    z = np.asarray(z, dtype=np.float64)
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def load_vendored(model: str, method: str):
    f = np.load(DATA / f"{model}.npz")
    if method == "base":
        return f["test_labels"].astype(np.int64), softmax(f["test_logits"])
    split = DATA / f"{model}_temp.npz"  # large models keep the TS logits in a file of their own (< 5 MB each)
    if split.exists():
        f = np.load(split)
    elif "test_temp_rows" in f:  # temperature 1: the temp files are a row permutation of the base files
        r = f["test_temp_rows"].astype(np.int64)
        return f["test_labels"][r].astype(np.int64), softmax(f["test_logits"][r])
    return f["test_labels_temp"].astype(np.int64), softmax(f["test_logits_temp"])


def load_shared(model: str, method: str):
    suffix = "" if method == "base" else "_temp"
    d = SHARED / model
    return np.load(d / f"test_labels{suffix}.npy").astype(np.int64), softmax(np.load(d / f"test_logits{suffix}.npy"))


# (model, method): paper's TL-ECE, TL-MCE (Tables 2/4), CW-ECE x 100 (Tables 3/5)
PAPER = {
    ("cifar10_resnet50", "base"): (0.025, 0.315, 0.46),
    ("cifar10_resnet50", "ts"): (0.022, 0.305, 0.42),
    ("cifar10_resnet110", "base"): (0.029, 0.275, 0.59),
    ("cifar10_resnet110", "ts"): (0.022, 0.227, 0.50),
    ("cifar10_wide_resnet", "base"): (0.023, 0.771, 0.44),
    ("cifar10_wide_resnet", "ts"): (0.023, 0.771, 0.44),
    ("cifar10_densenet121", "base"): (0.027, 0.289, 0.46),
    ("cifar10_densenet121", "ts"): (0.027, 0.289, 0.46),
    ("focal_cifar10_resnet50", "base"): (0.022, 0.298, 0.42),
    ("focal_cifar10_resnet50", "ts"): (0.023, 0.443, 0.42),
    ("focal_cifar10_resnet110", "base"): (0.025, 0.378, 0.48),
    ("focal_cifar10_resnet110", "ts"): (0.024, 0.293, 0.44),
    ("focal_cifar10_wide_resnet", "base"): (0.024, 0.741, 0.41),
    ("focal_cifar10_wide_resnet", "ts"): (0.019, 0.582, 0.31),
    ("focal_cifar10_densenet121", "base"): (0.023, 0.411, 0.41),
    ("focal_cifar10_densenet121", "ts"): (0.023, 0.411, 0.41),
    ("cifar100_resnet50", "base"): (0.118, 0.436, 0.22),
    ("cifar100_resnet50", "ts"): (0.114, 0.300, 0.20),
    ("cifar100_resnet110", "base"): (0.127, 0.313, 0.24),
    ("cifar100_resnet110", "ts"): (0.121, 0.255, 0.23),
    ("cifar100_wide_resnet", "base"): (0.103, 0.273, 0.19),
    ("cifar100_wide_resnet", "ts"): (0.103, 0.255, 0.19),
    ("cifar100_densenet121", "base"): (0.110, 0.279, 0.20),
    ("cifar100_densenet121", "ts"): (0.110, 0.231, 0.21),
}

# digest §6.2 (independent reproduction): conf-ECE, TL-ECE, TL-MCE*, CW-ECE x 100 at B = 15
DIGEST = {
    ("cifar10_resnet50", "base"): (0.01819, 0.02498, 0.3154, 0.4616),
    ("cifar10_resnet50", "ts"): (0.01079, 0.02164, 0.3055, 0.4151),
    ("cifar10_resnet110", "base"): (0.02564, 0.02929, 0.2750, 0.5882),
    ("cifar10_resnet110", "ts"): (0.01252, 0.02245, 0.2273, 0.5026),
    ("cifar10_wide_resnet", "base"): (0.01251, 0.02275, 0.7715, 0.4392),
    ("cifar10_densenet121", "base"): (0.01534, 0.02678, 0.2887, 0.4622),
    ("cifar100_resnet50", "base"): (0.06524, 0.11840, 0.4363, 0.2174),
    ("cifar100_resnet50", "ts"): (0.03642, 0.11367, 0.2996, 0.2049),
    ("cifar100_resnet110", "base"): (0.07880, 0.12693, 0.3130, 0.2388),
    ("cifar100_resnet110", "ts"): (0.04652, 0.12125, 0.2551, 0.2312),
    ("cifar100_wide_resnet", "base"): (0.04311, 0.10318, 0.2732, 0.1858),
    ("cifar100_wide_resnet", "ts"): (0.02697, 0.10286, 0.2550, 0.1887),
    ("cifar100_densenet121", "base"): (0.05167, 0.11032, 0.2795, 0.2044),
    ("cifar100_densenet121", "ts"): (0.02291, 0.10999, 0.2311, 0.2053),
    ("focal_cifar10_resnet50", "base"): (0.01552, 0.02223, 0.2979, 0.4220),
    ("focal_cifar10_resnet50", "ts"): (0.00953, 0.02296, 0.4426, 0.4164),
    ("focal_cifar10_resnet110", "base"): (0.01873, 0.02482, 0.3782, 0.4790),
    ("focal_cifar10_resnet110", "ts"): (0.01065, 0.02443, 0.2927, 0.4447),
    ("focal_cifar10_wide_resnet", "base"): (0.01564, 0.02376, 0.7407, 0.4061),
    ("focal_cifar10_wide_resnet", "ts"): (0.00842, 0.01853, 0.5820, 0.3131),
    ("focal_cifar10_densenet121", "base"): (0.01225, 0.02337, 0.4113, 0.4062),
}

VENDORED = sorted({m for m, _ in PAPER if (DATA / f"{m}.npz").exists()})
NOT_VENDORED = sorted({m for m, _ in PAPER} - set(VENDORED))
B15 = Uniform(15)


def check_against_paper(model, method, y, P):
    tl, mce, cw = PAPER[(model, method)]
    got_tl = top_label_ece(y, P, binning=B15)
    got_mce = top_label_mce(y, P, binning=B15, reduce="bin")
    got_cw = 100 * classwise_ece(y, P, binning=B15)
    # "to the paper's rounding": within half a unit of the last printed digit
    assert abs(got_tl - tl) <= 0.0005 + 1e-12, (model, method, got_tl)
    assert abs(got_mce - mce) <= 0.0005 + 1e-12, (model, method, got_mce)
    assert abs(got_cw - cw) <= 0.005 + 1e-12, (model, method, got_cw)
    if (model, method) in DIGEST:
        conf, tl4, mce4, cw4 = DIGEST[(model, method)]
        assert confidence_ece(y, P, binning=B15) == pytest.approx(conf, abs=6e-6)
        assert got_tl == pytest.approx(tl4, abs=6e-6)
        assert got_mce == pytest.approx(mce4, abs=6e-5)
        assert got_cw == pytest.approx(cw4, abs=6e-5)


def test_all_cifar10_and_one_cifar100_model_are_vendored():
    assert {m for m in VENDORED if m.startswith(("cifar10_", "focal_cifar10_"))} == {
        m for m, _ in PAPER if m.startswith(("cifar10_", "focal_cifar10_"))
    }
    assert "cifar100_resnet50" in VENDORED


@pytest.mark.parametrize("method", ["base", "ts"])
@pytest.mark.parametrize("model", VENDORED)
def test_tables_2_to_5_vendored(model, method):
    y, P = load_vendored(model, method)
    assert P.shape[0] == 10_000
    check_against_paper(model, method, y, P)


@pytest.mark.skipif(not SHARED.is_dir(), reason="shared CIFAR data folder not present")
@pytest.mark.parametrize("method", ["base", "ts"])
@pytest.mark.parametrize("model", NOT_VENDORED)
def test_tables_2_3_other_cifar100_models(model, method):
    y, P = load_shared(model, method)
    check_against_paper(model, method, y, P)


def test_temperature_one_models_have_identical_base_and_ts():
    # paper, Fig. 5/6 captions: learnt temperature 1 -> TS equals Base
    for model in ("cifar10_wide_resnet", "cifar10_densenet121", "focal_cifar10_densenet121"):
        a = top_label_ece(*load_vendored(model, "base"))
        b = top_label_ece(*load_vendored(model, "ts"))
        assert a == pytest.approx(b, abs=1e-15)


def test_definition_17_tl_mce_differs_from_table_version():
    # digest §2.6 / §6.2: max over (class, bin) cells at B = 15
    y, P = load_vendored("cifar10_resnet50", "base")
    assert top_label_mce(y, P, binning=B15, reduce="cell") == pytest.approx(0.666, abs=5e-4)
    y, P = load_vendored("cifar100_resnet50", "base")
    assert top_label_mce(y, P, binning=B15, reduce="cell") == pytest.approx(0.942, abs=5e-4)


def test_per_predicted_class_tl_ece_resnet50():
    # digest §6.2: n_l and ECE_l (B = 15), classes 1..10 of the paper = indices 0..9
    y, P = load_vendored("cifar10_resnet50", "base")
    n_l = np.bincount(P.argmax(axis=1), minlength=10)
    assert n_l.tolist() == [1020, 998, 964, 999, 1022, 1000, 1006, 977, 1005, 1009]
    ece_l = top_label_ece_per_class(y, P, binning=B15)
    expected = [0.0249, 0.0089, 0.0208, 0.0570, 0.0305, 0.0408, 0.0172, 0.0118, 0.0177, 0.0199]
    np.testing.assert_allclose(ece_l, expected, atol=5e-5 + 1e-12)
    assert np.dot(n_l / n_l.sum(), ece_l) == pytest.approx(top_label_ece(y, P, binning=B15), abs=1e-15)


def test_ece_versus_number_of_bins_resnet50():
    # digest §6.2, Fig. 2 trend: B = 5/10/15/20/25, Brier CIFAR-10 ResNet-50 base
    y, P = load_vendored("cifar10_resnet50", "base")
    conf = [0.0181, 0.0181, 0.0182, 0.0182, 0.0184]
    tl = [0.0219, 0.0237, 0.0250, 0.0257, 0.0267]
    for B, c, t in zip((5, 10, 15, 20, 25), conf, tl):
        assert confidence_ece(y, P, binning=Uniform(B)) == pytest.approx(c, abs=5e-5 + 1e-12)
        assert top_label_ece(y, P, binning=Uniform(B)) == pytest.approx(t, abs=5e-5 + 1e-12)


# Figure 1 (digest §6.3): bin (1-based), n_b, conf_b, acc_b, Delta_b, plus-y, all to 4 decimals
FIG1 = [
    (2, 1, 0.1975, 0.0000, 0.1975, 0.0000),
    (3, 4, 0.2347, 0.0000, 0.2347, 0.0000),
    (4, 16, 0.3618, 0.1875, 0.2072, 0.1546),
    (5, 66, 0.4634, 0.5606, 0.1859, 0.6493),
    (6, 133, 0.5453, 0.5564, 0.1149, 0.6602),
    (7, 133, 0.6481, 0.6241, 0.0842, 0.5639),
    (8, 192, 0.7526, 0.6406, 0.1888, 0.5638),
    (9, 290, 0.8561, 0.7655, 0.0977, 0.7584),
    (10, 9165, 0.9903, 0.9774, 0.0141, 0.9762),
]


def test_figure_1a_bin_statistics():
    y, P = load_vendored("cifar10_resnet50", "base")
    t = top_label_table(y, P, binning=Uniform(10))
    assert t["bin"].tolist() == [b - 1 for b, *_ in FIG1]  # bin [0, 0.1) is empty
    for row, (_, n, conf, acc, dev, plus) in zip(t.itertuples(), FIG1):
        assert row.n == n
        assert round(row.frac, 4) == round(n / 10_000, 4)
        assert round(row.mean_pred, 4) == conf
        assert round(row.obs_rate, 4) == acc
        assert round(row.deviation, 4) == dev
        assert round(row.plus, 4) == plus
    assert round(t.attrs["confidence_ece"], 4) == 0.0181
    assert round(t.attrs["top_label_ece"], 4) == 0.0237


def test_figure_1b_bin_6_per_class():
    # digest §6.3: bin 6 = [0.5, 0.6), per predicted class (n, conf, acc) to 3 decimals
    y, P = load_vendored("cifar10_resnet50", "base")
    z = bin_zoom(y, P, 5, binning=Uniform(10))
    expected = {
        0: (9, 0.542, 0.222), 1: (10, 0.552, 0.600), 2: (18, 0.540, 0.667), 3: (22, 0.543, 0.500),
        4: (7, 0.545, 0.714), 5: (30, 0.543, 0.567), 6: (11, 0.543, 0.545), 7: (8, 0.563, 0.875),
        8: (5, 0.560, 0.800), 9: (13, 0.545, 0.308),
    }
    got = {r.class_index: (r.n, round(r.confidence, 3), round(r.accuracy, 3)) for r in z.itertuples()}
    assert got == expected
    assert z.attrs["n"] == 133
    assert round(z.attrs["confidence"], 4) == 0.5453 and round(z.attrs["accuracy"], 4) == 0.5564
    assert round(z.attrs["deviation"], 4) == 0.1149 and round(z.attrs["plus"], 4) == 0.6602


def test_figure_1b_bin_10_class_4():
    y, P = load_vendored("cifar10_resnet50", "base")
    z = bin_zoom(y, P, 9, binning=Uniform(10)).set_index("class_index")
    assert z.loc[3, "n"] == 817
    assert round(z.loc[3, "confidence"], 3) == 0.988
    assert round(z.loc[3, "accuracy"], 3) == 0.941
    assert round(z.loc[3, "gap"], 3) == -0.047
    assert round(abs(z.attrs["accuracy"] - z.attrs["confidence"]), 4) == 0.0129
