"""Pipeline benchmarks; prints figures.

  upload -> visible in GET /api/v1/leaderboard, N sequential submissions (p50/p95):
     embedded default (`python -m space`: SQLite broker, LocalStore, one worker subprocess)
     Redis (`python -m space` web only + `celery -A worker worker` processes, LocalStore)
  re-scoring M stored submissions (Redis, LocalStore): wall time of `python -m worker rescore`, the scoring
     worker's CPU seconds, and a breakdown read from the task log (plan, chunks, finalizer wait, finalize)

  idle viewer (STORE=hub over tests/fakehub.py, Redis): Hub requests a minute of one viewer polling an
     unchanged board, head re-read every 1 s (the old TTL) vs HEAD_POLL_SECONDS=30 with announced heads

Usage: .venv/bin/python bench/bench_pipeline.py [--n 50] [--rescore 1000] [--test-rows K]
       [--only embedded,redis,rescore,idle] [--viewer-seconds 60]
Needs Redis at $REDIS_URL (default redis://127.0.0.1:6379/0) for the last two.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEMO = ROOT / "data" / "demo"
TRACK = "varm"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


LOGS = ROOT / "bench" / "out" / time.strftime("pipeline-%Y%m%dT%H%M%S")  # git-ignored


def start(cmd: list[str], env: dict, log: Path) -> subprocess.Popen:
    LOGS.mkdir(parents=True, exist_ok=True)
    with open(LOGS / log.name, "ab") as out:
        return subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def stop(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def wait(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = predicate()
        except httpx.HTTPError:
            value = None
        if value:
            return value
        time.sleep(0.05)
    raise SystemExit(f"timed out waiting for {what}")


def mixed_predictions(seed: int, rows: int | None = None) -> bytes:
    """A distinct, valid predictions file: each row taken from one of the demo baselines at random (the
    first `rows` test rows when given, as `make_demo_without_baselines(rows=...)` keeps)."""
    files = [
        (DEMO / TRACK / "baselines" / f"{n}.test.jsonl").read_bytes().splitlines()[:rows]
        for n in ("char-ngram", "lexicon", "majority")
    ]
    rng = random.Random(seed)
    return b"\n".join(rng.choice(lines) for lines in zip(*files, strict=True)) + b"\n"


def board_ids(base: str) -> set[str]:
    params = {"track": TRACK, "page_size": 1000}  # the API pages; 1000 rows covers any run of this bench
    rows = httpx.get(f"{base}/api/v1/leaderboard", params=params, timeout=30).json()["rows"]
    return {r["submission_id"] for r in rows}


def settle(base: str, data_dir: Path) -> None:
    """Wait until the seeded baselines are published, so they do not compete with the measurement."""
    wait(lambda: httpx.get(f"{base}/api/v1/health", timeout=2).status_code == 200, 120, "health")
    wait(lambda: len(board_ids(base)) >= 3, 120, "baselines on the leaderboard")
    time.sleep(2)


def write_tokens(data_dir: Path, n: int) -> list[str]:
    """One identity per upload: the Ladder releases an identity's first upload, but a later one only when
    it is clearly better, so one identity's second file might never reach the public board."""
    data_dir.mkdir(parents=True, exist_ok=True)
    tokens = {f"bench-{uuid.uuid4().hex}": f"bench{i}" for i in range(n)}
    (data_dir / "tokens.json").write_text(json.dumps(tokens))
    return list(tokens)


def latency_run(base: str, tokens: list[str], n: int) -> list[float]:
    times = []
    with httpx.Client(base_url=base, timeout=60) as client:
        for i in range(n):
            data = mixed_predictions(10_000 + i)
            t0 = time.perf_counter()
            r = client.post(
                "/api/v1/submissions",
                headers={"Authorization": f"Bearer {tokens[i]}"},
                data={"track": TRACK, "model_name": f"bench {i}"},
                files={"file": ("p.jsonl", data)},
            )
            assert r.status_code == 202, r.text
            sid = r.json()["submission_id"]
            wait(lambda sid=sid: sid in board_ids(base), 120, f"{sid} on the leaderboard")
            times.append(time.perf_counter() - t0)
    return times


def report(name: str, times: list[float]) -> None:
    q = statistics.quantiles(times, n=100, method="inclusive")
    print(
        f"{name}: n={len(times)} p50={q[49]:.3f}s p95={q[94]:.3f}s "
        f"min={min(times):.3f}s max={max(times):.3f}s",
        flush=True,
    )


