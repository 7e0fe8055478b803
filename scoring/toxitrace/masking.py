"""Confidence masking (spec §3): the masked texts a submitter runs their model on, and their hashes.

For a text of n code points with one attribution score per code point, masking level k (percent) selects
the top ``m = ⌈k·n/100⌉`` characters for the row's predicted label, ties broken by position (earlier first):
on a row predicted toxic (1) the highest scores, on a row predicted non-toxic (0) the lowest, since the
rationale is the evidence for the predicted class (ERASER; changed 2026-12, scorer 4.0.0). Two variants:

- ``removed_k``: the text with those m characters deleted;
- ``kept_k``: only those m characters, in their original order.

The masked texts are fully determined by the text and the scores, so the scorer can recompute them and check
the optional ``sha256_<variant>`` a submitter sends: the lowercase hex SHA-256 of the masked text's UTF-8
bytes. ⌈k·n/100⌉ is computed in integers ((k·n + 99) // 100), never in floating point.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

MASK_LEVELS = (10, 20, 50)
VARIANTS = tuple(f"{kind}_{k}" for kind in ("removed", "kept") for k in MASK_LEVELS)
PROB_KEYS = ("prob", *(f"prob_{v}" for v in VARIANTS))  # all or none of them on a prediction
HASH_KEYS = tuple(f"sha256_{v}" for v in VARIANTS)  # each optional; checked when given


def top_count(n: int, k: int) -> int:
    """⌈k·n/100⌉ in integer arithmetic."""
    return (k * n + 99) // 100


def top_positions(scores: Sequence[float] | np.ndarray, k: int, label: int = 1) -> np.ndarray:
    """Boolean mask of the top ⌈k·n/100⌉ positions for predicted ``label``, ties broken by position.

    ``label`` 1: the highest scores; 0: the lowest (the evidence for non-toxic).
    """
    if label not in (0, 1):
        raise ValueError(f"predicted label must be 0 or 1; got {label!r}")
    values = np.asarray(scores, dtype=np.float64)
    # A stable sort keeps equal scores in position order, which is the spec's tie rule. +0.0 keeps -0.0
    # and 0.0 one key (the parser already quantises, so this only guards direct callers).
    key = (-values if label == 1 else values) + 0.0
    chosen = np.zeros(values.size, dtype=bool)
    chosen[np.argsort(key, kind="stable")[: top_count(values.size, k)]] = True
    return chosen


def masked_text(text: str, scores: Sequence[float] | np.ndarray, variant: str, label: int) -> str:
    """The text of one variant (``removed_10`` ... ``kept_50``) for a row predicted ``label``."""
    kind, _, level = variant.partition("_")
    if kind not in ("removed", "kept") or int(level) not in MASK_LEVELS:
        raise ValueError(f"unknown masking variant {variant!r}; expected one of {', '.join(VARIANTS)}")
    chosen = top_positions(scores, int(level), label)
    keep = chosen if kind == "kept" else ~chosen
    return "".join(ch for ch, flag in zip(text, keep, strict=True) if flag)


def masked_texts(text: str, scores: Sequence[float] | np.ndarray, label: int) -> dict[str, str]:
    """Every variant's text, in VARIANTS order, for a row predicted ``label``."""
    return {variant: masked_text(text, scores, variant, label) for variant in VARIANTS}


def text_sha256(text: str) -> str:
    """Lowercase hex SHA-256 of the UTF-8 bytes (the ``sha256_<variant>`` value)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
