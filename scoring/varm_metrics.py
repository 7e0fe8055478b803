"""VARM-Bench metrics (spec §3) over per-row outcome arrays.

Each output is parsed once; `RowOutcomes` then holds small per-row arrays (validity, per-field
correctness, target F1, class codes). Every metric is a function of column sums of one indicator matrix
`X` (rows × columns), so a row subset is a 0/1 weight vector and 1,000 bootstrap resamples are a single
`(resamples, n) @ (n, columns)` matrix product. Sums of 0/1 values are exact in float64, so the point
estimates equal the plain count-and-divide definitions bit for bit.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import numpy as np

from .bootstrap import weighted_sums
from .disclosure import SMALL_CELL, small_cell, withhold
from .protocol import DISCRETE_FIELDS, FIELDS, FORMAT_ISSUES, HARMFUL, NO_TARGET, VALUE_SETS, ParsedOutput

__all__ = [
    "CLASS_CODES",
    "CLASS_VALUES",
    "COLUMNS",
    "HEADLINE_CI_METRICS",
    "SENTINEL",
    "RowOutcomes",
    "format_issue_counts",
    "gold_codes",
    "gold_target",
    "metric_arrays",
    "metrics_for_rows",
    "nest",
    "normalise_target",
    "overall_metrics",
    "resampled_metrics",
    "row_outcomes",
    "disclosed_subset",
    "withheld_subset",
    "subset_metrics",
    "subsets_metrics",
    "target_f1",
]

TARGET_MATCH_THRESHOLD = 0.5
# Class codes follow Python's string order, so per-class F1 values are summed in the same order as
# scikit-learn's `labels=sorted(set(gold))`: the float mean is then identical, not just close.
CLASS_VALUES: dict[str, tuple[str, ...]] = {name: tuple(sorted(VALUE_SETS[name])) for name in DISCRETE_FIELDS}
CLASS_CODES: dict[str, dict[str, int]] = {
    name: {value: code for code, value in enumerate(values)} for name, values in CLASS_VALUES.items()
}
SENTINEL = -1  # the predicted code of an invalid row: equals no class

# Metrics that get a bootstrap CI (dotted result paths).
HEADLINE_CI_METRICS = (
    "jrem",
    "her_c",
    "her_l",
    "t_f1",
    "parse_success",
    "anchor_schema_valid",
    *(f"field_accuracy.{name}" for name in FIELDS),
    *(f"macro_f1.{name}" for name in DISCRETE_FIELDS),
)


def normalise_target(text: str) -> str:
    """Lower-case and delete all whitespace (str.split() whitespace, i.e. Unicode white space)."""
    return "".join(text.lower().split())


def target_f1(predicted: str, gold: str) -> float:
    """Multiset character-overlap F1 of two targets after normalisation (spec §3, official)."""
    if predicted == gold:  # equal before normalisation: equal after, so F1 is 1 (both empty included)
        return 1.0
    pred, ref = normalise_target(predicted), normalise_target(gold)
    if not pred and not ref:
        return 1.0
    short, long = (pred, ref) if len(pred) <= len(ref) else (ref, pred)
    # Multiset intersection size; str.count beats building two Counters for targets this short.
    common = sum(min(short.count(ch), long.count(ch)) for ch in set(short))
    if common == 0:
        return 0.0
    precision = common / len(pred)
    recall = common / len(ref)
    # "F1 as usual" from precision and recall, not 2c/(|p|+|g|): the two can differ in the last bit,
    # which matters at the 0.5 threshold.
    return 2 * precision * recall / (precision + recall)


# (predicted, gold) target pairs whose F1 is kept: a re-score meets the same pairs in file after file (the
# same output for the same row). Pure, so a kept value is the value.
TARGET_F1_CACHE = 16384
_target_f1 = functools.lru_cache(maxsize=TARGET_F1_CACHE)(target_f1)


def gold_target(record: dict[str, Any]) -> str:
    """The authors' VALIDATOR's reading of a gold target (blank target + no-target type reads as 无明确对象).

    Only the reference checker uses it (to accept such rows and their cot); the official metrics compare
    with the gold target as written, as the authors' evaluate.py does (spec §1), so a blank gold target
    is never correct."""
    target = record.get("target") or ""
    if not target.strip() and record.get("target_type") == NO_TARGET:
        return NO_TARGET
    return target


@dataclass(frozen=True)
class RowOutcomes:
    """Per-row results of one submission against the gold, in reference row order (private data)."""

    valid: np.ndarray  # bool (n,): schema_valid
    anchor_valid: np.ndarray  # bool (n,)
    correct: np.ndarray  # bool (n, 6), FIELDS order
    target_f1: np.ndarray  # float64 (n,), 0 for invalid rows
    gold: np.ndarray  # int8 (n, 5) class codes, DISCRETE_FIELDS order
    pred: np.ndarray  # int8 (n, 5) class codes, SENTINEL for invalid rows
    issues: np.ndarray  # bool (n, len(FORMAT_ISSUES))

    @property
    def n(self) -> int:
        return int(self.valid.shape[0])

    @property
    def harmful(self) -> np.ndarray:
        return np.asarray(self.gold[:, DISCRETE_FIELDS.index("label")] == CLASS_CODES["label"][HARMFUL])

    def indicator_matrix(self) -> np.ndarray:
        """The float64 matrix whose column sums give every metric (layout: `_columns()`)."""
        return np.concatenate(self._indicator_blocks(self.target_f1), axis=1, dtype=np.float64)

    def indicator_flags(self) -> np.ndarray:
        """`indicator_matrix()` as uint8 0/1 with the T-F1 column 0 (its only column that is not a flag),
        built without the float64 matrix."""
        return np.concatenate(self._indicator_blocks(np.zeros(self.n, dtype=bool)), axis=1).view(np.uint8)

    def _indicator_blocks(self, t_f1: np.ndarray) -> list[np.ndarray]:
        """The matrix's column blocks, (n, width) each: ~20 blocks join faster than ~70 single columns."""
        blocks = [
            self.valid[:, None],
            self.anchor_valid[:, None],
            self.correct,
            np.asarray(self.correct.all(axis=1))[:, None],
            t_f1[:, None],
        ]
        for k, name in enumerate(DISCRETE_FIELDS):
            classes = np.arange(len(CLASS_VALUES[name]))[None, :]
            gold_hit = self.gold[:, k, None] == classes
            pred_hit = self.pred[:, k, None] == classes
            blocks += [gold_hit & pred_hit, pred_hit, gold_hit]
        return blocks

    def to_lists(self) -> dict[str, list[Any]]:
        """JSON-friendly form (for `Track.row_outcomes`)."""
        out: dict[str, list[Any]] = {
            "valid": self.valid.astype(int).tolist(),
            "anchor_valid": self.anchor_valid.astype(int).tolist(),
            "target_f1": self.target_f1.tolist(),
        }
        for k, name in enumerate(FIELDS):
            out[f"correct.{name}"] = self.correct[:, k].astype(int).tolist()
        for k, name in enumerate(DISCRETE_FIELDS):
            out[f"gold.{name}"] = self.gold[:, k].tolist()
            out[f"pred.{name}"] = self.pred[:, k].tolist()
        out["issues"] = self.issues.astype(int).tolist()
        return out

    def to_arrays(self) -> dict[str, np.ndarray]:
        """`to_lists`'s columns as arrays of the same values (ints as int64 or the class codes' int8, the
        F1 as float64): what `np.asarray` of each list gives, up to the codes' integer width."""
        out: dict[str, np.ndarray] = {
            "valid": self.valid.astype(np.int64),
            "anchor_valid": self.anchor_valid.astype(np.int64),
            "target_f1": self.target_f1.astype(np.float64),
        }
        for k, name in enumerate(FIELDS):
            out[f"correct.{name}"] = self.correct[:, k].astype(np.int64)
        for k, name in enumerate(DISCRETE_FIELDS):
            out[f"gold.{name}"] = self.gold[:, k]
            out[f"pred.{name}"] = self.pred[:, k]
        out["issues"] = self.issues.astype(np.int64)
        return out

    @classmethod
    def from_lists(cls, data: Mapping[str, list[Any] | np.ndarray]) -> RowOutcomes:
        return cls(
            valid=np.asarray(data["valid"], dtype=bool),
            anchor_valid=np.asarray(data["anchor_valid"], dtype=bool),
            correct=np.column_stack([np.asarray(data[f"correct.{f}"], dtype=bool) for f in FIELDS]),
            target_f1=np.asarray(data["target_f1"], dtype=np.float64),
            gold=np.column_stack([np.asarray(data[f"gold.{f}"], dtype=np.int8) for f in DISCRETE_FIELDS]),
            pred=np.column_stack([np.asarray(data[f"pred.{f}"], dtype=np.int8) for f in DISCRETE_FIELDS]),
            issues=np.asarray(data["issues"], dtype=bool).reshape(-1, len(FORMAT_ISSUES)),
        )