def base_env(data_dir: Path, port: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("CELERY_BROKER_URL", "STORE", "AUTH")}
    env.update(
        DATA_DIR=str(data_dir),
        PORT=str(port),
        HOST="127.0.0.1",
        QUOTA_PER_DAY="100000",
        ATTEMPTS_PER_DAY="100000",
        PYTHONUNBUFFERED="1",
    )
    return env


def bench_embedded(n: int, tmp: Path) -> None:
    data, port = tmp / "embedded", free_port()
    tokens = write_tokens(data, n)
    procs = [start([sys.executable, "-m", "space"], base_env(data, port), tmp / "embedded.log")]
    try:
        base = f"http://127.0.0.1:{port}"
        settle(base, data)
        report("embedded (SQLite broker, LocalStore)", latency_run(base, tokens, n))
    finally:
        stop(procs)


def redis_env(data: Path, port: int) -> dict:
    env = base_env(data, port)
    env.update(
        CELERY_BROKER_URL=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
        CELERY_KEY_PREFIX=f"varmbench-{uuid.uuid4().hex[:8]}:",
    )
    return env


def redis_workers(env: dict, log: Path) -> list[subprocess.Popen]:
    """The production layout: scoring workers, plus one single-process publish worker."""
    celery = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "worker",
        "worker",
        "--loglevel",
        "INFO",
        "--without-gossip",
        "--without-mingle",
    ]
    return [
        start(
            [*celery, "-Q", "submissions,rescore", "-c", "2", "-n", f"score{uuid.uuid4().hex[:6]}@%h"],
            env,
            log,
        ),
        start([*celery, "-Q", "publish", "-c", "1", "-n", f"publish{uuid.uuid4().hex[:6]}@%h"], env, log),
    ]


def cleanup_redis(env: dict) -> None:
    import redis

    client = redis.Redis.from_url(env["CELERY_BROKER_URL"])
    keys = list(client.scan_iter(f"{env['CELERY_KEY_PREFIX']}*"))
    if keys:
        client.delete(*keys)


def bench_redis(n: int, tmp: Path) -> None:
    data, port = tmp / "redis", free_port()
    env = redis_env(data, port)
    subprocess.run(
        [sys.executable, "-m", "worker", "seed"], cwd=ROOT, env=env, check=True, capture_output=True
    )
    tokens = write_tokens(data, n)
    procs = redis_workers(env, tmp / "redis-workers.log")
    procs.append(start([sys.executable, "-m", "space"], env, tmp / "redis-web.log"))
    try:
        base = f"http://127.0.0.1:{port}"
        settle(base, data)
        report("redis (Redis broker, LocalStore, 2 scoring + 1 publish worker)", latency_run(base, tokens, n))
    finally:
        stop(procs)
        cleanup_redis(env)


def store_many(data: Path, count: int, rows: int | None = None) -> None:
    """Write `count` scored submissions straight into the store, as if an older scorer had scored them.

    Ids are random-looking hex like the service's (`secrets.token_hex(8)`) and the record index is written
    with the records, as every writer does: sequential ids put every record in one index shard, so each
    chunk commit rewrote a 1,000-record shard (~0.3 s a chunk) that no real store has."""
    import hashlib

    from scoring.version import SCORER_VERSION
    from worker.config import Config
    from worker.gold.outcomes import pack
    from worker.gold.references import ReferenceCache
    from worker.gold.scoring_job import compute
    from worker.records import new_record, transition
    from worker.store import open_store
    from worker.submissions import dumps, record_files

    store = open_store(Config(data_dir=data))
    pinned = ReferenceCache(store).get(TRACK)
    template_result, template_rows, _ = compute(pinned, mixed_predictions(0, rows))
    add, records = {}, []
    for i in range(count):
        sid = hashlib.sha256(f"bench {i}".encode()).hexdigest()[:16]
        preds = mixed_predictions(20_000 + i, rows)
        rec = new_record(
            submission_id=sid,
            track=TRACK,
            sha256=f"{i:064x}",
            submitter=f"user{i % 50}",
            metadata={"model_name": f"stored {i}"},
        )
        rec = transition(rec, "published", "bench fixture")
        rec["versions"] = [
            {
                "version": 1,
                "scorer_version": "0.0.0-bench",
                "references_sha256": pinned.sha256,
                "references_revision": pinned.revision,
                "scored_at": rec["created_at"],
            }
        ]
        assert SCORER_VERSION != "0.0.0-bench"
        records.append(rec)
        add[f"{TRACK}/{sid}/predictions.jsonl"] = preds
        add[f"{TRACK}/{sid}/result_v1.json"] = dumps(template_result)
        add[f"{TRACK}/{sid}/rows_v1.json"] = dumps(pack(template_rows))  # as attach_version writes them
    add.update(record_files(store, store.head("submissions"), records))
    store.commit("submissions", add, [], f"bench: {count} stored submissions")


