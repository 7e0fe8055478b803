"""Growth benchmark (issue 15 item 6): what one more submission costs as a board grows; prints figures.

For each N it builds a LocalStore holding N scored submissions of the demo VARM track with the project's own
code: a pool of `--pool` distinct prediction files is scored by the real scoring job (staged results and
private row outcomes), then N submission records are committed that reuse those scored versions (the
store's content addressing keeps the copies cheap), and one `Publisher.publish` builds the board (real
paired-bootstrap tie groups). Then, per new submission (a record + its scored version, then a publish):

- publish time with the same Publisher (warm: since issue 26 it applies only the changes since its last
  publish, worker/gold/publish/incremental.py) and with a new Publisher (a worker after a restart: cold),
  wall and this process's CPU (steadier on a shared host);
- store operations by kind during the publish (reads, lists, heads, commits: on the Hub each is a request)
  and bytes committed (as measured, and "cycled": with the open board segment counted at its mean size
  over a whole cycle of 1..SEGMENT_ROWS rows and the changelog at its mean over a cycle of its head, so
  the figure does not depend on where N falls in those cycles; the amortised figure uses it), and how
  much the store folder grew;
- `GET /api/v1/leaderboard?track=varm` through the web app (in-process, warm): latency, body bytes as sent
  (gzip when the server compresses) and raw;
- a web process started cold on the store: store reads (Hub requests, with an empty download cache) and
  seconds until it answers the board;
- a reconciler pass when nothing changed since the previous one: store reads (Hub requests);
and the log-log slope of each figure against N (0: flat; 1: grows like N).

`--api-n` adds board/API-only sizes (default 10,000): boards written by `Publisher.board` with a stand-in tie
rule (as bench/bench_ui.py does), since those rows have no private row outcomes.

`--store hub` runs the same measurement with the real HubStore (huggingface_hub) against tests/fakehub.py on
127.0.0.1, started by this script: Hub HTTP requests are counted by route at the server (`/_fake/stats`: each
is one request the real Hub would count against its rate limits) and commits by repo; the API figures and the
folder sizes are LocalStore's only (the API serves the same bytes from either store). The warm publish's wall
time is also split into the test Hub's own handling of its requests (`/_fake/busy`, printed by route: a cost
of the stand-in, which answers listings and lookups from sorted paths but still copies the repository's
file table per commit and runs in one Python process beside the client) and the rest (the service's side,
with the HTTP round trips).

`--root DIR` imports the project from another checkout (e.g. `--root /work/main` for "before" figures).

Usage: .venv/bin/python bench/bench_growth.py [--store local|hub] [--n 100,1000,3000] [--api-n 10000]
                                              [--root DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

TRACK = "varm"


def _use_root(root: Path) -> None:
    sys.path.insert(0, str(root))


class Counting:
    """A store proxy counting calls by method and bytes committed (every other attribute delegates)."""

    def __init__(self, store) -> None:
        self._store = store
        self.calls: Counter[str] = Counter()
        self.committed = 0
        self.by_file: Counter[str] = Counter()  # bytes committed by file name (ids and versions folded)

    def reset(self) -> None:
        self.calls.clear()
        self.committed = 0
        self.by_file.clear()

    def __getattr__(self, name: str):
        attr = getattr(self._store, name)
        if not callable(attr) or name.startswith("_"):
            return attr

        def counted(*args, **kwargs):
            self.calls[name] += 1
            if name == "commit":
                add = args[1] if len(args) > 1 else kwargs.get("add", {})
                self.committed += sum(len(v) for v in add.values())
                for path, data in add.items():
                    self.by_file[file_kind(path)] += len(data)
            return attr(*args, **kwargs)

        return counted


def file_kind(path: str) -> str:
    """`varm/results/<id>/v3.json` for `varm/results/0123456789abcdef/v3.json`: a path's kind."""
    return re.sub(r"(?<=/)[0-9a-f]{2}(?=\.json$)", "<xx>", re.sub(r"[0-9a-f]{16}", "<id>", path))


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def build_pool(store, size: int) -> list[str]:
    """`size` distinct VARM prediction files, scored by the real scoring job. Returns their ids."""
    from tests.conftest_ui import seed_public
    from tests.factories import mixed_predictions
    from worker.gold.references import ReferenceCache
    from worker.gold.scoring_job import score_submission
    from worker.records import new_record, predictions_path, record_path
    from worker.submissions import dumps

    seed_public(store, TRACK)
    add, ids = {}, []
    for i in range(size):
        data = mixed_predictions(TRACK, 0.05 + 0.9 * i / max(size - 1, 1), seed=f"pool-{i}")
        sid = hashlib.sha256(f"pool-{i}".encode()).hexdigest()[:16]
        record = new_record(
            submission_id=sid,
            track=TRACK,
            sha256=hashlib.sha256(data).hexdigest(),
            submitter=f"pool{i}",
            metadata={
                "model_name": f"pool-{i}",
                "organisation": "bench",
                "model_type": "open",
                "setting": "zero-shot",
                "paper_url": "",
                "code_url": "",
                "description": "",
            },
            is_baseline=False,
            at=f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}.000Z",
        )
        add[predictions_path(TRACK, sid)] = data
        add[record_path(TRACK, sid)] = dumps(record)
        ids.append(sid)
    store.commit("submissions", add, [], f"bench: pool of {size}")
    refs = ReferenceCache(store)
    for sid in ids:
        assert score_submission(store, refs.get, TRACK, sid, time_limit=300) == "scored"
    return ids


