"""The Store contract shared by LocalStore and HubStore: errors, path rules, retry helper."""

from __future__ import annotations

import builtins
import random
import re
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Protocol, TypeVar, runtime_checkable

from worker.config import AREAS


class StoreError(Exception):
    """A store operation failed (bad path, unknown area or revision, unreachable or refused backend)."""


class UnreadableObject(StoreError):
    """A stored file exists but its bytes cannot be decoded (a torn write, bit rot): a fault of that one file,
    which readers of records treat like a corrupt record (quarantined), never of the whole area."""


class ConflictError(StoreError):
    """`parent` is no longer the head of the area: re-read, rebuild the change and retry."""


@runtime_checkable
class Store(Protocol):
    """Three areas ("references", "submissions", "results"), each a versioned tree of small files.

    head: current revision id. read: file bytes, None when the file is missing (StoreError when the
    revision is unknown). list: sorted file paths starting with `prefix` (at head, or at `revision`).
    commit: one atomic revision; ConflictError when `parent` is given and is no longer the head; a commit
    that changes nothing returns the head. local_snapshot: a folder with the area's files at a revision,
    for read-only use. history: [{"revision", "message", "date"}], newest first. tag: name a revision
    for good (a release's snapshot: the Hub's git tags, the local store's tags.json); naming an existing
    tag again is a no-op when it names the same revision and a ConflictError otherwise (a tag never moves).
    tags: {name: revision}.
    Every method raises StoreError for an area this store was not opened with.
    """

    areas: frozenset[str]

    def head(self, area: str) -> str: ...

    def read(self, area: str, path: str, revision: str | None = None) -> bytes | None: ...

    def list(self, area: str, prefix: str = "", revision: str | None = None) -> list[str]: ...

    def commit(
        self,
        area: str,
        add: dict[str, bytes],
        delete: builtins.list[str],
        message: str,
        parent: str | None = None,
    ) -> str: ...

    def local_snapshot(self, area: str, revision: str | None = None) -> Path: ...

    def history(self, area: str, limit: int = 50) -> builtins.list[dict]: ...

    def tag(self, area: str, name: str, revision: str, message: str) -> None: ...

    def tags(self, area: str) -> dict[str, str]: ...


_SEGMENT = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")
_REVISION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,199}")
MAX_PATH_CHARS = 400


def check_path(path: str) -> str:
    """Return `path` if it is a safe relative file path, else raise StoreError saying why.

    Segments are `[A-Za-z0-9._-]`, may not start with a dot (no `..`, no hidden files such as
    `.gitattributes`), and are joined by single `/`.
    """
    if not isinstance(path, str) or not path:
        raise StoreError(f"invalid path {path!r}: empty or not a string")
    if len(path) > MAX_PATH_CHARS:
        raise StoreError(f"invalid path {path[:40]!r}...: longer than {MAX_PATH_CHARS} characters")
    if any(ord(c) < 32 or ord(c) == 127 for c in path):
        raise StoreError(f"invalid path {path!r}: contains control characters")
    if "\\" in path:
        raise StoreError(f"invalid path {path!r}: backslashes are not allowed")
    if path.startswith("/"):
        raise StoreError(f"invalid path {path!r}: absolute paths are not allowed")
    for segment in path.split("/"):
        if segment in ("", ".", ".."):
            raise StoreError(f"invalid path {path!r}: empty, '.' or '..' segment")
        if not _SEGMENT.fullmatch(segment):
            raise StoreError(
                f"invalid path {path!r}: segment {segment!r} must match [A-Za-z0-9._-]+ "
                "and not start with '.'"
            )
    return path


def check_prefix(prefix: str) -> str:
    """A list() prefix: "" or a path, optionally ending in "/"."""
    if prefix:
        check_path(prefix[:-1] if prefix.endswith("/") else prefix)
    return prefix


