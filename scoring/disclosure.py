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
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

MIN_CELL_ROWS = 30
SMALL_CELL = f"n/a: fewer than {MIN_CELL_ROWS} rows (small groups reveal individual hidden labels)"
LABEL_PURE = "n/a: every row of this group has the same gold label (only accuracy is published)"


DERIVED_CELL = (
    f"n/a: the rows outside the published groups would form a derivable group of fewer than {MIN_CELL_ROWS} "
    "rows (overall minus the other groups)"
)


PUBLISHED_DECIMALS = 3  # 0.1 percentage point on the [0, 1] scale (spec §3, "Rounding")


def rounded(value: Any) -> Any:
    """`value` with every float rounded to PUBLISHED_DECIMALS places (dicts and lists walked; counts, which
    are ints, and strings stay exact). The published form of anything computed on a private test's public
    slice: a full-precision metric is a function of every row, and its digits beyond what a reader needs
    carry row-level information (the CNTP attribution AUPRC decoded an item's gold span from them)."""
    if isinstance(value, float):
        return round(value, PUBLISHED_DECIMALS) + 0.0  # + 0.0: -0.0 is published as 0.0
    if isinstance(value, dict):
        return {key: rounded(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [rounded(item) for item in value]
    return value


def small_cell(rows: int) -> bool:
    return rows < MIN_CELL_ROWS


def derived_small(cells: dict[str, int], total: int) -> set[str]:
    """The cells of a partition to withhold so that no cell anyone can derive is small.

    `cells` maps each group of DISJOINT rows to its size; `total` is the rows of the whole (published) test.
    The overall result minus the published cells gives the cell of every row in no published group (the
    rows in no group, plus the withheld groups), so that union must be empty or reach MIN_CELL_ROWS rows:
    while it does not, the smallest published group is withheld too. Small groups are withheld anyway."""
    withheld = {name for name, rows in cells.items() if small_cell(rows)}
    rest = total - sum(cells.values())
    hidden = rest + sum(cells[name] for name in withheld)
    shown = sorted((rows, name) for name, rows in cells.items() if name not in withheld)
    while 0 < hidden < MIN_CELL_ROWS and shown:
        rows, name = shown.pop(0)
        withheld.add(name)
        hidden += rows
    return withheld


def disjoint(groups: Iterable[Iterable[int]]) -> bool:
    seen: set[int] = set()
    for rows in groups:
        members = {int(k) for k in rows}
        if seen & members:
            return False
        seen |= members
    return True


def withhold(cell: dict[str, Any], keys: Iterable[str], reason: str) -> dict[str, Any]:
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


def _nulled(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _nulled(v) for k, v in value.items()}
    return None


def unlinked_rows(columns: ArrayLike) -> np.ndarray:
    """The row order that sorts per-row outcomes (an n × k array) by value.

    The published intervals come from a seeded bootstrap over rows. Over rows in test order they depend on
    WHICH rows a submission got right, not only on how many, so comparing two submissions' intervals tells
    rows apart (bench/label_leak.py measures it). Resampling the outcomes in this canonical order makes an
    interval a function of the multiset of per-row outcomes only; its distribution is unchanged. Paired
    comparisons sort the two submissions' joint outcomes, so pairs stay pairs."""
    table = np.asarray(columns)
    if table.ndim == 1:
        table = table[:, None]
    if not table.size:
        return np.arange(len(table))
    return np.lexsort(_sort_keys(table) if table.dtype.kind in "biuf" else table.T[::-1])


PACKED_BITS = 62  # 0/1 columns per packed key: the key stays below 2**62, exact in int64


def _sort_keys(table: np.ndarray) -> list[np.ndarray]:
    """`np.lexsort` keys (last = primary) that order the rows of `table` exactly as its columns do,
    lexicographically (first column first): each run of columns holding only 0 and 1 is packed into one
    integer, its first column the highest bit; other columns are kept as they are. Equal rows stay equal
    and lexsort is stable, so the permutation is the same as sorting on every column, with a few keys
    instead of one per column (tie groups sort 2 x 67 VARM columns per pair)."""
    binary = ((table == 0) | (table == 1)).all(axis=0)
    keys: list[np.ndarray] = []
    start, width = 0, table.shape[1]
    while start < width:
        end = start + 1
        if binary[start]:
            while end < width and binary[end] and end - start < PACKED_BITS:
                end += 1
            weights = np.left_shift(np.int64(1), np.arange(end - start - 1, -1, -1, dtype=np.int64))
            keys.append(table[:, start:end].astype(np.int64) @ weights)
        else:
            keys.append(table[:, start])
        start = end
    return keys[::-1]
