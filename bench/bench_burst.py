"""Burst benchmark (issue 15 item 6): a conference-deadline burst of uploads against the Hub's rate limits.

A private deployment (redis-server, `--workers` Celery workers and one publish worker, `python -m space`)
runs with STORE=hub against tests/fakehub.py on 127.0.0.1 (the real `huggingface_hub` client in every
process).
`--uploads` distinct prediction files (gold rows mixed with a demo baseline's, over the four tracks) are
POSTed by `--clients` concurrent clients through the REST API, i.e. `Service.submit`; the workers score them
with the real scoring job and publish. Printed, from the fake Hub's own counters:

- Hub commits in all and per accepted upload, by repo (references, submissions, results);
- the busiest window of the Hub's commit limit (`--window` seconds, 3600 on the real Hub) per repo, against
  the documented 128 commits per repository per hour, and how many commits were refused with 429;
- Hub HTTP requests by route, in all and per accepted upload, and the file reads per upload by the kind of
  file (`/_fake/reads`: repo and path with ids as "*"), the most read first;
- upload → published latency (p50/p95/max) and the wall time;
- CPU seconds per accepted upload of the whole service (the web process, every worker and its pool, from
  /proc: user + system, reaped children included) during the burst, without this script's status polls
  (the same number replayed on the settled submissions and their web CPU left out), against the scoring
  alone: the CPU of
  `worker.gold.scoring_job.compute` (the public/private/full scores with 1,000 resamples) on the same files,
  timed in this process afterwards (issue 26 item 4: the rest is what the service adds per upload); and
  against the same `compute` as the workers spent it during the burst (their log lines' "scoring ... s CPU",
  the thread's CPU inside `compute`), measured in the same processes under the same load as the service's
  CPU: on 2 shared cores a busy process's CPU per unit of work is higher than a quiet one's;
- the service's CPU with nothing to do (`--idle` seconds before the burst), and what that rate costs per
  upload over the burst's wall time.

`--hub-limit 128` makes the fake Hub enforce the limit (429 + Retry-After past 128 commits to one repo within
`--window` seconds). A smaller `--window` compresses time: `--window 360` is the Hub's hour played ten times
faster (the same 128 commits per window), so a burst that fits the budget there fits it at real speed.
The service is told the same limit and window (HF_COMMITS_PER_HOUR, HF_COMMIT_WINDOW).

`--trace-reads` logs every Hub GET of the service's processes with the project's functions that asked for it
(bench/hub_read_trace/sitecustomize.py, put first on their PYTHONPATH) and prints the burst's GETs per
upload by process, file and caller: where the requests per upload go, and so the HTTP client's CPU.

    .venv/bin/python bench/bench_burst.py [--uploads 300 --clients 10 --workers 2] [--hub-limit 128
                                           --window 360] [--idle 20] [--json FILE] [--trace-reads]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_load import DEMO, TRACKS, pct  # noqa: E402
from tests import fakehub  # noqa: E402
from tests.factories import mixed_predictions  # noqa: E402
from tests.hostile import procs  # noqa: E402

HUB_TOKEN = "hf_test_write_token"  # tests/fakehub.py's user "tester"
# Per repository: the Hub's 429 reads "the rate limit for repository commits (128 per hour)".
HUB_COMMITS_PER_HOUR = 128
FINAL = ("published", "failed", "rejected", "held")
MAX_RETRIES = 20  # per upload, on 503


def busiest_window(times: list[float], window: float) -> int:
    """The most commits inside any `window`-second interval."""
    ordered, best, start = sorted(times), 0, 0
    for end, t in enumerate(ordered):
        while ordered[start] <= t - window:
            start += 1
        best = max(best, end - start + 1)
    return best


def tree_cpu(roots: list[int]) -> float:
    """User + system CPU seconds of the processes `roots` and all their descendants, reaped ones included
    (a process's cutime/cstime hold its waited-for children's)."""
    stats: dict[int, tuple[int, int]] = {}  # pid -> (ppid, ticks)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # after "(comm)": state(0) ppid(1) ... utime(11) stime(12) cutime(13) cstime(14)
        stats[int(stat.parent.name)] = (int(fields[1]), sum(int(x) for x in fields[11:15]))
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    ticks, todo = 0, [r for r in roots if r in stats]
    while todo:
        pid = todo.pop()
        ticks += stats[pid][1]
        todo += children.get(pid, [])
    return ticks / os.sysconf("SC_CLK_TCK")


SCORING_LOGGED = re.compile(
    r"^\[(?P<at>[\d-]+ [\d:,]+): INFO/[^\]]+\] .*scoring (?P<cpu>[\d.]+) s CPU$", re.MULTILINE
)


def scoring_in_service(logs: dict[str, str], start: float, end: float) -> float:
    """CPU seconds the workers logged for `compute` between `start` and `end` (epoch seconds)."""
    total = 0.0
    for text in logs.values():
        for match in SCORING_LOGGED.finditer(text):
            at = datetime.strptime(match["at"], "%Y-%m-%d %H:%M:%S,%f").timestamp()
            if start <= at <= end:  # every upload of the burst was scored before it settled
                total += float(match["cpu"])
    return total


def scoring_cpu(demo: Path, tmp: Path, files: list[tuple[str, Path]], sample: int = 40) -> float:
    """Mean CPU seconds of the scoring job's `compute` per file (a sample spread over the tracks), on the
    same demo references installed in a local store."""
    from worker.config import Config
    from worker.gold.references import ReferenceCache
    from worker.gold.scoring_job import compute
    from worker.store import open_store

    data = tmp / "scoring-only"
    subprocess.run(
        [sys.executable, "-m", "worker", "seed", "--demo-dir", str(demo)],
        cwd=ROOT,
        env={**os.environ, "DATA_DIR": str(data), "STORE": "local", "SEED_DEMO": "1"},
        check=True,
        capture_output=True,
    )
    cache = ReferenceCache(open_store(Config(data_dir=data)))
    chosen = files[:: max(1, len(files) // sample)][:sample]
    for track in sorted({t for t, _ in chosen}):  # untimed: the resample tables, as a busy worker has them
        compute(cache.get(track), next(p for t, p in chosen if t == track).read_bytes())
    times = []
    for track, path in chosen:
        pinned, data_bytes = cache.get(track), path.read_bytes()
        start = time.process_time()
        compute(pinned, data_bytes)
        times.append(time.process_time() - start)
    return sum(times) / len(times)


def make_files(out: Path, n: int) -> list[tuple[str, Path]]:
    """n distinct valid prediction files over the four tracks, of varied skill (no two near-copies)."""
    out.mkdir(parents=True, exist_ok=True)
    files = []
    for k in range(n):
        track = TRACKS[k % len(TRACKS)]
        path = out / f"{k:04d}-{track}.jsonl"
        path.write_bytes(mixed_predictions(track, 0.2 + 0.6 * (k * 37 % 100) / 100, seed=f"burst-{k}"))
        files.append((track, path))
    return files


def submit_all(url: str, files: list[tuple[str, Path]], tokens: list[str]) -> list[dict]:
    """POST every file; client c sends files c, c + clients, ... with its own bearer token."""

    def client_job(c: int) -> list[dict]:
        out = []
        auth = {"Authorization": f"Bearer {tokens[c]}"}
        with httpx.Client(base_url=url, timeout=600, headers=auth) as client:
            for k in range(c, len(files), len(tokens)):
                track, path = files[k]
                t0, retried = time.time(), 0
                while True:  # a busy service answers 503 + Retry-After: come back then, as a client should
                    r = client.post(
                        "/api/v1/submissions",
                        data={"track": track, "model_name": f"burst-{k}"},
                        files={"file": (path.name, path.read_bytes())},
                    )
                    if r.status_code != 503 or retried >= MAX_RETRIES:
                        break
                    retried += 1
                    time.sleep(float(r.headers.get("retry-after") or 5))
                body = r.json() if r.headers.get("content-type", "").startswith("application/json") else {}
                out.append(
                    {
                        "k": k,
                        "track": track,
                        "t0": t0,
                        "post_s": time.time() - t0,
                        "status": r.status_code,
                        "id": body.get("submission_id"),
                        "token": tokens[c],
                        "retried": retried,
                    }
                )
        return out

    with ThreadPoolExecutor(len(tokens)) as pool:
        return [x for part in pool.map(client_job, range(len(tokens))) for x in part]


def hub_get(url: str, route: str) -> dict:
    return httpx.get(url + route, timeout=10).json()


def wait_settled(url: str, owners: dict[str, str], timeout: float) -> tuple[dict[str, dict], int]:
    """Poll each submission (with its owner's token: one the Ladder does not release is on no public page)
    until it reaches a final status (cheap polls: one pass every 2 s). Returns the final bodies and the
    number of polls sent."""
    pending, final, polls = set(owners), {}, 0
    deadline = time.monotonic() + timeout
    with httpx.Client(base_url=url, timeout=60) as client:
        while pending and time.monotonic() < deadline:
            time.sleep(2)
            for sid in sorted(pending):
                auth = {"Authorization": f"Bearer {owners[sid]}"}
                body = client.get(f"/api/v1/submissions/{sid}", headers=auth).json()
                polls += 1
                if body.get("status") in FINAL:
                    final[sid] = body
                    pending.discard(sid)
                else:
                    break  # oldest first: when this one is still waiting, the later ones mostly are too
    return final, polls


def idle_cpu(web: list[int], workers: list[int], seconds: float) -> tuple[float, float]:
    """CPU seconds per second of the web process and of the workers with nothing to do (no upload, no
    viewer; the reconciler and heartbeats run as deployed), over `seconds` before the burst."""
    if seconds <= 0:
        return 0.0, 0.0
    before = tree_cpu(web), tree_cpu(workers)
    time.sleep(seconds)
    return (tree_cpu(web) - before[0]) / seconds, (tree_cpu(workers) - before[1]) / seconds


def poll_cpu(url: str, owners: dict[str, str], polls: int, web: list[int]) -> float:
    """The web process's CPU seconds for `polls` status polls like wait_settled's, replayed on the settled
    submissions (the same request, token and answer size), so the service's figure can leave them out."""
    sids = sorted(owners)
    if not sids or not polls:
        return 0.0
    before = tree_cpu(web)
    with httpx.Client(base_url=url, timeout=60) as client:
        for k in range(polls):
            sid = sids[k % len(sids)]
            client.get(f"/api/v1/submissions/{sid}", headers={"Authorization": f"Bearer {owners[sid]}"})
    return tree_cpu(web) - before


def run(args: argparse.Namespace, tmp: Path) -> dict:
    demo = tmp / "demo"
    for track in TRACKS:
        shutil.copytree(DEMO / track, demo / track, ignore=shutil.ignore_patterns("baselines", "train.jsonl"))
    files = make_files(tmp / "files", args.uploads)
    limits = {"FAKEHUB_COMMITS_PER_HOUR": str(args.hub_limit)} if args.hub_limit else {}
    hub_proc, hub_url = fakehub.start({**limits, "FAKEHUB_COMMIT_WINDOW": str(args.window)})
    repos = {area: f"tester/{area}-burst" for area in ("references", "submissions", "results")}
    env = {
        "STORE": "hub",
        "HF_ENDPOINT": hub_url,
        "HF_TOKEN": HUB_TOKEN,
        "HF_HOME": str(tmp / "hf-home"),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        # The service paces below the limit the fake Hub enforces, in the same (compressed) window.
        "HF_COMMIT_WINDOW": str(args.window),
        "HF_COMMITS_PER_HOUR": str(args.hub_limit or HUB_COMMITS_PER_HOUR),
        **{f"HF_{area.upper()}_REPO": repo for area, repo in repos.items()},
    }
    traces = tmp / "reads"
    if args.trace_reads:
        traces.mkdir()
        path = os.pathsep.join(filter(None, [str(TRACER), os.environ.get("PYTHONPATH")]))
        env |= {"PYTHONPATH": path, "BENCH_TRACE_READS": str(traces)}
    # AUTH=token (the Hub store refuses AUTH=open): one bearer token per client, written before the start.
    tokens = {f"burst-token-{c:03d}": f"burst-user-{c:03d}" for c in range(args.clients)}
    (tmp / "dep" / "data").mkdir(parents=True)
    (tmp / "dep" / "data" / "tokens.json").write_text(json.dumps(tokens))
    try:
        with procs.Deployment(
            tmp / "dep",
            workers=args.workers,
            concurrency=args.concurrency,
            beat=True,
            demo_dir=demo,
            AUTH="token",
            **env,
        ) as dep:
            # The documented production layout: one dedicated publish worker (the others drain the
            # submissions queue first, so a publish queued behind a burst would wait for all of it).
            dep.workers.append(procs.Worker(dep.env, dep.tmp / "publish.log", queues="publish").start())
            web = [dep.space.proc.pid] if dep.space is not None and dep.space.proc is not None else []
            workers = [w.proc.pid for w in dep.workers if w.proc is not None]
            idle = idle_cpu(web, workers, args.idle)
            httpx.post(hub_url + "/_fake/reset", json={}, timeout=10)  # count the burst, not the seeding
            cpu_before = tree_cpu(web), tree_cpu(workers)
            t_start = time.time()
            subs = submit_all(dep.url, files, list(tokens))
            posted = time.time()
            accepted = [s for s in subs if s["status"] == 202 and s["id"]]
            owners = {s["id"]: s["token"] for s in accepted}
            final, polls = wait_settled(dep.url, owners, args.timeout)
            settled = time.time()
            web_cpu, workers_cpu = tree_cpu(web) - cpu_before[0], tree_cpu(workers) - cpu_before[1]
            stats, commits = hub_get(hub_url, "/_fake/stats"), hub_get(hub_url, "/_fake/commits")
            reads = hub_get(hub_url, "/_fake/reads")
            # The script's own status polls ran in the web process: replayed once settled and left out.
            polls_cpu = min(poll_cpu(dep.url, owners, polls, web), web_cpu)
            web_cpu -= polls_cpu
            service_cpu = web_cpu + workers_cpu
            logs = dep.logs()
            tracebacks = sum(t.count("Traceback") for t in logs.values())
            in_service = scoring_in_service(logs, t_start, settled)
    finally:
        fakehub.stop(hub_proc)
    published = [b for b in final.values() if b["status"] == "published"]
    latencies = []
    for s in accepted:
        body = final.get(s["id"])
        at = next((h["at"] for h in (body or {}).get("history", []) if h["status"] == "published"), None)
        if at is not None:
            latencies.append(datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp() - s["t0"])
    by_repo = {area: commits.get(repo, []) for area, repo in repos.items()}
    requests = sum(n for route, n in stats.items() if not route.startswith("429"))
    n = max(len(accepted), 1)
    scoring = scoring_cpu(demo, tmp, files)
    return {
        "cpu_per_upload_s": round(service_cpu / n, 3),
        "web_cpu_per_upload_s": round(web_cpu / n, 3),
        "workers_cpu_per_upload_s": round(workers_cpu / n, 3),
        "polls": polls,
        "polls_cpu_per_upload_s": round(polls_cpu / n, 3),
        "scoring_cpu_s": round(scoring, 3),
        "idle_web_cpu_per_s": round(idle[0], 4),
        "idle_workers_cpu_per_s": round(idle[1], 4),
        "idle_cpu_per_upload_s": round((idle[0] + idle[1]) * (settled - t_start) / n, 3),
        "cpu_ratio": round(service_cpu / n / scoring, 2) if scoring else None,
        "scoring_in_service_cpu_s": round(in_service / n, 3),
        "cpu_ratio_in_service": round(service_cpu / in_service, 2) if in_service else None,
        "uploads": len(subs),
        "accepted": len(accepted),
        "http_statuses": sorted({s["status"] for s in subs}),
        "retried_503": sum(s["retried"] for s in subs),
        "published": len(published),
        "not_final": len(accepted) - len(final),
        "commits": sum(len(t) for t in by_repo.values()),
        "commits_per_upload": round(sum(len(t) for t in by_repo.values()) / n, 2),
        "commits_by_repo": {a: len(t) for a, t in by_repo.items()},
        "commits_per_upload_by_repo": {a: round(len(t) / n, 2) for a, t in by_repo.items()},
        "busiest_window_by_repo": {a: busiest_window(t, args.window) for a, t in by_repo.items()},
        "window_s": args.window,
        "refused_429": stats.get("429 commit", 0),
        "requests": requests,
        "requests_per_upload": round(requests / n, 1),
        "requests_by_route": dict(sorted(stats.items())),
        "reads_per_upload_by_file": {
            kind: round(count / n, 2) for kind, count in sorted(reads.items(), key=lambda kv: -kv[1])[:15]
        },
        "post_p50_s": round(pct([s["post_s"] for s in subs], 50), 2),
        "post_p95_s": round(pct([s["post_s"] for s in subs], 95), 2),
        "to_published_p50_s": round(pct(latencies, 50), 1),
        "to_published_p95_s": round(pct(latencies, 95), 1),
        "to_published_max_s": round(max(latencies, default=float("nan")), 1),
        "upload_phase_s": round(posted - t_start, 1),
        "wall_s": round(settled - t_start, 1),
        "tracebacks_in_logs": tracebacks,
        "reads_per_upload_by_caller": who_reads(traces, t_start, settled, n) if args.trace_reads else {},
    }


TRACER = Path(__file__).resolve().parent / "hub_read_trace"  # its sitecustomize.py logs each Hub GET
ID_LIKE = re.compile(
    r"(?<=/)(?:[0-9a-f]{16}|[0-9a-f]{64})(?=/)|(?<=_v)[0-9]+(?=\.)|(?<=index/)[^/]+(?=\.json)"
)


def who_reads(folder: Path, start: float, end: float, uploads: int, top: int = 30) -> dict[str, float]:
    """Hub GETs during the burst per accepted upload, by process, file (ids as "*") and the functions that
    asked (innermost first), the most frequent `top`: from the logs of bench/hub_read_trace."""
    counts: Counter[str] = Counter()
    for log in folder.glob("*.log"):
        for line in log.read_text().splitlines():
            at, role, path, callers = line.split("\t")
            if start <= float(at) <= end:
                counts[f"{role} {ID_LIKE.sub('*', path)} <- {callers}"] += 1
    return {key: round(count / uploads, 2) for key, count in counts.most_common(top)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uploads", type=int, default=300)
    parser.add_argument("--clients", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--hub-limit", type=int, default=0, help="commits per repo per window (0: no limit)")
    parser.add_argument("--window", type=float, default=3600.0, help="the limit's window in seconds")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds to wait for the last publish")
    parser.add_argument("--idle", type=float, default=20.0, help="seconds of idle CPU measured first")
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--trace-reads",
        action="store_true",
        help="log every Hub GET with the functions that asked for it and print who reads what",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-burst-") as tmp:
        fig = run(args, Path(tmp))
    limit = args.hub_limit or HUB_COMMITS_PER_HOUR
    print(
        f"{fig['uploads']} uploads from {args.clients} clients, {args.workers} workers × "
        f"{args.concurrency}: accepted {fig['accepted']} (HTTP {fig['http_statuses']}, "
        f"{fig['retried_503']} retries after 503), "
        f"published {fig['published']}, "
        f"not final {fig['not_final']}; wall {fig['wall_s']} s (uploads {fig['upload_phase_s']} s)"
    )
    print(
        f"Hub commits {fig['commits']} = {fig['commits_per_upload']} per accepted upload; by repo "
        f"{fig['commits_by_repo']} = {fig['commits_per_upload_by_repo']} per upload"
    )
    print(
        f"busiest {fig['window_s']:g}-s window by repo {fig['busiest_window_by_repo']} vs the Hub's "
        f"{limit} commits per repo per hour; commits refused with 429: {fig['refused_429']}"
    )
    print(
        f"Hub requests {fig['requests']} = {fig['requests_per_upload']} per upload: "
        f"{fig['requests_by_route']}"
    )
    print(f"file reads per upload, most read first: {fig['reads_per_upload_by_file']}")
    print(
        f"POST p50 {fig['post_p50_s']} s p95 {fig['post_p95_s']} s; upload→published p50 "
        f"{fig['to_published_p50_s']} s p95 {fig['to_published_p95_s']} s "
        f"max {fig['to_published_max_s']} s; "
        f"tracebacks in logs: {fig['tracebacks_in_logs']}"
    )
    print(
        f"CPU per accepted upload {fig['cpu_per_upload_s']} s (web {fig['web_cpu_per_upload_s']} s, "
        f"workers {fig['workers_cpu_per_upload_s']} s) against the scoring's {fig['scoring_cpu_s']} s: "
        f"{fig['cpu_ratio']}× (the web's without this script's {fig['polls']} status polls: "
        f"{fig['polls_cpu_per_upload_s']} s per upload, replayed once settled); against the scoring as the "
        f"workers spent it in the burst, {fig['scoring_in_service_cpu_s']} s per upload: "
        f"{fig['cpu_ratio_in_service']}×"
    )
    print(
        f"idle, before the burst: web {fig['idle_web_cpu_per_s']} and workers "
        f"{fig['idle_workers_cpu_per_s']} CPU-s per second; at that rate the burst's wall costs "
        f"{fig['idle_cpu_per_upload_s']} s per upload (part of the figure above)"
    )
    if args.trace_reads:
        print("Hub GETs per upload by process, file and caller (--trace-reads), most first:")
        for key, per_upload in fig["reads_per_upload_by_caller"].items():
            print(f"  {per_upload:6.2f}  {key}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(fig, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