def copies(store, pool: list[str], start: int, count: int) -> dict[str, bytes]:
    """Files of `count` new scored submissions (ids from `start`), each reusing a pool member's scored
    version: its record (new id, submitter, time), staged result and row outcomes."""
    from worker.records import SCORED, record_path, rows_path, staged_result_path
    from worker.submissions import dumps, load_record

    add: dict[str, bytes] = {}
    records = []
    for k in range(start, start + count):
        source = pool[k % len(pool)]
        record = load_record(store, TRACK, source)
        version = record["versions"][-1]["version"]
        sid = hashlib.sha256(f"copy-{k}".encode()).hexdigest()[:16]
        minute, day = (60 + k) % 1440, 1 + (60 + k) // 1440
        record = {
            **record,
            "submission_id": sid,
            "submitter": f"user{k}",
            "status": SCORED,  # scored, waiting for its publish
            "created_at": f"2026-01-{day:02d}T{minute // 60:02d}:{minute % 60:02d}:00.000Z",
            "metadata": {**record["metadata"], "model_name": f"model-{k:05d}"},
        }
        records.append(record)
        for path in (staged_result_path, rows_path):
            add[path(TRACK, sid, version)] = store.read("submissions", path(TRACK, source, version))
    try:  # the records with the record index, as the service and the workers write them
        from worker.submissions import record_files
    except ImportError:  # an older checkout (--root): records only
        add.update({record_path(TRACK, r["submission_id"]): dumps(r) for r in records})
    else:
        add.update(record_files(store, store.head("submissions"), records))
    return add


