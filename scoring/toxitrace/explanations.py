"""Explanation metrics of spec §3: derived spans, attribution AUPRC, fragmentation and faithfulness.

Pure functions on validated, aligned arrays; ``tracks.py`` assembles them into ``result["explanations"]``.
Every ratio is 0 when its denominator is 0 (as for the span metrics of §2).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..bootstrap import DEFAULT_LEVEL, percentile_ci, resample_counts, weighted_sums
from .masking import MASK_LEVELS
from .spans import Span, index_set

DEFAULT_TAU = 0.5
MIN_SPAN_LENGTH = 2  # derived runs shorter than this are dropped (§3)


def _ratio(num: np.ndarray | float, den: np.ndarray | float) -> np.ndarray:
    num, den = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


def derive_spans(scores: Sequence[float] | np.ndarray, tau: float = DEFAULT_TAU) -> tuple[Span, ...]:
    """Spans from attribution scores.

    The characters with ``score >= tau``, merged into maximal contiguous runs ``[start, end)``; runs shorter
    than ``MIN_SPAN_LENGTH`` (2) characters are dropped.

    Examples
    --------
    >>> derive_spans([0.9, 0.8, 0.1, 0.7, 0.2, 0.5, 0.5, 0.5])
    ((0, 2), (5, 8))
    """
    above = np.asarray(scores, dtype=np.float64) >= tau
    # Run boundaries: where `above` switches on (+1) or off (-1), with False padding at both ends.
    edges = np.diff(np.concatenate(([False], above, [False])).astype(np.int8))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    return tuple((int(s), int(e)) for s, e in zip(starts, ends, strict=True) if e - s >= MIN_SPAN_LENGTH)


def average_precision(
    y_true: np.ndarray, y_score: np.ndarray, sample_weight: np.ndarray | None = None
) -> float:
    """Average precision, the step-function integral of the precision-recall curve.

    ``AP = Σ_n (R_n − R_{n−1}) · P_n`` over the distinct score thresholds taken from high to low, where
    ``P_n`` / ``R_n`` are the (weighted) precision and recall of "score >= threshold n" and ``R_0 = 0``.
    The operations mirror scikit-learn's ``average_precision_score`` (stable descending sort, cumulative
    sums at the last index of each tie group, the same final sum) so the float is the same; 0.0 when there
    is no positive (scikit-learn warns and returns a meaningless value there).

    Parameters
    ----------
    y_true : array of 0/1, shape (n,)
    y_score : array of float, shape (n,)
    sample_weight : array of float, shape (n,), optional
        Integer weights give the same value as repeating the samples (used by the bootstrap).
    """
    y_true = np.asarray(y_true, dtype=np.float64)
    y_score = np.asarray(y_score, dtype=np.float64)
    weight = np.ones_like(y_true) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if y_true.size == 0:
        return 0.0
    order, last_of_tie = _descending(y_score)
    return _ap_sorted(y_true[order], weight[order], last_of_tie)


def _descending(y_score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's order (a stable ascending sort, reversed) and the last index of each tie group."""
    order = np.argsort(y_score, kind="stable")[::-1]
    return order, np.r_[np.flatnonzero(np.diff(y_score[order])), y_score.size - 1]


def _ap_sorted(y_true: np.ndarray, weight: np.ndarray, last_of_tie: np.ndarray) -> float:
    """AP from labels and weights already in descending score order (zero weights allowed)."""
    tps = np.cumsum(y_true * weight)[last_of_tie]
    fps = np.cumsum((1 - y_true) * weight)[last_of_tie]
    if tps[-1] == 0:
        return 0.0
    predicted = tps + fps
    precision = np.divide(tps, predicted, out=np.zeros_like(tps), where=predicted != 0)
    recall = tps / tps[-1]
    precision = np.concatenate((precision[::-1], [1.0]))
    recall = np.concatenate((recall[::-1], [0.0]))
    return float(max(0.0, -np.sum(np.diff(recall) * precision[:-1])))


