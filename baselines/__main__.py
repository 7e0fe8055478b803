"""``python -m baselines [--data DIR] [--out DIR]``: write every baseline's dev/test predictions."""

from __future__ import annotations

import argparse
from pathlib import Path

from baselines import TRACKS
from baselines.run import DEFAULT_DATA, run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m baselines", description="Run the demo baselines on every demo track (dev and test)."
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="demo data root (default: data/demo)")
    parser.add_argument("--out", type=Path, default=None, help="output root (default: the data root)")
    parser.add_argument("--track", action="append", choices=TRACKS, dest="tracks",
                        help="run only this track (repeatable; default: every track). A real bundle "
                        "imported with `python -m scoring import` into DIR/<track>/ runs as "
                        "--data DIR --track <track>")
    args = parser.parse_args(argv)
    for path in run(args.data, args.out, tuple(args.tracks or TRACKS)):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
