"""What a published breakdown cell may show (docs/SECURITY.md, "Label probing").

Every number computed on a small group of hidden rows is a measurement of those rows' labels: flip one
prediction, resubmit, and the cell's change tells the label. So a cell over fewer than MIN_CELL_ROWS rows
publishes no metric at all, and a cell whose rows all share one gold label (a group defined by the label,
such as COLD `fine_label`) publishes accuracy only — its precision/recall/F1 would name the class.
Withheld metrics stay in the result as null, next to a `withheld` reason, so the schema does not change
shape with the data. Pure functions; counts (`rows`) and gold-independent counts stay published.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

MIN_CELL_ROWS = 30
SMALL_CELL = f"n/a: fewer than {MIN_CELL_ROWS} rows (small groups reveal individual hidden labels)"
LABEL_PURE = "n/a: every row of this group has the same gold label (only accuracy is published)"


def small_cell(rows: int) -> bool:
    return rows < MIN_CELL_ROWS


def withhold(cell: dict, keys: Iterable[str], reason: str) -> dict:
    """A copy of `cell` with `keys` set to None (nested dicts: every leaf) and `withheld` = reason; their
    `undefined` reasons go too (e.g. "no positive items" would name a withheld group's labels)."""
    out = dict(cell)
    keys = list(keys)
    for key in keys:
        out[key] = _nulled(out.get(key))
    if isinstance(out.get("undefined"), dict):
        out["undefined"] = {k: v for k, v in out["undefined"].items() if k not in keys}
    out["withheld"] = reason
    return out


def _nulled(value):
    if isinstance(value, dict):
        return {k: _nulled(v) for k, v in value.items()}
    return None


def unlinked_rows(columns) -> np.ndarray:
    """The row order that sorts per-row outcomes (an n × k array) by value.

    The published intervals come from a seeded bootstrap over rows. Over rows in test order they depend on
    WHICH rows a submission got right, not only on how many, so comparing two submissions' intervals tells
    rows apart (bench/label_leak.py measures it). Resampling the outcomes in this canonical order makes an
    interval a function of the multiset of per-row outcomes only; its distribution is unchanged. Paired
    comparisons sort the two submissions' joint outcomes, so pairs stay pairs."""
    table = np.asarray(columns)
    if table.ndim == 1:
        table = table[:, None]
    return np.lexsort(table.T[::-1]) if table.size else np.arange(len(table))
