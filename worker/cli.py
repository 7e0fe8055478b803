"""`python -m worker ...`: a REST client for submitters and in-process commands for maintainers.

submit FILE --track T --model-name N [--wait] [--api URL] [--token T]   (REST)
status ID [--api URL]                                                  (REST)
reconcile [--stuck-after S]     re-send stuck submissions now (needs the store and the broker)
quarantine                      list unreadable submission records (skipped by the pipeline); exit 1 if any
rescore --track T [--dry-run]   re-score every submission of a track on the low-priority queue
seed [--demo-dir D]             seed references, public files and baselines from data/demo
install --track T DIR [--replace]  install a real reference set (a bundle from `python -m scoring import`)
held [--track T]                near-copies held for review (maintainers; names the earlier submission)
release ID [--reason R]         score and publish a held submission
reject ID --reason R            end a held submission unscored
reindex [--track T]             index submissions stored before the near-copy guard existed (once, on upgrade)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import httpx

from worker.config import Config

FINAL = {"published", "rejected", "failed", "held"}  # held: waits for a maintainer, not for a worker


def _default_api(config: Config) -> str:
    return os.environ.get("VARM_API") or f"http://127.0.0.1:{config.port}"


def _default_token(config: Config) -> str | None:
    """$VARM_TOKEN, else the local token file's token of user `local` (embedded default)."""
    if os.environ.get("VARM_TOKEN"):
        return os.environ["VARM_TOKEN"]
    path = Path(config.data_dir) / "tokens.json"
    if path.is_file():
        return next((t for t, user in json.loads(path.read_text()).items() if user == "local"), None)
    return None


def _print(obj) -> None:
    print(json.dumps(obj, ensure_ascii=False, indent=2))


def cmd_submit(args, config: Config) -> int:
    token = args.token or _default_token(config)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    fields = {
        "track": args.track,
        "model_name": args.model_name,
        "organisation": args.organisation,
        "model_type": args.model_type,
        "setting": args.setting,
        "paper_url": args.paper_url,
        "code_url": args.code_url,
        "description": args.description,
    }
    with httpx.Client(base_url=args.api, headers=headers, timeout=120) as client:
        with open(args.file, "rb") as f:
            response = client.post(
                "/api/v1/submissions", data=fields, files={"file": (Path(args.file).name, f)}
            )
        body = response.json()
        _print(body)
        if response.status_code not in (200, 202):
            return 1
        if args.wait:
            return _wait(client, body["submission_id"], args.timeout)
    return 0


def _wait(client: httpx.Client, submission_id: str, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    status = None
    while time.monotonic() < deadline:
        body = client.get(f"/api/v1/submissions/{submission_id}").json()
        if body["status"] != status:
            status = body["status"]
            print(f"{submission_id}: {status}", file=sys.stderr)
        if status in FINAL:
            _print(body)
            return 0 if status == "published" else 1
        time.sleep(0.5)
    print(f"timed out after {timeout} s", file=sys.stderr)
    return 2


def cmd_status(args, config: Config) -> int:
    # With a token, the submitter (and the maintainers) also see a hidden submission; without, it is 404.
    token = args.token or _default_token(config)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = httpx.get(f"{args.api}/api/v1/submissions/{args.submission_id}", headers=headers, timeout=30)
    _print(response.json())
    return 0 if response.status_code == 200 else 1


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
    from scoring.tracks import TRACK_NAMES
    from worker.store import open_store
    from worker.submissions import quarantined

    store = open_store(config, areas=("submissions",))
    found = {track: quarantined(store, track) for track in TRACK_NAMES}
    _print({track: items for track, items in found.items() if items})
    return 1 if any(found.values()) else 0


def cmd_rescore(args, config: Config) -> int:
    from worker.celery import make_app

    app = make_app(config)
    started = app.send_task("worker.tasks.rescore_track", args=[args.track, args.dry_run, args.actor])
    plan = started.get(timeout=args.timeout)
    print(f"run {plan['run']}: {plan['chunks']} chunks queued", file=sys.stderr)
    summary = app.AsyncResult(plan["finalize_task_id"]).get(timeout=args.timeout)
    _print(summary)
    return 0


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
        installed = install(open_store(config), args.track, Path(args.bundle), replace=args.replace,
                            demo_dir=DEMO_DIR)
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
    from scoring.tracks import TRACK_NAMES

    service = _service(config)
    _print({track: service.index_earlier_submissions(track) for track in ([args.track] if args.track
                                                                            else TRACK_NAMES)})
    return 0


def cmd_review(args, config: Config) -> int:
    from worker.service import NotHeld

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
    s = sub.add_parser("submit", help="upload a predictions file")
    s.add_argument("file")
    s.add_argument("--track", required=True)
    s.add_argument("--model-name", required=True)
    for name in ("organisation", "model-type", "setting", "paper-url", "code-url", "description"):
        s.add_argument(f"--{name}", default="")
    s.add_argument("--wait", action="store_true", help="poll until published, rejected or failed")
    s.add_argument("--timeout", type=float, default=600)
    s.add_argument("--api", default=_default_api(config))
    s.add_argument("--token")
    s.set_defaults(run=cmd_submit)
    st = sub.add_parser("status", help="show a submission")
    st.add_argument("submission_id")
    st.add_argument("--api", default=_default_api(config))
    st.add_argument("--token")
    st.set_defaults(run=cmd_status)
    r = sub.add_parser("reconcile", help="re-send stuck submissions now")
    r.add_argument("--stuck-after", type=float, help="seconds (default STUCK_AFTER_SECONDS)")
    r.set_defaults(run=cmd_reconcile)
    q = sub.add_parser("quarantine", help="list unreadable submission records (skipped by the pipeline)")
    q.set_defaults(run=cmd_quarantine)
    rs = sub.add_parser("rescore", help="re-score a track with the current scorer")
    rs.add_argument("--track", required=True)
    rs.add_argument("--dry-run", action="store_true")
    rs.add_argument("--actor", default=os.environ.get("USER", "maintainer"))
    rs.add_argument("--timeout", type=float, default=3600)
    rs.set_defaults(run=cmd_rescore)
    hd = sub.add_parser("held", help="list near-copies held for review (maintainers)")
    hd.add_argument("--track")
    hd.set_defaults(run=cmd_held)
    for name, what in (("release", "score and publish a held submission"),
                       ("reject", "end a held submission unscored")):
        rv = sub.add_parser(name, help=f"{what} (maintainers)")
        rv.add_argument("submission_id")
        rv.add_argument("--reason", required=name == "reject", default="")
        rv.add_argument("--actor", default=os.environ.get("USER", "maintainer"))
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
    ins.add_argument("--replace", action="store_true",
                     help="replace a real set that submissions were scored on (they then need a re-score)")
    ins.set_defaults(run=cmd_install)
    return p


def main(argv: list[str] | None = None) -> int:
    config = Config.from_env()
    args = parser(config).parse_args(argv)
    return args.run(args, config)