class FakeHub:
    """tests/fakehub.py as a subprocess for `--store hub`, with its request and commit counters."""

    def __init__(self) -> None:
        self.proc = self.url = None

    def start(self, tmp: Path) -> FakeHub:
        from tests import fakehub

        self.proc, self.url = fakehub.start()
        # huggingface_hub reads these once, at import: set before anything imports it.
        os.environ.update(
            HF_ENDPOINT=self.url,
            HF_HOME=str(tmp / "hf-home"),
            HF_TOKEN=HUB_TOKEN,
            HF_HUB_DISABLE_TELEMETRY="1",
            HF_HUB_DISABLE_PROGRESS_BARS="1",
        )
        return self

    def stop(self) -> None:
        from tests import fakehub

        if self.proc is not None:
            fakehub.stop(self.proc)

    def _call(self, method: str, route: str):
        import urllib.request

        request = urllib.request.Request(
            self.url + route, data=b"{}" if method == "POST" else None, method=method
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def reset(self) -> None:
        self._call("POST", "/_fake/reset")

    def stats(self) -> dict[str, int]:
        return self._call("GET", "/_fake/stats")

    def reads(self) -> dict[str, int]:
        """File reads since the last reset by repo and path, ids as "*" (empty from an older fake)."""
        try:
            return self._call("GET", "/_fake/reads")
        except OSError:
            return {}

    def busy(self) -> dict[str, float]:
        """Seconds the test Hub spent handling requests since the last reset, by route (empty from an older
        fake)."""
        try:
            return self._call("GET", "/_fake/busy")
        except OSError:
            return {}

    def open_store(self, data_dir: Path, cache: str = "hf-cache"):
        from worker.config import Config
        from worker.store import open_store

        tag = hashlib.sha256(str(data_dir).encode()).hexdigest()[:8]
        # Unpaced: this bench counts one publish's work; bench_burst.py measures the commit budget.
        config = Config(
            data_dir=data_dir,
            store="hub",
            hf_token=HUB_TOKEN,
            hf_endpoint=self.url,
            hf_commits_per_hour=1_000_000,
            hf_references_repo=f"tester/references-{tag}",
            hf_submissions_repo=f"tester/submissions-{tag}",
            hf_results_repo=f"tester/results-{tag}",
        )
        return open_store(config, cache_dir=data_dir / cache, base_delay=0.01)


HUB_TOKEN = "hf_test_write_token"  # tests/fakehub.py's user "tester"
EXPORT_FILES = ("leaderboard.json", "leaderboard.parquet", "README.md")  # rebuilt on a cadence


def store_with(data_dir: Path, n: int, pool_size: int, hub: FakeHub | None = None):
    from worker.gold.publish import Publisher
    from worker.store.local import LocalStore

    store = LocalStore(data_dir) if hub is None else hub.open_store(data_dir)
    pool = build_pool(store, pool_size)
    for start in range(pool_size, n, 1000):
        store.commit("submissions", copies(store, pool, start, min(1000, n - start)), [], "bench: copies")
    t0 = time.perf_counter()
    Publisher(store).publish(TRACK, note="bench: initial board")
    return store, pool, time.perf_counter() - t0


def one_more(
    counting: Counting,
    publisher,
    pool: list[str],
    k: int,
    data_dir: Path,
    hub: FakeHub | None = None,
    export: bool = False,
) -> dict:
    """Add submission `k` (its scored record, result and row outcomes in one commit) and publish it; the
    figures of that publish (`hub`: Hub requests by route), and the bytes of both commits (the upload's
    own predictions file and its earlier status commits are not counted: they do not depend on N)."""
    before = folder_bytes(data_dir)
    counting.reset()
    counting.commit("submissions", copies(counting._store, pool, k, 1), [], f"bench: submission {k}")
    record_bytes = counting.committed
    counting.reset()
    if hub is not None:
        hub.reset()
    t0, c0 = time.perf_counter(), time.process_time()
    out = publisher.publish(TRACK, note=f"bench {k}", **({"export": True} if export else {}))
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    assert out["changed"], out
    return {
        "seconds": seconds,
        # The test Hub's own handling: a cost of this stand-in, not of the service (the wall time without it
        # is the client's side), by route so a route whose cost grows with N shows.
        "hub_routes_s": (routes := hub.busy() if hub is not None else {}),
        "hub_s": sum(routes.values()),
        "cpu": cpu,  # this process's CPU: on a shared host, steadier than the wall time
        "ops": dict(counting.calls) if hub is None else hub.stats(),
        "commits": counting.calls.get("commit", 0),
        "committed": counting.committed + record_bytes,
        "by_file": dict(counting.by_file),
        "grew": folder_bytes(data_dir) - before if hub is None else 0,
    }


def segment_cycle(store) -> float | None:
    """Mean bytes of the open segment over a whole cycle of it: the live board's first segment (full at
    these N) re-encoded with its first 1, 2, ..., all rows. A publish rewrites the open segment, whose size
    runs through that cycle as N grows: the bytes figure counts this mean instead of where N happens to
    fall in it. None for a checkout without a live board."""
    try:
        from worker import live_board
    except ImportError:
        return None
    data = store.read("results", f"{TRACK}/board/rows/00000.json")
    rows = live_board.decode_segment(data) if data else []
    if len(rows) < live_board.SEGMENT_ROWS:
        return None
    return statistics.fmean(len(live_board.encode_segment(rows[:k])) for k in range(1, len(rows) + 1))


def changelog_cycle(store) -> float | None:
    """Mean bytes of the changelog a publish commits over a whole cycle of its head: the head of j lines
    (j = 1..K, until it is CHANGELOG_HEAD_BYTES long) then, at the seal, a part of K lines and a head of
    one; lines as long as the last one (one added id). The bench's stores start with one line naming every
    initial entry (24 kB at N = 1,000), which a steady state does not have."""
    try:
        from worker.gold.publish import CHANGELOG_HEAD_BYTES
    except ImportError:
        return None
    lines = (store.read("results", "changelog.jsonl") or b"").splitlines(keepends=True)
    if not lines:
        return None
    size = len(lines[-1])
    k = math.ceil(CHANGELOG_HEAD_BYTES / size)
    return size * ((k + 1) / 2 + 1)


def cycled(figures: dict, cycles: tuple[float | None, float | None]) -> float:
    """Bytes a publish committed (`one_more`'s figures) with the two files whose size runs through a cycle
    as publishes go by counted at their cycle means: the open board segment, the changelog (head, part)."""
    committed = figures["committed"]
    segment, changelog = cycles
    if segment is not None:
        committed += segment - sum(v for k, v in figures["by_file"].items() if "/board/rows/" in k)
    if changelog is not None:
        committed += changelog - sum(v for k, v in figures["by_file"].items() if k.startswith("changelog"))
    return committed


def exported(figures: dict) -> int:
    """Bytes of the complete exports that a publish (`one_more`'s figures) committed."""
    return sum(v for k, v in figures["by_file"].items() if k.endswith(EXPORT_FILES))


def cold_web_start(data_dir: Path, hub: FakeHub | None, k: int) -> dict:
    """A web process started on this store: the store reads (on the Hub: requests, with an empty download
    cache, as on a new machine) and seconds until it answers the board's first page."""
    from tests.conftest_pipeline import RecordingEnqueuer
    from worker.config import Config
    from worker.service import Service
    from worker.store import WEB_AREAS, open_store

    config = Config(data_dir=data_dir)
    store = open_store(config, areas=WEB_AREAS) if hub is None else hub.open_store(data_dir, f"web-cache-{k}")
    counting = Counting(store)
    if hub is not None:
        hub.reset()
    t0 = time.perf_counter()
    board = Service(config, counting, RecordingEnqueuer()).leaderboard(TRACK)
    seconds = time.perf_counter() - t0
    assert board and board["rows"], "the board is empty"
    routes = hub.stats() if hub is not None else dict(counting.calls)
    reads = hub.reads() if hub is not None else {}
    return {
        "web_cold_s": seconds,
        "web_cold_requests": sum(routes.values()),
        "web_cold_routes": routes,
        "web_cold_reads": reads,
    }


def idle_reconcile(store, hub: FakeHub | None) -> int:
    """Store operations (on the Hub: requests) of a reconciler pass when nothing changed since the last."""
    from tests.conftest_pipeline import RecordingEnqueuer
    from worker.gold.reconcile import reconcile

    counting = Counting(store)
    reconcile(counting, RecordingEnqueuer(), stuck_after=0, tracks=(TRACK,))  # the first pass learns
    counting.reset()
    if hub is not None:
        hub.reset()
    reconcile(counting, RecordingEnqueuer(), stuck_after=0, tracks=(TRACK,))
    return sum(hub.stats().values()) if hub is not None else sum(counting.calls.values())


def api_figures(data_dir: Path, rounds: int = 7) -> dict:
    from fastapi.testclient import TestClient

    from space.auth import Auth
    from space.server import create_app
    from tests.conftest_pipeline import RecordingEnqueuer
    from worker.config import Config
    from worker.service import Service
    from worker.store import WEB_AREAS, open_store

    config = Config(data_dir=data_dir)
    service = Service(config, open_store(config, areas=WEB_AREAS), RecordingEnqueuer())
    client = TestClient(create_app(config, service=service, auth=Auth(config, "open"), with_ui=False))
    url = f"/api/v1/leaderboard?track={TRACK}"
    t0 = time.perf_counter()
    first = client.get(url, headers={"Accept-Encoding": "gzip"})
    first_s = time.perf_counter() - t0
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        response = client.get(url, headers={"Accept-Encoding": "gzip"})
        times.append(time.perf_counter() - t0)
    assert response.status_code == 200 and first.status_code == 200
    return {
        "first_s": first_s,
        "warm_s": statistics.median(times),
        "sent": int(response.headers.get("content-length", len(response.content))),
        "gzip": response.headers.get("content-encoding") == "gzip",
        "raw": len(response.content),
        "rows": len(response.json()["rows"]),
    }


def stand_in_board(data_dir: Path, n: int) -> None:
    """A board of `n` rows with the publisher's own board code and a stand-in tie rule (no row outcomes)."""
    from tests.factories import PRIMARY, make_entries
    from worker.gold import publish
    from worker.leaderboard import metric
    from worker.store.local import LocalStore

    class StandInTies(publish.Publisher):
        def significance(self, track: str):
            primary = PRIMARY[track]
            return lambda a, b: (metric(a.result, primary) or 0) - (metric(b.result, primary) or 0) > 0.02

    store = LocalStore(data_dir)
    board = StandInTies(store).board(TRACK, make_entries(TRACK, n, seed=1))
    try:
        from worker.live_board import board_files
    except ImportError:  # an older checkout (--root): the board was leaderboard.json and its parquet
        from worker.leaderboard import to_parquet
        from worker.store.codec import pretty

        def board_files(board: dict) -> dict[str, bytes]:
            return {
                f"{TRACK}/leaderboard.json": pretty(board),
                f"{TRACK}/leaderboard.parquet": to_parquet(board["rows"]),
            }

    store.commit("results", board_files(board), [], "bench: board")


def slope(ns: list[int], values: list[float]) -> float | None:
    points = [(math.log(n), math.log(v)) for n, v in zip(ns, values, strict=True) if n > 0 and v and v > 0]
    if len(points) < 2:
        return None
    xs, ys = zip(*points, strict=True)
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x in xs)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", default="100,1000,3000", help="store sizes (submissions on the track)")
    ap.add_argument("--api-n", default="10000", help="extra board/API-only sizes ('' for none)")
    ap.add_argument("--pool", type=int, default=40, help="distinct scored prediction files")
    ap.add_argument("--warm", type=int, default=3, help="warm publishes measured per N (median)")
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    ap.add_argument("--store", choices=("local", "hub"), default="local")
    args = ap.parse_args()
    _use_root(args.root.resolve())
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.fakehub from this checkout
    with tempfile.TemporaryDirectory() as home:
        hub = FakeHub().start(Path(home)) if args.store == "hub" else None
        try:
            return run(args, hub)
        finally:
            if hub is not None:
                hub.stop()


