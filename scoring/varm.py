"""The VARM-Bench track (ARCHITECTURE.md §1.3): validation, scoring, private row outcomes, comparisons."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, NamedTuple, TypeVar, cast

import numpy as np

from .bootstrap import (
    DEFAULT_LEVEL,
    paired_bootstrap,
    percentile_cis,
    resample_count_table,
    resample_running_table,
    weighted_sums,
)
from .disclosure import DERIVED_CELL, SMALL_CELL, derived_small, disjoint, unlinked_rows
from .jsonl import coverage_problems, quote, read_jsonl, string_problem
from .ladder import Margin, per_row_margin
from .metrics_spec import VARM as VARM_SPECS
from .metrics_spec import headline_keys
from .problems import InputError, Problem
from .protocol import DISCRETE_FIELDS, FIELDS, ParsedOutput, parse_output, summarise_advice
from .references import VarmReferences, check_reference_bundle, load_references
from .report import Report
from .varm_metrics import (
    COLUMNS,
    HEADLINE_CI_METRICS,
    RowOutcomes,
    disclosed_subset,
    format_issue_counts,
    gold_codes,
    metric_arrays,
    metrics_for_rows,
    normalise_target,
    overall_metrics,
    resampled_metrics,
    row_outcomes,
    subsets_metrics,
    withheld_subset,
)
from .version import SCORER_VERSION

__all__ = ["VARM_TRACK", "VarmTrack"]

# Distinct raw outputs whose parse is kept: a re-score parses every stored file of a track in one process,
# and the same output text recurs across files (resubmissions, baselines, a model's versions). ~1 kB each.
PARSE_CACHE = 8192
_parse = functools.lru_cache(maxsize=PARSE_CACHE)(parse_output)  # pure: same text, same (frozen) parse

T = TypeVar("T")
DERIVED_CACHE = 8  # references objects whose derived values are kept (a pinned set and its two slices)
_derived_values: dict[int, tuple[VarmReferences, dict[object, Any]]] = {}


def _derived(refs: VarmReferences, key: object, make: Callable[[], T]) -> T:
    """`make()`, a value computed from `refs` alone, computed once per references object: a re-score
    scores every stored file against the same pinned references. The entry holds `refs`, so its id is not
    reused while cached; references are never changed after loading."""
    entry = _derived_values.get(id(refs))
    if entry is None or entry[0] is not refs:
        if len(_derived_values) >= DERIVED_CACHE:
            _derived_values.pop(next(iter(_derived_values)))
        entry = _derived_values[id(refs)] = (refs, {})
    values = entry[1]
    if key not in values:
        values[key] = make()
    return cast(T, values[key])


class _Inputs(NamedTuple):
    """The public inputs as `_check` looks rows up: ids in order, row by id, row by text."""

    ids: list[str]
    by_id: dict[str, int]
    by_text: dict[str, int]


def _derived_small(refs: VarmReferences) -> list[str]:
    """The subsets whose cells `derived_small` withholds (none unless they are disjoint)."""
    if not disjoint(refs.subsets.values()):
        return []
    return list(derived_small({name: len(rows) for name, rows in refs.subsets.items()}, len(refs)))


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False  # shared by every file's outcomes
    return array


def _inputs(inputs: list[dict[str, Any]]) -> _Inputs:
    ids = [row["id"] for row in inputs]
    by_text = {row["text"]: k for k, row in enumerate(inputs)}
    return _Inputs(ids, {row_id: k for k, row_id in enumerate(ids)}, by_text)


@dataclass
class _Checked:
    """A predictions file read against the public inputs: the report and one parse per test row."""

    report: Report
    parsed: list[ParsedOutput | None] = field(default_factory=list)


class VarmTrack:
    """VARM-Bench: raw model outputs are parsed strictly and scored against six-field gold records."""

    name = "varm"
    title = "VARM-Bench"
    primary_metric = "jrem"
    metric_specs = VARM_SPECS
    headline_metrics = headline_keys(VARM_SPECS)

    def load_references(self, path: Path, subsets_dir: Path | None = None) -> VarmReferences:
        return load_references(path, subsets_dir)

    def check_reference_bundle(self, directory: Path) -> list[Problem]:
        return list(check_reference_bundle(directory))

    def public_inputs(self, refs: VarmReferences) -> list[dict[str, Any]]:
        return [{"id": row_id, "text": text} for row_id, text in zip(refs.ids, refs.texts, strict=True)]

    # -- validation (gold-independent) -------------------------------------------------------------

    def _check(  # noqa: C901
        self,
        data: bytes,
        inputs: list[dict[str, Any]] | _Inputs,
        *,
        advice: bool = True,
        split: str = "test",
    ) -> _Checked:
        records, read_problems = read_jsonl(data, what="predictions")
        report = Report(rows=len(records))
        report.extend(list(read_problems))
        report.errors_total += read_problems.total - len(read_problems)  # count what the reader dropped
        ids, by_id, by_text = inputs if isinstance(inputs, _Inputs) else _inputs(inputs)
        found: list[tuple[int, object]] = []
        outputs: dict[int, tuple[int, str]] = {}  # line -> (row index or -1, output)
        for line, obj in records:
            # The usual line (a string id and output) read directly: what the general path below does with
            # it, without its checks, which were most of this loop's time.
            row_id, output = obj.get("id"), obj.get("output")
            key: object
            if isinstance(row_id, str) and isinstance(output, str):
                key = by_id.get(row_id, ("id", row_id))
                outputs[line] = (key if isinstance(key, int) else -1, output)
                found.append((line, key))
                continue
            key = None
            # A line names its row by id when it has one, else by exact text; unknown keys are ignored.
            name = "id" if "id" in obj else "text" if "text" in obj else None
            if name is None:
                report.add(
                    Problem(
                        line,
                        None,
                        "the line has neither 'id' nor 'text'; one of them must say "
                        f"which {split} row the output answers",
                    )
                )
            elif problem := string_problem(obj, name, line):
                report.add(problem)
            else:
                index = by_id if name == "id" else by_text
                key = index.get(obj[name], (name, obj[name]))
            if problem := string_problem(obj, "output", line, " (the model's raw response)"):
                report.add(problem)
            elif key is not None:
                outputs[line] = (key if isinstance(key, int) else -1, obj["output"])
            if key is not None:
                found.append((line, key))

        def describe(key: object) -> str:
            if isinstance(key, int):
                return f"id {quote(ids[key])}"
            kind, value = cast(tuple[str, str], key)
            return f"{kind} {quote(value)}"

        report.extend(coverage_problems(found, range(len(ids)), field="id", describe=describe, split=split))

        parsed_by_row: list[ParsedOutput | None] = [None] * len(ids)
        raw_outputs, raw_lines, parsed_list = [], [], []
        for line, (row, raw) in outputs.items():
            parsed = _parse(raw)
            raw_outputs.append(raw)
            raw_lines.append(line)
            parsed_list.append(parsed)
            if row >= 0 and parsed_by_row[row] is None:
                parsed_by_row[row] = parsed
            if not parsed.schema_valid:
                report.format_report.append(
                    {
                        "line": line,
                        "id": ids[row] if row >= 0 else None,
                        "issues": list(parsed.format_issues),
                    }
                )
        if advice:  # only shown to submitters; scoring skips the lenient re-parse
            report.advice = summarise_advice(raw_outputs, parsed_list, raw_lines)
        return _Checked(report, parsed_by_row)

    def check_predictions(self, data: bytes, inputs: list[dict[str, Any]], *, split: str = "test") -> Report:
        """Gold-independent validation against the public inputs `[{"id", "text"}]` of `split`."""
        return self._check(data, inputs, split=split).report

    def prediction_keys(self, data: bytes, inputs: list[dict[str, Any]]) -> list[str]:
        """One canonical string per input row (in input order) of what the scorer reads from its output:
        the parsed record of a schema-valid output with its target as the multiset of its normalised
        characters (all target F1 sees), one constant for every invalid output (the scorer gives them all
        the same outcome). So edits that cannot change a score cannot make two files differ.
        Gold-independent; InputError for an invalid file."""
        checked = self._check(data, inputs, advice=False)
        if not checked.report.valid:
            raise InputError(checked.report.errors, total=checked.report.errors_total)
        return _keys(checked.parsed)

    def check_with_keys(self, data: bytes, inputs: list[dict[str, Any]]) -> tuple[Report, list[str] | None]:
        """`check_predictions` and, for a valid file, `prediction_keys`, from one parse (an upload needs
        both: the parse is most of the web process's time per upload)."""
        checked = self._check(data, inputs)
        return checked.report, _keys(checked.parsed) if checked.report.valid else None

    def _outcomes(self, refs: VarmReferences, data: bytes) -> RowOutcomes:
        inputs = _derived(refs, "inputs", lambda: _inputs(self.public_inputs(refs)))
        checked = self._check(data, inputs, advice=False)
        if not checked.report.valid:
            raise InputError(checked.report.errors, total=checked.report.errors_total)
        gold = _derived(refs, "gold_codes", lambda: _read_only(gold_codes(refs.rows)))
        return row_outcomes(checked.parsed, refs.rows, gold)  # type: ignore[arg-type]  # all rows covered

    # -- scoring ------------------------------------------------------------------------------------

    def score(
        self,
        refs: VarmReferences,
        data: bytes,
        *,
        bootstrap: int = 1000,
        seed: int = 0,
        disclose: bool = True,
    ) -> dict[str, Any]:
        """The full result dict (ARCHITECTURE.md §2); InputError when the predictions are invalid.

        `disclose` (the published form): small subset cells are withheld (`disclosed_subset`); False gives
        every cell's raw values, for conformance checks against the reference implementation."""
        return self._result(refs, self._outcomes(refs, data), bootstrap, seed, disclose)

    def score_with_rows(
        self, refs: VarmReferences, data: bytes, *, bootstrap: int = 1000, seed: int = 0
    ) -> tuple[dict[str, Any], dict[str, list[Any]]]:
        """(`score(...)`, `row_outcomes(...)`) from ONE parse of the file (parsing is most of the cost)."""
        outcomes = self._outcomes(refs, data)
        return self._result(refs, outcomes, bootstrap, seed, True), self._rows(refs, outcomes)

    def score_slices(
        self,
        refs: VarmReferences,
        data: bytes,
        slices: Mapping[str, np.ndarray],
        *,
        bootstrap: Mapping[str, int],
        seed: int = 0,
        full_rows: bool = True,
        arrays: bool = False,
    ) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
        """{"full": score_with_rows(...), <slice>: the same on the slice's rows} from ONE parse of the file.

        `slices` maps a name to ascending row indices (scoring/slices.py); `bootstrap` the resamples of each
        result ("full" and each slice's name; 0: no intervals). A slice's result is exactly what scoring the
        slice's references and predictions alone gives. `full_rows=False`: no row outcomes for "full" ({});
        `arrays=True`: the row outcomes' numeric columns as arrays (`RowOutcomes.to_arrays`), for a caller
        that packs them (turning 2,000 rows into lists and back was ~10 % of scoring a file)."""
        outcomes = self._outcomes(refs, data)
        matrix = outcomes.indicator_matrix()  # row by row, so a slice's is this one's rows
        rows_of = self._row_arrays if arrays else self._rows
        out = {
            "full": (
                self._result(refs, outcomes, bootstrap["full"], seed, True, matrix),
                rows_of(refs, outcomes) if full_rows else {},
            )
        }
        for name, rows in slices.items():
            part = _derived(refs, ("restricted", rows.tobytes()), functools.partial(refs.restricted, rows))
            part_outcomes = _take(outcomes, rows)
            out[name] = (
                self._result(part, part_outcomes, bootstrap[name], seed, True, matrix[rows]),
                rows_of(part, part_outcomes),
            )
        return out

    def _result(
        self,
        refs: VarmReferences,
        outcomes: RowOutcomes,
        bootstrap: int,
        seed: int,
        disclose: bool,
        matrix: np.ndarray | None = None,  # `outcomes.indicator_matrix()`, when the caller has it
    ) -> dict[str, Any]:
        matrix = outcomes.indicator_matrix() if matrix is None else matrix
        ci: dict[str, list[float]] = {}
        if bootstrap > 0:
            counts = resample_count_table(outcomes.n, bootstrap, seed)
            running = resample_running_table(outcomes.n, bootstrap, seed)
            canonical = matrix[unlinked_rows(matrix)]  # intervals depend on outcome counts, not row identity
            resampled = resampled_metrics(outcomes, counts, matrix=canonical, running=running)
            ci = percentile_cis(resampled, DEFAULT_LEVEL)
        return {
            "scorer_version": SCORER_VERSION,
            "track": self.name,
            "rows": outcomes.n,
            "metrics": overall_metrics(outcomes, matrix),
            "format_issues": format_issue_counts(outcomes),
            "subsets": self._subsets(refs, outcomes, matrix, disclose),
            "ci": ci,
            "bootstrap": {"resamples": max(bootstrap, 0), "seed": seed, "level": DEFAULT_LEVEL},
        }

    @staticmethod
    def _subsets(
        refs: VarmReferences, outcomes: RowOutcomes, matrix: np.ndarray, disclose: bool
    ) -> dict[str, Any]:
        raw = subsets_metrics(outcomes, refs.subsets, matrix)
        if not disclose:
            return dict(sorted(raw.items()))
        cells = {name: disclosed_subset(cell) for name, cell in raw.items()}
        # Overall minus the others would give a withheld one back, when the subsets are disjoint.
        derived = _derived(refs, "derived_small", lambda: _derived_small(refs))
        if derived:
            for name in derived:
                if cells[name]["withheld"] != SMALL_CELL:
                    cells[name] = withheld_subset(cells[name], DERIVED_CELL)
        return dict(sorted(cells.items()))

    def row_outcomes(self, refs: VarmReferences, data: bytes) -> dict[str, list[Any]]:
        """PRIVATE per-row arrays (gold-joined) for paired comparisons; never publish them."""
        return self._rows(refs, self._outcomes(refs, data))

    @staticmethod
    def _rows(refs: VarmReferences, outcomes: RowOutcomes) -> dict[str, list[Any]]:
        return {"id": list(refs.ids), **outcomes.to_lists()}

    @staticmethod
    def _row_arrays(refs: VarmReferences, outcomes: RowOutcomes) -> dict[str, Any]:
        return {"id": list(refs.ids), **outcomes.to_arrays()}

    def paired_compare(
        self,
        a: dict[str, list[Any]],
        b: dict[str, list[Any]],
        *,
        bootstrap: int = 1000,
        seed: int = 0,
        metrics: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """Headline metrics of two submissions on the same rows, with a paired bootstrap CI of a − b.

        `metrics` (default: every headline metric with a CI) restricts the comparison to those names, which
        must be among them; only the columns they need are resampled, and the values are the same as in
        the full comparison (same resamples)."""
        return self.paired_compare_prepared(
            self.prepare_compare(a), self.prepare_compare(b), bootstrap=bootstrap, seed=seed, metrics=metrics
        )

    def prepare_compare(self, rows: Mapping[str, list[Any] | np.ndarray]) -> ComparableRows:
        """`rows` (from `row_outcomes`; numeric columns as lists or arrays of the same values) decoded once
        for any number of `paired_compare_prepared` calls."""
        outcomes = RowOutcomes.from_lists(rows)
        return _comparable(tuple(map(sys.intern, rows["id"])), outcomes)

    def release_margin(
        self, new: ComparableRows, best: ComparableRows, *, bootstrap: int, seed: int
    ) -> Margin:
        """The Ladder's margin on the primary metric, JREM: a per-row mean, so std(d) / √n."""
        del bootstrap, seed  # the per-row rule needs no resampling
        best = _aligned(new, best)
        column = COLUMNS[self.primary_metric]
        return per_row_margin(new.matrix()[:, column], best.matrix()[:, column])

    def paired_compare_prepared(
        self,
        a: ComparableRows,
        b: ComparableRows,
        *,
        bootstrap: int = 1000,
        seed: int = 0,
        metrics: Sequence[str] | None = None,
    ) -> dict[str, Any]:
        """`paired_compare` of two `prepare_compare` results: the same dict, without decoding either side
        again (tie groups compare each entry with its group's leader)."""
        b = _aligned(a, b)
        in_order_a, in_order_b = a.matrix(), b.matrix()
        # Resampled in one canonical order of the joint outcomes (`unlinked_rows`): pairs stay pairs, and the
        # published comparison depends on the joint counts only, not on which rows.
        order = unlinked_rows(np.hstack([in_order_a, in_order_b]))
        matrix_a, matrix_b = in_order_a[order], in_order_b[order]
        names = [name for name in self.headline_metrics if name in HEADLINE_CI_METRICS]
        if metrics is not None:
            unknown = sorted(set(metrics) - set(names))
            if unknown:
                raise ValueError(f"cannot compare on {unknown}; choose among {names}")
            names = list(dict.fromkeys(metrics))
        counts = resample_count_table(a.outcomes.n, max(bootstrap, 0), seed)
        if metrics is None:
            running = resample_running_table(a.outcomes.n, max(bootstrap, 0), seed)
            resampled_a = resampled_metrics(a.outcomes, counts, names, matrix=matrix_a, running=running)
            resampled_b = resampled_metrics(b.outcomes, counts, names, matrix=matrix_b, running=running)
        else:
            rows = counts.sum(axis=1)
            resampled_a = _resampled_subset(matrix_a, counts, rows, names)
            resampled_b = _resampled_subset(matrix_b, counts, rows, names)
        return paired_bootstrap(a.point(names), b.point(names), resampled_a, resampled_b, level=DEFAULT_LEVEL)


@dataclass(frozen=True)
class ComparableRows:
    """One submission's private row outcomes ready for paired comparisons: decoded once; the indicator
    matrix is kept as 0/1 bytes (T-F1, the one non-flag column, is in `outcomes`), since a publisher caches
    hundreds of these, and point metrics are computed when first asked for."""

    ids: tuple[str, ...]
    unique_ids: bool
    outcomes: RowOutcomes
    flags: np.ndarray  # uint8 (n, columns): `outcomes.indicator_matrix()` but for the T-F1 column
    points: dict[str, float] = field(default_factory=dict, compare=False, repr=False)

    def matrix(self) -> np.ndarray:
        """Exactly `outcomes.indicator_matrix()`."""
        x = self.flags.astype(np.float64)
        x[:, COLUMNS["target_f1"]] = self.outcomes.target_f1
        return x

    def point(self, names: Sequence[str]) -> dict[str, float]:
        """`metrics_for_rows(outcomes)` of the metrics `names`."""
        missing = [name for name in names if name not in self.points]
        if missing:
            self.points.update(metrics_for_rows(self.outcomes, matrix=self.matrix(), names=missing))
        return {name: self.points[name] for name in names}


def _aligned(a: ComparableRows, b: ComparableRows) -> ComparableRows:
    """`b` in `a`'s row order; ValueError when they do not cover the same rows."""
    if not a.unique_ids or (a.ids != b.ids and sorted(a.ids) != sorted(b.ids)):
        raise ValueError("the two row-outcome sets do not cover the same rows")
    if a.ids == b.ids:
        return b
    position = {row_id: k for k, row_id in enumerate(b.ids)}
    return _comparable(a.ids, _take(b.outcomes, [position[row_id] for row_id in a.ids]))


def _comparable(ids: tuple[str, ...], outcomes: RowOutcomes) -> ComparableRows:
    flags = outcomes.indicator_flags()
    flags.flags.writeable = False
    return ComparableRows(ids, len(set(ids)) == len(ids), outcomes, flags)


def _take(outcomes: RowOutcomes, order: Sequence[int] | np.ndarray) -> RowOutcomes:
    """`outcomes` with its rows in `order` (what `from_lists` of the reordered lists gives)."""
    return RowOutcomes(**{f.name: getattr(outcomes, f.name)[order] for f in fields(RowOutcomes)})


def _keys(parsed: list[ParsedOutput | None]) -> list[str]:
    return [_scored_part(p) if p and p.schema_valid else "invalid" for p in parsed]


def _scored_part(parsed: ParsedOutput) -> str:
    record = dict(parsed.record)
    record["target"] = "".join(sorted(normalise_target(record.get("target", ""))))
    return json.dumps(record, ensure_ascii=False, sort_keys=True)


def _needed_columns(names: Sequence[str]) -> list[int]:
    """Indicator-matrix columns (see varm_metrics.COLUMNS) that the metrics `names` are computed from."""
    keys: set[str] = set()
    for name in names:
        head, _, tail = name.partition(".")
        if name == "parse_success":
            keys.add("valid")
        elif name == "anchor_schema_valid":
            keys.add("anchor_valid")
        elif head == "field_accuracy" and tail in FIELDS:
            keys.add(f"correct.{tail}")
        elif name == "jrem":
            keys.add("jrem")
        elif name in ("her_c", "her_l"):
            keys |= {"jrem", "correct.category" if name == "her_c" else "correct.label"}
        elif name == "t_f1":
            keys.add("target_f1")
        elif head == "macro_f1" and tail in DISCRETE_FIELDS:
            keys |= {f"{part}.{tail}" for part in ("tp", "pred", "gold")}
        else:
            return _all_columns()  # not a known metric: take every column
    out: list[int] = []
    for key in sorted(keys):
        where = COLUMNS[key]
        out.extend(range(where.start, where.stop) if isinstance(where, slice) else [where])
    return sorted(out)


def _all_columns() -> list[int]:
    width = max(w.stop if isinstance(w, slice) else w + 1 for w in COLUMNS.values())
    return list(range(width))


def _resampled_subset(
    x: np.ndarray, counts: np.ndarray, rows: np.ndarray, names: Sequence[str]
) -> dict[str, np.ndarray]:
    """`resampled_metrics` for `names` only, from the indicator matrix `x` (`rows`: `counts.sum(axis=1)`):
    the (resamples, n) @ (n, columns) product is taken over the columns those metrics need (the others stay
    zero) and only those metrics are computed."""
    cols = _needed_columns(names)
    sums = np.zeros((counts.shape[0], x.shape[1]))
    sums[:, cols] = weighted_sums(counts, x[:, cols])
    values = metric_arrays(sums, rows, names)
    return {name: values[name] for name in names}


VARM_TRACK = VarmTrack()
