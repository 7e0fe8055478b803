"""The disclosure gate's last step in the publisher: how a staged result becomes a published value.

The gate itself (../shared/spec/disclosure.md §3) runs when a result is staged (worker/gold/scoring_job.py):
a private test's staged result is its public slice's, rounded and with its cell rules applied by
scoring/disclosure.py, because the web process reads staged results too. Here, and nowhere else in the
publisher, a staged result reaches the results area: as a board row's metric columns and as a published
result envelope, signed with the workers' Ed25519 key (§6: `python -m scoring verify` checks it).
"""

from __future__ import annotations

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from scoring.signatures import sign
from worker.leaderboard import Entry, row_content
from worker.records import public_view


def columns(entry: Entry) -> dict:
    """The published metric columns of an entry's board row."""
    return entry.metric_columns()


def row(entry: Entry) -> dict:
    """An entry's published board row without its rank fields (they depend on the other entries)."""
    return row_content(entry)


def envelope(record: dict, version: int, result: dict, key: Ed25519PrivateKey) -> dict:
    """The published result envelope of a version: the FULL record's public fields (the index keeps no
    description) and its result, signed."""
    return sign(key, {"submission": public_view(record), "version": version, "result": result})
