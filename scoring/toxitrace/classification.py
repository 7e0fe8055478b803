"""Binary classification metrics (positive class 1), point estimates and bootstrap replicates.

Formulas are chosen so the floats equal scikit-learn's bit for bit (the spec binds us to
``accuracy_score``, ``precision_recall_fscore_support(average="binary", zero_division=0)`` and
``f1_score(average="macro", labels=[0, 1], zero_division=0)``):

- accuracy  = (TP + TN) / n
- precision = TP / (TP + FP), recall = TP / (TP + FN)
- F1        = 2 TP / (2 TP + FP + FN)   (sklearn's form; the card's 2PR/(P+R) can differ in the last bit)
- macro-F1  = (F1 of class 0 + F1 of class 1) / 2, both classes always averaged
Every ratio is 0 when its denominator is 0 (the spec's rule, kept so values equal the reference
implementation); `undefined_metrics` names each such case so a reader is never shown a 0 that is not a
measurement as if it were one (sklearn's `zero_division` is a named policy, not a silent 0).
The seed card's ``compute_classification_metrics`` computes accuracy as (n - FP) / n, counting false
negatives as correct; we follow the spec instead.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

METRICS = ("accuracy", "precision", "recall", "f1", "macro_f1")


def as_labels(values: ArrayLike) -> np.ndarray:
    """A 0/1 int8 array (callers have already validated the labels)."""
    return np.asarray(values, dtype=np.int8)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


def metrics_from_counts(tp: ArrayLike, fp: ArrayLike, fn: ArrayLike, tn: ArrayLike) -> dict[str, np.ndarray]:
    """All five metrics from confusion counts; counts may be scalars or arrays (one per replicate)."""
    tp, fp, fn, tn = (np.asarray(x, dtype=np.int64) for x in (tp, fp, fn, tn))
    f1_pos = _ratio(2 * tp, 2 * tp + fp + fn)
    f1_neg = _ratio(2 * tn, 2 * tn + fn + fp)  # class 0 as positive: its TP is TN, FP is FN, FN is FP
    return {
        "accuracy": _ratio(tp + tn, tp + fp + fn + tn),
        "precision": _ratio(tp, tp + fp),
        "recall": _ratio(tp, tp + fn),
        "f1": f1_pos,
        "macro_f1": (f1_neg + f1_pos) / 2,
    }


ZERO_DIVISION = "0 by the protocol's zero-division rule"


def undefined_metrics(tp: int, fp: int, fn: int, tn: int) -> dict[str, str]:
    """``{metric: reason}`` for every metric whose denominator is 0 on these counts; the value stays 0.

    F1 = 2TP / (2TP + FP + FN) is a real 0 when there are positive items but no positive predictions
    (sklearn warns only when the denominator itself is 0), so it is named only when both sides are empty.
    Macro-F1 is named when the F1 of either class is 0/0: that 0 enters the mean."""
    out: dict[str, str] = {}
    if tp + fp + fn + tn == 0:
        out["accuracy"] = f"no rows; {ZERO_DIVISION}"
    if tp + fp == 0:
        out["precision"] = f"TP + FP = 0: no positive predictions; {ZERO_DIVISION}"
    if tp + fn == 0:
        out["recall"] = f"TP + FN = 0: no positive items; {ZERO_DIVISION}"
    if 2 * tp + fp + fn == 0:
        out["f1"] = f"2TP + FP + FN = 0: no positive items and no positive predictions; {ZERO_DIVISION}"
    empty = [label for label, den in ((0, 2 * tn + fn + fp), (1, 2 * tp + fp + fn)) if den == 0]
    if empty:
        out["macro_f1"] = (
            f"F1 of class {empty[0]} is 0/0 (no item and no prediction of that class) and "
            f"counts as 0 in the mean; {ZERO_DIVISION}"
        )
    return out


def undefined_binary(gold: ArrayLike, pred: ArrayLike) -> dict[str, str]:
    """`undefined_metrics` of the confusion counts of two 0/1 arrays."""
    return undefined_metrics(*confusion(gold, pred))


def confusion(gold: ArrayLike, pred: ArrayLike) -> tuple[int, int, int, int]:
    """(TP, FP, FN, TN) for 0/1 arrays."""
    is_gold = as_labels(gold).astype(bool)
    is_pred = as_labels(pred).astype(bool)
    tp = int(np.count_nonzero(is_gold & is_pred))
    fp = int(np.count_nonzero(~is_gold & is_pred))
    fn = int(np.count_nonzero(is_gold & ~is_pred))
    return tp, fp, fn, len(is_gold) - tp - fp - fn


def binary_metrics(gold: ArrayLike, pred: ArrayLike) -> dict[str, float]:
    """Point estimates as plain Python floats."""
    return {k: float(v) for k, v in metrics_from_counts(*confusion(gold, pred)).items()}


def bootstrap_counts(gold: ArrayLike, pred: ArrayLike, idx: np.ndarray) -> tuple[np.ndarray, ...]:
    """(TP, FP, FN, TN) per replicate; ``idx`` is a (B, n) matrix of row indices."""
    # One outcome code per row (0=TN, 1=FP, 2=FN, 3=TP) so each replicate is a single gather.
    code = (as_labels(gold) * 2 + as_labels(pred)).astype(np.int8)
    sampled = code[np.asarray(idx)]
    tn, fp, fn, tp = (np.count_nonzero(sampled == k, axis=-1) for k in range(4))
    return tp, fp, fn, tn


def bootstrap_metrics(gold: ArrayLike, pred: ArrayLike, idx: np.ndarray) -> dict[str, np.ndarray]:
    """Every metric for each bootstrap replicate (arrays of length B)."""
    return metrics_from_counts(*bootstrap_counts(gold, pred, idx))