def bench_rescore(count: int, tmp: Path, rows: int | None = None) -> None:
    data = tmp / "rescore"
    env = redis_env(data, free_port())
    subprocess.run(
        [sys.executable, "-m", "worker", "seed", "--demo-dir", str(make_demo_without_baselines(tmp, rows))],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    store_many(data, count, rows)
    procs = redis_workers(env, tmp / "rescore-workers.log")
    try:
        time.sleep(3)  # workers up
        t0 = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-m", "worker", "rescore", "--track", TRACK, "--actor", "bench"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=3600,
        )
        wall = time.perf_counter() - t0
        if out.returncode != 0:
            raise SystemExit(out.stderr[-3000:])
        cpu = process_group_cpu(procs[0].pid)
        summary = json.loads(out.stdout)
        print(
            f"rescore: {count} stored submissions ({rows or 'all'} test rows) in {wall:.1f}s wall, "
            f"{cpu:.1f}s CPU in the scoring worker "
            f"(rescored={summary['rescored']} skipped={summary['skipped']} errors={summary['errors']} "
            f"rank_changes={summary['rank_changes']}; 2 scoring processes + 1 publish)",
            flush=True,
        )
    finally:
        stop(procs)
        cleanup_redis(env)
    print(f"  {rescore_breakdown(LOGS / 'rescore-workers.log')}", flush=True)


def process_group_cpu(pgid: int) -> float:
    """User + system CPU seconds of the live processes of a process group (a Celery worker and its pool), a
    figure that other load on the machine distorts much less than wall time."""
    ticks = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # fields after "(comm)": state ppid pgrp ... utime(11) stime(12)
            ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


TASK_DONE = re.compile(
    r"^\[(?P<at>[\d-]+ [\d:,]+): INFO/[^\]]+\] Task worker\.tasks\.(?P<task>\w+)\[[^\]]+\] "
    r"succeeded in (?P<took>[\d.]+)s"
)


def rescore_breakdown(log: Path) -> str:
    """Where the wall time went, from the workers' task log: planning, the chunks (first start to last end,
    and their summed task time over 2 processes), the finalizer's wait after the last chunk, and the
    finalizer itself (diff report, tie groups, results commit, records marked published)."""
    from datetime import datetime

    spans: dict[str, list[tuple[float, float]]] = {}
    for line in log.read_text(errors="replace").splitlines():
        match = TASK_DONE.match(line)
        if match:
            end = datetime.strptime(match["at"], "%Y-%m-%d %H:%M:%S,%f").timestamp()
            spans.setdefault(match["task"], []).append((end - float(match["took"]), end))
    chunks, final = spans.get("rescore_chunk"), spans.get("rescore_finalize")
    plan = spans.get("rescore_track")
    if not (chunks and final and plan):
        return "breakdown: no task timings in the log"
    first, last = min(s for s, _ in chunks), max(e for _, e in chunks)
    busy = sum(e - s for s, e in chunks)
    return (
        f"breakdown: plan {plan[0][1] - plan[0][0]:.1f}s, chunks {last - first:.1f}s wall "
        f"({len(chunks)} tasks, {busy:.1f}s task time), finalizer wait {final[0][0] - last:.1f}s, "
        f"finalize {final[0][1] - final[0][0]:.1f}s"
    )


def make_demo_without_baselines(tmp: Path, rows: int | None = None) -> Path:
    """The demo VARM bundle without its baselines; with `rows`, its test set cut to the first `rows` rows
    (public inputs and cue subsets with it), e.g. 400 for the demo's size before it grew to 2,000."""
    import shutil

    out = tmp / "demo"
    shutil.copytree(
        DEMO / TRACK,
        out / TRACK,
        ignore=shutil.ignore_patterns("baselines", "train.jsonl"),
        dirs_exist_ok=True,
    )
    if rows is not None:
        bundle = out / TRACK
        kept = {json.loads(line)["id"] for line in (bundle / "test.jsonl").read_text().splitlines()[:rows]}
        for path in [
            bundle / "test.jsonl",
            bundle / "public" / "test_inputs.jsonl",
            *bundle.glob("subsets/*"),
        ]:
            lines = [line for line in path.read_text().splitlines() if json.loads(line)["id"] in kept]
            path.write_text("".join(line + "\n" for line in lines))
    return out