@dataclass(frozen=True)
class AttributionChars:
    """Every character of the items with non-empty gold: its score, gold flag and item index."""

    scores: np.ndarray  # float64
    gold: np.ndarray  # 0/1
    item: np.ndarray  # int64 row index, for bootstrap weights

    @classmethod
    def build(
        cls, char_scores: Sequence[np.ndarray], gold_spans: Sequence[Sequence[Span]]
    ) -> AttributionChars:
        parts_s, parts_g, parts_i = [], [], []
        for row, (scores, spans) in enumerate(zip(char_scores, gold_spans, strict=True)):
            gold = index_set(spans)
            if not gold:
                continue
            flags = np.zeros(len(scores), dtype=np.int8)
            flags[sorted(gold)] = 1
            parts_s.append(np.asarray(scores, dtype=np.float64))
            parts_g.append(flags)
            parts_i.append(np.full(len(scores), row, dtype=np.int64))
        if not parts_s:
            return cls(np.zeros(0), np.zeros(0, dtype=np.int8), np.zeros(0, dtype=np.int64))
        return cls(np.concatenate(parts_s), np.concatenate(parts_g), np.concatenate(parts_i))


def attribution_auprc(
    char_scores: Sequence[np.ndarray], gold_spans: Sequence[Sequence[Span]]
) -> float | None:
    """Micro average precision of the character scores against the gold character set.

    Over the concatenation of every character of every item whose gold span set is non-empty:
    ``average_precision_score(gold_flag, char_score)``. None when no item has gold spans.
    """
    chars = AttributionChars.build(char_scores, gold_spans)
    return average_precision(chars.gold, chars.scores) if chars.gold.size else None


def bootstrap_auprc(chars: AttributionChars, idx: np.ndarray) -> np.ndarray:
    """AUPRC per resample: each character weighted by how often its item was drawn.

    The characters are sorted once; an undrawn item's characters get weight 0, which adds only points of
    zero recall change, so each value is the AP of the resample (up to float summation order)."""
    counts = resample_counts(idx, int(idx.shape[1]))
    order, last_of_tie = _descending(chars.scores)
    gold, item = chars.gold[order].astype(np.float64), chars.item[order]
    return np.array(
        [_ap_sorted(gold, counts[b, item], last_of_tie) for b in range(idx.shape[0])], dtype=np.float64
    )


@dataclass(frozen=True)
class SpanShape:
    """Per item: number of (merged) predicted spans and predicted characters."""

    spans: np.ndarray
    chars: np.ndarray

    @classmethod
    def from_spans(cls, spans: Sequence[Sequence[Span]]) -> SpanShape:
        return cls(
            np.asarray([len(s) for s in spans], dtype=np.int64),
            np.asarray([sum(e - b for b, e in s) for s in spans], dtype=np.int64),
        )


