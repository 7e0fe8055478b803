"""UI benchmark: first leaderboard render with N published results in the store; prints figures.

Server side only (what the web process does before the browser gets the page): the web process's real
Service (`space.server.build_service`) over a LocalStore holding `<track>/leaderboard.json` with N rows and
N result envelopes as the publisher writes them, then the UI callbacks `load_view` (table page), a search
keystroke, and the Analysis tab (5 figures from 8 published results).
Memory: peak Python allocations during the renders (tracemalloc) and the process's peak RSS (gradio,
pandas and plotly imports included).

Usage: .venv/bin/python bench/bench_ui.py [--n 10000] [--track varm]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def seed(data_dir: Path, track: str, n: int) -> float:
    """Write what the pipeline's publisher writes for `n` published results, with the pipeline's own code.

    `Publisher.board` builds the board (worker.leaderboard.build_rows: sort, ranks, tie groups), written as
    a publish from scratch writes it (`live_board.board_files`), and the envelopes are the publisher's; only
    the tie test is a stand-in (tests.factories.board_rows' 2-point rule), since N synthetic results have no
    private row outcomes for the paired bootstrap.
    """
    from tests.factories import PRIMARY, make_entries
    from worker.gold.publish import Publisher
    from worker.leaderboard import metric
    from worker.live_board import board_files
    from worker.records import public_view, published_result_path
    from worker.store import codec
    from worker.store.local import LocalStore

    class StandInTies(Publisher):
        def significance(self, track: str):
            primary = PRIMARY[track]
            return lambda a, b: (metric(a.result, primary) or 0) - (metric(b.result, primary) or 0) > 0.02

    t0 = time.perf_counter()
    store = LocalStore(data_dir)
    entries = make_entries(track, n, seed=1)
    board = StandInTies(store).board(track, entries)
    add = board_files(board)
    for e in entries:
        add[published_result_path(track, *e.key)] = codec.pretty(
            {"submission": public_view(e.record), "version": e.key[1], "result": e.result}
        )
    store.commit("results", add, [], f"bench: {n} results")
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--track", default="varm")
    ap.add_argument("--seed-into", help=argparse.SUPPRESS)  # internal: seed a store in a child process
    args = ap.parse_args()
    if args.seed_into:
        print(f"{seed(Path(args.seed_into), args.track, args.n):.1f}")
        return 0

    t0 = time.perf_counter()
    import gradio  # noqa: F401  (imported up front: its import time is not the render time)

    from space.server import build_service
    from space.ui.app import build_app
    from worker.config import Config
    from worker.store.local import LocalStore

    import_s = time.perf_counter() - t0

    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp)
        # Seeded in a child process, so the figures below are those of a web process that only reads.
        seed_s = float(
            subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--n",
                    str(args.n),
                    "--track",
                    args.track,
                    "--seed-into",
                    str(data_dir),
                ],
                check=True,
                capture_output=True,
                text=True,
            ).stdout.split()[-1]
        )
        size = LocalStore(data_dir).read("results", f"{args.track}/leaderboard.json") or b""
        # The web process's own Service (store without references, Celery enqueuer; nothing is sent).
        service = build_service(Config(data_dir=data_dir))
        app = build_app(service, auth_mode="open", warm=False)

        class Req:
            query_params = {"track": args.track}

        def renders() -> dict[str, float]:
            times = {}
            t = time.perf_counter()
            out = app.load_view(Req())  # cold: reads the live board, builds the frame, renders page 1
            times["first"] = time.perf_counter() - t
            times["rows_shown"] = len(out[app.board.table].value["data"])
            t = time.perf_counter()
            # one search keystroke
            app.board.render_board(args.track, "model-09", [], [], True, "rank", [], 1)
            times["search"] = time.perf_counter() - t
            t = time.perf_counter()
            app.board.render_board(
                args.track, "", ["open"], [], False, "her_c" if args.track == "varm" else "f1", [], 3
            )
            times["sort"] = time.perf_counter() - t
            t = time.perf_counter()
            app.analysis.analysis(args.track, [])  # top 5 + 3 baselines: 8 published results, 5 figures
            times["analysis"] = time.perf_counter() - t
            top = app.ctx.cache.board(args.track).df.sort_values("rank")["submission_id"].tolist()[:20]
            t = time.perf_counter()
            # 8 other systems, template loaded
            app.analysis.analysis(args.track, top[5:13] if len(top) > 12 else [])
            times["analysis2"] = time.perf_counter() - t
            t = time.perf_counter()
            app.board.export(args.track, "", [], [], True, "rank", [], 1)
            times["export"] = time.perf_counter() - t
            return times

        times = renders()
        t = time.perf_counter()
        app.load_view(Req())
        warm = time.perf_counter() - t
        # Second pass under tracemalloc (slower, so not timed) for the peak of Python allocations.
        app = build_app(service, auth_mode="open", warm=False)
        tracemalloc.start()
        renders()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        first, search, sort, analysis, export = (
            times[k] for k in ("first", "search", "sort", "analysis", "export")
        )
        rows_shown = int(times["rows_shown"])
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    print(
        f"UI benchmark: track={args.track}, {args.n:,} published results "
        f"(leaderboard.json {len(size) / 1e6:.1f} MB; seeding took {seed_s:.1f} s, imports {import_s:.1f} s)"
    )
    print(
        f"  first leaderboard render (load_view, cold cache)  {first * 1000:8.1f} ms   "
        f"({rows_shown} rows on page 1)"
    )
    print(f"  page load with the board cached (load_view, warm) {warm * 1000:8.1f} ms")
    print(f"  search keystroke (warm)                           {search * 1000:8.1f} ms")
    print(f"  filter + sort + page 3 (warm)                     {sort * 1000:8.1f} ms")
    print(f"  analysis tab (8 systems, 5 figures, cold results) {analysis * 1000:8.1f} ms")
    print(f"  analysis, 8 other systems (plotly template warm)  {times['analysis2'] * 1000:8.1f} ms")
    print(f"  CSV + JSON export of all rows                     {export * 1000:8.1f} ms")
    print(f"  peak traced Python memory during the renders      {peak / 1e6:8.1f} MB")
    print(f"  peak RSS of the process (imports included)        {rss_mb:8.1f} MB")
    ok = first < 1.0 and rss_mb < 500
    print(f"  target: first render < 1 s and < 500 MB: {'met' if ok else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