HUB_TOKEN = "hf_test_write_token"  # tests/fakehub.py's user "tester"


def _fake(url: str, method: str, route: str) -> dict:
    import urllib.request

    request = urllib.request.Request(url + route, data=b"{}" if method == "POST" else None, method=method)
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def bench_idle_viewer(tmp: Path, seconds: float) -> None:
    """Hub requests a minute caused by one viewer who keeps the board open (polling it every 2 s, as the UI's
    refresh does) while nothing changes: the web process with its head re-read every second (the fixed
    1 s TTL this replaced), then as deployed (HEAD_POLL_SECONDS 30; new heads are announced or webhooked)."""
    from tests import fakehub

    proc, url = fakehub.start()
    tag = uuid.uuid4().hex[:8]
    env = redis_env(tmp / "idle", free_port())  # each web process below gets its own port
    env.update(
        STORE="hub",
        HF_ENDPOINT=url,
        HF_TOKEN=HUB_TOKEN,
        HF_HOME=str(tmp / "idle-hf-home"),
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_REFERENCES_REPO=f"tester/references-{tag}",
        HF_SUBMISSIONS_REPO=f"tester/submissions-{tag}",
        HF_RESULTS_REPO=f"tester/results-{tag}",
        HF_COMMITS_PER_HOUR="1000000",
    )
    try:
        subprocess.run(
            [sys.executable, "-m", "worker", "seed"], cwd=ROOT, env=env, check=True, capture_output=True
        )
        for label, poll in (("head re-read every 1 s (before)", "1"), ("HEAD_POLL_SECONDS=30 (now)", "30")):
            port = free_port()
            web = start(
                [sys.executable, "-m", "space"],
                {**env, "PORT": str(port), "HEAD_POLL_SECONDS": poll},
                tmp / "idle-web.log",
            )
            base = f"http://127.0.0.1:{port}"
            try:
                wait(
                    lambda base=base: httpx.get(base + "/api/v1/health", timeout=5).status_code in (200, 503),
                    120,
                    "web",
                )
                board = base + "/api/v1/leaderboard"
                tag_seen = httpx.get(board, params={"track": TRACK}, timeout=30).headers.get("etag", "")
                _fake(url, "POST", "/_fake/reset")
                started = time.monotonic()
                while time.monotonic() - started < seconds:
                    answer = httpx.get(
                        board, params={"track": TRACK}, headers={"If-None-Match": tag_seen}, timeout=30
                    )
                    tag_seen = answer.headers.get("etag", tag_seen)
                    time.sleep(2)
                requests = sum(_fake(url, "GET", "/_fake/stats").values())
                per_minute = requests * 60 / (time.monotonic() - started)
                print(
                    f"idle viewer, {label}: {requests} Hub requests in {seconds:.0f} s "
                    f"= {per_minute:.1f}/min",
                    flush=True,
                )
            finally:
                stop([web])
    finally:
        fakehub.stop(proc)
        cleanup_redis(env)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--rescore", type=int, default=1000)
    parser.add_argument(
        "--test-rows", type=int, help="re-score on the first K demo test rows (400: the demo before it grew)"
    )
    parser.add_argument("--only", default="embedded,redis,rescore,idle")
    parser.add_argument("--viewer-seconds", type=float, default=60)
    args = parser.parse_args()
    only = set(args.only.split(","))
    print(
        f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; scorer bootstrap 1000 "
        f"resamples per submission; logs in {LOGS.relative_to(ROOT)}",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="bench-pipeline-", ignore_cleanup_errors=True) as tmp:
        if "embedded" in only:
            bench_embedded(args.n, Path(tmp))
        if "redis" in only:
            bench_redis(args.n, Path(tmp))
        if "rescore" in only:
            bench_rescore(args.rescore, Path(tmp), args.test_rows)
        if "idle" in only:
            bench_idle_viewer(Path(tmp), args.viewer_seconds)


if __name__ == "__main__":
    main()
