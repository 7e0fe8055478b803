"""LocalStore's cost per operation as one folder grows (issue 26 item 2); prints figures and slopes.

For each N it builds a LocalStore whose `varm/` folder holds N submissions of 5 files each (committed 1,000
submissions at a time), then measures, for one more submission's 5-file commit and for reads:

- commit warm (decoded trees cached in the process) and cold (a new process: caches dropped), median of 15;
- read of one file cold and warm; list of one submission's folder cold;
- bytes the commit added to the store folder (nodes or manifests, objects excluded: they are the files);
- tree files written per commit (nodes for today's store, a delta or a checkpoint for the flat one).

`--root DIR` imports the store from another checkout (e.g. a worktree of the commit before nodes) for the
"before" figures. Usage: .venv/bin/python bench/bench_store.py [--n 1000,10000,100000] [--root DIR]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

FILES = ("submission.json", "predictions.jsonl", "result_v1.json", "rows_v1.json", "fingerprint.bin")


def submission(i: int) -> dict[str, bytes]:
    sid = f"{(i * 2654435761) % 2**64:016x}"  # random-looking ids, as the service's
    return {f"varm/{sid}/{name}": f"{name} {i}".encode() for name in FILES}


def tree_files(base: Path) -> dict[Path, int]:
    out = {}
    for folder in ("trees", "nodes"):
        for path in (base / folder).rglob("*"):
            if path.is_file():
                out[path] = path.stat().st_size
    return out


def forget(local) -> None:
    if hasattr(local, "forget_decoded"):
        local.forget_decoded()
    else:  # a checkout before nodes (--root)
        local._TREES = local._Trees()


def measure(n: int, rounds: int) -> dict[str, float]:
    from worker.store import local

    with tempfile.TemporaryDirectory() as tmp:
        store = local.LocalStore(Path(tmp), areas=["submissions"])
        for start in range(0, n, 1000):
            add: dict[str, bytes] = {}
            for i in range(start, min(n, start + 1000)):
                add |= submission(i)
            store.commit("submissions", add, [], f"fill {start}")
        base = Path(tmp) / "store" / "submissions"
        store.commit("submissions", submission(n), [], "first after fill")  # converts a pre-node head
        warm, cold, written, files = [], [], [], []
        for k in range(rounds):
            before = tree_files(base)
            t0 = time.perf_counter()
            store.commit("submissions", submission(n + 1 + 2 * k), [], "warm")
            warm.append(time.perf_counter() - t0)
            after = tree_files(base)
            new = set(after) - set(before)
            written.append(sum(after[p] for p in new))
            files.append(len(new))
            forget(local)
            t0 = time.perf_counter()
            store.commit("submissions", submission(n + 2 + 2 * k), [], "cold")
            cold.append(time.perf_counter() - t0)
        probe = next(iter(submission(n // 2)))
        forget(local)
        t0 = time.perf_counter()
        assert store.read("submissions", probe) is not None
        read_cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        store.read("submissions", probe)
        read_warm = time.perf_counter() - t0
        forget(local)
        t0 = time.perf_counter()
        assert len(store.list("submissions", probe.rsplit("/", 1)[0] + "/")) == len(FILES)
        list_cold = time.perf_counter() - t0
    return {
        "commit_warm_s": statistics.median(warm),
        "commit_cold_s": statistics.median(cold),
        "read_cold_s": read_cold,
        "read_warm_s": read_warm,
        "list_cold_s": list_cold,
        "tree_bytes": statistics.median(written),
        "tree_files": statistics.median(files),
    }


def slope(ns: list[int], values: list[float]) -> float | None:
    pts = [(math.log(n), math.log(v)) for n, v in zip(ns, values, strict=True) if v > 0]
    if len(pts) < 2:
        return None
    mx, my = sum(x for x, _ in pts) / len(pts), sum(y for _, y in pts) / len(pts)
    den = sum((x - mx) ** 2 for x, _ in pts)
    return sum((x - mx) * (y - my) for x, y in pts) / den if den else None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", default="1000,10000,100000", help="submissions in the folder")
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    args = ap.parse_args()
    sys.path.insert(0, str(args.root))
    ns = [int(x) for x in args.n.split(",") if x]
    print(f"project: {args.root.resolve()}  files per submission: {len(FILES)}  rounds: {args.rounds}")
    rows = {}
    for n in ns:
        r = rows[n] = measure(n, args.rounds)
        print(
            f"N={n:>7}: commit warm {r['commit_warm_s'] * 1e3:.1f} ms, "
            f"cold {r['commit_cold_s'] * 1e3:.1f} ms; "
            f"read cold {r['read_cold_s'] * 1e3:.1f} ms, warm {r['read_warm_s'] * 1e3:.2f} ms; "
            f"list one folder cold {r['list_cold_s'] * 1e3:.1f} ms; tree files per commit "
            f"{r['tree_files']:.0f} ({r['tree_bytes'] / 1e3:.1f} kB)",
            flush=True,
        )
    print("log-log slope against N (0 = flat, 1 = linear):")
    for key in next(iter(rows.values())):
        s = slope(ns, [rows[n][key] for n in ns])
        print(f"  {key:>14}: {'n/a' if s is None else f'{s:+.2f}'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