def row_outcomes(
    parsed: Sequence[ParsedOutput], gold: Sequence[dict[str, Any]], known: np.ndarray | None = None
) -> RowOutcomes:
    """Join parsed outputs with gold records (same order) into per-row outcome arrays; `known`: the gold's
    `gold_codes` (read-only), when the caller keeps them for its references.

    Python lists first and one array each at the end: per-row writes into numpy arrays cost more than the
    join itself (a re-score runs this for every stored submission). Field correctness is compared as class
    codes, all rows at once: the codes are one-to-one with the values, and an invalid row's SENTINEL and
    T-F1 of 0 make every field of it wrong."""
    issue_index = {name: k for k, name in enumerate(FORMAT_ISSUES)}
    invalid_codes = (SENTINEL,) * len(DISCRETE_FIELDS)
    valid: list[bool] = []
    anchor_valid: list[bool] = []
    t_f1: list[float] = []
    pred_codes: list[tuple[int, ...]] = []
    issue_cells: list[tuple[int, int]] = []  # (row, issue) of each format issue
    for i, (out, ref) in enumerate(zip(parsed, gold, strict=True)):
        anchor_valid.append(out.anchor_schema_valid)
        if out.format_issues:
            issue_cells.extend((i, issue_index[issue]) for issue in out.format_issues)
        valid.append(out.schema_valid)
        if not out.schema_valid:
            t_f1.append(0.0)
            pred_codes.append(invalid_codes)
            continue
        record = out.record
        t_f1.append(_target_f1(record["target"], ref["target"]))
        pred_codes.append(_class_codes(_DISCRETE(record)))
    n = len(gold)
    issues = np.zeros((n, len(FORMAT_ISSUES)), dtype=bool)
    if issue_cells:
        issues[tuple(np.array(issue_cells).T)] = True
    f1 = np.array(t_f1, dtype=np.float64)
    pred = np.array(pred_codes, dtype=np.int8).reshape(n, len(DISCRETE_FIELDS))
    gold_array = gold_codes(gold) if known is None else known
    return RowOutcomes(
        valid=np.array(valid, dtype=bool),
        anchor_valid=np.array(anchor_valid, dtype=bool),
        correct=np.column_stack([f1 >= TARGET_MATCH_THRESHOLD, pred == gold_array]),
        target_f1=f1,
        gold=gold_array,
        pred=pred,
        issues=issues,
    )


