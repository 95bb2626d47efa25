"""Prediction logs larger than memory: lazy scans aggregated where the data live (DESIGN.md §8).

``cv.scan(source)`` opens a Parquet/CSV file, glob or directory, a SQL query,
a DuckDB relation, a Polars LazyFrame or a PySpark DataFrame without reading
it. A result asks the engine for one aggregation (:mod:`.aggregate`, written
once with Narwhals, run by DuckDB, Polars or Spark): sums per fine score
bucket (2^16 buckets) and label. Bins, metrics and the reliability table are
then computed by the same code as in memory (:class:`calibviz.summary.BinStatistics`
and its reductions), refined by a second pass over the few buckets where
buckets alone cannot decide (:mod:`.refine`), so they equal the in-memory
results up to float rounding.

Layout: :mod:`.source` (sources, column roles), :mod:`.aggregate` (the one
aggregation), :mod:`.refine` (bins from buckets, second passes),
``duckdb_engine`` / ``polars_engine`` / ``spark_engine`` (opening sources).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from ..binning import PAVA, PAVABC, EqualMass, Uniform, get_scheme
from ..errors import InputError
from ..io.loading import (MIN_ROWS, bad_sums_error, one_class_note, out_of_range_error, renormalized_note,
                          unknown_labels_error)
from ..io.cleaning import dropped_note, split_invalid, too_many_wrong_error, with_drop_advice
from ..io.mapping import too_many_classes_error
from ..metrics.consistency import reference_level
from ..panel import no_verdict_words
from ..summary import BinStatistics, _table
from ..validation import check_weight_scale, probability_range
from . import aggregate as _agg
from . import refine as _ref
from .source import ENGINES, IN_MEMORY, OTHER_LAYOUT, open_source, resolve_roles, several_files_note

__all__ = ["scan", "Scan", "ENGINES", "SCAN_METRICS", "GRID_METRICS", "interval_caption"]

#: Metrics a scan computes (exactly, or within the documented bound for smECE).
SCAN_METRICS = ("ece", "ace", "mce", "rmsce", "debiased_ece", "smooth_ece", "brier", "brier_reliability",
                "log_loss", "hosmer_lemeshow", "spiegelhalter_z", "tce")
#: Metrics whose bins (PAVA-BC of TCE) are fitted on groups of scores on views of more than
#: :data:`calibviz.scan.refine.EXACT_BLOCK_ROWS` rows (2^-16 buckets, cells of full ones): equal to the in-memory
#: values when no group holds two distinct scores, otherwise exactly those of the groups' blocks, at a distance from
#: the in-memory values that depends on the data (:data:`GRID_DISTANCES`, :meth:`Scan.tce`).
GRID_METRICS = ("tce",)
#: How far TCE with PAVA-BC on groups of scores (views above EXACT_BLOCK_ROWS) was from the paper's TCE (bins on the
#: exact scores), by the share of PAVA-BC's minimum bin size (n_min) that the fullest group of several scores holds:
#: (largest share,
#: data, distance in percentage points). Measured on calibrated and miscalibrated logs of 2x10^6 and 5x10^6 rows
#: (benchmarks/README.md, "TCE on groups of scores"); the last two rows are of whole 2^-16 buckets, before the cells.
#: No bound is proven (PAVA-BC's greedy merges depend on the order of every row), so the distance is stated.
GRID_DISTANCES = (
    (0.002, "logs whose fullest group held 0.06-0.19% of the minimum bin size (the default bins; scores spread over "
            "[0, 1] or in a narrow range)",
     "a median of 0.003-0.064 and at most 3.0 percentage points (195 logs), and on the 36 logs where TCE's own "
     "bootstrap spread was measured, at most 0.9 of its standard deviation"),
    (0.01, "logs whose fullest group held 0.32-0.96% of the minimum bin size (bins of N/100 rows on the same scores)",
     "a median of 0.02-0.37 and at most 5.3 percentage points (195 logs), and at most 0.9 of TCE's own bootstrap "
     "standard deviation where that was measured"),
    (0.2, "logs whose fullest group held 1.1-16% of the minimum bin size (whole buckets of scores in a narrow range, "
          "before scans split full buckets into cells)",
     "a median of 0.1-1.8 and up to 9.7 percentage points (180 logs)"),
    (float("inf"), "logs whose fullest group held at most 16% of the minimum bin size (none measured beyond)",
     "up to 9.7 percentage points (180 logs); with fuller groups, as here, the distance can be larger"),
)
_MAX_REFINE = 4  # refining rounds of one result (bins, then TCE decisions)


def _rows(n: int) -> str:
    return f"{n} row" + ("" if n == 1 else "s")


class Scan:
    """A lazy view of one binary model's predictions in a large source.

    Nothing is read until a result is asked for; the first result runs the
    bucket aggregation (one pass), later ones reuse it and add at most a
    small refining pass. Create scans with :func:`scan`.

    Attributes
    ----------
    name : str
        Model name (as :func:`calibviz.load_models` names it).
    engine : str
        "duckdb", "polars" or "spark".
    classes : tuple
        (negative, positive) label values.
    models : dict
        ``{model name: Scan}`` for every model of the source (this one included).
    """

    def __init__(self, frame, roles: _agg.Roles, *, name: str, engine: str, source: str, classes: tuple,
                 mapping=None):
        self._frame, self._roles = frame, roles
        self.name, self.engine, self.source, self.classes = name, engine, source, classes
        self.mapping = mapping
        self.models = {name: self}
        self._fine_cache = None
        self._fine_error = None  # the InputError of the first pass's rows, kept (see :meth:`_fine`)
        self._certain_cache = None  # rows predicted with certainty and wrong (:meth:`_certain_mistakes`)
        self._entropy_cache = None  # log loss under "calibrated" in the tail buckets (:meth:`_entropy_tails`)
        #: whether the first pass sums every bucket's score range (see :meth:`_ensure_ranges`)
        self._ranges_wanted = False
        self._exact_cache = None
        self._atoms_cache = None
        self._fine_atoms_cache = (None, None)  # (fine table, its atoms): the first pass sorted once
        self._cell_table_cache = None  # (levels, sums per cell of the full buckets): :meth:`_fine_atoms` with cells
        self._cell_fine_cache = (None, None)  # (fine table, its atoms with the full buckets' cells)
        self._cell_atoms_cache = None  # :attr:`_atoms_cache` on the atoms with cells
        self._bins_cache = {}  # repr(scheme): (atoms, bins), valid while the atoms are those atoms
        self._reference_draws = {}  # (scheme, redraws, seed): calibrated-model draws (scan.reference)
        self._notes = None
        self._one_class = None  # the note of binary labels of one class, known after the first pass
        self._dropped = None  # the note of invalid rows left out (drop_invalid), known after the first pass
        self._row_sums_cache = None  # (lowest, highest row sum, rows off): see :meth:`_row_sums`

    @property
    def notes(self) -> tuple[str, ...]:
        """What the reading of the rows changed that a reader should know, as :attr:`Predictions.notes` says it:
        how ambiguous column roles were resolved (the column mapping's notes, e.g. which of 'Y' and 'y' is the
        label; they were not shown on scans, a review) and rows renormalised although their sums lie further from 1
        than rounding explains (``renormalize=True``; one pass, on first access)."""
        if self._notes is None:
            note = None
            if self._roles.renormalize and len(self._roles.probs) > 1:
                lo, hi, n_off = self._row_sums()
                # rows summing to 0 are refused when the rows are read (no note before that error)
                note = renormalized_note(lo, hi, n_off) if np.isfinite(lo) and np.isfinite(hi) and lo > 0 else None
            mapped = tuple(self.mapping.notes) if self.mapping is not None else ()
            self._notes = mapped + tuple(n for n in (note, self._dropped, self._one_class) if n)
        return self._notes

    def _row_sums(self) -> tuple[float, float, int]:
        """The range of the class columns' row sums and the rows off by more than the tolerance
        (:func:`calibviz.scan.aggregate.row_sums`; one pass, cached)."""
        if self._row_sums_cache is None:
            self._row_sums_cache = _agg.row_sums(self._frame, self._roles)
        return self._row_sums_cache

    @property
    def is_binary(self) -> bool:
        """False for K >= 3 classes: the scan is then the confidence view (top probability vs correct)."""
        return self._roles.view != "confidence" or self._as_binary

    _as_binary = False  # set by confidence_view

    def confidence_view(self) -> "Scan":
        """The confidence view of a multiclass scan read as a binary scan (top probability vs correct).

        Its metrics are the binary ones (ECE, Brier, ... of the confidence,
        as the in-memory confidence view :func:`calibviz.reduce.views` gives
        them) with the calibrated-model reference; it shares this scan's
        aggregation (no new pass).

        Examples
        --------
        >>> import calibviz as cv, pandas as pd
        >>> df = pd.DataFrame({"y": ["a", "b", "c"] * 4, "p_a": [.6, .2, .2] * 4, "p_b": [.2, .6, .2] * 4,
        ...                    "p_c": [.2, .2, .6] * 4})
        >>> v = cv.scan(df).confidence_view()
        >>> v.is_binary, v.classes, round(v.metric("brier")[0], 4)  # every top probability 0.6, all correct: 0.4^2
        (True, ('wrong', 'correct'), 0.16)
        """
        if self._roles.view != "confidence" or self._as_binary:
            raise InputError("confidence_view needs a multiclass source (K >= 3 class columns).")
        if getattr(self, "_confidence", None) is None:
            v = Scan(self._frame, self._roles, name=f"{self.name}: confidence", engine=self.engine,
                     source=self.source, classes=("wrong", "correct"), mapping=self.mapping)
            v._as_binary = True
            v._fine_cache = self._fine()
            v._dropped = self._dropped  # the rows the shared pass left out
            self._confidence = v
        self._release_other_views(self._confidence)
        return self._confidence

    def class_view(self, cls) -> "Scan":
        """The one-vs-rest scan of one class of a multiclass source (P(cls) against 1{label = cls}).

        Examples
        --------
        >>> import calibviz as cv, pandas as pd
        >>> df = pd.DataFrame({"y": ["a", "b", "c"] * 4, "p_a": [.6, .2, .2] * 4, "p_b": [.2, .6, .2] * 4,
        ...                    "p_c": [.2, .2, .6] * 4})
        >>> v = cv.scan(df).class_view("b")
        >>> v.is_binary, round(v.prevalence, 4)
        (True, 0.3333)
        """
        return self._view("class", cls)

    def top_label_view(self, cls) -> "Scan":
        """The confidence view of the rows whose predicted class (argmax; ties to the first class) is ``cls``.

        Its score is the top probability, its label 1{label = cls}; top-label
        ECE is the weight-averaged ECE of these views (Gupta & Ramdas 2022,
        eq. 2). May hold no rows (a class never predicted). One pass per view.

        Examples
        --------
        >>> import calibviz as cv, pandas as pd
        >>> df = pd.DataFrame({"y": ["a", "b", "c"] * 4, "p_a": [.6, .2, .2] * 4, "p_b": [.2, .6, .2] * 4,
        ...                    "p_c": [.2, .2, .6] * 4})
        >>> v = cv.scan(df).top_label_view("b")
        >>> v.n, v.prevalence
        (4, 1.0)
        """
        return self._view("toplabel", cls)

    def _view(self, kind: str, cls) -> "Scan":
        from dataclasses import replace

        r = self._roles
        if r.view != "confidence":
            raise InputError(f"{'class_view' if kind == 'class' else 'top_label_view'} needs a multiclass source "
                             "(K >= 3 class columns).")
        keys = [str(c) for c in r.classes]
        if str(cls) not in keys:
            raise InputError(f"class {cls!r} is not among {list(r.classes)!r}.")
        k = keys.index(str(cls))
        if kind == "toplabel":  # its pass reads only the rows predicted cls: the others' bad rows are found here
            self._fine()
        if not hasattr(self, "_views"):
            self._views = {}
        if (kind, k) not in self._views:
            roles = replace(r, view=kind, target=k)
            name = (f"{self.name}: {r.classes[k]} vs rest" if kind == "class"
                    else f"{self.name}: predicted {r.classes[k]}")
            classes = (f"not {r.classes[k]}", r.classes[k]) if kind == "class" else ("wrong", "correct")
            self._views[(kind, k)] = Scan(self._frame, roles, name=name, engine=self.engine, source=self.source,
                                          classes=classes, mapping=self.mapping)
        self._release_other_views(self._views[(kind, k)])
        return self._views[(kind, k)]

    def _release_other_views(self, view: "Scan") -> None:
        """The exact rows of one view at a time: a class view holds every row of the source, so K views of a
        10^6-row source browsed one after another (the dashboard's view picker) would keep K x ~0.2 GB."""
        others = [*getattr(self, "_views", {}).values(), getattr(self, "_confidence", None)]
        for other in others:
            if other is not None and other is not view:
                other._release_rows()

    def _release_rows(self) -> None:
        """Forget the exact rows of a view that refined every row (PAVA-BC on exact scores: ~0.2 kB per row kept);
        the first-pass sums stay, and a later result fetches the rows again (one pass). Results do not depend on
        what was refined before (:meth:`_atoms_for`)."""
        if self._exact_cache is not None and len(self._exact_cache) > _agg.MAX_FILTER_KEYS:
            self._exact_cache = self._atoms_cache = self._cell_atoms_cache = None
            self._bins_cache = {}

    def __repr__(self) -> str:
        return f"Scan(name={self.name!r}, engine={self.engine!r}, source={self.source!r})"

    # -- passes over the data ------------------------------------------------------------------------------------

    def _fine(self) -> pd.DataFrame:
        """The validated bucket table (first pass, cached)."""
        if self._fine_error is not None:  # bad rows: said again without another pass (a dashboard redraws often)
            raise self._fine_error
        if self._fine_cache is None:
            table = _agg.fine_table(self._frame, self._roles, ranges=self._ranges_wanted)
            try:
                valid = self._validate(table)
            except InputError as err:  # the rows' own errors only: an engine's passing failure is tried again
                self._fine_error = err
                raise
            self._fine_cache = _agg.with_tail_losses(valid, self._frame, self._roles)
        return self._fine_cache

    def _certain_mistakes(self) -> int:
        """Rows predicted with certainty and wrong (:func:`calibviz.scan.aggregate.certain_mistakes`), counted once."""
        if self._certain_cache is None:
            self._certain_cache = _agg.certain_mistakes(self._frame, self._roles, self._fine())
        return self._certain_cache

    def _entropy_tails(self) -> pd.DataFrame:
        """Expectation and variance sums of the log loss under "calibrated" in the tail buckets
        (:func:`calibviz.scan.aggregate.entropy_tails`; one filtered pass, run once, for log loss's reference)."""
        if self._entropy_cache is None:
            self._fine()  # the rows' own errors first, in the first pass's words
            self._entropy_cache = _agg.entropy_tails(self._frame, self._roles)
        return self._entropy_cache

    def _fine_atoms(self, cells: bool = False) -> _ref.Atoms:
        """The atoms of the first pass alone (sorted once per first-pass table); with ``cells`` the full buckets
        split into cells (:func:`calibviz.scan.refine.full_bucket_levels`; one filtered pass, run once)."""
        fine = self._fine()
        if self._fine_atoms_cache[0] is not fine:
            self._fine_atoms_cache = (fine, _ref.fine_atoms(fine))
        base = self._fine_atoms_cache[1]
        if not cells:
            return base
        if self._cell_fine_cache[0] is not fine:
            level = _ref.full_bucket_levels(base)
            if level.any() and (self._cell_table_cache is None or not np.array_equal(self._cell_table_cache[0], level)):
                self._cell_table_cache = (level, _agg.cell_table(self._frame, self._roles, level))
            atoms = _ref.cell_atoms(base, self._cell_table_cache[1], level) if level.any() else base
            self._cell_fine_cache, self._cell_atoms_cache = (fine, atoms), None
        return self._cell_fine_cache[1]

    def _uses_cells(self, schemes) -> bool:
        """Whether the bins of ``schemes`` are fitted on the cells of full buckets: PAVA and PAVA-BC blocks on a
        view too large for exact scores (:data:`calibviz.scan.refine.EXACT_BLOCK_ROWS`)."""
        return (any(_ref.scheme_kind(s) in ("pava", "pavabc") for s in schemes if _ref.reads_ranges(s))
                and not self._exact_blocks)

    def _ensure_ranges(self) -> None:
        """Give every bucket its exact score range, for results that read ties in buckets never refined: the TCE
        note and redraws, bootstrap refits.

        The first pass of an unweighted binary view leaves the ranges out
        unless asked (:func:`calibviz.scan.aggregate.fine_table`): binned
        metrics and tables refine the few buckets whose range they read.
        :meth:`metrics` asks for them when its results need them; otherwise
        one more pass sums them here.
        """
        if self._fine_cache is None:
            self._ranges_wanted = True
        fine = self._fine()
        if fine["ranged"].all():
            return
        got = _agg.bucket_ranges(self._frame, self._roles)
        pos = _agg.group_positions(got, fine)
        if (pos < 0).any():
            raise RuntimeError("calibviz bug: the range pass missed groups of the first pass; please report it.")
        fine = fine.assign(pmin=got["pmin"].to_numpy()[pos], pmax=got["pmax"].to_numpy()[pos], ranged=True)
        self._fine_cache, self._atoms_cache, self._cell_atoms_cache = fine, None, None

    def _prepare(self, schemes, *, edges: bool = False) -> None:
        """Refine, in as few passes as possible (usually one), every bucket that the bins of ``schemes`` need
        (``edges``: their exact edges too, see :meth:`_bins`)."""
        if any(_ref.reads_ranges(scheme) for scheme in schemes):
            self._ensure_ranges()
        cells = self._uses_cells(schemes)
        for _ in range(_MAX_REFINE):
            need = self._refine_needs(schemes, self._atoms(cells=cells), edges=edges)
            if not need:
                return
            self._atoms(np.concatenate(need), cells=cells)

    def _refine_needs(self, schemes, atoms, *, edges: bool = False) -> list:
        """The buckets (one array per scheme) that the bins of ``schemes`` need refined on ``atoms``."""
        need = []
        for scheme in schemes:
            try:
                self._bins(scheme, atoms, edges=edges)
            except _ref.Refine as r:
                need.append(r.buckets)
        return need

    def _atoms_for(self, schemes) -> _ref.Atoms:
        """Atoms refined exactly where the bins of ``schemes`` need it, whatever earlier results refined.

        Results drawn at random from atoms (the Poisson bootstrap, :mod:`.resample`) then depend on the seed
        and the settings alone, not on which results were asked for before (each refined bucket is split into
        atoms, which changes how the random stream is used). Exact rows come from the cache (a pass only for
        buckets never refined).
        """
        self._prepare(schemes)
        cells = self._uses_cells(schemes)
        fine, refined = self._fine_atoms(cells), np.zeros(0, np.int64)
        for _ in range(_MAX_REFINE + 1):
            cache = self._exact_cache
            inside = None if cache is None or not refined.size else cache["_b"].isin(refined).to_numpy()
            if inside is not None and inside.all():
                atoms = self._atoms(cells=cells)  # every cached bucket is one to refine: the cached atoms, not a copy
            else:
                atoms = _ref.atoms_of(fine, None if inside is None else cache[inside])
            need = self._refine_needs(schemes, atoms)
            if not need:
                return atoms
            refined = np.union1d(refined, np.concatenate(need))
            self._atoms(refined, cells=cells)  # fetch the rows of any bucket not refined before
        return atoms

    def _validate(self, table: pd.DataFrame) -> pd.DataFrame:
        """Report bad rows counted by the aggregation (never dropped silently: refused, or with ``drop_invalid``
        left out under :mod:`calibviz.io.cleaning`'s rule with a note); return the valid groups."""
        r, src = self._roles, self.source
        where = f"{src}, model {self.name!r}" if r.model is not None else src  # a long log's model named
        n_of = lambda mask: int(table.loc[mask, "n"].sum())  # noqa: E731
        total = int(table["n"].sum())
        dropped, kept = split_invalid(_invalid_counts(table), total)
        if r.drop_invalid and not kept:
            if dropped and self._dropped is None:
                self._dropped = dropped_note([(reason, count, None) for reason, count in dropped], total)
                self._notes = None
        else:
            try:
                self._refuse_bad_rows(table, where, n_of)
            except InputError as err:
                if r.drop_invalid:
                    raise too_many_wrong_error(kept, total, err) from None
                # the option that would leave out exactly these rows, unless they are a whole file of another
                # layout (several_files_note named it), where it would leave out that file
                if dropped and not kept and OTHER_LAYOUT not in str(err):
                    raise with_drop_advice(err, dropped) from None
                raise
        if r.renormalize and len(r.probs) == 2 and r.view == "binary":
            # two columns of a binary label far from summing to 1 are two models' unless named by the classes, as
            # in memory: dividing them by their sums would make up numbers (a review: a scan divided them)
            lo, hi, n_off = self._row_sums()
            if n_off:
                err = bad_sums_error(list(r.probs), [r.negative, r.positive], _rows(n_off), lo, hi, renormalize=True)
                if err is not None:
                    raise InputError(f"{where}: {err}", ui_message=f"{where}: {err.ui_message}")
        valid = table[(table["_b"] >= 0) & (table["_y"] >= 0)].reset_index(drop=True)
        if r.weight is not None and "sww" in valid:
            check_weight_scale(float(valid["sww"].sum()), f"{where}: weight column {r.weight!r}")
        n = int(valid["n"].sum())
        # a top-label view's rows are the source's predicted one class: all of weight 0 is an empty view, as the
        # in-memory view of absent rows (the source's own weights were checked by its first pass)
        if n == 0 and n_of(table["_b"] == _agg.ZERO_WEIGHT) and r.view != "toplabel":
            raise InputError(f"{where}: weight column {r.weight!r} is zero everywhere (it sums to zero); at least one "
                             "row needs a positive weight.")
        if n < MIN_ROWS and r.view != "toplabel":  # a top-label view may be small or empty (class never predicted)
            after = " left after dropping the invalid rows" if self._dropped else ""
            raise InputError(f"{src}: model {self.name!r} has {n} rows{after}; at least {MIN_ROWS} are needed for a "
                             "calibration analysis.")
        present = valid.loc[valid["n"] > 0, "_y"].unique()
        if present.size < 2 and r.view == "binary" and self._one_class is None:
            # the in-memory note (a one-class log is still a calibration question); notes read again
            other_zero = (table["_b"] == _agg.ZERO_WEIGHT) & (table["_y"] == 1 - int(present[0]))
            self._one_class = one_class_note((r.negative, r.positive), int(present[0]),
                                             weighted=bool(n_of(other_zero)))
            self._notes = None
        return valid

    def _refuse_bad_rows(self, table: pd.DataFrame, where: str, n_of) -> None:
        """Raise the in-memory loader's error of the bad rows the aggregation counted, if any."""
        r, src = self._roles, self.source
        probs = ", ".join(map(repr, r.probs))
        bad = n_of(table["_b"] == _agg.BAD_SCORE)
        out = table["_b"] == _agg.OUT_OF_RANGE
        if out.any():
            lo, hi = float(table.loc[out, "pmin"].min()), float(table.loc[out, "pmax"].max())
        if bad:  # with the rows outside [0, 1] too, as in memory: one round trip fixes both
            also = f", and values outside [0, 1] in {_rows(n_of(out))} {probability_range(lo, hi)}" if out.any() else ""
            raise InputError(f"{where}: probability column(s) {probs} hold missing, NaN or infinite values in "
                             f"{_rows(bad)}{also}; {'fix, fill' if also else 'fill'} or drop those rows."
                             + several_files_note(src, r.probs))
        if out.any():  # a pass for the message, as the in-memory loader words it: which columns, their values
            cols = _agg.column_ranges(self._frame, r)
            total = max(int(table["n"].sum()), 1)
            bad = cols[cols["outside"] > 0]
            err = out_of_range_error(list(bad["column"]), list(r.probs),
                                     _rows(n_of(out)), float(bad["low"].min()), float(bad["high"].max()),
                                     n_of(out) / total, float(cols["above"].sum()) / (total * len(r.probs)),
                                     logits_option=False)
            raise InputError(f"{where}: {err}", ui_message=f"{where}: {err.ui_message}", hint=err.hint)
        missing = n_of(table["_y"] == _agg.MISSING_LABEL)
        if missing:
            raise InputError(f"{where}: the label column {r.label!r} is empty in {_rows(missing)}; fill or drop "
                             "those rows." + several_files_note(src, [r.label]))
        unknown = n_of(table["_y"] == _agg.UNKNOWN_LABEL)
        if unknown:  # before the sums: a label of another class explains rows of two columns that do not sum to 1
            classes = list(r.classes) if r.view != "binary" else [r.negative, r.positive]
            labels = _agg.unknown_labels(self._frame, r, classes, limit=1000)
            if r.view == "binary" and len(r.probs) == 1:  # classes the sample did not show: the in-memory words
                err = too_many_classes_error(_label_values(classes, labels),
                                             (labels, unknown, int(table["n"].sum())))
            else:
                err = unknown_labels_error(labels[:6], _rows(unknown), classes)
            raise InputError(f"{where}: {err}", ui_message=f"{where}: {err.ui_message}")
        off = n_of(table["_b"] == _agg.BAD_SUM)
        if off:  # a pass for the message, as the in-memory loader words it: the range of the sums
            if r.renormalize:
                raise InputError(f"{where}: probability rows sum to 0 in {_rows(off)}; they cannot be renormalised.")
            lo, hi, _ = self._row_sums()
            classes = list(r.classes) if r.view != "binary" else [r.negative, r.positive]
            err = bad_sums_error(list(r.probs), classes, _rows(off), lo, hi, renormalize=False)
            # no hint: the form's words for the fix come from the message (ui.scan._in_form_words)
            raise InputError(f"{where}: {err}", ui_message=f"{where}: {err.ui_message}")
        badw = n_of(table["_b"].isin([_agg.BAD_WEIGHT, _agg.NEGATIVE_WEIGHT]))
        if badw:
            raise InputError(f"{where}: weight column {r.weight!r} is missing, NaN, infinite or negative in "
                             f"{_rows(badw)}; weights must be finite numbers >= 0: fill or drop those rows.")

    def _atoms(self, refine=None, *, cells: bool = False) -> _ref.Atoms:
        """The atoms with every bucket refined so far replaced by its exact rows (``refine``: more buckets to
        refine first); ``cells``: on the atoms with the full buckets' cells (:meth:`_fine_atoms`)."""
        fine = self._fine_atoms(cells)
        if refine is not None and len(refine):
            have = set() if self._exact_cache is None else set(self._exact_cache["_b"].unique())
            need = sorted(set(int(b) for b in refine) - have)
            if need:
                part = _agg.exact_atoms(self._frame, self._roles, need,
                                        every_row=len(need) > _agg.MAX_FILTER_KEYS and self._exact_blocks)
                if (part["_y"] < 0).any():
                    part = part[(part["_y"] >= 0)]
                self._exact_cache = part if self._exact_cache is None else pd.concat([self._exact_cache, part],
                                                                                      ignore_index=True)
                self._atoms_cache = self._cell_atoms_cache = None
        if cells:
            if self._cell_atoms_cache is None:
                self._cell_atoms_cache = _ref.atoms_of(fine, self._exact_cache)
            return self._cell_atoms_cache
        if self._atoms_cache is None:
            self._atoms_cache = _ref.atoms_of(fine, self._exact_cache)
        return self._atoms_cache

    def _solve(self, step, schemes=()):
        """Run ``step(atoms)``, refining the buckets it asks for until it can decide; on the atoms with cells where
        ``schemes`` fit their blocks on them (:meth:`_uses_cells`)."""
        cells = self._uses_cells(schemes)
        atoms = self._atoms(cells=cells)
        for _ in range(_MAX_REFINE):
            try:
                return step(atoms)
            except _ref.Refine as need:
                atoms = self._atoms(need.buckets, cells=cells)
        return step(atoms)

    # -- results -------------------------------------------------------------------------------------------------

    @property
    def n(self) -> int:
        """Rows of positive weight."""
        return int(self._fine()["n"].sum())

    def fingerprint(self) -> str:
        """16 hex digits that identify the rows as the first pass reads them: the count of rows per (2^-16 score
        bucket, label). Exact integers, so every engine and thread order gives the same digits; a session file of
        an opened file checks the file against them when it is opened again (a file rewritten with other rows is
        refused, as an upload whose predictions differ is, :meth:`calibviz.io.Predictions.fingerprint`). What moves
        no row between buckets or labels (a score changed within its bucket, a weight) does not change them; of a
        multiclass view they are its first pass's, the confidence and whether the top class is right, so classes
        swapped in both the labels and the columns, or another probability than the top one changed, go unseen too
        (a review). A check of the rows as this view reads them, not a digest of the file.
        """
        import hashlib

        f = self._fine()
        counts = np.stack([f[c].to_numpy(np.int64) for c in ("_b", "_y", "n")], axis=1)
        counts = counts[np.lexsort(counts.T[::-1])]  # the engine's group order is arbitrary
        return hashlib.sha256(np.ascontiguousarray(counts).tobytes()).hexdigest()[:16]

    @property
    def total_weight(self) -> float:
        return float(self._fine()["sw"].sum())

    @property
    def prevalence(self) -> float:
        """Weighted share of positive labels."""
        f = self._fine()
        return float(f.loc[f["_y"] == 1, "sw"].sum()) / self.total_weight

    def _bins(self, binning, atoms, *, edges: bool = False):
        """(edges, bin of each atom, BinStatistics, name) of ``binning`` on ``atoms``; raises Refine.

        Bins whose edges are midpoints of neighbouring scores (equal-mass,
        PAVA, PAVA-BC, median-variance) read the score range of the buckets
        beside each boundary: with ``edges`` (a table or figure shows them)
        buckets there whose exact range the first pass did not sum are
        refined; without it (metrics, which read the bins' sums) the edges
        may come from the bucket bounds. (PAVA, PAVA-BC and median-variance
        bins get every bucket's range first, :meth:`_prepare`: their ties.)"""
        scheme = get_scheme(binning)
        out = self._fitted_bins(scheme, atoms)
        if edges and _ref.scheme_kind(scheme) != "edges":
            need = _ref.unranged_edge_buckets(atoms, out[1])
            if need.size:
                raise _ref.Refine(need)
        return out

    def _fitted_bins(self, scheme, atoms):
        hit = self._bins_cache.get(repr(scheme))
        if hit is not None and hit[0] is atoms:
            return hit[1]
        kind = _ref.scheme_kind(scheme)
        if kind == "edges":
            edges, index = _ref.edge_bins(scheme, atoms)
            n_bins = edges.shape[0] - 1
            name = scheme._fit(np.array([0.0]), None, None).scheme
        elif kind in _ref.BLOCK_KINDS:
            edges, index, _, name = _ref.block_bins(scheme, atoms, self._roles.weight is not None,
                                                    exact=self._exact_blocks)
            n_bins = edges.shape[0] - 1
        else:
            edges, index, _ = _ref.equal_mass_bins(scheme, atoms)
            n_bins, name = scheme.n_bins, f"equal_mass({scheme.n_bins})"
        out = edges, index, _ref.bin_statistics(atoms, index, n_bins), name
        self._bins_cache[repr(scheme)] = (atoms, out)
        return out

    def bin_statistics(self, binning=Uniform(15)) -> BinStatistics:
        """Per-bin sums of a Uniform, EqualMass or Custom scheme (what the in-memory metrics reduce).

        Examples
        --------
        >>> import calibviz as cv, pandas as pd
        >>> df = pd.DataFrame({"y": [0, 1] * 10, "p": [0.2, 0.7] * 10})
        >>> cv.scan(df).bin_statistics(cv.binning.Uniform(2)).count.tolist()
        [10, 10]
        """
        scheme = get_scheme(binning)
        self._prepare([scheme])  # ranges of every bucket first where these bins read them
        return self._solve(lambda atoms: self._bins(scheme, atoms), [scheme])[2]

    def reliability_table(self, binning=Uniform(15), alpha=0.05, *, interval="wilson",
                          test="binomial", band_alpha=None) -> pd.DataFrame:
        """The per-bin table of :func:`calibviz.reliability_table`, from the scan.

        Parameters
        ----------
        binning : Uniform, EqualMass, Custom, PAVA, PAVABC, MedianVariance, or their names / edges
        alpha : float, default 0.05
        interval : {"wilson", "beta", "jeffreys"}
        test : {"binomial", "ttest"} or None
            TCE columns (``rejected``, ``rejected_rate``); None skips them.
        band_alpha : float, optional
            As :func:`calibviz.reliability_table`.

        Returns
        -------
        pandas.DataFrame
            The same columns and attrs as :func:`calibviz.reliability_table`
            on the loaded rows; equal to it up to float rounding of the sums.

        Examples
        --------
        >>> import calibviz as cv, pandas as pd
        >>> df = pd.DataFrame({"y": [0, 0, 1, 1] * 5, "p": [0.1, 0.2, 0.7, 0.8] * 5})
        >>> t = cv.scan(df).reliability_table(binning=cv.binning.Uniform(2))
        >>> t[["bin", "n", "positives", "obs_rate", "rejected"]].to_dict("list")
        {'bin': [0, 1], 'n': [10, 10], 'positives': [0, 10], 'obs_rate': [0.0, 1.0], 'rejected': [0, 5]}
        """
        scheme = get_scheme(binning)
        self._prepare([scheme], edges=True)

        def step(atoms):
            edges, index, s, name = self._bins(scheme, atoms, edges=True)
            rejected = None if test is None else _ref.rejected(atoms, index, s, alpha=alpha, test=test)
            return _table(edges, name, s, alpha=alpha, interval=interval, test=test, rejected=rejected,
                          band_alpha=band_alpha)

        return self._solve(step, [scheme])

    def tce(self, binning=None, alpha=0.05, test="binomial") -> float:
        """TCE in percent (:func:`calibviz.metrics.tce`): the share of predictions rejected by their bin's test.

        Each row's decision is exact (buckets whose smallest and largest
        score get different decisions are refined to exact scores). The
        default PAVA-BC bins are exact on a view of at most
        :data:`calibviz.scan.refine.EXACT_BLOCK_ROWS` (2^20) rows: every
        bucket holding two distinct scores is refined and the blocks are
        fitted on the exact scores, so the value is the in-memory TCE (tested
        at 10^5 and 10^6 rows); the calibrated-model reference and bootstrap
        refits then run on the rows too (as costly as in memory, with the
        in-memory reference's draws on distinct scores).

        On a larger view the bins are PAVA-BC's on groups of scores: 2^-16
        buckets, and in a full bucket (more than twice an average bucket's
        rows) cells down to 2^-22 wide, about N 2^-15 rows each
        (:func:`calibviz.scan.refine.full_bucket_levels`; one more pass over
        the rows of those buckets). Equal to the in-memory TCE when no group
        holds two distinct scores (scores with at most 4 decimals, tested). On
        continuous scores the value is exactly the TCE of PAVA-BC fitted on the
        scores rounded down to their group, each row tested at its own score
        (tested against that in-memory computation); the calibrated-model
        reference refits the same groups, so its p-value is that of this
        statistic. Against PAVA-BC on the unrounded scores, block boundaries
        move to group boundaries and the value differs, by how much depending
        on how many rows the fullest group holds against the minimum bin size
        (:data:`GRID_DISTANCES`, stated in the panel's note, measured in
        benchmarks/README.md). No bound on that difference is proven: PAVA-BC's
        stack decisions depend on the order of every row, and refining the
        buckets around the blocks' boundaries did not close it where whole
        2^-16 buckets were full (a study: 9.7 points became 8.4), the cells do.
        Exact blocks on such a view would need every row in score order, a full
        out-of-core sort (16.5 s for 10^8 rows here, more than twice the
        default panel), and so would each redraw of the calibrated-model
        reference; in memory (:func:`calibviz.load_predictions`) TCE is the
        paper's.

        Examples
        --------
        >>> import calibviz as cv, pandas as pd
        >>> df = pd.DataFrame({"y": [0, 1] * 50, "p": [0.1, 0.9] * 50})
        >>> cv.scan(df).tce(binning=cv.binning.Uniform(1))
        100.0
        """
        scheme = PAVABC() if binning is None else get_scheme(binning)
        self._prepare([scheme])
        weighted = self._roles.weight is not None

        def step(atoms):
            _, index, s, _ = self._bins(scheme, atoms)
            n_rej, w_rej = _ref.rejected(atoms, index, s, alpha=alpha, test=test)
            if weighted:
                return 100.0 * float(w_rej.sum()) / float(atoms.sw.sum())
            return 100.0 * float(n_rej.sum()) / float(atoms.n.sum())

        return self._solve(step, [scheme])

    def variable_ranking(self, features=None, *, n_bins: int = 10, n_resamples: int = 200, confidence: float = 0.95,
                         random_state=0, progress=None, categorical: bool = True, max_levels: int = 20,
                         min_level_rows: int = 30, max_distinct: int = 10_000) -> pd.DataFrame:
        """The features ranked by VECE (Kelly & Smyth 2023), as :func:`calibviz.variables.variable_ranking`, from sums.

        One aggregation per feature (:mod:`calibviz.scan.variables`): a
        categorical feature is grouped by its levels; a numeric one by fine
        buckets of x, its equal-mass cut points made exact by passes
        restricted to the buckets holding a cut (plus one pass reading every
        numeric feature's range). The model's top label is ranked, as in
        memory: for a binary or one-vs-rest scan 1{p > 0.5} with confidence
        max(p, 1 - p), for a multiclass scan its argmax class; a top-label view
        ranks the rows predicted as its class.

        Parameters
        ----------
        features : str or list of str, optional
            Columns of the source; default the mapping's features (every
            column that is no label, probability, weight or model column).
            Numeric columns are binned on x (rows without a finite value left
            out); the others (text, boolean) are categorical, one group per
            level, missing values the level "<missing>".
        n_bins, n_resamples, confidence, random_state, progress, categorical, max_levels, min_level_rows :
            As :func:`calibviz.variables.variable_ranking`.
        max_distinct : int, default 10000
            A categorical feature with more distinct values is refused
            (InputError): its per-level sums are brought to this process.

        Returns
        -------
        pandas.DataFrame
            The columns of :func:`calibviz.variables.variable_ranking`, highest
            VECE first. ``vece``, ``n``, ``n_bins``, a categorical column's
            ``max_vce`` and ``level_at_max_vce`` equal the in-memory values (up
            to float summation order). The interval is the fixed-bin
            Poisson-normal bootstrap (``ci_method``), which the in-memory
            ranking uses above 5000 rows: with the same ``random_state`` the
            bounds are the in-memory ones there. ``max_vce`` and
            ``x_at_max_vce`` of a **numeric** feature are NaN: they are the
            largest gap of two LOESS curves, which need the rows
            (``.attrs["note"]`` says so). ``p_value``, ``p_adjusted`` (Holm)
            and ``n_reference``: VECE against a calibrated model, from each
            bin's null variance and third cumulant
            (:func:`calibviz.stats.cumulant_abs_sum_p`); where no bin is
            skewed, the in-memory law and random numbers, hence its p-values.
            ``attrs["mean_gap"]``: the overall gap (VECE's floor).

        Raises
        ------
        calibviz.InputError
            Unknown feature columns, a categorical feature with more than
            ``max_distinct`` values, bad rows of the source (as every result).

        References
        ----------
        Kelly, M. & Smyth, P. (2023). Variable-based calibration for machine
        learning classifiers, Eq. 7, Sec. 6.1 and Table 1.

        Examples
        --------
        >>> import calibviz as cv, numpy as np, pandas as pd
        >>> rng = np.random.default_rng(1); n = 6000
        >>> df = pd.DataFrame({"age": rng.uniform(20, 80, n), "p": 0.8})
        >>> df["y"] = (rng.uniform(size=n) < np.where(df.age < 50, 0.95, 0.65)).astype(int)
        >>> r = cv.scan(df).variable_ranking(["age"], n_resamples=0)
        >>> want = cv.variables.variable_ranking(df[["age"]], df.y, df.p, n_resamples=0)
        >>> bool(np.isclose(r.vece[0], want.vece[0], rtol=1e-12)), int(r.n_bins[0])
        (True, 10)
        """
        from .variables import variable_ranking

        return variable_ranking(self, features, n_bins=n_bins, n_resamples=n_resamples, confidence=confidence,
                                random_state=random_state, progress=progress, categorical=categorical,
                                max_levels=max_levels, min_level_rows=min_level_rows, max_distinct=max_distinct)

    def _top_label(self, config=None) -> dict:
        """Top-label ECE and MCE (``reduce="bin"``) of a multiclass scan from its top-label views (K passes).

        TL-ECE = sum over (predicted class l, bin b) of |S_true - S_pred| / W;
        TL-MCE = max over bins b of sum_l |S_true - S_pred|_{l,b} / sum_l W_{l,b}
        (:func:`calibviz.metrics.top_label_ece`, ``top_label_mce``; each class's
        bins fitted on its own rows, the "per_class" fit).
        """
        from ..panel import PanelConfig

        config = PanelConfig() if config is None else config
        scheme = config.scheme()
        return _ref.top_label_values([v.bin_statistics(scheme) for v in self._top_label_views()])

    def _top_label_views(self) -> list:
        """The top-label views (one per predicted class) that hold rows."""
        return [v for v in (self.top_label_view(c) for c in self._roles.classes) if v.n > 0]

    @property
    def _exact_blocks(self) -> bool:
        """Whether PAVA and PAVA-BC bins are fitted on the exact scores (views of at most
        :data:`calibviz.scan.refine.EXACT_BLOCK_ROWS` rows) rather than on whole 2^-16 buckets."""
        return self.n <= _ref.EXACT_BLOCK_ROWS

    @property
    def blocks_on_grid(self) -> bool:
        """Whether this view's PAVA and PAVA-BC bins can differ from the in-memory ones: fitted on whole 2^-16
        buckets and the cells of full ones (a view of more than :data:`calibviz.scan.refine.EXACT_BLOCK_ROWS`
        rows) of which some holds two distinct scores. False: the in-memory bins, exactly."""
        return self._blocks_on_grid()

    def _block_groups(self) -> pd.DataFrame:
        """Rows and score range of each group that PAVA and PAVA-BC push whole on a view above the exact limit:
        a 2^-16 bucket, or a cell of a full one (:func:`calibviz.scan.refine.full_bucket_levels`)."""
        self._ensure_ranges()
        atoms = self._fine_atoms(cells=True)
        start, n, _, lo, hi = _ref._bucket_groups(atoms)
        return pd.DataFrame({"n": n, "lo": lo, "hi": hi, "cell": atoms.cell[start]})

    def _blocks_on_grid(self) -> bool:
        """Whether PAVA and PAVA-BC bins can differ from the in-memory ones: fitted on groups of scores (a large
        view) of which some holds two distinct scores."""
        if self._exact_blocks:
            return False
        self._ensure_ranges()
        f = self._fine()
        if not (f["pmin"] < f["pmax"]).any():  # no bucket of several scores: no cell pass needed to say so
            return False
        g = self._block_groups()
        return bool((g["lo"] < g["hi"]).any())

    @staticmethod
    def _on_grid(name: str, detail: str = "") -> str:
        """The opening shared by the notes of bins fitted on groups of scores (views above the exact limit)."""
        return (f"On a scan of more than {_ref.EXACT_BLOCK_ROWS:,} rows the {name} bins are formed from score "
                f"buckets 2⁻¹⁶ wide, the full ones split into cells down to 2⁻²² (block boundaries can only fall "
                f"between buckets or cells{detail}), so this value can differ from the in-memory one")

    def _fullest_group(self) -> tuple[int, bool]:
        """(rows, is a cell) of the fullest group holding several scores that PAVA-BC pushes whole on this view
        (a group of one score, a tie, is pushed whole in memory too: it moves nothing); (0, False) if none."""
        g = self._block_groups()
        g = g[g["lo"] < g["hi"]]
        if not len(g):
            return 0, False
        i = int(np.argmax(g["n"].to_numpy()))
        return int(g["n"].iloc[i]), bool(g["cell"].iloc[i] >= 0)

    def _grid_note(self, scheme: PAVABC | None = None) -> str:
        """The note of TCE on PAVA-BC bins formed from groups of scores: how far such a value was measured from
        the paper's (bins on the exact scores), for data whose fullest group holds as large a share of the
        minimum bin size (``scheme``'s n_min; default PAVA-BC's N/20) as this view's (:data:`GRID_DISTANCES`)."""
        if not self._blocks_on_grid():
            return ""
        n_min = (scheme if isinstance(scheme, PAVABC) else PAVABC()).constraints(self.n)[0]
        fullest, is_cell = self._fullest_group()
        share = fullest / max(n_min, 1)
        where, measured = next((w, m) for limit, w, m in GRID_DISTANCES if share <= limit)
        percent = f"{100 * share:.2g}" if share < 1 else f"{100 * share:,.0f}"  # not "2e+02"
        group = "cell" if is_cell else "bucket"
        return (self._on_grid("PAVA-BC", "; each row is still tested at its own score, and the calibrated-model "
                              "range uses the same bins")
                + f". Here the fullest {group} that holds distinct scores has {fullest:,} rows, {percent}% of the "
                  f"minimum bin size ({n_min:,} rows). On {where}, a study measured this value's distance from the "
                  f"in-memory TCE: {measured}."
                + (" The analysis in memory (cv.load_predictions) gives the paper's value."
                   if share > GRID_DISTANCES[0][0] else ""))

    def _pava_note(self, scheme) -> str:
        """The note of a binned metric on PAVA or PAVA-BC bins, which a scan fits on groups of scores."""
        return (self._on_grid("PAVA-BC" if isinstance(scheme, PAVABC) else "PAVA")
                + ", whose bins may cut a bucket or a cell.")

    def _hosmer_lemeshow(self):
        """Hosmer-Lemeshow's test from the bin sums of ten equal-mass groups (the in-memory function's groups)."""
        from ..metrics.binned import _hosmer_lemeshow_from_stats

        return _hosmer_lemeshow_from_stats(self.bin_statistics(EqualMass(10)))

    def smooth_ece(self):
        """(smECE, bandwidth, note): exact on the 2^14 grid of :func:`calibviz.metrics.smooth_ece`.

        When the fixed point lies below 8 / 2^14 (4.9e-4; only for very well
        calibrated logs) the in-memory function moves to a finer grid; the scan
        reports the value at that smallest bandwidth, which bounds smECE from
        above (smECE is non-increasing in the bandwidth), and says so in ``note``.
        """
        from ..metrics.smooth import _GRID_SIZES, _STEPS_PER_SIGMA, _masses_from_nodes, _solve_fixed_point

        atoms, k = self._atoms(), _GRID_SIZES[0]
        total = float(atoms.sw.sum())
        sigma, value, _ = _solve_fixed_point(lambda kk: _masses_from_nodes(kk, _ref.smece_residual_nodes(atoms, kk),
                                                                           total), sizes=(k,))
        note = ""
        if sigma <= _STEPS_PER_SIGMA / k:
            note = (f"smECE is below {_STEPS_PER_SIGMA / k:.2g}, the finest bandwidth of the scan's grid; the value "
                    "shown bounds it from above.")
        return float(value), float(sigma), note

    def metric(self, key: str, config=None):
        """(value, p_value) of one metric of :data:`SCAN_METRICS` under a :class:`calibviz.panel.PanelConfig`
        (Hosmer-Lemeshow: p NaN where a group expects fewer than
        :data:`~calibviz.metrics.binned.HL_MIN_EXPECTED` events, where its chi-square reference rejects calibrated
        models too often)."""
        from ..metrics.binned import _debiased_from_stats, _decomposition, _norm_of_gaps
        from ..metrics.goodness import _spiegelhalter_from_sums
        from ..panel import PanelConfig

        config = PanelConfig() if config is None else config
        nan = float("nan")
        if key in ("ece", "mce", "rmsce"):
            return _norm_of_gaps(self.bin_statistics(config.scheme()), {"ece": "l1", "mce": "max", "rmsce": "l2"}[key]), nan
        if key == "ace":
            return _norm_of_gaps(self.bin_statistics(EqualMass(config.n_bins)), "l1"), nan
        if key == "debiased_ece":
            return _debiased_from_stats(self.bin_statistics(EqualMass(config.n_bins))), nan
        if key == "brier":
            return _decomposition(self.bin_statistics(Uniform(1))).brier, nan
        if key == "brier_reliability":
            return _decomposition(self.bin_statistics(config.scheme())).reliability, nan
        if key == "log_loss":
            f = self._fine()
            return float(f["sll"].sum()) / float(f["sw"].sum()), nan
        if key == "hosmer_lemeshow":  # no p-value where its chi-square over-rejects (the data in memory redraw)
            r = self._hosmer_lemeshow()
            return r.statistic, (r.p_value if r.chi2_reliable else nan)
        if key == "spiegelhalter_z":
            r = _spiegelhalter_from_sums(*_agg.spiegelhalter_sums(self._fine(), self._roles.weight is not None))
            return r.statistic, r.p_value
        if key == "smooth_ece":
            return self.smooth_ece()[0], nan
        if key == "tce":
            return self.tce(PAVABC(config.n_min, config.n_max), alpha=config.alpha), nan
        raise InputError(f"metric {key!r} is not available on a scan yet; scans compute {', '.join(SCAN_METRICS)}.")

    def metrics(self, metrics=None, config=None, *, n_reference: int = 0, random_state=None, n_resamples: int = 0,
                confidence: float = 0.95, progress=None) -> pd.DataFrame:
        """The metric panel of :func:`calibviz.panel.metric_panel` (values and readings), from the scan.

        Parameters
        ----------
        metrics : sequence of str, optional
            Keys of :data:`calibviz.panel.BINARY_METRICS`; default the standard
            panel. Metrics a scan cannot compute (ICI, calibration slope and
            intercept, CORP, AUC: they need the rows) get NaN and a reading
            that says so.
        config : calibviz.panel.PanelConfig, optional
        n_reference : int, default 0
            0 by default, unlike :func:`~calibviz.panel.metric_panel`: a scan's
            values come from one pass, and TCE's reference refits PAVA-BC on
            every redraw (~13 s for 200 redraws of 10^7 rows), so it is asked
            for (``calibviz metrics --engine`` draws 200 by default, the
            dashboard as many as its in-memory pages); without it each reading
            says that the value alone is no evidence.
            Label redraws of the calibrated-model reference of the binned
            metrics (ECE, MCE, RMSCE, ACE, debiased ECE, Brier reliability),
            smECE, the Brier score, log loss and TCE of binary
            scans and of the confidence and top-label metrics of multiclass
            scans: binomial draws per bucket on the driver, no pass over the
            rows but log loss's one, over the rows scored below 1/64 or from
            63/64 (:mod:`calibviz.scan.reference`; weighted scans: the
            positives' weight drawn with the exact mean and variance,
            :func:`~calibviz.scan.reference.positive_weight`, TCE's with the
            coupled draw of :func:`~calibviz.scan.reference.weighted_positives`).
            Class-wise ECE (fixed bins) redraws labels per cell tuple
            (:func:`calibviz.scan.classwise.classwise_reference`; one more
            pass; weighted scans: each class's weight of positives with at
            least the per-row draw's variance).
        random_state : None, int or numpy.random.Generator
            A Generator is split into two independent streams, one for the
            reference and one for the bootstrap, so that the intervals do not
            depend on whether a reference was drawn first (an int seeds both).
        n_resamples : int, default 0
            Bootstrap resamples of the intervals (0: none, as ``n_reference``;
            the panel's usual number is 200). A Poisson bootstrap of the
            bucket table, no pass over the rows, read with the interval each
            metric's coverage study chose, as :func:`~calibviz.panel.metric_panel`
            reads it (:mod:`calibviz.scan.resample`: the draw and its bounds).
            Class-wise ECE of a multiclass scan: a joint draw of the K
            one-vs-rest views from one more aggregation, by cell tuple
            (:mod:`calibviz.scan.classwise`; fixed bins only, at most 2^20
            tuples: otherwise none, and the note says why).
        confidence : float, default 0.95
        progress : callable(done, total), optional
            Called as the calibrated-model reference's redraws (``n_reference`` per metric; TCE's as its
            batches of refits end) and then the bootstrap resamples advance.

        Returns
        -------
        pandas.DataFrame
            The columns of :func:`~calibviz.panel.metric_panel`. Values equal
            the in-memory ones up to float rounding (TCE: see :meth:`tce`);
            bootstrap intervals (``low``, ``high``, ``interval``, notes) as
            above; the calibrated-model reference as above; Hosmer-Lemeshow
            and Spiegelhalter carry their own tests' p-values.

        Examples
        --------
        >>> import calibviz as cv, numpy as np, pandas as pd
        >>> rng = np.random.default_rng(0); p = rng.uniform(size=1000)
        >>> df = pd.DataFrame({"y": (rng.uniform(size=1000) < p).astype(int), "p": p})
        >>> t = cv.scan(df).metrics(["ece", "brier"])
        >>> bool(np.isclose(t.loc[0, "value"], cv.metrics.ece(df.y, df.p), rtol=1e-12, atol=0))
        True
        """
        from ..panel import (BINARY_METRICS, DEFAULT_BINARY_METRICS, DEFAULT_MULTICLASS_METRICS, MULTICLASS_METRICS,
                             HL_MIN_EXPECTED, PanelConfig, _spec, crowded_bins_note, panel_frame, spiegelhalter_range,
                             undefined_row)
        from .reference import (BUCKET_KEYS, REFERENCE_METRICS, bucket_nulls, is_seed, reference,
                                top_label_reference)

        config = PanelConfig() if config is None else config
        reference_state, bootstrap_state = (random_state.spawn(2) if isinstance(random_state, np.random.Generator)
                                            else (random_state, random_state))
        default, registry = ((DEFAULT_BINARY_METRICS, BINARY_METRICS) if self.is_binary
                             else (DEFAULT_MULTICLASS_METRICS, MULTICLASS_METRICS))
        keys = list(default if metrics is None else ([metrics] if isinstance(metrics, str) else metrics))
        if not self.is_binary:  # the confidence view: its ECE is the confidence ECE
            keys = ["confidence_ece" if k == "ece" else k for k in keys]
        specs = [_spec(k, registry) for k in keys]
        available = SCAN_METRICS if self.is_binary else ("confidence_ece", "classwise_ece", "top_label_ece",
                                                         "top_label_mce", "accuracy")
        schemes = [config.scheme()] if set(keys) & {"ece", "mce", "rmsce", "brier_reliability"} else []
        schemes += [EqualMass(config.n_bins)] if set(keys) & {"ace", "debiased_ece"} else []
        schemes += [EqualMass(10)] if "hosmer_lemeshow" in keys else []
        if self._fine_cache is None:  # ranges in the first pass where results will read them (no pass of their own)
            self._ranges_wanted = self._ranges_wanted or "tce" in keys or bool(n_resamples)
        self._fine()  # the first pass validates the rows: bad data is the command's error, not one metric's
        if not self.n:  # an empty top-label view (a ZeroDivisionError in the prevalence, a review)
            raise InputError(f"{self.name} holds no rows (a class never predicted, or predicted only on rows of "
                             "weight 0): it has no metrics; its top-label metrics count it as absent.")
        try:
            self._prepare(schemes)  # one refining pass for all the panel's bins
        except InputError:
            pass  # a scheme a scan cannot bin: its metric says so below
        shared = [k for k in keys if k in BUCKET_KEYS]
        if n_reference and self.is_binary and len(shared) > 1 and is_seed(reference_state):
            try:  # one draw of the fine buckets for the references of smECE, Brier and log loss (the same values)
                bucket_nulls(self, shared, int(n_reference), reference_state)
            except InputError:
                pass  # each metric's row says what is wrong
        prevalence = self.prevalence  # the confidence view: the accuracy
        rows = []
        nan = float("nan")

        def row_of(spec) -> dict:
            """The panel's row of one metric (raises InputError where the metric is undefined on these rows)."""
            note = ""
            null_mean = null_low = null_high = nan
            redrawn = False  # whether a label-redraw reference gave the range and the p-value
            if spec.key == "classwise_ece" and spec.key in available:  # one pass per class (K passes)
                value = float(np.mean([self.class_view(c).metric("ece", config)[0] for c in self._roles.classes]))
                p_value = nan
                reading = spec.reading(value, {"p_value": p_value})
                if n_reference:  # labels redrawn per cell tuple (one more pass)
                    from .classwise import MAX_GROUPS, NoInterval, cell_table, classwise_reference

                    try:
                        null_mean, null_low, null_high, p_value = classwise_reference(
                            cell_table(self, config.scheme()), n_reference, reference_state,
                            reference_level(config.alpha))
                        redrawn = True
                    except NoInterval:  # bins without fixed edges, or too many tuples: no reference, as no interval
                        note = ("No calibrated-model reference for class-wise ECE on this scan: it redraws the labels "
                                "per tuple of bins of every class, which needs bins with fixed edges (uniform or "
                                f"custom) and at most {MAX_GROUPS:,} such tuples; choose uniform bins, or analyse "
                                f"{IN_MEMORY}.")
            elif spec.key == "accuracy" and spec.key in available:  # the confidence view's share of "correct"
                value, p_value = prevalence, nan
                reading = spec.reading(value, {"p_value": p_value})
            elif spec.key in ("top_label_ece", "top_label_mce") and spec.key in available:  # K passes
                value, p_value = self._top_label(config)[spec.key], nan
                reading = spec.reading(value, {"p_value": p_value})
                if n_reference:
                    null_mean, null_low, null_high, p_value = top_label_reference(self, spec.key, config, n_reference,
                                                                                  reference_state,
                                                                                  reference_level(config.alpha))
                    redrawn = True
            elif spec.key in available:
                hl = self._hosmer_lemeshow() if spec.key == "hosmer_lemeshow" else None
                value, p_value = ((hl.statistic, hl.p_value) if hl is not None else
                                  self.metric("ece" if spec.key == "confidence_ece" else spec.key, config))
                ctx = {"prevalence": prevalence, "uncertainty": prevalence * (1 - prevalence), "p_value": p_value}
                if spec.key == "mce":
                    ctx["worst_bin"] = self.bin_statistics(config.scheme()).worst_bin()
                if spec.key == "log_loss":
                    ctx["certain_mistakes"] = self._certain_mistakes()
                if hl is not None:
                    ctx.update(dof=hl.dof, min_expected=hl.min_expected)
                    if not hl.chi2_reliable:  # no redraws of this statistic on a scan: no verdict
                        ctx.update(chi2_p_value=p_value, p_value=nan)
                        p_value = nan
                if spec.key == "smooth_ece":
                    note = self.smooth_ece()[2]
                grid_note = self._grid_note(PAVABC(config.n_min, config.n_max)) if spec.key in GRID_METRICS else ""
                if grid_note:  # TCE's bins: PAVA-BC of the panel's n_min, n_max
                    note = grid_note
                elif (spec.key in ("ece", "confidence_ece", "mce", "rmsce", "brier_reliability")
                      and isinstance(config.scheme(), (PAVA, PAVABC)) and self._blocks_on_grid()):
                    note = self._pava_note(config.scheme())
                reading = spec.reading(value, ctx)
                # the confidence view's ECE is confidence ECE: its reference redraws "correct" ~ Bernoulli(max P)
                ref_key = "ece" if spec.key == "confidence_ece" else spec.key
                if n_reference and ref_key in REFERENCE_METRICS and (self.is_binary or ref_key == "ece"):
                    null_mean, null_low, null_high, p_value = reference(self, ref_key, config, n_reference,
                                                                        reference_state,
                                                                        reference_level(config.alpha), redrawing)
                    redrawn = True
                elif n_reference and spec.key == "spiegelhalter_z":  # its normal test's range, as in memory
                    q = spiegelhalter_range(config.alpha)
                    null_mean, null_low, null_high = 0.0, -q, q
            else:
                value, p_value = nan, nan
                reading = (f"{spec.label} is not available on a scan yet (it needs more than bucket sums): analyse "
                           f"{IN_MEMORY} for it.")
            redraws = n_reference if redrawn and np.isfinite(null_high) else 0
            return {"metric": spec.key, "label": spec.label, "value": float(value), "low": nan, "high": nan,
                    "interval": "", "null_mean": null_mean, "null_low": null_low, "null_high": null_high,
                    "p_value": p_value,  # with redraws behind the range: p_value is theirs
                    "n_redraws": redraws,
                    "verdict": "",  # the panel's tests together: family_verdicts
                    "unit": spec.unit,
                    "description": spec.description, "reading": reading,
                    # binary views only, as in memory: a multiclass panel's bins are not one binning's (class-wise
                    # ECE read the confidence bins' crowding, near 1, where its class probabilities crowd near 0)
                    "note": " ".join(t for t in (note, crowded_bins_note(
                        spec, config, lambda: self.bin_statistics(config.scheme()).weight) if self.is_binary else "")
                                     if t)}

        # progress counts each metric's reference redraws (TCE's refits, the slow part, as they end) and then the
        # bootstrap resamples, as metric_panel counts them
        per_metric = int(n_reference or 0)
        ref_units = len(specs) * per_metric
        total = ref_units + int(n_resamples or 0)
        offset = 0  # the redraws of the metrics before the one being computed (read by redrawing when called)

        def redrawing(done):
            if progress is not None and total:
                progress(offset + done, total)

        for i, spec in enumerate(specs):
            offset = i * per_metric
            try:
                rows.append(row_of(spec))
            except InputError as exc:  # this metric is undefined on these predictions; the others still are
                rows.append(undefined_row(spec, exc))
            redrawing(per_metric)
        if n_resamples:  # Poisson bootstrap of the bucket table (calibviz.scan.resample)
            from .resample import fill_intervals

            boot = None if progress is None else (lambda done, n: progress(ref_units + done, ref_units + n))
            rows = fill_intervals(self, rows, specs, config, n_resamples, confidence, bootstrap_state, boot)
        out = panel_frame(rows, config.alpha, {spec.key: spec for spec in specs})
        out.attrs.update(config=config, n_resamples=int(n_resamples), confidence=confidence, random_state=random_state,
                         n_reference=n_reference,
                         engine=self.engine, n=self.n)
        return out


def interval_caption(panel: pd.DataFrame, multiclass: bool, weighted: bool = False) -> str:
    """How the intervals and the reference of a scan's metric panel (:meth:`Scan.metrics`) were made, in one
    paragraph: the scan's counterpart of :func:`calibviz.panel.interval_caption` (a Poisson bootstrap of the
    buckets and bucket redraws instead of resampled and redrawn rows), for the dashboard and the report."""
    n_boot = int(panel.attrs.get("n_resamples") or 0)
    if panel.attrs.get("intervals_wait"):
        boot = ("95% intervals: press 'Compute 95% intervals' (a Poisson bootstrap of the score buckets, a few "
                "seconds per metric). ")
    elif n_boot:
        boot = (f"95% intervals: Poisson bootstrap of the score buckets ({n_boot} resamples, seed "
                f"{panel.attrs.get('random_state')}; no pass over the rows), each metric read with the interval its "
                "coverage study chose; a metric without one says why in its reading. ")
    else:
        boot = "Bootstrap intervals were turned off (0 resamples). "
    n_ref = panel.attrs.get("n_reference", 0)
    if not n_ref:
        ref = "The calibrated-model reference was turned off (0 redraws)."
    elif multiclass:
        ref = (f"Calibrated-model reference: {n_ref} redraws per score bucket of whether the predicted class is "
               "right (confidence ECE, top-label ECE and MCE; per predicted class for the top-label ones); "
               "class-wise ECE redraws the labels jointly per tuple of bins of every class (one more pass; none with "
               "bins of no fixed edges).")
    else:
        tce = panel.loc[panel["metric"] == "tce", "n_redraws"] if "n_redraws" in panel else ()
        own = {int(r) for r in tce if r and int(r) != n_ref}  # the dashboard refits TCE on fewer redraws
        ref = (f"Calibrated-model reference: {n_ref} redraws of the labels per score bucket (ECE, ACE, MCE, RMSCE, "
               "debiased ECE, smECE, the Brier score and its reliability term, log loss, TCE"
               + (f" with {', '.join(map(str, sorted(own)))} redraws, a PAVA-BC refit each: fewer to save time, as "
                  "many as a value above every redraw needs to pass the first level of the tests judged together"
                  if own else "") + ")."
               + (" With sample weights, the redrawn positives of a bucket weigh what a random draw of that many of "
                  "its rows would weigh on average, with the same spread." if weighted else ""))
    return (boot + ref + " Metrics that need the rows (ICI, slope, intercept, CORP, AUC) show n/a and say so."
            + (f" {held}" if (held := no_verdict_words(panel)) else ""))


def _label_values(classes, labels) -> list:
    """The classes and the labels outside them (text, as the engines return them) as the in-memory message lists
    them: numbers as numbers where the classes are numbers ([0, 1, 2, 10], not ['0', '1', '10', '2'], a review).

    >>> _label_values([0, 1], ["10", "2"]), _label_values([0.0, 1.0], ["inf"]), _label_values(["no", "yes"], ["1"])
    ([0, 1, 2, 10], [0.0, 1.0, inf], ['1', 'no', 'yes'])
    """
    from .source import _as_label_number

    numeric = all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in classes)
    floats = any(isinstance(c, float) for c in classes)
    extra = [_as_label_number(v, floats) for v in labels] if numeric else list(labels)
    values = set(classes) | set(extra)
    return sorted(values, key=lambda v: (0, v, "") if isinstance(v, (int, float)) else (1, 0, str(v)))


