"""The disclosure gate: the only way a stored result becomes a published value (issue 22 item 2).

A scorer result staged in the submissions area reaches the results area as a board row's metric columns
and as a published result envelope; both are made here and nowhere else in the publisher, so the rules of
what may be shown (public slice, rounding, cell rules) have one place to live. For now they publish what
the publisher always has: the result's metric, explanation, CI and undefined columns, and the whole result
in the envelope.
"""

from __future__ import annotations

from worker.leaderboard import Entry, row_content
from worker.records import public_view


def columns(entry: Entry) -> dict:
    """The published metric columns of an entry's board row."""
    return entry.metric_columns()


def row(entry: Entry) -> dict:
    """An entry's published board row without its rank fields (they depend on the other entries)."""
    return row_content(entry)


def envelope(record: dict, version: int, result: dict) -> dict:
    """The published result envelope of a version: the FULL record's public fields (the index keeps no
    description) and its result."""
    return {"submission": public_view(record), "version": version, "result": result}