_DISCRETE = itemgetter(*DISCRETE_FIELDS)
_CODES_OF: dict[tuple[str, ...], tuple[int, ...]] = {}  # bounded: a valid output's values are from VALUE_SETS


def _class_codes(values: tuple[str, ...]) -> tuple[int, ...]:
    """The class codes of a valid output's discrete values (DISCRETE_FIELDS order), each worked out once."""
    codes = _CODES_OF.get(values)
    if codes is None:
        codes = _CODES_OF[values] = tuple(
            CLASS_CODES[name][value] for name, value in zip(DISCRETE_FIELDS, values, strict=True)
        )
    return codes


def gold_codes(gold: Sequence[dict[str, Any]]) -> np.ndarray:
    """int8 (n, 5): each gold record's class codes, DISCRETE_FIELDS order."""
    codes = [(name, CLASS_CODES[name]) for name in DISCRETE_FIELDS]
    rows = [[code[ref[name]] for name, code in codes] for ref in gold]
    return np.array(rows, dtype=np.int8).reshape(len(gold), len(DISCRETE_FIELDS))


def _columns() -> dict[str, slice | int]:
    layout: dict[str, slice | int] = {"valid": 0, "anchor_valid": 1}
    for k, name in enumerate(FIELDS):
        layout[f"correct.{name}"] = 2 + k
    layout["jrem"] = 2 + len(FIELDS)
    layout["target_f1"] = 3 + len(FIELDS)
    start = 4 + len(FIELDS)
    for name in DISCRETE_FIELDS:
        size = len(CLASS_VALUES[name])
        for part in ("tp", "pred", "gold"):
            layout[f"{part}.{name}"] = slice(start, start + size)
            start += size
    return layout


