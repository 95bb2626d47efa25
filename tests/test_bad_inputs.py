"""The catalogue of malformed inputs: each gives calibviz.InputError naming the problem."""
from __future__ import annotations

import string

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calibviz as cv
from calibviz.cli import main as cli_main

from .conftest import BAD, bad_catalogue

CATALOGUE = bad_catalogue()


def test_catalogue_is_large_enough():
    assert len(CATALOGUE) >= 25
    on_disk = {p.name for p in BAD.iterdir()} - {"catalogue.json", "make_bad.py", "README.md"}
    assert on_disk == set(CATALOGUE)


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_bad_file_raises_input_error_with_its_message(name):
    case = CATALOGUE[name]
    with pytest.raises(cv.InputError) as info:
        cv.load_predictions(BAD / name, **case["kwargs"])
    assert case["expect"] in str(info.value)


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_bad_file_from_bytes_too(name):
    case = CATALOGUE[name]
    with pytest.raises(cv.InputError):
        cv.load_predictions((BAD / name).read_bytes(), name=name, **case["kwargs"])


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_cli_prints_one_line_and_exits_2(name, capsys):
    case = CATALOGUE[name]
    args = ["info", str(BAD / name)]
    for k, v in case["kwargs"].items():
        if k == "max_bytes":
            pytest.skip("max_bytes is a library option")
        args += [f"--{k}", str(v)]
    assert cli_main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("calibviz: error:") and "Traceback" not in err


# ---- fuzz: random tables never produce anything but Predictions or InputError ----

cells = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=True, allow_infinity=True),
    st.text(alphabet=string.ascii_letters + string.digits + " ,;\"'\n\t", max_size=6),
)
names = st.sampled_from(["label", "y", "p", "p_0", "p_1", "p_a", "prob_b", "weight", "model", "x", "score",
                         "raw__p", "cal__p", "", "label "])


@st.composite
def tables(draw):
    cols = draw(st.lists(names, min_size=0, max_size=6))
    n = draw(st.integers(0, 25))
    data = {f"{c}#{i}": draw(st.lists(cells, min_size=n, max_size=n)) for i, c in enumerate(cols)}
    frame = pd.DataFrame(data)
    frame.columns = [c.split("#")[0] for c in frame.columns]
    return frame


@pytest.mark.property
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frame=tables(), fmt=st.sampled_from(["csv", "frame"]), logits=st.booleans())
def test_fuzz_only_input_error_escapes(frame, fmt, logits):
    try:
        if fmt == "frame":
            out = cv.predictions_from_frame(frame, logits=logits)
        else:
            out = cv.load_models(frame.to_csv(index=False).encode(), logits=logits)
    except cv.InputError as exc:
        assert str(exc)
        return
    for p in out.values():
        assert np.isfinite(p.probs).all() and p.n >= 10


@pytest.mark.property
@settings(max_examples=60, deadline=None)
@given(blob=st.binary(max_size=400), name=st.sampled_from(["f.csv", "f.parquet", "f.xlsx", "f.tsv", "f", "f.gz"]))
def test_fuzz_random_bytes(blob, name):
    try:
        cv.load_predictions(blob, name=name)
    except cv.InputError:
        pass


def _valid_files() -> dict[str, bytes]:
    import gzip
    import io

    rng = np.random.default_rng(0)
    p = rng.uniform(size=30)
    df = pd.DataFrame({"label": rng.binomial(1, p), "p": p, "city": rng.choice(["a", "b"], 30)})
    pq_buf, xl_buf = io.BytesIO(), io.BytesIO()
    df.to_parquet(pq_buf, index=False)
    df.to_excel(xl_buf, index=False)
    return {"f.parquet": pq_buf.getvalue(), "f.xlsx": xl_buf.getvalue(),
            "f.csv.gz": gzip.compress(df.to_csv(index=False).encode())}


VALID = _valid_files()


@pytest.mark.property
@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(sorted(VALID)), edits=st.lists(st.tuples(st.floats(0, 1, exclude_max=True),
                                                                     st.integers(0, 255)), min_size=1, max_size=8),
       cut=st.one_of(st.none(), st.floats(0, 1)))
def test_fuzz_damaged_zip_parquet_gzip(name, edits, cut):
    """Damaged real files (flipped bytes, truncation): Predictions or InputError, nothing else (was zlib.error,
    BadZipFile from the .xlsx size checks)."""
    data = bytearray(VALID[name])
    for where, value in edits:
        data[int(where * len(data))] = value
    if cut is not None:
        data = data[: int(cut * len(data))]
    try:
        cv.load_predictions(bytes(data), name=name)
    except cv.InputError as exc:
        assert str(exc)


def test_text_labels_in_a_binary_view_name_the_fix():
    """metric_panel with labels 'no'/'yes' said "could not convert string to float: np.str_('no')"."""
    from calibviz.panel import metric_panel

    with pytest.raises(cv.InputError, match=r"y_true holds text labels \('no', 'yes'\); a binary view needs 0 and 1"):
        metric_panel(np.array(["no", "yes"] * 20), np.tile([0.3, 0.7], 20), metrics=("ece",), n_resamples=0)
    # a few blanks among numeric labels are named as rows, not as text labels (a review)
    with pytest.raises(cv.InputError, match=r"y_true holds entries that are not numbers in 10 rows \(0-based: 2, "):
        metric_panel(np.array([0, 1, "", 0] * 10, dtype=object), np.tile([0.3, 0.7], 20), metrics=("ece",),
                     n_resamples=0)
    # numbers held as objects or text are numbers
    assert len(metric_panel(np.array([0, 1] * 20, dtype=object), np.tile([0.3, 0.7], 20), metrics=("ece",),
                            n_resamples=0, n_reference=0)) == 1


def test_problems_of_several_columns_are_reported_at_once(tmp_path):
    """A file with empty labels and a word among the scores said only the first (a browser walk-through): fixing
    the labels to meet the scores next costs a round trip."""
    rows = ["label,p"] + [f"{i % 2},0.{i % 9 + 1}" for i in range(40)]
    rows[6], rows[9] = ",0.3", "1,high"
    (tmp_path / "bad.csv").write_text("\n".join(rows) + "\n")
    with pytest.raises(cv.InputError) as info:
        cv.load_predictions(tmp_path / "bad.csv")
    assert ("the label column 'label' is empty in 1 row (0-based: 5); fill or drop those rows. Also: probability "
            "column 'p' holds non-numeric values in 1 row (0-based: 8), e.g. 'high'; it must hold numbers. To leave "
            "out the invalid rows instead (1 with an empty label, 1 with text in a probability column)") in str(info.value)
