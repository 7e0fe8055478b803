"""`python -m worker ...`: the submitters' REST client and in-process commands for maintainers.

submit, status, validate, list, finals, make-public, withdraw: the REST client `varm` (varm_client/cli.py),
  with --api defaulting to $VARM_API, else http://127.0.0.1:$PORT, and --token to $VARM_TOKEN, else the
  local token file's token of user `local` ($DATA_DIR/tokens.json, embedded default).
reconcile [--stuck-after S]     re-send stuck submissions now (needs the store and the broker)
quarantine                      list unreadable submission records (skipped by the pipeline); exit 1 if any
rescore --track T [--dry-run] [--force]   re-score every submission of a track on the low-priority queue
seed [--demo-dir D]             seed references, public files and baselines from data/demo
install --track T DIR [--replace] [--test-status private|public]  install a real reference set
held [--track T]                near-copies held for review (maintainers; names the earlier submission)
release ID [--reason R]         score and publish a held submission
reject ID --reason R            end a held submission unscored
reindex [--track T]             index submissions stored before the near-copy guard existed (once, on upgrade)
release cut --track T --name N  cut a release: the finals' private-slice ranks, full-test scores, signed
"""

from __future__ import annotations

import argparse
import getpass
import json
import logging
import os
import sys
from pathlib import Path

from varm_client import cli as rest
from worker.config import Config


def _default_api(config: Config) -> str:
    return os.environ.get("VARM_API") or f"http://127.0.0.1:{config.port}"


def _default_token(config: Config) -> str | None:
    """$VARM_TOKEN, else the local token file's token of user `local` (embedded default)."""
    if os.environ.get("VARM_TOKEN"):
        return os.environ["VARM_TOKEN"]
    from worker.token_file import local_token  # the same file the local service reads

    return local_token(Path(config.data_dir))


