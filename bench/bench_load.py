"""Load figures: many submissions through the REST API, and many leaderboard viewers.

A private deployment (redis-server, `workers` Celery workers of concurrency 1, `python -m space`, AUTH=open,
demo references without baselines) receives `--submissions` distinct prediction files (each mixes the demo
baselines' rows with its own seed, across the four tracks) from `--clients` concurrent clients. Then:

- throughput (published submissions per minute, first POST to last publication) and the latency from the
  start of a POST to the `published` transition in the record's history (p50/p95/max);
- lost (accepted, never published), duplicated (more than one version, result file or leaderboard row)
  and mis-scored (metrics differ from `python -m scoring score` on the same file) counts;
- `--viewers` concurrent viewers each loading `GET /` and `GET /api/v1/leaderboard` `--rounds` times.

    .venv/bin/python bench/bench_load.py [--submissions 200 --clients 20 --viewers 50] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.hostile import procs  # noqa: E402
from worker import live_board  # noqa: E402
from worker.config import Config  # noqa: E402
from worker.store import open_store  # noqa: E402

TRACKS = ("varm", "cold", "toxicn", "cntp")
DEMO = ROOT / "data" / "demo"


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))]


def make_files(out: Path, n: int) -> list[tuple[str, Path]]:
    """n distinct, valid prediction files: row i of file k comes from a baseline chosen by rng(k)."""
    out.mkdir(parents=True, exist_ok=True)
    pools = {}
    for track in TRACKS:
        names = sorted((DEMO / track / "baselines").glob("*.test.jsonl"))
        pools[track] = [p.read_bytes().splitlines(keepends=True) for p in names]
    files = []
    for k in range(n):
        track = TRACKS[k % len(TRACKS)]
        rng = random.Random(k)
        rows = [rng.choice(pools[track])[i] for i in range(len(pools[track][0]))]
        path = out / f"{k:04d}-{track}.jsonl"
        path.write_bytes(b"".join(rows))
        files.append((track, path))
    return files


def submit_all(url: str, files: list[tuple[str, Path]], clients: int) -> list[dict]:
    def client_job(c: int) -> list[dict]:
        out = []
        with httpx.Client(base_url=url, timeout=120) as client:
            for k in range(c, len(files), clients):
                track, path = files[k]
                t0 = time.time()
                r = client.post(
                    "/api/v1/submissions",
                    data={"track": track, "model_name": f"load-{k}"},
                    files={"file": (path.name, path.read_bytes())},
                    headers={"X-User": f"load-{c}"},
                )
                body = r.json() if r.headers.get("content-type", "").startswith("application/json") else {}
                out.append(
                    {
                        "k": k,
                        "track": track,
                        "path": str(path),
                        "t0": t0,
                        "post_s": time.time() - t0,
                        "status": r.status_code,
                        "id": body.get("submission_id"),
                    }
                )
        return out

    with ThreadPoolExecutor(clients) as pool:
        return [x for part in pool.map(client_job, range(clients)) for x in part]


def wait_published(url: str, subs: list[dict], timeout: float) -> dict[str, dict]:
    pending = {s["id"] for s in subs if s["id"]}
    final: dict[str, dict] = {}
    deadline = time.monotonic() + timeout
    with httpx.Client(base_url=url, timeout=60) as client:
        while pending and time.monotonic() < deadline:
            for sid in list(pending):
                body = client.get(f"/api/v1/submissions/{sid}").json()
                if body["status"] in ("published", "failed", "rejected"):
                    final[sid] = body
                    pending.discard(sid)
            time.sleep(0.5)
    return final


def _at(value: str) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def cli_metrics(track: str, path: str) -> dict:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "scoring",
            "score",
            "--track",
            track,
            "--references",
            str(DEMO / track),
            "--predictions",
            path,
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    return json.loads(proc.stdout)["metrics"]


def check_store(data_dir: Path, ids: dict[str, str]) -> tuple[int, int]:
    """(duplicated, missing from leaderboard) from the store itself."""
    store = open_store(Config(data_dir=data_dir), areas={"results", "submissions"})
    duplicated = missing = 0
    boards = {t: live_board.read(store, t)[0] or {"rows": []} for t in TRACKS}  # the live board
    for sid, track in ids.items():
        files = store.list("results", f"{track}/results/{sid}/")
        rows = [r for r in boards[track]["rows"] if r["submission_id"] == sid]
        duplicated += len(files) > 1 or len(rows) > 1
        missing += not rows
    return duplicated, missing


def viewers(url: str, n: int, rounds: int) -> dict:
    def view(_: int) -> list[tuple[str, float, int]]:
        out = []
        with httpx.Client(base_url=url, timeout=60) as client:
            for r in range(rounds):
                for path in ("/", f"/api/v1/leaderboard?track={TRACKS[r % len(TRACKS)]}"):
                    t0 = time.perf_counter()
                    status = client.get(path).status_code
                    out.append((path.split("?")[0], time.perf_counter() - t0, status))
        return out

    t0 = time.perf_counter()
    with ThreadPoolExecutor(n) as pool:
        samples = [x for part in pool.map(view, range(n)) for x in part]
    wall = time.perf_counter() - t0
    out: dict = {
        "viewers": n,
        "requests": len(samples),
        "seconds": round(wall, 2),
        "requests_per_s": round(len(samples) / wall, 1),
        "errors": sum(1 for _, _, s in samples if s != 200),
    }
    for path in ("/", "/api/v1/leaderboard"):
        lat = [d for p, d, _ in samples if p == path]
        out[path] = {
            "p50_ms": round(pct(lat, 50) * 1000),
            "p95_ms": round(pct(lat, 95) * 1000),
            "max_ms": round(max(lat) * 1000),
        }
    return out


def run(args: argparse.Namespace, tmp: Path) -> dict:
    demo = tmp / "demo"
    for track in TRACKS:
        shutil.copytree(DEMO / track, demo / track, ignore=shutil.ignore_patterns("baselines", "train.jsonl"))
    files = make_files(tmp / "files", args.submissions)
    with procs.Deployment(tmp / "dep", workers=args.workers, concurrency=1, demo_dir=demo) as dep:
        t_start = time.time()
        subs = submit_all(dep.url, files, args.clients)
        post_done = time.time()
        final = wait_published(dep.url, subs, args.timeout)
        view = viewers(dep.url, args.viewers, args.rounds)
        ids = {s["id"]: s["track"] for s in subs if s["id"]}
        duplicated, missing_rows = check_store(dep.data_dir, ids)
        tracebacks = sum(t.count("Traceback") for t in dep.logs().values())
    accepted = [s for s in subs if s["status"] == 202 and s["id"]]
    published = {sid: b for sid, b in final.items() if b["status"] == "published"}
    latencies, last_pub = [], t_start
    for s in accepted:
        body = published.get(s["id"])
        if body is None:
            continue
        at = next((_at(h["at"]) for h in body["history"] if h["status"] == "published"), None)
        if at is not None:
            latencies.append(at - s["t0"])
            last_pub = max(last_pub, at)
    # Exactness: every published result against the CLI on the same bytes (after the timed phase).
    with ThreadPoolExecutor(2) as pool:
        expected = list(pool.map(lambda s: cli_metrics(s["track"], s["path"]), accepted))
    mis_scored = []
    for s, want in zip(accepted, expected, strict=True):
        body = published.get(s["id"])
        got = ((body or {}).get("result") or {}).get("result", {}).get("metrics") if body else None
        if body is not None and got != want:
            mis_scored.append(s["id"])
    post_lat = [s["post_s"] for s in subs]
    return {
        "submissions": len(subs),
        "clients": args.clients,
        "workers": args.workers,
        "accepted": len(accepted),
        "http_statuses": sorted({s["status"] for s in subs}),
        "published": len(published),
        "lost": len(accepted) - len(published),
        "duplicated": duplicated,
        "missing_leaderboard_rows": missing_rows,
        "mis_scored": len(mis_scored),
        "compared_with_cli": len(expected),
        "post_p50_ms": round(pct(post_lat, 50) * 1000),
        "post_p95_ms": round(pct(post_lat, 95) * 1000),
        "upload_phase_s": round(post_done - t_start, 1),
        "to_published_p50_s": round(pct(latencies, 50), 2),
        "to_published_p95_s": round(pct(latencies, 95), 2),
        "to_published_max_s": round(max(latencies, default=float("nan")), 2),
        "throughput_per_min": round(len(published) / max(1e-9, last_pub - t_start) * 60, 1),
        "wall_s": round(last_pub - t_start, 1),
        "tracebacks_in_logs": tracebacks,
        "viewers": view,
        "mean_post_s": round(statistics.mean(post_lat), 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--submissions", type=int, default=200)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--viewers", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=3, help="page + leaderboard loads per viewer")
    parser.add_argument("--timeout", type=float, default=900, help="seconds to wait for publication")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
        fig = run(args, Path(tmp))
    v = fig["viewers"]
    print(
        f"{fig['submissions']} submissions from {fig['clients']} clients, {fig['workers']} workers: "
        f"accepted {fig['accepted']}, published {fig['published']}, lost {fig['lost']}, "
        f"duplicated {fig['duplicated']}, mis-scored {fig['mis_scored']} (of {fig['compared_with_cli']} "
        f"compared with the CLI)"
    )
    print(
        f"throughput {fig['throughput_per_min']}/min over {fig['wall_s']} s; "
        f"POST p50 {fig['post_p50_ms']} ms p95 {fig['post_p95_ms']} ms; "
        f"POST→published p50 {fig['to_published_p50_s']} s "
        f"p95 {fig['to_published_p95_s']} s max {fig['to_published_max_s']} s"
    )
    print(
        f"{v['viewers']} viewers × {args.rounds} rounds: {v['requests']} requests in {v['seconds']} s "
        f"({v['requests_per_s']}/s), errors {v['errors']}; GET / p50 {v['/']['p50_ms']} ms "
        f"p95 {v['/']['p95_ms']} ms; GET /api/v1/leaderboard p50 {v['/api/v1/leaderboard']['p50_ms']} ms "
        f"p95 {v['/api/v1/leaderboard']['p95_ms']} ms"
    )
    print(f"tracebacks in logs: {fig['tracebacks_in_logs']}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(fig, indent=2) + "\n")
    bad = (
        fig["lost"]
        or fig["duplicated"]
        or fig["mis_scored"]
        or v["errors"]
        or fig["accepted"] < fig["submissions"]
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