def run(args: argparse.Namespace, hub: FakeHub | None) -> int:
    from worker.gold.publish import Publisher

    ns = [int(x) for x in args.n.split(",") if x]
    api_ns = [int(x) for x in args.api_n.split(",") if x] if hub is None else []
    print(
        f"project: {args.root.resolve()}  store: {args.store}  track: {TRACK}  pool: {args.pool} scored files"
    )
    results: dict[int, dict] = {}
    for n in ns:
        with tempfile.TemporaryDirectory() as tmp:
            data_dir = Path(tmp)
            store, pool, build_s = store_with(data_dir, n, args.pool, hub)
            counting = Counting(store)
            warm_publisher = Publisher(counting)
            one_more(counting, warm_publisher, pool, n, data_dir, hub)  # the publisher's first publish: cold
            warm = [
                one_more(counting, warm_publisher, pool, n + 1 + i, data_dir, hub) for i in range(args.warm)
            ]
            cold = one_more(counting, Publisher(counting), pool, n + 1 + args.warm, data_dir, hub)
            web = cold_web_start(data_dir, hub, n)  # the exports lag by the last few rows, as usual
            try:  # a publish that rebuilds the complete exports (leaderboard.json/.parquet, dataset card)
                full = one_more(counting, warm_publisher, pool, n + 2 + args.warm, data_dir, hub, export=True)
            except TypeError:  # an older checkout (--root): every publish rebuilt them
                full = warm[-1]
            export = exported(full)
            cycle = segment_cycle(store), changelog_cycle(store)
            reconcile_requests = idle_reconcile(store, hub)
            results[n] = {
                "build_s": build_s,
                "warm_s": statistics.median(w["seconds"] for w in warm),
                "warm_cpu_s": statistics.median(w["cpu"] for w in warm),
                **(
                    {
                        "warm_hub_s": statistics.median(w["hub_s"] for w in warm),
                        "warm_client_s": statistics.median(w["seconds"] - w["hub_s"] for w in warm),
                        "warm_hub_routes_ms": {
                            route: round(
                                1000 * statistics.median(w["hub_routes_s"].get(route, 0) for w in warm), 1
                            )
                            for route in sorted({r for w in warm for r in w["hub_routes_s"]})
                        },
                    }
                    if hub is not None
                    else {}
                ),
                "cold_s": cold["seconds"],
                "cold_cpu_s": cold["cpu"],
                "ops": warm[-1]["ops"],
                "cold_ops": cold["ops"],
                "requests": sum(warm[-1]["ops"].values()),
                "cold_requests": sum(cold["ops"].values()),
                "commits": warm[-1]["commits"],
                "committed": statistics.median(w["committed"] for w in warm),
                "cycled": statistics.median(cycled(w, cycle) for w in warm),
                "by_file": warm[-1]["by_file"],
                "export": export,
                # Amortised: this publish, plus the exports' bytes shared by the submissions between two
                # exports (a tenth of the rows change between them at a sustained rate; at a slower rate
                # the exports are rebuilt at most every EXPORT_EVERY_SECONDS however many submissions).
                "amortised": statistics.median(cycled(w, cycle) for w in warm)
                + (0 if exported(warm[-1]) else export / max(1, math.ceil(n / 10))),
                **web,
                "reconcile_requests": reconcile_requests,
            }
            if hub is None:
                api = api_figures(data_dir)
                results[n] |= {
                    "grew": statistics.median(w["grew"] for w in warm),
                    "store": folder_bytes(data_dir),
                    **{f"api_{k}": v for k, v in api.items()},
                }
        r = results[n]
        what = "store ops" if hub is None else "Hub requests"
        cold_reads = f" (files read: {r['web_cold_reads']})" if hub is not None else ""
        line = (
            f"N={n:>6}: publish warm {r['warm_s']:.3f} s (CPU {r['warm_cpu_s']:.3f} s"
            + (
                f"; the test Hub's handling {r['warm_hub_s']:.3f} s "
                f"(ms by route: {r['warm_hub_routes_ms']}), "
                f"the rest {r['warm_client_s']:.3f} s"
                if "warm_hub_s" in r
                else ""
            )
            + "), cold "
            f"{r['cold_s']:.2f} s (CPU {r['cold_cpu_s']:.2f} s) (initial board "
            f"{r['build_s']:.1f} s); {what} {r['requests']} {r['ops']} (cold: {r['cold_requests']}); "
            f"commits {r['commits']}; committed {r['committed'] / 1e6:.3f} MB "
            f"({r['cycled'] / 1e6:.3f} MB with open segment and changelog at cycle means; that "
            f"amortised incl. exports "
            f"{r['amortised'] / 1e6:.3f} MB; one export {r['export'] / 1e6:.3f} MB); cold web start "
            f"{r['web_cold_requests']} {'requests' if hub else 'store ops'} {r['web_cold_routes']} in "
            f"{r['web_cold_s']:.2f} s{cold_reads}; "
            f"idle reconcile pass {r['reconcile_requests']}"
        )
        if hub is None:
            line += (
                f", store grew {r['grew'] / 1e6:.3f} MB (store {r['store'] / 1e6:.0f} MB); API warm "
                f"{r['api_warm_s'] * 1000:.1f} ms, {r['api_sent'] / 1e3:.1f} kB sent"
                f"{' gzip' if r['api_gzip'] else ''} ({r['api_raw'] / 1e3:.1f} kB raw, "
                f"{r['api_rows']} rows)"
            )
        print(line, flush=True)
        top = sorted(r["by_file"].items(), key=lambda kv: -kv[1])[:6]
        print(
            "         committed by file (last warm publish): "
            + ", ".join(f"{k} {v / 1e3:.1f} kB" for k, v in top),
            flush=True,
        )
    for n in api_ns:
        with tempfile.TemporaryDirectory() as tmp:
            stand_in_board(Path(tmp), n)
            api = api_figures(Path(tmp))
        results.setdefault(n, {}).update({f"api_{k}": v for k, v in api.items()})
        print(
            f"N={n:>6} (board only): API first {api['first_s'] * 1000:.0f} ms, "
            f"warm {api['warm_s'] * 1000:.1f} ms, {api['sent'] / 1e3:.1f} kB sent"
            f"{' gzip' if api['gzip'] else ''} ({api['raw'] / 1e3:.1f} kB raw, {api['rows']} rows)",
            flush=True,
        )
    print("log-log slope against N (0 = flat, 1 = linear):")
    keys = (
        "warm_s",
        "warm_cpu_s",
        "warm_hub_s",
        "warm_client_s",
        "cold_s",
        "cold_cpu_s",
        "requests",
        "cold_requests",
        "web_cold_requests",
        "web_cold_s",
        "reconcile_requests",
        "commits",
        "committed",
        "cycled",
        "amortised",
        "export",
        "grew",
        "api_warm_s",
        "api_sent",
    )
    for key in keys:
        have = [n for n in sorted(results) if key in results[n]]
        s = slope(have, [float(results[n][key]) for n in have])
        print(f"  {key:>11}: {'n/a' if s is None else f'{s:+.2f}'}  ({', '.join(str(n) for n in have)})")
    print(
        json.dumps(
            {
                str(n): {k: v for k, v in r.items() if k != "by_file" and not k.endswith("ops")}
                for n, r in results.items()
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
