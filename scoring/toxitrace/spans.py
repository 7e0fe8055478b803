"""Toxic spans: parsing against an item's text, index sets, and the span metrics of the spec (§2).

A span is ``[start, end]`` -- code-point offsets, end exclusive, ``0 <= start < end <= len(text)`` -- or a
non-empty string, located at its FIRST occurrence in the text (so a string that occurs twice always marks
the first place; give offsets to mark another). Both forms may be mixed in one list. Overlapping and
adjacent spans are merged into maximal runs: metrics only ever see the set of character indices covered,
so merging is a normalisation, not a change of meaning, and is never an error.

Per item i, G_i / P_i are the gold / predicted index sets:

- overlap recall    = share of items with G_i non-empty where |P∩G| / |G| > 0.5 (strictly)
- overlap precision = share of items with P_i non-empty where |P∩G| / |P| > 0.5 (strictly)
- overlap F1        = 2PR / (P + R)
- recipe_overlap    = (items with G_i non-empty and |P∩G| / |G| > 0.5) / ALL items -- the seed card's
  ``compute_overlap_f1``, reported under its own name so published numbers can be compared
- char P / R / F1   = micro: Σ|P∩G| / Σ|P|, Σ|P∩G| / Σ|G|, 2PR / (P + R)
- IoU               = mean over items with G ∪ P non-empty of |P∩G| / |P∪G|
Every ratio is 0 when its denominator is 0 (`undefined_span_metrics` names those cases).
"> 0.5" is tested as 2|P∩G| > |G| in integers: no rounding.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from ..bootstrap import resample_counts, weighted_sums
from ..jsonl import describe_found
from .classification import ZERO_DIVISION

Span = tuple[int, int]

SPAN_METRICS = (
    "overlap_precision",
    "overlap_recall",
    "overlap_f1",
    "recipe_overlap",
    "char_precision",
    "char_recall",
    "char_f1",
    "iou",
)

SPAN_FORMS = "a list of spans, each [start, end] (whole numbers) or a string found in the text; [] for none"


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)  # bool is an int subclass


def merge_spans(spans: Iterable[Span]) -> tuple[Span, ...]:
    """Sorted maximal runs: overlapping or touching ([0, 2] and [2, 4]) spans become one."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return tuple((s, e) for s, e in merged)


def parse_spans(  # noqa: C901
    value: object, text: str, *, field: str = "spans"
) -> tuple[tuple[Span, ...], list[tuple[str, str]]]:
    """Normalise a ``spans`` value against ``text``.

    Returns the merged spans and a list of ``(field, message)`` problems (e.g. ``("spans[2]", ...)``).
    Messages describe the submitted value and the public text length only, never gold.
    """
    if not isinstance(value, list):
        return (), [(field, f"must be {SPAN_FORMS}; got {describe_found(value)}")]
    spans: list[Span] = []
    problems: list[tuple[str, str]] = []
    n = len(text)
    for k, item in enumerate(value):
        where = f"{field}[{k}]"
        if isinstance(item, str):
            if not item:
                problems.append((where, "an empty string is not a span"))
                continue
            start = text.find(item)
            if start < 0:
                problems.append((where, "this span string does not occur in the item's text"))
                continue
            spans.append((start, start + len(item)))
        elif isinstance(item, list):
            if len(item) != 2:
                problems.append((where, f"a span is [start, end], two numbers; got a list of {len(item)}"))
                continue
            start, end = item
            if not (_is_int(start) and _is_int(end)):
                problems.append(
                    (
                        where,
                        "start and end must be whole numbers written without quotes or decimals, "
                        f"got [{describe_found(start)}, {describe_found(end)}]",
                    )
                )
                continue
            if end <= start:
                problems.append((where, f"end must be greater than start; got [{start}, {end}]"))
                continue
            if start < 0 or end > n:
                problems.append(
                    (
                        where,
                        f"offsets [{start}, {end}] fall outside the text, which has {n} characters "
                        "(code points; end is exclusive)",
                    )
                )
                continue
            spans.append((start, end))
        else:
            problems.append((where, f"each span is [start, end] or a string; got {describe_found(item)}"))
    return merge_spans(spans), problems


def index_set(spans: Iterable[Span]) -> frozenset[int]:
    """The character indices a span list covers."""
    return frozenset(i for start, end in spans for i in range(start, end))


@dataclass(frozen=True)
class SpanCounts:
    """Per-item sizes |G_i|, |P_i|, |P_i ∩ G_i| (int64 arrays); every span metric is a function of these."""

    gold: np.ndarray
    pred: np.ndarray
    inter: np.ndarray

    @classmethod
    def from_spans(cls, gold: Sequence[Iterable[Span]], pred: Sequence[Iterable[Span]]) -> SpanCounts:
        if len(gold) != len(pred):
            raise ValueError("gold and predicted span lists differ in length")
        sizes = [_sizes(merge_spans(g), merge_spans(p)) for g, p in zip(gold, pred, strict=True)]
        g, p, i = zip(*sizes, strict=True) if sizes else ((), (), ())
        return cls(*(np.array(x, dtype=np.int64) for x in (g, p, i)))


