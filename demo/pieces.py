"""Seeded choice of text pieces, with a *train view* that hides a quarter of every word bank.

Dev and test draw from every bank; train never sees the items at positions 3, 7, 11, ... of a bank with
four or more entries. So dev/test contain phrasings, targets and frames that no training row has, which
is what makes a real benchmark hard for surface models (and keeps the char n-gram baseline from simply
memorising the templates). Hidden positions are fixed by index, so the split is deterministic.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")
HOLDOUT_EVERY = 4

_train_view = False


@contextmanager
def train_view(enabled: bool = True) -> Iterator[None]:
    """Within this block ``pick`` ignores the held-out items (used while composing the train split)."""
    global _train_view
    previous, _train_view = _train_view, enabled
    try:
        yield
    finally:
        _train_view = previous


def visible(items: Sequence[T]) -> Sequence[T]:
    """The items ``pick`` may return right now."""
    if not _train_view or len(items) < HOLDOUT_EVERY:
        return items
    return [x for i, x in enumerate(items) if i % HOLDOUT_EVERY != HOLDOUT_EVERY - 1]


def pick(rng: random.Random, items: Sequence[T]) -> T:
    """One item, uniformly, from the visible part of ``items``."""
    pool = visible(items)
    return pool[rng.randrange(len(pool))]
