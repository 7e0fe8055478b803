"""Hostile-input figures: every crafted upload of tests/hostile/corpus.py, every track, both levels.

Level a (scorer): `check_predictions` in subprocesses, timed, memory measured (tracemalloc peak for light
files, ru_maxrss for the 30–65 MB ones). Level b (REST): `POST /api/v1/submissions` of a running
`python -m space` (tmp DATA_DIR, AUTH=open, free port), see tests/hostile/rest.py.

    .venv/bin/python bench/bench_hostile.py [--json bench/out/hostile.json] [--no-rest]

Prints one line per failed case, then the totals; exit status 1 when any case did not hold.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.hostile import corpus, runner  # noqa: E402

MiB = 1024 * 1024


def scorer_level(tmp: Path) -> dict:
    tracks = runner.available_tracks()
    verdicts = runner.run_cases(tracks, tmp, heavy=False) + runner.run_cases(tracks, tmp, heavy=True)
    failed = [v for v in verdicts if not v.held]
    light = [v for v in verdicts if v.rss is None]
    heavy = [v for v in verdicts if v.rss is not None]
    return {
        "tracks": tracks,
        "tried": len(verdicts),
        "held": len(verdicts) - len(failed),
        "failed": [{"track": v.track, "case": v.case, "why": v.why} for v in failed],
        "light_max_seconds": max((v.seconds for v in light), default=0.0),
        "light_max_py_peak_mib": max((v.py_peak or 0 for v in light), default=0) / MiB,
        "heavy": [
            {
                "track": v.track,
                "case": v.case,
                "mib": v.bytes / MiB,
                "seconds": v.seconds,
                "rss_mib": (v.rss or 0) / MiB,
            }
            for v in heavy
        ],
    }


def rest_level(tmp: Path) -> dict | None:
    try:
        from tests.hostile import rest
    except ImportError as error:  # written once space/api.py exists
        return {"skipped": f"REST level not available: {error}"}
    return rest.run_all(tmp)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    parser.add_argument("--no-rest", action="store_true", help="scorer level only")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="hostile-") as tmp:
        figures = {
            "corpus_file_cases": len(corpus.CASES),
            "corpus_meta_cases": len(corpus.META_CASES),
            "scorer": scorer_level(Path(tmp)),
        }
        if not args.no_rest:
            figures["rest"] = rest_level(Path(tmp))
    figures["seconds"] = time.perf_counter() - start
    s = figures["scorer"]
    print(
        f"corpus: {figures['corpus_file_cases']} file cases + {figures['corpus_meta_cases']} metadata cases"
    )
    print(
        f"scorer level ({', '.join(s['tracks'])}): tried {s['tried']}, held {s['held']}; "
        f"light files max {s['light_max_seconds'] * 1000:.0f} ms, tracemalloc peak "
        f"{s['light_max_py_peak_mib']:.1f} MiB"
    )
    for h in s["heavy"]:
        print(
            f"  heavy {h['track']}/{h['case']}: {h['mib']:.0f} MiB file, {h['seconds']:.2f} s, "
            f"peak RSS {h['rss_mib']:.0f} MiB"
        )
    for f in s["failed"]:
        print(f"  FAILED {f['track']}/{f['case']}: {f['why']}")
    rest = figures.get("rest")
    if rest and "skipped" not in rest:
        print(
            f"REST level: tried {rest['tried']}, held {rest['held']}; max {rest['max_seconds']:.2f} s; "
            f"health 200 after every case: {rest['health_always_ok']}"
        )
        for f in rest["failed"]:
            print(f"  FAILED {f['case']}: {f['why']}")
    elif rest:
        print(rest["skipped"])
    print(f"total {figures['seconds']:.1f} s")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(figures, indent=2, ensure_ascii=False) + "\n")
    bad = s["failed"] or (rest and rest.get("failed"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