def cli_actor() -> str:
    """Who a maintainer's command is logged as when --actor is not given: the OS user, marked as the CLI
    ("root (cli)"), so an audit trail never reads a bare "maintainer"."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # a container's uid with no passwd entry and no LOGNAME/USER
        user = f"uid {os.getuid()}"
    return f"{user} (cli)"


def _print(obj) -> None:
    print(json.dumps(obj, ensure_ascii=False, indent=2))


def cmd_release(args, config: Config) -> int:
    from worker.gold.release import ReleaseRefused, cut
    from worker.store import open_store

    try:
        release = cut(open_store(config), args.track, args.name, actor=args.actor)
    except ReleaseRefused as error:
        print(f"release refused: {error}", file=sys.stderr)
        return 1
    counts = release["counts"]
    print(
        f"{args.track} release {args.name}: {counts['finals']} finals of {counts['submitters']} submitters, "
        f"{release['test_status']} test, scorer {release['scorer_version']}; "
        f"results folder releases/{args.track}/{args.name}/"
    )
    return 0


def cmd_reconcile(args, config: Config) -> int:
    from worker.celery import make_app
    from worker.enqueue import CeleryEnqueuer
    from worker.gold.reconcile import reconcile
    from worker.store import open_store

    store = open_store(config, areas=("submissions", "results"))
    stuck_after = config.stuck_after_seconds if args.stuck_after is None else args.stuck_after
    _print(reconcile(store, CeleryEnqueuer(make_app(config)), stuck_after))
    return 0


def cmd_quarantine(args, config: Config) -> int:
    from scoring.names import TRACK_NAMES
    from worker.store import open_store
    from worker.submissions import quarantined

    store = open_store(config, areas=("submissions",))
    found = {track: quarantined(store, track) for track in TRACK_NAMES}
    _print({track: items for track, items in found.items() if items})
    return 1 if any(found.values()) else 0


def cmd_rescore(args, config: Config) -> int:
    from worker.celery import make_app

    app = make_app(config)
    started = app.send_task(
        "worker.tasks.rescore_track", args=[args.track, args.dry_run, args.actor, args.force]
    )
    plan = started.get(timeout=args.timeout)
    print(f"run {plan['run']}: {plan['chunks']} chunks queued", file=sys.stderr)
    summary = app.AsyncResult(plan["finalize_task_id"]).get(timeout=args.timeout)
    for line in change_lines(summary.get("changes") or []):
        print(line, file=sys.stderr)
    _print(summary)
    return 0


def change_lines(changes: list[dict]) -> list[str]:
    """One readable line per submission whose primary metric or rank moved (or that failed), and in a forced
    re-score one per submission saying whether it reproduced its stored version."""
    lines = []
    for c in changes:
        name = c["model_name"] or c["submission_id"]
        if c.get("error"):
            lines.append(f"{name}: not re-scored ({c['error']})")
            continue
        if c.get("check") == "reproduced":
            lines.append(f"{name}: reproduced (version {c['compared_version']}, byte for byte)")
            continue
        if c.get("check") == "differs":
            attached = (
                f"new version {c['new_version']}" if c.get("new_version") else "dry run: nothing attached"
            )
            lines.append(
                f"{name}: DIFFERS from stored version {c['compared_version']} ({', '.join(c['differs'])}): "
                f"not reproducible with the same scorer and references; {attached}"
            )
        old, new = c["old"], c["new"] if c["new"] is not None else c["old"]
        if old == new and c["old_rank"] == c["new_rank"]:
            continue
        moved = f"{c['metric']} {_pct(old)} -> {_pct(new)}"
        if old is not None and new is not None:
            moved += f" ({100 * (new - old):+.2f})"
        lines.append(f"{name}: {moved}, rank {c['old_rank']} -> {c['new_rank']}")
    return lines or ["no metric or rank changed"]


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f}"


def cmd_seed(args, config: Config) -> int:
    from worker.celery import make_app
    from worker.enqueue import CeleryEnqueuer
    from worker.gold.seed import SeedError, seed
    from worker.service import Service
    from worker.store import open_store

    store = open_store(config)
    try:
        done = seed(store, Service(config, store, CeleryEnqueuer(make_app(config))), Path(args.demo_dir))
    except SeedError as error:
        print(f"seed failed: {error}", file=sys.stderr)
        return 1
    for track, what in done["tracks"].items():
        print(f"{track}: {what}")
    print(f"baselines submitted: {', '.join(done['baselines']) or 'none (all already present)'}")
    return 0


def cmd_install(args, config: Config) -> int:
    from worker.gold.install import InstallRefused, install
    from worker.gold.seed import DEMO_DIR
    from worker.store import open_store

    try:
        installed = install(
            open_store(config),
            args.track,
            Path(args.bundle),
            replace=args.replace,
            demo_dir=DEMO_DIR,
            test_status=args.test_status,
        )
    except (InstallRefused, ValueError) as error:
        print(f"install failed: {error}", file=sys.stderr)
        return 1
    print("\n".join(installed.lines()))
    return 0


def _service(config: Config):
    from worker.celery import make_app
    from worker.enqueue import CeleryEnqueuer
    from worker.service import Service
    from worker.store import WEB_AREAS, open_store

    return Service(config, open_store(config, areas=WEB_AREAS), CeleryEnqueuer(make_app(config)))


def cmd_held(args, config: Config) -> int:
    _print(_service(config).held(args.track))
    return 0


def cmd_reindex(args, config: Config) -> int:
    from scoring.names import TRACK_NAMES

    service = _service(config)
    _print(
        {
            track: service.index_earlier_submissions(track)
            for track in ([args.track] if args.track else TRACK_NAMES)
        }
    )
    return 0


def cmd_review(args, config: Config) -> int:
    from worker.errors import NotHeld

    if args.command == "release" and args.submission_id == "cut":
        if not (args.track and args.name):
            print("error: release cut needs --track and --name", file=sys.stderr)
            return 2
        return cmd_release(args, config)

    service = _service(config)
    action = service.release if args.command == "release" else service.reject
    try:
        _print(action(args.submission_id, actor=args.actor, reason=args.reason))
    except (NotHeld, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def parser(config: Config) -> argparse.ArgumentParser:
    from worker.gold.seed import DEMO_DIR

    p = argparse.ArgumentParser(
        prog="python -m worker", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = p.add_subparsers(dest="command", required=True)
    # The submitters' REST commands are the client's own (varm_client, the `varm` console script).
    token_help = "bearer token (default $VARM_TOKEN, else the local token file's token of user `local`)"
    rest.add_commands(sub, rest.common_options(_default_api(config), token_help))
    r = sub.add_parser("reconcile", help="re-send stuck submissions now")
    r.add_argument("--stuck-after", type=float, help="seconds (default STUCK_AFTER_SECONDS)")
    r.set_defaults(run=cmd_reconcile)
    q = sub.add_parser("quarantine", help="list unreadable submission records (skipped by the pipeline)")
    q.set_defaults(run=cmd_quarantine)
    rs = sub.add_parser("rescore", help="re-score a track with the current scorer")
    rs.add_argument("--track", required=True)
    rs.add_argument("--dry-run", action="store_true")
    rs.add_argument(
        "--force",
        action="store_true",
        help="recompute results already current too, and report whether each reproduces its stored version",
    )
    rs.add_argument("--actor", default=cli_actor(), help="who is logged (default: the OS user, via the CLI)")
    rs.add_argument("--timeout", type=float, default=3600)
    rs.set_defaults(run=cmd_rescore)
    hd = sub.add_parser("held", help="list near-copies held for review (maintainers)")
    hd.add_argument("--track")
    hd.set_defaults(run=cmd_held)
    for name, what in (
        ("release", "score and publish a held submission; `release cut`: cut a track's release"),
        ("reject", "end a held submission unscored"),
    ):
        rv = sub.add_parser(name, help=f"{what} (maintainers)")
        rv.add_argument("submission_id", help="a held submission's id (or `cut` with --track and --name)")
        rv.add_argument("--reason", required=name == "reject", default="")
        rv.add_argument(
            "--actor", default=cli_actor(), help="who is logged (default: the OS user, via the CLI)"
        )
        if name == "release":
            rv.add_argument("--track", help="release cut: the track")
            rv.add_argument("--name", help="release cut: like 2027-03 (an erratum: 2027-03.1)")
        rv.set_defaults(run=cmd_review)
    ri = sub.add_parser("reindex", help="add submissions stored before the near-copy guard to its index")
    ri.add_argument("--track")
    ri.set_defaults(run=cmd_reindex)
    sd = sub.add_parser("seed", help="seed the store from the demo data")
    sd.add_argument("--demo-dir", default=str(DEMO_DIR))
    sd.set_defaults(run=cmd_seed)
    ins = sub.add_parser("install", help="install a reference set (bundle folder) as a track's test set")
    ins.add_argument("--track", required=True)
    ins.add_argument("bundle", help="a reference bundle folder as `python -m scoring import` writes it")
    ins.add_argument(
        "--test-status",
        choices=["private", "public"],
        help="are the test labels published elsewhere? (default: what the importer recorded, else private)",
    )
    ins.add_argument(
        "--replace",
        action="store_true",
        help="replace a real set that submissions were scored on (they then need a re-score)",
    )
    ins.set_defaults(run=cmd_install)
    return p


def main(argv: list[str] | None = None) -> int:
    config = Config.from_env()
    args = parser(config).parse_args(argv)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # a log line per poll is noise to a submitter
    if args.command in rest.COMMANDS:
        args.token = args.token or _default_token(config)
        return rest.run(args)
    return args.run(args, config)
