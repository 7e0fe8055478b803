"""``python -m baselines [--data DIR] [--out DIR] [--tracks T ...] [--splits S ...]``: write every
baseline's predictions (fitted on each track's train split) for the dev and test splits."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from baselines import SPLITS, TRACKS
from baselines.data import DEFAULT_DATA

NEEDS_SETUP = (
    "error: python -m baselines fits scikit-learn models, a development package: run scripts/setup first "
    "(it installs requirements-dev.lock; scripts/serve installs only what the service needs)"
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m baselines",
        description="Run the baselines on reference bundles (the demo by default, or real ones via --data).",
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="demo data root (default: data/demo)")
    parser.add_argument("--out", type=Path, default=None, help="output root (default: the data root)")
    parser.add_argument(
        "--tracks",
        nargs="+",
        choices=TRACKS,
        default=list(TRACKS),
        help="tracks to run: folders <data>/<track>/ holding train.jsonl (default: all)",
    )
    parser.add_argument(
        "--splits",
        nargs="+",
        choices=SPLITS,
        default=None,
        help="splits to predict (default: each of dev, test that the bundle has)",
    )
    args = parser.parse_args(argv)
    try:
        from baselines.run import BaselineError, run
    except ModuleNotFoundError as error:
        if error.name != "sklearn" and not (error.name or "").startswith("sklearn."):
            raise
        print(NEEDS_SETUP, file=sys.stderr)
        return 2
    try:
        paths = run(args.data, args.out, tuple(args.tracks), tuple(args.splits) if args.splits else None)
    except BaselineError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for path in paths:
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