COLUMNS = _columns()


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den elementwise, 0 where den == 0."""
    return np.asarray(np.divide(num, den, out=np.zeros(np.broadcast(num, den).shape), where=den > 0))


def metric_arrays(  # noqa: C901
    sums: np.ndarray, rows: np.ndarray, names: Sequence[str] | None = None
) -> dict[str, np.ndarray]:
    """Every metric (or only those in `names`) from column sums `sums` (k, columns) of k weightings with
    `rows` (k,) total weight. A metric's values do not depend on which others are asked for."""
    wanted = None if names is None else frozenset(names)

    def want(name: str) -> bool:
        return wanted is None or name in wanted

    out: dict[str, np.ndarray] = {}
    if want("parse_success"):
        out["parse_success"] = _ratio(sums[:, COLUMNS["valid"]], rows)
    if want("anchor_schema_valid"):
        out["anchor_schema_valid"] = _ratio(sums[:, COLUMNS["anchor_valid"]], rows)
    for name in FIELDS:
        if want(f"field_accuracy.{name}"):
            out[f"field_accuracy.{name}"] = _ratio(sums[:, COLUMNS[f"correct.{name}"]], rows)
    jrem = sums[:, COLUMNS["jrem"]]
    if want("jrem"):
        out["jrem"] = _ratio(jrem, rows)
    for key, name in (("her_c", "category"), ("her_l", "label")):
        if want(key):
            decided = sums[:, COLUMNS[f"correct.{name}"]]
            out[key] = _ratio(decided - jrem, decided)
    if want("t_f1"):
        out["t_f1"] = _ratio(sums[:, COLUMNS["target_f1"]], rows)
    for name in DISCRETE_FIELDS:
        if not want(f"macro_f1.{name}"):
            continue
        tp, pred, gold = (sums[:, COLUMNS[f"{part}.{name}"]] for part in ("tp", "pred", "gold"))
        present = gold > 0  # the classes averaged: those occurring in the gold of the rows scored
        f1 = _ratio(2 * tp, np.where(present, pred + gold, 0))
        out[f"macro_f1.{name}"] = _ratio(f1.sum(axis=1), present.sum(axis=1).astype(np.float64))
    return out


def metrics_for_rows(
    outcomes: RowOutcomes,
    mask: np.ndarray | None = None,
    matrix: np.ndarray | None = None,
    names: Sequence[str] | None = None,
) -> dict[str, float]:
    """Point estimates of every metric (or those in `names`) on the rows selected by `mask` (all rows when
    None)."""
    masks = np.ones((1, outcomes.n), dtype=bool) if mask is None else np.asarray(mask, dtype=bool)[None, :]
    return metrics_for_masks(outcomes, masks, matrix, names)[0]


def metrics_for_masks(
    outcomes: RowOutcomes,
    masks: np.ndarray,
    matrix: np.ndarray | None = None,
    names: Sequence[str] | None = None,
) -> list[dict[str, float]]:
    """`metrics_for_rows` of each row of the boolean `masks` (k, n), from one matrix product: every column
    but T-F1's sums whole numbers, exact in float64 whichever way the product adds them."""
    x = outcomes.indicator_matrix() if matrix is None else matrix
    weights = masks.astype(np.float64)
    arrays = metric_arrays(weights @ x, weights.sum(axis=1), names)
    out = []
    for k, mask in enumerate(masks):
        values = {key: float(value[k]) for key, value in arrays.items()}
        if "t_f1" in values:
            # T-F1 sums non-integers: an exactly rounded sum, so that row order never changes the result.
            selected = outcomes.target_f1[mask]
            values["t_f1"] = math.fsum(selected.tolist()) / len(selected) if len(selected) else 0.0
        out.append(values)
    return out


def nest(flat: dict[str, float]) -> dict[str, Any]:
    """{"field_accuracy.label": x} -> {"field_accuracy": {"label": x}} (one level of dots)."""
    out: dict[str, Any] = {}
    for key, value in flat.items():
        head, _, tail = key.partition(".")
        if tail:
            out.setdefault(head, {})[tail] = value
        else:
            out[head] = value
    return out


def overall_metrics(outcomes: RowOutcomes, matrix: np.ndarray | None = None) -> dict[str, Any]:
    """The `metrics` block of the result (spec §3 / ARCHITECTURE §2)."""
    return nest(metrics_for_rows(outcomes, matrix=matrix))


