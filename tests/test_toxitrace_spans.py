"""Span parsing and span metrics on hand-worked cases."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring.toxitrace.spans import (
    SpanCounts,
    bootstrap_span_metrics,
    index_set,
    merge_spans,
    parse_spans,
    recipe_overlap,
    span_metrics,
)

TEXT = "你这个人真是蠢到家了，滚吧"  # 13 code points


def metrics(gold, pred):
    return span_metrics(SpanCounts.from_spans(gold, pred))


# --- parsing ---------------------------------------------------------------------------------------


def test_offsets_and_strings_mixed():
    spans, problems = parse_spans([[6, 8], "滚吧"], TEXT)
    assert problems == []
    assert spans == ((6, 8), (11, 13))


def test_string_span_first_occurrence():
    spans, problems = parse_spans(["ab"], "xxabyyab")
    assert problems == [] and spans == ((2, 4),)


def test_offsets_are_code_points_not_bytes_or_utf16():
    text = "😀傻瓜"  # the emoji is one code point (two UTF-16 units, four UTF-8 bytes)
    spans, problems = parse_spans(["傻瓜"], text)
    assert spans == ((1, 3),) and problems == []
    assert parse_spans([[1, 3]], text) == (((1, 3),), [])


def test_merging_overlapping_and_adjacent():
    assert merge_spans([(5, 8), (0, 2), (2, 4), (7, 10)]) == ((0, 4), (5, 10))
    spans, problems = parse_spans([[0, 3], [2, 5], "真是"], TEXT)
    assert problems == [] and spans == ((0, 6),)
    assert merge_spans([(0, 2), (3, 4)]) == ((0, 2), (3, 4))  # a gap of one keeps them apart


def test_empty_list_is_no_span():
    assert parse_spans([], TEXT) == ((), [])


@pytest.mark.parametrize(
    ("value", "field", "words"),
    [
        ("蠢", "spans", "must be a list"),
        (None, "spans", "null"),
        ({"start": 0}, "spans", "an object"),
        ([[0, 99]], "spans[0]", "outside the text, which has 13 characters"),
        ([[-1, 2]], "spans[0]", "outside the text"),
        ([[3, 3]], "spans[0]", "end must be greater than start"),
        ([[4, 2]], "spans[0]", "end must be greater than start"),
        ([[0.0, 2]], "spans[0]", "whole numbers"),
        ([["0", "2"]], "spans[0]", "whole numbers"),
        ([[True, 2]], "spans[0]", "whole numbers"),
        ([[0, 1, 2]], "spans[0]", "two numbers"),
        ([[0, 1], "不存在"], "spans[1]", "does not occur"),
        ([""], "spans[0]", "empty string"),
        ([7], "spans[0]", "[start, end] or a string"),
    ],
)
def test_bad_spans(value, field, words):
    _, problems = parse_spans(value, TEXT)
    assert len(problems) == 1
    assert problems[0][0] == field
    assert words in problems[0][1]


def test_every_bad_item_reported():
    _, problems = parse_spans([[0, 99], "不存在", [1, 2]], TEXT)
    assert [f for f, _ in problems] == ["spans[0]", "spans[1]"]


# --- metrics ---------------------------------------------------------------------------------------


def test_both_empty_everywhere_gives_zeros():
    assert set(metrics([(), ()], [(), ()]).values()) == {0.0}


def test_empty_gold_item_counts_only_for_precision():
    # item 0: gold empty, prediction non-empty -> a precision miss, no recall denominator
    # item 1: perfect
    m = metrics([(), ((0, 4),)], [((0, 2),), ((0, 4),)])
    assert m["overlap_recall"] == 1.0
    assert m["overlap_precision"] == 0.5
    assert m["overlap_f1"] == 2 * 0.5 * 1.0 / 1.5
    assert m["recipe_overlap"] == 0.5  # denominator: all items, including the empty-gold one
    assert m["char_precision"] == 4 / 6 and m["char_recall"] == 1.0
    assert m["iou"] == (0.0 + 1.0) / 2


def test_empty_prediction_item_counts_only_for_recall():
    m = metrics([((0, 4),), ((0, 2),)], [(), ((0, 2),)])
    assert m["overlap_recall"] == 0.5
    assert m["overlap_precision"] == 1.0
    assert m["iou"] == 0.5
    assert m["char_recall"] == 2 / 6 and m["char_precision"] == 1.0


def test_exactly_half_is_not_enough():
    # gold 4 chars, prediction covers 2 of them: 2/4 = 0.5, not > 0.5
    m = metrics([((0, 4),)], [((0, 2),)])
    assert m["overlap_recall"] == 0.0
    assert m["overlap_precision"] == 1.0  # all 2 predicted chars are gold
    assert m["recipe_overlap"] == 0.0
    # just above: 3 of 4
    m = metrics([((0, 4),)], [((0, 3),)])
    assert m["overlap_recall"] == 1.0 and m["recipe_overlap"] == 1.0


def test_precision_side_exactly_half():
    # prediction 6 chars, 3 of them gold: precision overlap 0.5, not counted; recall 3/3 counted
    m = metrics([((0, 3),)], [((0, 6),)])
    assert m["overlap_recall"] == 1.0 and m["overlap_precision"] == 0.0
    m = metrics([((0, 3),)], [((0, 5),)])  # 3/5 > 0.5
    assert m["overlap_precision"] == 1.0


def test_recipe_differs_from_overlap_f1():
    # Four items: two with gold spans (both found), two without (model correctly marks nothing).
    gold = [((0, 2),), ((3, 6),), (), ()]
    pred = [((0, 2),), ((3, 6),), (), ()]
    m = metrics(gold, pred)
    assert m["overlap_f1"] == 1.0
    assert m["recipe_overlap"] == 0.5  # empty-gold items sit in the card's denominator
    assert recipe_overlap([index_set(p) for p in pred], [index_set(g) for g in gold]) == 0.5


def test_char_level_and_iou_hand_worked():
    gold = [((0, 4),), ((2, 5),)]
    pred = [((2, 6),), ((2, 5),)]
    m = metrics(gold, pred)
    # item 0: |G|=4 |P|=4 inter=2 union=6; item 1: 3, 3, 3, 3
    assert m["char_precision"] == 5 / 7 and m["char_recall"] == 5 / 7
    assert m["char_f1"] == pytest.approx(5 / 7, abs=1e-15)
    assert m["iou"] == (2 / 6 + 1.0) / 2


spans_strategy = st.lists(
    st.tuples(st.integers(0, 20), st.integers(1, 6)).map(lambda t: (t[0], t[0] + t[1])), max_size=3
)
items = st.lists(st.tuples(spans_strategy, spans_strategy), min_size=1, max_size=40)


@settings(max_examples=200, deadline=None)
@given(items)
def test_recipe_overlap_equals_card_function(data):
    gold = [merge_spans(g) for g, _ in data]
    pred = [merge_spans(p) for _, p in data]
    card = recipe_overlap([sorted(index_set(p)) for p in pred], [sorted(index_set(g)) for g in gold])
    assert metrics(gold, pred)["recipe_overlap"] == card


@settings(max_examples=50, deadline=None)
@given(items, st.integers(0, 2**32 - 1))
def test_bootstrap_replicates_match_pointwise(data, seed):
    gold = [merge_spans(g) for g, _ in data]
    pred = [merge_spans(p) for _, p in data]
    counts = SpanCounts.from_spans(gold, pred)
    idx = np.random.default_rng(seed).integers(0, len(gold), size=(5, len(gold)))
    boot = bootstrap_span_metrics(counts, idx)
    for b in range(5):
        expected = metrics([gold[i] for i in idx[b]], [pred[i] for i in idx[b]])
        for key, value in expected.items():
            assert float(boot[key][b]) == pytest.approx(value, rel=1e-12, abs=1e-15), key


@settings(max_examples=300, deadline=None)
@given(items)
def test_counts_equal_index_set_sizes(data):
    counts = SpanCounts.from_spans([g for g, _ in data], [p for _, p in data])  # unmerged input is fine
    for k, (g, p) in enumerate(data):
        gs, ps = index_set(g), index_set(p)
        assert (counts.gold[k], counts.pred[k], counts.inter[k]) == (len(gs), len(ps), len(gs & ps))


def test_recipe_equals_overlap_recall_when_every_item_has_gold():
    gold = [((0, 4),), ((2, 5),), ((0, 1),)]
    pred = [((0, 3),), (), ((0, 9),)]
    m = metrics(gold, pred)
    assert m["recipe_overlap"] == m["overlap_recall"] == 2 / 3
