"""Group commit: concurrent read-modify-write changes of one process go to the store as ONE commit.

The Hub limits commits per repository (worker/store/budget.py), and concurrent commits to one area collide
(412, rebuild, retry). A `GroupCommit` lets callers queue their change (`build(store, head) -> (add,
delete)`, as for `commit_with_retry`) and block until it is in: the first caller commits its own change at
once; callers that arrive while a commit is under way (or waiting for its slot of the commit budget) are
committed together by the next one. The lead waits for its commit slot (`store.pace`, worker/store/budget.py)
BEFORE it takes the queue, so while the budget paces commits every caller arriving during the wait joins
that commit: a commit holds more changes the tighter the budget, and a quiet service still commits at
once. Each build sees the files that the builds before it in the same commit
wrote, so two uploads of one submitter update the same quota index in turn. A build that raises fails only
its own caller.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

from worker.store.base import BuildOps, Store, commit_with_retry, read_many


@dataclass(eq=False)
class _Job:
    build: BuildOps
    message: str
    wake: threading.Event = field(default_factory=threading.Event)
    done: bool = False
    lead: bool = False
    error: BaseException | None = None


class _Pending:
    """`store` as the builds of one group commit see it: files written by earlier builds come first."""

    def __init__(self, store: Store, area: str) -> None:
        self._store, self._area = store, area
        self.add: dict[str, bytes] = {}
        self.delete: set[str] = set()

    def read(self, area: str, path: str, revision: str | None = None) -> bytes | None:
        if area == self._area and path in self.add:
            return self.add[path]
        if area == self._area and path in self.delete:
            return None
        return self._store.read(area, path, revision)

    def read_many(
        self, area: str, paths: Iterable[str], revision: str | None = None
    ) -> dict[str, bytes | None]:
        paths = list(dict.fromkeys(paths))
        mine = {p for p in paths if area == self._area and (p in self.add or p in self.delete)}
        theirs = read_many(self._store, area, [p for p in paths if p not in mine], revision)
        return theirs | {path: self.read(area, path, revision) for path in mine}

    def __getattr__(self, name: str):
        return getattr(self._store, name)


class GroupCommit:
    def __init__(self, store: Store, area: str, attempts: int = 20) -> None:
        self.store, self.area, self.attempts = store, area, attempts
        self._lock = threading.Lock()
        self._queue: list[_Job] = []
        self._busy = False
        self.commits = self.changes = 0  # for figures: changes per commit

    def commit(self, build: BuildOps, message: str) -> None:
        """Commit `build`'s change (with whatever else is queued); raises what `build` or the store raised."""
        job = _Job(build, message)
        with self._lock:
            self._queue.append(job)
            job.lead = not self._busy
            self._busy = True
        while True:
            if job.lead and not job.done:
                self._lead()
            if job.done:
                break
            job.wake.wait()
            job.wake.clear()
        if job.error is not None:
            raise job.error

    def _lead(self) -> None:
        """Commit everything queued once the slot is ours, then hand the lead to the first caller waiting."""
        pace = getattr(self.store, "pace", None)
        if pace is not None:
            pace(self.area)
        with self._lock:
            batch, self._queue = self._queue, []
        self._commit(batch, paced=pace is not None)
        with self._lock:
            for job in batch:
                job.done = True
                job.wake.set()
            if self._queue:
                self._queue[0].lead = True
                self._queue[0].wake.set()
            else:
                self._busy = False

    def _commit(self, batch: list[_Job], paced: bool) -> None:
        def build(store: Store, head: str) -> tuple[dict[str, bytes], list[str]]:
            pending = _Pending(store, self.area)
            for job in batch:
                job.error = None
                try:
                    add, delete = job.build(pending, head)
                except Exception as exc:  # noqa: BLE001 - the caller's own error, raised in its thread
                    job.error = exc
                    continue
                pending.add.update(add)
                pending.delete.difference_update(add)
                pending.delete.update(delete)
                for path in delete:
                    pending.add.pop(path, None)
            return pending.add, sorted(pending.delete)

        message = batch[0].message if len(batch) == 1 else f"{batch[0].message} (+{len(batch) - 1} more)"
        try:
            commit_with_retry(self.store, self.area, build, message, attempts=self.attempts, paced=paced)
        except Exception as exc:  # noqa: BLE001 - every caller of the batch gets the store's error
            for job in batch:
                job.error = job.error or exc
            return
        self.commits += 1
        self.changes += sum(job.error is None for job in batch)
