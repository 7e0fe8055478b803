"""Leases on work items, shared by the processes of a deployment through a commit-budget ledger.

A batch of scoring (worker/gold/batch.py) takes records that other tasks were sent for; a lease says "this
process is scoring it now", so the other tasks leave it alone instead of scoring it twice. A lease is only
advice: every write is still an idempotent read-modify-write of the record, so a lost or expired lease
costs duplicate work, never a wrong record.

A key's ledger entry is the list of times it was leased: the last one + `ttl` is when the lease ends, and
the length says how many leases were taken without finishing (a process that died holding one leaves it
to expire, so the count tells the next taker that this item may be what killed it).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from worker.store.budget import Ledger, MemoryLedger


class Claims:
    def __init__(
        self, ledger: Ledger | None = None, namespace: str = "", clock: Callable[[], float] = time.time
    ) -> None:
        self.ledger = ledger or MemoryLedger()
        self.namespace = namespace  # e.g. the submissions repo: deployments sharing a Redis stay apart
        self.clock = clock

    def claim(self, key: str, ttl: float, *, fresh_only: bool = False) -> int | None:
        """Lease `key` for `ttl` seconds. Returns how many earlier leases of it ended without `done` (0: a
        fresh item), or None when someone else holds it, or (`fresh_only`) when it is not fresh."""
        now = self.clock()
        out: list[int | None] = [None]

        def take(times: list[float]) -> list[float]:
            if (times and times[-1] + ttl > now) or (fresh_only and times):
                return times
            out[0] = len(times)
            return [*times, now]

        try:
            self.ledger.update(f"claim:{self.namespace}:{key}", take)
        except Exception:  # noqa: BLE001 - a ledger outage: work unleased (writes stay idempotent)
            return 0
        return out[0]

    def done(self, key: str) -> None:
        """Forget `key`'s leases: it was finished, or given back untouched (it is fresh again)."""
        try:
            self.ledger.update(f"claim:{self.namespace}:{key}", lambda times: [])
        except Exception:  # noqa: BLE001 - the lease just expires
            pass