def format_issue_counts(outcomes: RowOutcomes) -> dict[str, int]:
    counts = outcomes.issues.sum(axis=0)
    return {name: int(counts[k]) for k, name in enumerate(FORMAT_ISSUES)}


def subset_metrics(
    outcomes: RowOutcomes, rows: np.ndarray, matrix: np.ndarray | None = None
) -> dict[str, Any]:
    """Every metric on a subset's rows, plus JREM on its gold-有害 and gold-无害 rows and their gap."""
    return subsets_metrics(outcomes, {"": rows}, matrix)[""]


def subsets_metrics(
    outcomes: RowOutcomes, subsets: Mapping[str, np.ndarray], matrix: np.ndarray | None = None
) -> dict[str, dict[str, Any]]:
    """`subset_metrics` of each named subset (row indices), the metrics of all of them from one product."""
    x = outcomes.indicator_matrix() if matrix is None else matrix
    masks = np.zeros((len(subsets), outcomes.n), dtype=bool)
    for k, rows in enumerate(subsets.values()):
        masks[k, rows] = True
    jrem_col = x[:, COLUMNS["jrem"]]
    cells = {}
    for name, mask, values in zip(subsets, masks, metrics_for_masks(outcomes, masks, x), strict=True):
        harmful = mask & outcomes.harmful
        non_harmful = mask & ~outcomes.harmful
        n_harmful, n_non_harmful = int(harmful.sum()), int(non_harmful.sum())
        jrem_h = int(jrem_col[harmful].sum()) / n_harmful if n_harmful else None
        jrem_n = int(jrem_col[non_harmful].sum()) / n_non_harmful if n_non_harmful else None
        out = nest(values)
        counts = outcomes.issues[mask].sum(axis=0)  # spec §3: "every metric above", format-issue counts too
        out.update(
            {
                "format_issues": {issue: int(counts[k]) for k, issue in enumerate(FORMAT_ISSUES)},
                "rows": int(mask.sum()),
                "rows_harmful": n_harmful,
                "rows_non_harmful": n_non_harmful,
                "jrem_harmful": jrem_h,
                "jrem_non_harmful": jrem_n,
                "jrem_gap": jrem_h - jrem_n if jrem_h is not None and jrem_n is not None else None,
            }
        )
        cells[name] = out
    return cells


# Counts that do not depend on the gold labels' values per row (sizes, format issues of the outputs).
_SUBSET_COUNTS = ("rows", "rows_harmful", "rows_non_harmful", "format_issues", "withheld")


def withheld_subset(cell: dict[str, Any], reason: str) -> dict[str, Any]:
    """A subset cell with every metric withheld (its counts stay)."""
    return withhold(cell, [k for k in cell if k not in _SUBSET_COUNTS], reason)


def disclosed_subset(cell: dict[str, Any]) -> dict[str, Any]:
    """The publishable form of a subset cell (`scoring.disclosure`): a subset under MIN_CELL_ROWS rows
    shows no metric; the gold-有害 / gold-无害 JREM (groups defined by the label) and their gap are shown
    only when their own group reaches MIN_CELL_ROWS rows. `withheld` names what was left out and why."""
    if small_cell(cell["rows"]):
        return withheld_subset(cell, SMALL_CELL)
    small = [
        key
        for key, n in (("jrem_harmful", "rows_harmful"), ("jrem_non_harmful", "rows_non_harmful"))
        if small_cell(cell[n])
    ]
    if not small:
        return {**cell, "withheld": None}
    names = " and ".join(k.removeprefix("jrem_").replace("_", "-") for k in small)
    return withhold(cell, [*small, "jrem_gap"], f"{names} JREM {SMALL_CELL}")


def resampled_metrics(
    outcomes: RowOutcomes,
    counts: np.ndarray,
    names: Sequence[str] = HEADLINE_CI_METRICS,
    matrix: np.ndarray | None = None,
    running: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Every metric in `names` for each bootstrap resample, given the row-count matrix (resamples, n) and
    optionally its running sums (`scoring.bootstrap.resample_running_table`: the same values, faster)."""
    x = outcomes.indicator_matrix() if matrix is None else matrix
    sums = weighted_sums(counts, x, running)
    values = metric_arrays(sums, counts.sum(axis=1))
    return {name: values[name] for name in names}
