"""What anyone may read: submission pages, the caller's own submissions and notices, boards at the
results head, reference sets, re-score reports, releases, health."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, cast

from scoring.tracks import TRACK_NAMES, get_track, metric_spec
from scoring.version import SCORER_VERSION
from worker import live_board, quotas
from worker.heartbeat import RESTARTING_SHOWN
from worker.own import PRIVATE_REASON, OwnSubmission, own_submission
from worker.records import (
    PUBLISHED,
    check_track,
    format_report_path,
    is_submission_id,
    ladder_message,
    not_released,
    public_version,
    public_view,
    shows_result,
    staged_result_path,
)
from worker.service.state import (
    FORMAT_REPORT_TRACKS,
    RELEASE_NAME,
    RescoreReport,
    ServiceBase,
)
from worker.store import layout
from worker.submissions import (
    AREA,
    find_record,
    load_record,
    read_json,
)
from worker.views import (
    Health,
    LatestRelease,
    Notice,
    PublishedRelease,
    ReferenceSetView,
    ReleaseNotice,
    RescoreNotice,
    ResultView,
    SubmissionView,
)

log = logging.getLogger(__name__)

# Results and format reports kept per web process (`Reads._written_once`): a VARM result is ~6 kB, so ~2 MB.
WRITTEN_ONCE_CACHED = 256


class Reads(ServiceBase):
    def submission(self, submission_id: str, viewer: str | None = None) -> SubmissionView | None:
        """Public fields, status, error and (once scored) the latest result of one submission.

        None (404) when there is none, and for a hidden one unless `viewer` (the caller's identity, None
        when anonymous) is its submitter or a maintainer."""
        record = find_record(self.store, submission_id)
        if record is None or not self.may_see(record, viewer):
            return None
        if record["status"] == PUBLISHED:
            # Read-your-writes for "poll until published, then read the board": the results commit that
            # shows it is already in, so make the next leaderboard() re-check the head.
            with self._lock:
                self._head = None
        shown: ResultView | None = None
        if record["versions"]:
            version = record["versions"][-1]["version"]
            result = self._result(record["track"], submission_id, version)
            if result is not None and shows_result(record, result):
                shown = ResultView(version=version, result=result)
        track = get_track(record["track"])
        return SubmissionView(
            **public_view(record),
            status=record["status"],
            error=record["error"],
            report=record.get("report"),
            hidden=record.get("hidden", False),
            # Hidden by its submitter (who may make it public), not by a maintainer.
            private=bool(record.get("hidden")) and record.get("hidden_reason") == PRIVATE_REASON,
            updated_at=record["updated_at"],
            history=record["history"],
            versions=[public_version(v) for v in record["versions"]],
            format_report=self._format_report(record["track"], submission_id),
            result=shown,
            released=not not_released(record),
            not_released=ladder_message(record),
            primary_metric=track.primary_metric,
            primary_metric_label=metric_spec(track.name, track.primary_metric).header(),
        )

    def my_submissions(
        self, identity: str, track: str | None = None, limit: int = 200
    ) -> list[OwnSubmission]:
        """The caller's own submissions (private and held ones included), newest first, at most `limit`:
        status, headline scores of the latest result, format-report count and a link to each page.

        Found through the caller's quota index (one small file per track), so it costs one read per
        submission shown, never a scan of everyone's records."""
        identity = quotas.normalise_identity(identity)
        if not identity:
            return []
        tracks = [check_track(track)] if track else list(TRACK_NAMES)
        entries = []
        for name in tracks:
            index = read_json(self.store, AREA, quotas.index_path(identity, name)) or quotas.empty_index()
            entries += [(e["at"], name, e["submission_id"]) for e in index["accepted"]]
        out = []
        for _, name, submission_id in sorted(entries, reverse=True):
            record = load_record(self.store, name, submission_id)
            if record is None or not quotas.owned_by(record, identity):
                continue
            result = None
            if record["versions"]:
                version = record["versions"][-1]["version"]
                result = self._result(name, submission_id, version)
                result = result if shows_result(record, result) else None
            out.append(own_submission(record, result, self._format_report(name, submission_id)))
            if len(out) >= limit:
                break
        return out

    def notices(self, identity: str) -> list[Notice]:
        """What changed the caller's numbers or ranks since they looked (disclosure §4, issue 24.6): per
        track, their rows in the latest published re-score (primary metric old -> new, rank old -> new) and
        in the latest release (its rank and Rank Delta), each with a link to the report or the release."""
        own = {s.submission_id: s for s in self.my_submissions(identity)}
        out: list[Notice] = []
        for track in sorted({s.track for s in own.values()}):
            primary = get_track(track).primary_metric
            for report in self.rescore_reports(track, limit=1):
                for row in report.get("submissions") or []:
                    changed = row.get("delta", {}).get(primary) or row.get("old_rank") != row.get("new_rank")
                    if row.get("submission_id") in own and changed and not row.get("skipped"):
                        out.append(
                            RescoreNotice(
                                kind="rescore",
                                track=track,
                                submission_id=row["submission_id"],
                                model_name=row.get("model_name"),
                                metric=primary,
                                old=(row.get("old") or {}).get(primary),
                                new=(row.get("new") or {}).get(primary),
                                old_rank=row.get("old_rank"),
                                new_rank=row.get("new_rank"),
                                at=report.get("generated_at"),
                                link=f"/api/v1/rescore/{track}/{report['run']}",
                            )
                        )
            latest = self.latest_release(track)
            release = self.published_release(track, latest["name"]) if latest else None
            if latest is None or release is None:
                continue
            for row in release["rows"]:
                if row.get("submission_id") in own:
                    out.append(
                        ReleaseNotice(
                            kind="release",
                            track=track,
                            submission_id=row["submission_id"],
                            model_name=row.get("model_name"),
                            release=latest["name"],
                            rank=row.get("rank"),
                            live_rank=row.get("live_rank"),
                            rank_delta=row.get("rank_delta"),
                            at=latest["date"],
                            link=latest["url"],
                        )
                    )
        return sorted(out, key=lambda n: n["at"] or "", reverse=True)

    def _format_report(self, track: str, submission_id: str) -> dict | None:
        """The intake format report (None for tracks without one and for older submissions): written in the
        upload's commit, so a missing one stays missing."""
        if track not in FORMAT_REPORT_TRACKS:
            return None
        return self._written_once(format_report_path(track, submission_id), missing_is_final=True)

    def _result(self, track: str, submission_id: str, version: int) -> dict | None:
        """A version's result: written with the version in one commit and never rewritten (a new result is
        a new version), so it is read once per process; a missing one is asked again."""
        return self._written_once(staged_result_path(track, submission_id, version), missing_is_final=False)

    def _written_once(self, path: str, *, missing_is_final: bool) -> dict | None:
        """A submissions-area file that never changes once written, through this process's small LRU: each
        status poll reads the latest version's result and the format report, a GET each on the Hub (two of
        a poll's three requests). Who may see it is decided on the record, read fresh each time."""
        with self._lock:
            if path in self._written:
                self._written.move_to_end(path)
                return self._written[path]
        data = read_json(self.store, AREA, path)
        if data is not None or missing_is_final:
            with self._lock:
                self._written[path] = data
                while len(self._written) > WRITTEN_ONCE_CACHED:
                    self._written.popitem(last=False)
        return data

    def results_head(self) -> str:
        """The results area's head revision, read from the store at most once every `head_ttl` seconds (or
        sooner after `head_moved`)."""
        now = time.monotonic()
        with self._lock:
            if self._head is not None and now - self._head[1] < self.head_ttl:
                return self._head[0]
            moves = self._head_moves
        head = self.store.head("results")
        with self._lock:
            # A move announced while this read was in flight may be newer than what it read: keep nothing.
            self._head = (head, now) if moves == self._head_moves else None
        return head

    def head_moved(self, revision: str = "") -> None:
        """Something said the results head moved (a worker's announcement, the Hub's webhook): the next
        `results_head` reads it from the store instead of trusting the cached one."""
        with self._lock:
            self._head_moves += 1
            if not revision or self._head is None or self._head[0] != revision:
                self._head = None

    def leaderboard(self, track: str) -> dict:
        """The published leaderboard of `track` (cached per results head; treat the dict as read-only)."""
        return self.leaderboard_at(track)[1]

    def leaderboard_at(self, track: str) -> tuple[str, dict]:
        """(results head, the leaderboard at that head): the head names the board's revision (an ETag)."""
        check_track(track)
        head = self.results_head()
        with self._lock:
            cached = self._boards.get(track)
            if cached is not None and cached[0] == head:
                return cached
            track_lock = self._board_locks.setdefault(track, threading.Lock())
        with track_lock:  # concurrent viewers after a publish wait for one read instead of all reading
            with self._lock:
                cached = self._boards.get(track)
            if cached is not None and cached[0] == head:
                return cached
            board = self._read_leaderboard(track, head)
            with self._lock:
                self._boards[track] = (head, board)
        return head, board

    def _read_leaderboard(self, track: str, revision: str) -> dict:
        # The live board (rank table + segments; a reader after a publish reads the rank table and the
        # changed segments only), or leaderboard.json of a store published before it existed.
        board = live_board.read(self.store, track, revision, self._segments)[0]
        if board is None:
            track_obj = get_track(track)
            return {
                "track": track,
                "title": track_obj.title,
                "primary_metric": track_obj.primary_metric,
                "headline_metrics": list(track_obj.headline_metrics),
                "generated_at": None,
                "scorer_version": None,
                "rows": [],
            }
        return board

    def reference_set(self, track: str) -> ReferenceSetView:
        """What the track is scored on, from the published manifest (cached per results head)."""
        check_track(track)
        head = self.results_head()
        with self._lock:
            cached = self._reference_sets.get(track)
        if cached is not None and cached[0] == head:
            return cached[1]
        manifest = read_json(self.store, "results", layout.public_file(track, layout.REFERENCE_SET), head)
        manifest = manifest or {}
        ready = self.store.read("results", layout.public_file(track, "test_inputs.jsonl"), head) is not None
        info = ReferenceSetView(
            track=track,
            kind=manifest.get("kind") if ready else None,
            ready=ready,
            rows=manifest.get("rows", {}) if ready else {},
            sha256=manifest.get("sha256") if ready else None,
            installed_at=manifest.get("installed_at") if ready else None,
            # ../shared/spec/disclosure.md §1; a manifest from before test statuses is private
            test_status=manifest.get("test_status", "private") if ready else None,
        )
        with self._lock:
            self._reference_sets[track] = (head, info)
        return info

    def published_result(self, track: str, submission_id: str, version: int) -> dict | None:
        """The public envelope of one published result version (`<track>/results/<id>/v<N>.json`); versions
        never change once published."""
        if not is_submission_id(submission_id):
            return None
        return read_json(self.store, "results", layout.published_result_path(track, submission_id, version))

    def latest_rescore_report(self, track: str) -> RescoreReport | None:
        """The newest re-score diff report of `track`, dry run or published, for maintainers.

        Dry runs leave `rescore/<track>/<run>/report.json` in the private submissions area; real runs
        publish `rescore/<track>/<run>.json` in the results area."""
        prefix = layout.rescore_reports_dir(track)
        found: list[tuple[str, str, str]] = []  # (run, area, path)
        for area, suffix in ((AREA, "/report.json"), ("results", ".json")):
            for path in self.store.list(area, prefix):
                if path.endswith(suffix):
                    found.append((path[len(prefix) :].removesuffix(suffix), area, path))
        if not found:
            return None
        run, area, path = max(found)
        try:
            data = read_json(self.store, area, path) or {}
        except ValueError:
            data = None
        dry_run = area == AREA if data is None else bool(data.get("dry_run", area == AREA))
        return RescoreReport(run=run, dry_run=dry_run, path=path, data=data)

    def releases(self, track: str | None = None) -> list[dict]:
        """The signed `release.json` of every release (of `track`), newest name first."""
        tracks = [check_track(track)] if track else list(TRACK_NAMES)
        found = []
        for name in tracks:
            prefix = f"releases/{name}/"
            for path in self.store.list("results", prefix):
                if path.endswith("/release.json") and path.count("/") == 3:
                    body = read_json(self.store, "results", path)
                    if body is not None:
                        found.append(body)
        return sorted(found, key=lambda r: (r["track"], r["name"]), reverse=True)

    def latest_release(self, track: str) -> LatestRelease | None:
        """The track's newest release as the board names it ({"name", "date", "url"}), or None (cached
        per results head: every board view asks)."""
        head = self.results_head()
        cached = self._latest_releases.get(track)
        if cached is not None and cached[0] == head:
            return cached[1]
        found = self.releases(track)
        newest = found[0] if found else None
        latest = None
        if newest is not None:
            url = f"/api/v1/releases/{track}/{newest['name']}"
            latest = LatestRelease(name=newest["name"], date=newest["date"], url=url)
        self._latest_releases[track] = (head, latest)
        return latest

    def rescore_reports(self, track: str, limit: int = 50) -> list[dict]:
        """The published re-score diff reports of `track`, newest first (at most `limit`)."""
        prefix = layout.rescore_reports_dir(check_track(track))
        names = sorted((p for p in self.store.list("results", prefix) if p.endswith(".json")), reverse=True)
        found = (read_json(self.store, "results", path) for path in names[:limit])
        return [report for report in found if report is not None]

    def rescore_report(self, track: str, run: str) -> dict | None:
        """One published re-score diff report; None when there is none (or the run is malformed)."""
        try:
            path = layout.rescore_report(check_track(track), run)
        except ValueError:
            return None
        return read_json(self.store, "results", path)

    def erratum_due(self, release: dict) -> bool:
        """Did a re-score come after `release` (published later, or a scorer other than the one it was
        cut with)? Then its numbers may differ from the live ones, and a maintainer may cut `<name>.1`
        next to it; the release itself never changes."""
        if release.get("scorer_version") != SCORER_VERSION:
            return True
        newest = self.rescore_reports(release["track"], limit=1)  # run stamps sort in time order
        return any(report.get("generated_at", "") > release["date"] for report in newest)

    def published_release(self, track: str, name: str) -> PublishedRelease | None:
        """One release: its `release.json` and its signed rows; None when there is none."""
        if not RELEASE_NAME.match(name):
            return None
        folder = f"releases/{check_track(track)}/{name}/"
        meta = read_json(self.store, "results", folder + "release.json")
        rows = read_json(self.store, "results", folder + "rows.json")
        if meta is None or rows is None:
            return None
        citation = self.store.read("results", folder + "citation.bib")
        return PublishedRelease(
            release=meta, rows=rows["rows"], citation=citation.decode() if citation else ""
        )

    def public_key(self) -> str | None:
        """The workers' Ed25519 public key (base64), published with the first publish."""
        data = self.store.read("results", "keys/ed25519.pub")
        return data.decode().strip() if data else None

    def health(self) -> Health:
        checks = {"store": self._store_health()}
        checks["broker"] = "ok" if self.enqueue.ping() else "unreachable"
        if self.config.store == "local":
            try:
                free = self.disk_free_mb()
                checks["disk"] = "ok" if free >= self.config.min_free_disk_mb else f"full: {free} MB free"
            except OSError as exc:
                checks["disk"] = f"error: {type(exc).__name__}"
        info: dict[str, Any] = {}
        if self.liveness is not None:
            try:
                ages = self.liveness.ages()
            except Exception as exc:  # the heartbeat store is the broker: reported above
                ages, checks["worker"] = {}, f"unknown: {type(exc).__name__}"
            else:
                worker = ages.get("worker")
                checks["worker"] = (
                    "ok"
                    if worker is not None and worker < self.stale_after
                    else "no worker alive"
                    if worker is None
                    else f"no heartbeat for {int(worker)} s"
                )
                restarting = ages.get("restarting", float("inf"))
                if checks["worker"] != "ok" and restarting < RESTARTING_SHOWN:  # the entrypoint restarts it
                    checks["worker"] = f"restarting (exited {int(restarting)} s ago)"
            # Beat may run elsewhere (or not yet): reported, not part of "ok".
            info["beat"] = "ok" if ages.get("beat", float("inf")) < self.stale_after else "no heartbeat"
        budget = getattr(self.store, "budget_status", None)
        if budget is not None:  # the Hub's commit budget per repo, as every process of the deployment used it
            info["hub_commits"] = budget()
        return cast(Health, {"ok": all(v == "ok" for v in checks.values()), **checks, **info})

    def _store_health(self) -> str:
        """ "ok", or what the Hub last said while it refuses ("degraded (rate-limited until ...)",
        "unavailable (next try at ...)"): read from the store's gate, so health sends nothing to a Hub
        that is refusing; else one head read."""
        gate = getattr(self.store, "gate", None)
        if gate is not None and (state := gate.state()):
            return state
        try:
            self.store.head("results")
            return "ok"
        except Exception as exc:  # health must answer, whatever broke
            state = gate.state() if gate is not None else None
            return state or f"error: {type(exc).__name__}"