def _sizes(gold: tuple[Span, ...], pred: tuple[Span, ...]) -> tuple[int, int, int]:
    """|G|, |P|, |G ∩ P| from merged runs, in O(runs) rather than O(characters)."""
    inter = 0
    a = b = 0
    while a < len(gold) and b < len(pred):
        low = max(gold[a][0], pred[b][0])
        high = min(gold[a][1], pred[b][1])
        inter += max(0, high - low)
        if gold[a][1] <= pred[b][1]:
            a += 1
        else:
            b += 1
    return sum(e - s for s, e in gold), sum(e - s for s, e in pred), inter


def _ratio(num: ArrayLike, den: ArrayLike) -> np.ndarray:
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


def _harmonic(p: np.ndarray, r: np.ndarray) -> np.ndarray:
    return _ratio(2 * p * r, p + r)


def _metrics(
    g: np.ndarray, p: np.ndarray, i: np.ndarray, weights: np.ndarray | None
) -> dict[str, np.ndarray]:
    """Metrics from per-item counts; ``weights`` (B, n) counts how often each item is drawn per replicate."""

    union = g + p - i
    per_item = {
        "recall_hit": ((g > 0) & (2 * i > g)).astype(np.int64),
        "precision_hit": ((p > 0) & (2 * i > p)).astype(np.int64),
        "gold_any": (g > 0).astype(np.int64),
        "pred_any": (p > 0).astype(np.int64),
        "union_any": (union > 0).astype(np.int64),
        "inter": i,
        "pred": p,
        "gold": g,
        "iou": _ratio(i, union),
    }
    if weights is None:
        total = {name: np.asarray(np.asarray(x).sum()) for name, x in per_item.items()}
        n_items: np.ndarray | int = len(g)
    else:  # one product for every sum (a replicate's sums)
        sums = weighted_sums(weights, np.column_stack([np.asarray(x, np.float64) for x in per_item.values()]))
        total = {name: sums[:, j] for j, name in enumerate(per_item)}
        n_items = weights.sum(axis=1)
    o_r = _ratio(total["recall_hit"], total["gold_any"])
    o_p = _ratio(total["precision_hit"], total["pred_any"])
    c_p = _ratio(total["inter"], total["pred"])
    c_r = _ratio(total["inter"], total["gold"])
    return {
        "overlap_precision": o_p,
        "overlap_recall": o_r,
        "overlap_f1": _harmonic(o_p, o_r),
        "recipe_overlap": _ratio(total["recall_hit"], n_items),
        "char_precision": c_p,
        "char_recall": c_r,
        "char_f1": _harmonic(c_p, c_r),
        "iou": _ratio(total["iou"], total["union_any"]),
    }


def span_metrics(counts: SpanCounts) -> dict[str, float]:
    """Point estimates as plain Python floats."""
    return {k: float(v) for k, v in _metrics(counts.gold, counts.pred, counts.inter, None).items()}


def bootstrap_span_metrics(counts: SpanCounts, idx: np.ndarray) -> dict[str, np.ndarray]:
    """Every span metric per replicate; ``idx`` is a (B, n) matrix of row indices."""
    # Draw counts per item: a sum over resampled rows is then a matrix product (B, n) @ (n,).
    weights = resample_counts(np.asarray(idx), len(counts.gold))
    return _metrics(counts.gold, counts.pred, counts.inter, weights)


def recipe_overlap(pred_spans: Sequence[Iterable[int]], gold_spans: Sequence[Iterable[int]]) -> float:
    """The seed card's ``compute_overlap_f1`` on per-item index collections, kept literally as a check."""
    correct = 0
    for p, g in zip(pred_spans, gold_spans, strict=True):
        g = set(g)
        if len(g) == 0:
            continue
        if len(set(p) & g) / len(g) > 0.5:
            correct += 1
    return correct / len(gold_spans) if len(gold_spans) else 0.0


def undefined_span_metrics(counts: SpanCounts) -> dict[str, str]:
    """``{span metric: reason}`` for every span metric whose denominator is 0 (its value stays 0).

    An F1 is named only when both its precision and recall are: one real 0 beside an undefined side is
    a real 0 F1, as in the classification F1 (`classification.undefined_metrics`)."""
    has_gold, has_pred = int(np.count_nonzero(counts.gold)), int(np.count_nonzero(counts.pred))
    no_pred = f"no item has predicted spans; {ZERO_DIVISION}"
    no_gold = f"no item has gold spans; {ZERO_DIVISION}"
    out: dict[str, str] = {}
    if not has_pred:
        out["overlap_precision"] = out["char_precision"] = no_pred
    if not has_gold:
        out["overlap_recall"] = out["char_recall"] = no_gold
    if not has_pred and not has_gold:
        out["overlap_f1"] = out["char_f1"] = f"no item has gold or predicted spans; {ZERO_DIVISION}"
        out["iou"] = out["overlap_f1"]
    if len(counts.gold) == 0:
        out["recipe_overlap"] = f"no rows; {ZERO_DIVISION}"
    return {key: out[key] for key in SPAN_METRICS if key in out}
