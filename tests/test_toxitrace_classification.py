"""ToxiTrace classification metrics equal scikit-learn's, bit for bit, on random data."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, f1_score, precision_recall_fscore_support

from scoring.toxitrace.classification import (
    binary_metrics,
    bootstrap_metrics,
    confusion,
    metrics_from_counts,
)

pairs = st.integers(min_value=1, max_value=300).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 1), min_size=n, max_size=n),
        st.lists(st.integers(0, 1), min_size=n, max_size=n),
    )
)


def sklearn_metrics(gold, pred) -> dict[str, float]:
    p, r, f, _ = precision_recall_fscore_support(gold, pred, average="binary", zero_division=0)
    return {
        "accuracy": float(accuracy_score(gold, pred)),
        "precision": float(p),
        "recall": float(r),
        "f1": float(f),
        # labels=[0, 1]: the spec averages both classes even when one is absent from gold and pred
        "macro_f1": float(f1_score(gold, pred, average="macro", labels=[0, 1], zero_division=0)),
    }


@settings(max_examples=300, deadline=None)
@given(pairs)
def test_equals_sklearn_exactly(data):
    gold, pred = data
    ours = binary_metrics(gold, pred)
    assert ours == sklearn_metrics(gold, pred)
    assert all(type(v) is float for v in ours.values())


@settings(max_examples=100, deadline=None)
@given(pairs)
def test_card_recipe_agrees_up_to_rounding(data):
    """The card's F1 = 2PR/(P+R) and its precision/recall agree with ours (F1 up to the last bits)."""
    gold, pred = data
    tp = sum(1 for p, g in zip(pred, gold, strict=True) if p == 1 and g == 1)
    fp = sum(1 for p, g in zip(pred, gold, strict=True) if p == 1 and g == 0)
    fn = sum(1 for p, g in zip(pred, gold, strict=True) if p == 0 and g == 1)
    p = tp / (tp + fp) if tp + fp else 0
    r = tp / (tp + fn) if tp + fn else 0
    f1 = 2 * p * r / (p + r) if p + r else 0
    ours = binary_metrics(gold, pred)
    assert ours["precision"] == p and ours["recall"] == r
    assert ours["f1"] == pytest.approx(f1, rel=1e-12, abs=0)


def test_card_accuracy_bug_is_not_copied():
    """The card computes (n - FP) / n; false negatives must count as errors."""
    gold, pred = [1, 1, 0, 0], [0, 0, 0, 0]
    assert binary_metrics(gold, pred)["accuracy"] == 0.5


def test_single_class_macro_averages_both_classes():
    m = binary_metrics([0, 0, 0], [0, 0, 0])
    assert m == {"accuracy": 1.0, "precision": 0.0, "recall": 0.0, "f1": 0.0, "macro_f1": 0.5}
    m = binary_metrics([1, 1], [1, 1])
    assert m["f1"] == 1.0 and m["macro_f1"] == 0.5


def test_hand_worked():
    gold = [1, 1, 1, 0, 0, 0, 0, 1]
    pred = [1, 1, 0, 1, 0, 0, 0, 0]
    assert confusion(gold, pred) == (2, 1, 2, 3)
    m = binary_metrics(gold, pred)
    assert m["accuracy"] == 5 / 8
    assert m["precision"] == 2 / 3
    assert m["recall"] == 2 / 4
    assert m["f1"] == 4 / 7
    assert m["macro_f1"] == (4 / 7 + 6 / 9) / 2


@settings(max_examples=50, deadline=None)
@given(pairs, st.integers(0, 2**32 - 1))
def test_bootstrap_replicates_equal_pointwise_metrics(data, seed):
    gold, pred = np.array(data[0]), np.array(data[1])
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(gold), size=(7, len(gold)))
    boot = bootstrap_metrics(gold, pred, idx)
    for b in range(idx.shape[0]):
        expected = binary_metrics(gold[idx[b]], pred[idx[b]])
        assert {k: float(v[b]) for k, v in boot.items()} == expected


def test_counts_vectorised_zero_denominators():
    m = metrics_from_counts([0, 3], [0, 1], [0, 0], [5, 0])
    assert m["precision"].tolist() == [0.0, 0.75]
    assert m["f1"].tolist() == [0.0, 6 / 7]