def fragmentation(shape: SpanShape, weights: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Fragmentation of predicted spans.

    - ``spans_per_item``   = Σ_i s_i / #{i : s_i > 0}  (mean number of spans over items with any)
    - ``mean_span_length`` = Σ_i c_i / Σ_i s_i         (predicted characters per predicted span)

    with ``s_i`` the number of merged spans and ``c_i`` the predicted characters of item i. ``weights`` is a
    (resamples, n) row-count matrix for the bootstrap; without it the point estimates (0-d arrays).
    """
    spans, chars, nonempty = (x.astype(np.float64) for x in (shape.spans, shape.chars, shape.spans > 0))
    if weights is None:
        return {
            "spans_per_item": _ratio(spans.sum(), nonempty.sum()),
            "mean_span_length": _ratio(chars.sum(), spans.sum()),
        }
    s, c, e = weighted_sums(weights, np.column_stack([spans, chars, nonempty])).T
    return {"spans_per_item": _ratio(s, e), "mean_span_length": _ratio(c, s)}


@dataclass(frozen=True)
class Faithfulness:
    """Per-item faithfulness terms (§3); every metric is a mean of these over items."""

    comprehensiveness: dict[int, np.ndarray]  # k -> p(x) − p(x with top-k removed)
    sufficiency: dict[int, np.ndarray]  # k -> p(x) − p(top-k kept)
    flip_20: np.ndarray  # 1 when the label after removing the top 20 % differs from the predicted label

    @classmethod
    def from_probs(cls, labels: np.ndarray, probs: dict[str, np.ndarray]) -> Faithfulness:
        """``probs``: ``prob`` and ``prob_removed_<k>`` / ``prob_kept_<k>`` arrays aligned with ``labels``.

        ``p(·)`` is the probability of the predicted label y: ``prob`` when y = 1, ``1 − prob`` when y = 0.
        """
        toxic = np.asarray(labels) == 1

        def p(values: np.ndarray) -> np.ndarray:
            values = np.asarray(values, dtype=np.float64)
            return np.where(toxic, values, 1.0 - values)

        base = p(probs["prob"])
        return cls(
            comprehensiveness={k: base - p(probs[f"prob_removed_{k}"]) for k in MASK_LEVELS},
            sufficiency={k: base - p(probs[f"prob_kept_{k}"]) for k in MASK_LEVELS},
            flip_20=((np.asarray(probs["prob_removed_20"]) >= 0.5) != toxic).astype(np.float64),
        )

    def per_item(self) -> dict[str, np.ndarray]:
        """Every reported metric as a per-item vector whose mean is the metric (flat dotted names)."""
        out = {
            "comprehensiveness": np.mean([self.comprehensiveness[k] for k in MASK_LEVELS], axis=0),
            "sufficiency": np.mean([self.sufficiency[k] for k in MASK_LEVELS], axis=0),
            "decision_flip_20": self.flip_20,
        }
        out.update({f"comprehensiveness_k.{k}": self.comprehensiveness[k] for k in MASK_LEVELS})
        out.update({f"sufficiency_k.{k}": self.sufficiency[k] for k in MASK_LEVELS})
        return out


def faithfulness(faith: Faithfulness, weights: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """ERASER-style faithfulness (flat dotted names).

    - ``comprehensiveness_k.<k>`` = mean_i [p(x_i) − p(x_i with its top k % removed)]
    - ``sufficiency_k.<k>``       = mean_i [p(x_i) − p(only the top k % of x_i kept)]
    - ``comprehensiveness`` / ``sufficiency`` = mean over k ∈ {10, 20, 50} (AOPC-style)
    - ``decision_flip_20`` = share of items with ``[prob_removed_20 >= 0.5] != y_i``

    The top k % are those of the predicted class (see ``masking``); the probabilities are self-reported.

    Higher comprehensiveness and lower sufficiency mean a more faithful explanation. ``weights``: a
    (resamples, n) row-count matrix for the bootstrap (weighted means); without it the plain means.
    """
    per_item = faith.per_item()
    if weights is None:
        return {name: _ratio(values.sum(), values.size) for name, values in per_item.items()}
    sums = weighted_sums(weights, np.column_stack(list(per_item.values())))  # one product for every metric
    rows = weights.sum(axis=1)
    return {name: _ratio(sums[:, j], rows) for j, name in enumerate(per_item)}


def nest(flat: dict[str, float]) -> dict[str, Any]:
    """``{"comprehensiveness_k.10": v}`` -> ``{"comprehensiveness_k": {"10": v}}`` (one level)."""
    out: dict[str, Any] = {}
    for name, value in flat.items():
        head, _, tail = name.partition(".")
        if tail:
            out.setdefault(head, {})[tail] = value
        else:
            out[head] = value
    return out


def explanation_result(
    labels: np.ndarray,
    char_scores: Sequence[np.ndarray],
    probs: dict[str, np.ndarray] | None,
    pred_spans: Sequence[Sequence[Span]],
    spans_source: str,
    gold_spans: Sequence[Sequence[Span]] | None,
    idx: np.ndarray,
    tau: float = DEFAULT_TAU,
) -> tuple[dict[str, Any], dict[str, list[float]]]:
    """``result["explanations"]`` and its CIs (``"explanations.<dotted name>": [low, high]``).

    ``pred_spans``: the submitted spans, or those derived from the scores (``spans_source`` says which).
    ``auprc`` only where the references carry gold spans (and some item has them); the faithfulness keys
    only when the masked probabilities were given. ``idx`` is the shared bootstrap index matrix.
    """
    shape = SpanShape.from_spans(pred_spans)
    point: dict[str, float] = {k: float(v) for k, v in fragmentation(shape).items()}
    chars = AttributionChars.build(char_scores, gold_spans) if gold_spans is not None else None
    if chars is not None and chars.gold.size:
        point["auprc"] = average_precision(chars.gold, chars.scores)
    faith = Faithfulness.from_probs(labels, probs) if probs is not None else None
    by_predicted = {}
    if faith is not None:
        point.update({k: float(v) for k, v in faithfulness(faith).items()})
        # The split by predicted label needs no gold: it shows whether a system is faithful on both classes.
        for y in (0, 1):
            assert probs is not None  # faith exists only with them
            rows = np.asarray(labels) == y
            part = Faithfulness.from_probs(labels[rows], {k: v[rows] for k, v in probs.items()})
            by_predicted[str(y)] = nest({k: float(v) for k, v in faithfulness(part).items()})

    ci: dict[str, list[float]] = {}
    if idx.size:
        # Intervals resample the rows in a canonical order (as the other metrics' do, see
        # scoring.disclosure.unlinked_rows), so they depend on the multiset of rows, not on which rows.
        order = canonical_rows(labels, char_scores, probs, gold_spans)
        weights = resample_counts(idx, int(idx.shape[1]))
        resampled = fragmentation(SpanShape(shape.spans[order], shape.chars[order]), weights)
        if "auprc" in point and gold_spans is not None:  # auprc needs the gold spans
            resampled["auprc"] = bootstrap_auprc(
                AttributionChars.build([char_scores[i] for i in order], [gold_spans[i] for i in order]), idx
            )
        if probs is not None:
            faith = Faithfulness.from_probs(labels[order], {k: v[order] for k, v in probs.items()})
            resampled.update(faithfulness(faith, weights))
        ci = {
            f"explanations.{name}": percentile_ci(values, DEFAULT_LEVEL) for name, values in resampled.items()
        }
    out = {"tau": float(tau), "spans_source": spans_source, **nest(point)}
    if by_predicted:
        out["by_predicted"] = by_predicted
    return out, ci


def canonical_rows(
    labels: np.ndarray,
    char_scores: Sequence[np.ndarray],
    probs: dict[str, np.ndarray] | None,
    gold_spans: Sequence[Sequence[Span]] | None,
) -> np.ndarray:
    """A row order that depends on each row's content only (label, scores, probabilities, gold characters):
    rows sorted by a SHA-256 digest of that content, ties (identical rows) in any order."""
    digests = []
    for i, scores in enumerate(char_scores):
        h = hashlib.sha256(np.asarray([labels[i]], dtype=np.float64).tobytes())
        h.update(np.asarray(scores, dtype=np.float64).tobytes())
        if probs is not None:
            h.update(np.asarray([probs[k][i] for k in sorted(probs)], dtype=np.float64).tobytes())
        if gold_spans is not None:
            h.update(np.asarray(sorted(index_set(gold_spans[i])), dtype=np.int64).tobytes())
        digests.append(h.digest())
    return np.asarray(sorted(range(len(digests)), key=digests.__getitem__), dtype=np.int64)