def _invalid_counts(table: pd.DataFrame) -> list:
    """(reason, rows, missing) of the invalid rows of a first-pass table, each row under its first reason in the
    in-memory order (:func:`calibviz.io.cleaning.invalid_rows`: labels, then probabilities, then weights)."""
    b, y, n = table["_b"].to_numpy(), table["_y"].to_numpy(), table["n"].to_numpy()
    labelled = y >= 0
    parts = [("an empty label", y == _agg.MISSING_LABEL, True), ("a label outside the classes", y == _agg.UNKNOWN_LABEL, False),
             ("an empty, NaN or infinite probability", labelled & (b == _agg.BAD_SCORE), True),
             ("a probability outside [0, 1]", labelled & (b == _agg.OUT_OF_RANGE), False),
             ("class probabilities not summing to 1", labelled & (b == _agg.BAD_SUM), False),
             ("an empty, NaN or infinite weight", labelled & (b == _agg.BAD_WEIGHT), True),
             ("a negative weight", labelled & (b == _agg.NEGATIVE_WEIGHT), False)]
    return [(reason, int(n[mask].sum()), missing) for reason, mask, missing in parts if n[mask].sum()]


def scan(source, *, label=None, probs=None, weight=None, positive=None, model=None, features=None,
         renormalize: bool = False, engine=None, database=None, drop_invalid: bool = False) -> Scan:
    """A lazy scan of predictions too large for memory; nothing is read until a result is asked for.

    Parameters
    ----------
    source : str, path, or a lazy frame
        A Parquet or CSV path, a glob (``"logs/*.parquet"``), a directory
        (searched recursively; hive partitions ``key=value/`` become
        columns), a SQL query (DuckDB, or Spark SQL with ``engine="spark"``),
        a DuckDB relation, a Polars LazyFrame, a PySpark DataFrame, or a
        pandas DataFrame (for tests and small data).
    label, probs, weight, positive, model, features
        Column roles, resolved as :func:`calibviz.load_predictions` resolves
        them (same names, same messages). ``probs`` is one column with
        P(positive), the class columns of one model (two or more), or
        ``{model: [column]}`` for one model per column.
    renormalize : bool, default False
        Divide each row of class columns by its sum, as
        ``load_predictions(renormalize=True)``: for probabilities rounded
        (to 2 decimals, say) so that rows sum to 0.99 or 1.01. Without it,
        rows off by more than 1e-3 are refused with their sums' range.
        Rows summing to 0 are refused either way; sums further from 1 than
        rounding explains get a note (:attr:`Scan.notes`).
    drop_invalid : bool, default False
        Leave out invalid rows instead of refusing them, with a note
        (:attr:`Scan.notes`) that counts them by reason, under
        ``load_predictions(drop_invalid=True)``'s rule (missing values
        whatever their number, wrong ones while under 5% of the rows; see
        :mod:`calibviz.io.cleaning`). The rows are counted in the first pass
        and left out of every result, at no extra pass. Each model (view)
        leaves out its own invalid rows: a scan compares models unpaired.
        An engine types each column: a probability column that holds text
        is refused as a column, whatever this option (convert it first).
    engine : {"duckdb", "polars", "spark"}, optional
        Where the aggregation runs; default DuckDB for paths and queries and
        the frame's own engine for frames.
    database : str, optional
        A DuckDB database file a SQL query runs against (opened read-only).

    Returns
    -------
    Scan
        For a source holding several models, ``.models`` has one scan per
        model (this one is the first).

    Raises
    ------
    calibviz.InputError
        Unknown columns or engines at once; bad rows (probabilities outside
        [0, 1], NaN, unknown labels, bad weights) when the first result is
        computed: they are counted and reported, never dropped unless
        ``drop_invalid``.

    Examples
    --------
    >>> import calibviz as cv, pandas as pd
    >>> s = cv.scan(pd.DataFrame({"label": [0, 1] * 10, "p": [0.3, 0.6] * 10}))
    >>> s.engine, s.n, round(s.metric("brier")[0], 4)
    ('duckdb', 20, 0.125)
    """
    frame, engine, display, source_notes = open_source(source, engine, database=database)
    mapping, roles = resolve_roles(frame, display, label=label, probs=probs, weight=weight, positive=positive,
                                   model=model, features=features, drop_invalid=drop_invalid)
    if source_notes:  # said with the column mapping's notes, which every model and view of the source carries
        mapping = replace(mapping, notes=tuple(mapping.notes) + source_notes)
    if renormalize or drop_invalid:
        roles = {name: replace(r, renormalize=renormalize, drop_invalid=drop_invalid) for name, r in roles.items()}
    scans = {name: Scan(frame, r, name=name, engine=engine, source=display, classes=mapping.classes,
                        mapping=mapping) for name, r in roles.items()}
    for s in scans.values():
        s.models = scans
    return next(iter(scans.values()))