def read_many(
    store: Store, area: str, paths: Iterable[str], revision: str | None = None
) -> dict[str, bytes | None]:
    """`store.read` of each path, as {path: bytes or None}: in one go where the store's own class can batch
    them (HubStore: one paths-info request instead of a GET per file), else one read at a time. The method
    is looked up on the class, so a wrapper store that only forwards attributes reads through itself."""
    batched = getattr(type(store), "read_many", None)
    if batched is not None:
        return batched(store, area, paths, revision)
    return {path: store.read(area, path, revision) for path in dict.fromkeys(paths)}


def check_revision(revision: str) -> str:
    if not isinstance(revision, str) or not _REVISION.fullmatch(revision) or ".." in revision:
        raise StoreError(f"invalid revision {revision!r}")
    return revision


def check_area(area: str, allowed: Iterable[str]) -> str:
    if area not in AREAS:
        raise StoreError(f"unknown area {area!r} (expected one of {', '.join(AREAS)})")
    if area not in allowed:
        raise StoreError(
            f"area {area!r} is not available to this process (store opened with areas={sorted(allowed)})"
        )
    return area


def check_ops(add: dict[str, bytes], delete: list[str]) -> None:
    """Validate a commit's operations (paths, types, no path both added and deleted)."""
    for path, data in add.items():
        check_path(path)
        if not isinstance(data, bytes | bytearray):
            raise StoreError(f"content for {path!r} must be bytes, got {type(data).__name__}")
    for path in delete:
        check_path(path)
    both = set(add) & set(delete)
    if both:
        raise StoreError(f"paths both added and deleted in one commit: {sorted(both)}")


BuildOps = Callable[["Store", str], tuple[dict[str, bytes], list[str]]]
T = TypeVar("T")
BuildChange = Callable[["Store", str], tuple[dict[str, bytes], list[str], T]]


def commit_with_retry(
    store: Store,
    area: str,
    build_ops: BuildOps,
    message: str,
    attempts: int = 5,
    backoff: float = 0.05,
    *,
    paced: bool = False,
) -> str:
    """`commit_change` for a builder that returns only its operations `(add, delete)`; the revision."""
    revision, _ = commit_change(
        store, area, lambda s, head: (*build_ops(s, head), None), message, attempts, backoff, paced=paced
    )
    return revision


def commit_change(
    store: Store,
    area: str,
    build: BuildChange[T],
    message: str,
    attempts: int = 5,
    backoff: float = 0.05,
    *,
    paced: bool = False,
) -> tuple[str, T]:
    """Optimistic read-modify-write: read head, `build(store, head) -> (add, delete, value)`, commit with
    parent=head; returns (revision, the value of the build that was committed).

    On ConflictError the head is re-read and the change rebuilt (so `build` must derive everything from
    the revision it is given, and its value describes that revision's change). Returns the unchanged head
    when `build` returns no operations. Raises the last ConflictError after `attempts` tries.
    `paced`: the caller already took the first attempt's commit slot (`store.pace(area)`, same thread).
    """
    if attempts < 1:
        raise ValueError("attempts must be >= 1")
    pace = getattr(store, "pace", None)  # a store with a commit budget (HubStore) waits for its slot first
    for attempt in range(attempts):
        if pace is not None and not (paced and attempt == 0):
            pace(area)
        head = store.head(area)
        add, delete, value = build(store, head)
        if not add and not delete:
            # The slot stays spent in the ledger, but must not pass to this thread's next commit: that one
            # would then go without a slot of its own, outside the budget.
            unpace = getattr(store, "unpace", None)
            if unpace is not None:
                unpace(area)
            return head, value
        try:
            return store.commit(area, add, delete, message, parent=head), value
        except ConflictError:
            if attempt == attempts - 1:
                raise
            # Jittered exponential backoff, so competing writers stop colliding in lockstep.
            time.sleep(random.uniform(0, backoff * 2**attempt))
    raise AssertionError("unreachable")
