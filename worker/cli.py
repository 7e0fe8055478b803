"""`python -m worker ...`: a REST client for submitters and in-process commands for maintainers.

submit FILE --track T --model-name N [--wait] [--api URL] [--token T]   (REST)
status ID [--api URL]                                                  (REST)
reconcile                       re-send stuck submissions now (needs the store and the broker)
rescore --track T [--dry-run]   re-score every submission of a track on the low-priority queue
seed [--demo-dir D]             seed references, public files and baselines from data/demo
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

FINAL = {"published", "rejected", "failed"}


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
    from worker.reconcile import reconcile
    from worker.store import open_store

    store = open_store(config, areas=("submissions",))
    _print(reconcile(store, CeleryEnqueuer(make_app(config)), args.stuck_after or config.stuck_after_seconds))
    return 0


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
    from worker.seed import seed
    from worker.service import Service
    from worker.store import open_store

    store = open_store(config)
    _print(seed(store, Service(config, store, CeleryEnqueuer(make_app(config))), Path(args.demo_dir)))
    return 0


def parser(config: Config) -> argparse.ArgumentParser:
    from worker.seed import DEMO_DIR

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
    rs = sub.add_parser("rescore", help="re-score a track with the current scorer")
    rs.add_argument("--track", required=True)
    rs.add_argument("--dry-run", action="store_true")
    rs.add_argument("--actor", default=os.environ.get("USER", "maintainer"))
    rs.add_argument("--timeout", type=float, default=3600)
    rs.set_defaults(run=cmd_rescore)
    sd = sub.add_parser("seed", help="seed the store from the demo data")
    sd.add_argument("--demo-dir", default=str(DEMO_DIR))
    sd.set_defaults(run=cmd_seed)
    return p


def main(argv: list[str] | None = None) -> int:
    config = Config.from_env()
    args = parser(config).parse_args(argv)
    return args.run(args, config)
