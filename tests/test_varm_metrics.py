"""VARM metrics (spec §3) on hand-worked cases, plus properties (row order, scikit-learn equality)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import f1_score

from scoring.protocol import DISCRETE_FIELDS, FORMAT_ISSUES, parse_output
from scoring.varm_metrics import (
    CLASS_VALUES,
    SENTINEL,
    RowOutcomes,
    format_issue_counts,
    gold_target,
    metrics_for_rows,
    normalise_target,
    overall_metrics,
    row_outcomes,
    subset_metrics,
    target_f1,
)
from tests.varm_factory import HARMFUL_GROUP, HARMFUL_SINGLE, NO_TARGET_ROW, QUOTED, output

# --- target match -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pred", "gold", "expected"),
    [
        ("楼主", "楼主", 1.0),
        ("", "", 1.0),
        ("  ", "\t", 1.0),  # both empty after whitespace removal
        ("楼主", "", 0.0),
        ("", "楼主", 0.0),
        ("程序员", "产品经理", 0.0),
        ("Ab C", "abc", 1.0),  # lower-case, all whitespace deleted
        ("楼主大人", "楼主", 2 * 0.5 * 1.0 / 1.5),  # P = 2/4, R = 2/2
        ("aab", "ab", 2 * (2 / 3) * 1.0 / (2 / 3 + 1.0)),  # multiset: common = 2
        ("ab", "ba", 1.0),  # order does not matter
        ("a", "abcd", 0.4),
    ],
)
def test_target_f1(pred: str, gold: str, expected: float) -> None:
    assert target_f1(pred, gold) == expected


def test_target_f1_at_threshold_is_exactly_half() -> None:
    # P = 1, R = 1/3: "F1 as usual" gives exactly 0.5 in floating point here, so the target is correct.
    assert target_f1("a", "abc") == 0.5
    assert target_f1("ab", "bc") == 0.5


def test_normalise_target_deletes_unicode_whitespace() -> None:
    assert normalise_target(" 楼\u3000主\n A ") == "楼主a"


def test_gold_target_rule() -> None:  # the validator's reading, used by the reference checker only
    assert gold_target({"target": "", "target_type": "无明确对象"}) == "无明确对象"
    assert gold_target({"target": "  ", "target_type": "无明确对象"}) == "无明确对象"
    assert gold_target({"target": "", "target_type": "群体对象"}) == ""
    assert gold_target({"target": "楼主", "target_type": "单一对象"}) == "楼主"


# --- a hand-worked five-row case ----------------------------------------------------------------------

R5 = {
    "target": "程序员",
    "target_type": "群体对象",
    "target_explicitness": "隐含",
    "stance": "攻击或认同",
    "label": "有害",
    "category": "阶层职业攻击",
}
GOLD = [HARMFUL_GROUP, HARMFUL_SINGLE, QUOTED, {**NO_TARGET_ROW, "target": ""}, R5]
OUTPUTS = [
    output(HARMFUL_GROUP),  # all correct
    output({**HARMFUL_SINGLE, "target": "楼主大人", "target_explicitness": "隐含"}),  # target ok, TT wrong
    output(QUOTED).replace("[", "【").replace("]", "】"),  # invalid: every field wrong
    output(NO_TARGET_ROW),  # target wrong: a blank gold target is never correct (spec §1); the rest right
    output({**R5, "target": "产品经理"}),  # target wrong (no common character), rest right
]


@pytest.fixture(scope="module")
def outcomes() -> RowOutcomes:
    return row_outcomes([parse_output(o) for o in OUTPUTS], GOLD)


def test_hand_worked_metrics(outcomes: RowOutcomes) -> None:
    m = overall_metrics(outcomes)
    assert m["field_accuracy"] == {
        "target": 0.4,
        "target_type": 0.8,
        "target_explicitness": 0.6,
        "stance": 0.8,
        "label": 0.8,
        "category": 0.8,
    }
    assert m["jrem"] == 0.2
    assert m["her_c"] == 0.75  # (4 category-correct - 1 JREM) / 4
    assert m["her_l"] == 0.75
    assert m["t_f1"] == pytest.approx((1 + 2 / 3 + 0 + 0 + 0) / 5, rel=1e-15)
    assert m["parse_success"] == 0.8
    assert m["anchor_schema_valid"] == 0.8
    assert m["macro_f1"]["label"] == (2 / 3 + 1) / 2  # 无害: TP1 P1 G2; 有害: perfect
    assert m["macro_f1"]["category"] == pytest.approx((1 + 1 + 2 / 3 + 1) / 4)
    assert m["macro_f1"]["target_type"] == pytest.approx((0.8 + 1 + 1) / 3)
    assert m["macro_f1"]["target_explicitness"] == pytest.approx((0.5 + 1 + 2 / 3) / 3)
    assert m["macro_f1"]["stance"] == pytest.approx((1 + 0 + 1) / 3)  # 引用或转述 never predicted


def test_hand_worked_macro_f1_equals_sklearn_exactly(outcomes: RowOutcomes) -> None:
    m = overall_metrics(outcomes)
    for name in DISCRETE_FIELDS:
        gold = [g[name] for g in GOLD]
        pred = [
            parse_output(o).record.get(name, "<invalid>") if parse_output(o).schema_valid else "<invalid>"
            for o in OUTPUTS
        ]
        expected = f1_score(gold, pred, labels=sorted(set(gold)), average="macro", zero_division=0)
        assert m["macro_f1"][name] == float(expected), name


def test_format_issue_counts_list_every_issue(outcomes: RowOutcomes) -> None:
    counts = format_issue_counts(outcomes)
    assert list(counts) == list(FORMAT_ISSUES)
    assert counts["anchor_sequence_or_value_invalid"] == 1
    assert sum(counts.values()) == 1
    assert all(type(v) is int for v in counts.values())


def test_invalid_row_counts_wrong_even_with_right_values() -> None:
    raw = output(HARMFUL_GROUP).replace("分析：", "分析:")  # right values, missing prefix
    single = row_outcomes([parse_output(raw)], [HARMFUL_GROUP])
    m = overall_metrics(single)
    assert m["jrem"] == 0.0 and m["parse_success"] == 0.0 and m["anchor_schema_valid"] == 1.0
    assert all(v == 0.0 for v in m["field_accuracy"].values())
    assert m["t_f1"] == 0.0
    assert single.pred[0].tolist() == [SENTINEL] * 5


def test_her_is_zero_when_nothing_is_decision_correct() -> None:
    single = row_outcomes([parse_output("garbage")], [HARMFUL_GROUP])
    assert overall_metrics(single)["her_c"] == 0.0
    assert overall_metrics(single)["her_l"] == 0.0


def test_blank_gold_target_is_never_correct_in_scoring() -> None:
    """Spec §1 (2026-12): the gold target as written (the authors' evaluate.py), not the validator's
    reading."""
    gold = {**NO_TARGET_ROW, "target": " "}
    blank = row_outcomes([parse_output(output(NO_TARGET_ROW))], [gold])
    assert not blank.correct[0, 0] and blank.target_f1[0] == 0.0 and blank.correct[0, 1:].all()
    filled = row_outcomes([parse_output(output(NO_TARGET_ROW))], [NO_TARGET_ROW])
    assert filled.correct[0].all() and filled.target_f1[0] == 1.0


def test_subset_metrics_and_gap(outcomes: RowOutcomes) -> None:
    s = subset_metrics(outcomes, np.array([0, 2]))
    assert (s["rows"], s["rows_harmful"], s["rows_non_harmful"]) == (2, 1, 1)
    assert (s["jrem"], s["jrem_harmful"], s["jrem_non_harmful"], s["jrem_gap"]) == (0.5, 1.0, 0.0, 1.0)
    assert s["field_accuracy"]["label"] == 0.5
    assert s["macro_f1"]["label"] == (0 + 1) / 2  # 无害 class: TP 0; 有害: perfect
    assert s["format_issues"] == {**dict.fromkeys(FORMAT_ISSUES, 0), "anchor_sequence_or_value_invalid": 1}
    only_harmful = subset_metrics(outcomes, np.array([0, 1]))
    assert only_harmful["jrem_non_harmful"] is None and only_harmful["jrem_gap"] is None
    assert only_harmful["jrem_harmful"] == 0.5


def test_values_are_plain_python_numbers(outcomes: RowOutcomes) -> None:
    def walk(value: object) -> None:
        if isinstance(value, dict):
            for v in value.values():
                walk(v)
        else:
            assert value is None or type(value) in (int, float), type(value)

    walk(overall_metrics(outcomes))
    walk(subset_metrics(outcomes, np.array([0, 3])))


def test_row_outcomes_round_trip_through_lists(outcomes: RowOutcomes) -> None:
    again = RowOutcomes.from_lists(outcomes.to_lists())
    assert metrics_for_rows(again) == metrics_for_rows(outcomes)


# --- properties -------------------------------------------------------------------------------------


@st.composite
def random_outcomes(draw: st.DrawFn, min_rows: int = 1) -> RowOutcomes:
    n = draw(st.integers(min_rows, 60))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    valid = rng.random(n) < 0.8
    sizes = [len(CLASS_VALUES[f]) for f in DISCRETE_FIELDS]
    gold = np.column_stack([rng.integers(0, k, n) for k in sizes]).astype(np.int8)
    pred = np.column_stack([rng.integers(0, k, n) for k in sizes]).astype(np.int8)
    pred[~valid] = SENTINEL
    t_f1 = np.where(valid, rng.random(n), 0.0)
    correct = np.column_stack([valid & (t_f1 >= 0.5), pred == gold])
    return RowOutcomes(
        valid=valid,
        anchor_valid=valid | (rng.random(n) < 0.5),
        correct=correct,
        target_f1=t_f1,
        gold=gold,
        pred=pred,
        issues=rng.random((n, len(FORMAT_ISSUES))) < 0.1,
    )


def _permute(o: RowOutcomes, order: np.ndarray) -> RowOutcomes:
    return RowOutcomes(
        o.valid[order],
        o.anchor_valid[order],
        o.correct[order],
        o.target_f1[order],
        o.gold[order],
        o.pred[order],
        o.issues[order],
    )


@settings(max_examples=60, deadline=None)
@given(random_outcomes(), st.randoms(use_true_random=False))
def test_row_order_never_changes_a_metric(o: RowOutcomes, rnd) -> None:
    order = np.arange(o.n)
    rnd.shuffle(order)
    shuffled = _permute(o, order)
    assert metrics_for_rows(shuffled) == metrics_for_rows(o)
    assert format_issue_counts(shuffled) == format_issue_counts(o)
    rows = np.arange(0, o.n, 2)
    inverse = np.argsort(order)
    assert subset_metrics(shuffled, inverse[rows]) == subset_metrics(o, rows)


@settings(max_examples=100, deadline=None)
@given(random_outcomes())
def test_macro_f1_equals_sklearn(o: RowOutcomes) -> None:
    m = metrics_for_rows(o)
    for k, name in enumerate(DISCRETE_FIELDS):
        values = CLASS_VALUES[name]
        gold = [values[c] for c in o.gold[:, k]]
        pred = [values[c] if c != SENTINEL else "<invalid>" for c in o.pred[:, k]]
        expected = f1_score(gold, pred, labels=sorted(set(gold)), average="macro", zero_division=0)
        assert m[f"macro_f1.{name}"] == float(expected), name
