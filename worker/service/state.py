"""The Service's state and the contracts it is built on: what every part of it (intake, reads,
moderation) shares. The parts are mixed into one `Service` (worker/service/__init__.py)."""

from __future__ import annotations

import logging
import re
import shutil
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from worker import quotas
from worker.config import Config
from worker.nearcopy import (
    NearCopyIndex,
)
from worker.records import check_track, not_released
from worker.slots import WorkSlots
from worker.store import Store, layout
from worker.store.group import GroupCommit
from worker.submissions import (
    AREA,
)
from worker.views import LatestRelease, ReferenceSetView

log = logging.getLogger(__name__)
RELEASE_NAME = re.compile(r"^\d{4}-\d{2}(\.\d{1,3})?$")
PUBLIC_FILES = ("test_inputs.jsonl", "dev.jsonl", "subsets.json", "dev_subsets.json", "reference_set.json")
BASELINE_SUBMITTER = "baseline"
FORMAT_REPORT_MAX = 1000  # entries kept in format_report.json (the total is counted)
FORMAT_REPORT_TRACKS = ("varm",)  # tracks whose outputs follow a format protocol (ToxiTrace has none)


@dataclass(frozen=True)
class RescoreReport:
    """The newest re-score diff report of a track: `data` is None when its file is unreadable."""

    run: str  # a UTC stamp: the lexically last run is the newest
    dry_run: bool  # dry runs stay in the private submissions area; real runs are published
    path: str
    data: dict | None


class Liveness(Protocol):
    """Seconds since the freshest heartbeat of each kind of process ("worker", "beat")."""

    def ages(self) -> dict[str, float]: ...


class Enqueuer(Protocol):
    """How the Service hands work to workers (Celery in production, anything in tests)."""

    def score(self, track: str, submission_id: str) -> None: ...

    def publish(self, track: str, marks: bool = False) -> None:
        """Publish `track`; `marks`: commit its records' marks even while the commit budget is paced."""

    def rescore(self, track: str, dry_run: bool, actor: str, force: bool = False) -> str: ...

    def release(self, track: str, name: str, actor: str) -> str: ...

    def compare(self, track: str, a_id: str, b_id: str) -> dict: ...

    def ping(self) -> bool: ...


class ServiceBase:
    """The fields every part of the Service reads, made once; the parts add only methods."""

    def __init__(
        self,
        config: Config,
        store: Store,
        enqueue: Enqueuer,
        *,
        head_ttl: float = 1.0,
        liveness: Liveness | None = None,
        stale_after: float = 10.0,
    ) -> None:
        self.config = config
        self.store = store
        self.enqueue = enqueue
        self.head_ttl = head_ttl
        self.liveness = liveness  # None: health does not ask about workers (in-process tests)
        self.stale_after = stale_after
        self.slots = WorkSlots(config.work_slots, config.work_queue_seconds, config.work_memory_mb << 20)
        self._latest_releases: dict[
            str, tuple[str, LatestRelease | None]
        ] = {}  # track -> (results head, release)
        self._inputs: dict[str, tuple[str, list[dict]]] = {}  # track -> (sha256 of the file, inputs)
        self._lock = threading.Lock()  # guards the fields below
        self._head: tuple[str, float] | None = None  # (results head, time.monotonic() when read)
        self._head_moves = 0  # head_moved calls so far: a read that overlapped one is not cached
        self._boards: dict[str, tuple[str, dict]] = {}  # track -> (results head, leaderboard)
        self._board_locks: dict[str, threading.Lock] = {}  # one loader per track at a time
        self._segments: dict = {}  # live board segments read so far (live_board.read), by path
        self._reference_sets: dict[
            str, tuple[str, ReferenceSetView]
        ] = {}  # track -> (results head, reference_set())
        # Files never rewritten once written (results, format reports) by path: never stale (reads.py).
        self._written: OrderedDict[str, dict | None] = OrderedDict()
        self._near_copies = NearCopyIndex()  # the probe guard's index cache (worker/nearcopy.py)
        # Concurrent uploads share one commit (fewer Hub commits and no 412 storms; worker/store/group.py).
        self._uploads = GroupCommit(store, AREA)

    # -- shared by the parts: who may see what, the disk, the published files --------------------------

    def may_see(self, record: dict, viewer: str | None) -> bool:
        """Everyone may see a visible submission; a hidden one, or one the Ladder did not release, only its
        submitter and the maintainers."""
        if not record.get("hidden") and not not_released(record):
            return True
        return viewer is not None and (quotas.owned_by(record, viewer) or self.is_maintainer(viewer))

    def is_maintainer(self, identity: str) -> bool:
        return quotas.normalise_identity(identity) in {
            quotas.normalise_identity(m) for m in self.config.maintainers
        }

    def disk_free_mb(self) -> int:
        return shutil.disk_usage(Path(self.config.data_dir).resolve()).free // (1024 * 1024)

    def public_file(self, track: str, name: str) -> bytes | None:
        check_track(track)
        if name not in PUBLIC_FILES:
            return None
        return self.store.read("results", layout.public_file(track, name))
