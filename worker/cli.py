"""`python -m worker ...`: a REST client for submitters and in-process commands for maintainers.

submit FILE --track T --model-name N [--wait [--json]] [--api URL] [--token T]   (REST)
status ID [--json] [--api URL] [--token T]                                      (REST)
make-public ID [--api URL] [--token T]   put your private submission (submit --private) on the board (REST)
finals --track T [ID [ID]] [--clear]     show or choose your finals (at most 2; what a release reveals) (REST)
  --api defaults to $VARM_API, else http://127.0.0.1:$PORT; --token to $VARM_TOKEN, else the local
  token file's token of user `local` ($DATA_DIR/tokens.json, embedded default).
reconcile [--stuck-after S]     re-send stuck submissions now (needs the store and the broker)
quarantine                      list unreadable submission records (skipped by the pipeline); exit 1 if any
rescore --track T [--dry-run]   re-score every submission of a track on the low-priority queue
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
import json
import logging
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
    from worker.token_file import local_token  # the same file the local service reads

    return local_token(Path(config.data_dir))


def _print(obj) -> None:
    print(json.dumps(obj, ensure_ascii=False, indent=2))


class ClientError(Exception):
    """A REST call that went wrong in a way the user can act on: one line, no traceback."""


def _request(client: httpx.Client, method: str, path: str, **kwargs) -> httpx.Response:
    try:
        response = client.request(method, path, **kwargs)
    except httpx.TransportError as exc:
        raise ClientError(
            f"cannot reach the leaderboard service at {client.base_url} ({type(exc).__name__}): "
            "is it running? Start it with scripts/serve, or point --api / VARM_API at it"
        ) from None
    if response.status_code == 401:
        raise ClientError(
            f"the service at {client.base_url} refused the token (401): pass --token or set VARM_TOKEN "
            "(a local service prints it at start and keeps it in data/tokens.json)"
        )
    try:
        response.json()
    except ValueError:
        raise ClientError(
            f"{client.base_url} answered HTTP {response.status_code} without JSON: is --api / VARM_API the "
            "leaderboard service?"
        ) from None
    return response


def _error_lines(status_code: int, body: dict) -> list[str]:
    """A refused upload or lookup as lines a person reads (line, field, message)."""
    if isinstance(body.get("errors"), list):
        lines = [
            f"line {e.get('line')}, {e.get('field')}: {e.get('message')}"
            if e.get("line") is not None
            else f"{e.get('field')}: {e.get('message')}"
            for e in body["errors"]
        ]
        total = body.get("errors_total", len(lines))
        more = [f"... {total - len(lines)} more"] if total > len(lines) else []
        return [f"rejected (HTTP {status_code}):", *lines, *more]
    return [f"error (HTTP {status_code}): {body.get('detail', body)}"]


def _dig(tree, dotted: str):
    for part in dotted.split("."):
        tree = tree.get(part) if isinstance(tree, dict) else None
    return tree


def summary_line(body: dict) -> str:
    """One line for a submission: id, status, and once scored the primary metric with its CI."""
    from scoring.tracks import get_track, metric_spec

    hidden = " (private or hidden: off the board)" if body.get("hidden") else ""
    model = str((body.get("metadata") or {}).get("model_name") or "")
    line = f"{body.get('submission_id')} · {model} ({body.get('track')}): {body.get('status')}{hidden}"
    scored = (body.get("result") or {}).get("result")
    if scored:
        primary = get_track(body["track"]).primary_metric
        value, ci = _dig(scored.get("metrics", {}), primary), scored.get("ci", {}).get(primary)
        if isinstance(value, (int, float)):
            line += f" · {metric_spec(body['track'], primary).header()} {100 * value:.1f} %"
            if ci:
                line += f" (95% CI {100 * ci[0]:.1f}–{100 * ci[1]:.1f})"
    if body.get("not_released"):  # the Ladder withheld it: no number, and why
        line += f" · {body['not_released']}"
    if body.get("error"):
        line += f" · {body['error']}"
    elif body.get("status") == "held" and body.get("reason"):
        line += f" · {body['reason']}"
    return line


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
        "private": "true" if args.private else "false",
    }
    with httpx.Client(base_url=args.api, headers=headers, timeout=120) as client:
        try:
            with open(args.file, "rb") as f:
                upload = {"file": (Path(args.file).name, f)}
                response = _request(client, "POST", "/api/v1/submissions", data=fields, files=upload)
        except OSError as exc:
            raise ClientError(f"cannot read {args.file}: {exc.strerror}") from None
        body = response.json()
        if response.status_code not in (200, 202):
            print("\n".join(_error_lines(response.status_code, body)), file=sys.stderr)
            return 1
        if not args.wait:
            _print(body) if args.json else print(
                f"{body['submission_id']}: {body['status']}"
                + (" (already submitted)" if body.get("duplicate") else "")
            )
            return 0
        return _wait(client, body["submission_id"], args.timeout, args.json)


def _wait(client: httpx.Client, submission_id: str, timeout: float, as_json: bool) -> int:
    deadline = time.monotonic() + timeout
    status = None
    while time.monotonic() < deadline:
        body = _request(client, "GET", f"/api/v1/submissions/{submission_id}").json()
        if body["status"] != status:
            status = body["status"]
            print(f"{submission_id}: {status}", file=sys.stderr)
        private_done = status == "scored" and body.get("hidden")  # a hidden result is never published
        if status in FINAL or private_done:
            _print(body) if as_json else print(summary_line(body))
            return 0 if status == "published" or private_done else 1
        time.sleep(0.5)
    print(
        f"{submission_id}: timed out after {timeout:g} s (still {status}); "
        f"check later with `python -m worker status {submission_id}`",
        file=sys.stderr,
    )
    return 2


def cmd_status(args, config: Config) -> int:
    # With a token, the submitter (and the maintainers) also see a hidden submission; without, it is 404.
    token = args.token or _default_token(config)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with httpx.Client(base_url=args.api, headers=headers, timeout=30) as client:
        response = _request(client, "GET", f"/api/v1/submissions/{args.submission_id}")
    body = response.json()
    if response.status_code != 200:
        print("\n".join(_error_lines(response.status_code, body)), file=sys.stderr)
        return 1
    _print(body) if args.json else print(summary_line(body))
    return 0


def cmd_make_public(args, config: Config) -> int:
    token = args.token or _default_token(config)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with httpx.Client(base_url=args.api, headers=headers, timeout=30) as client:
        response = _request(client, "POST", f"/api/v1/submissions/{args.submission_id}/make-public")
    if response.status_code != 200:
        print("\n".join(_error_lines(response.status_code, response.json())), file=sys.stderr)
        return 1
    print(f"{args.submission_id}: public; it joins the board at the next publish")
    return 0


def cmd_finals(args, config: Config) -> int:
    token = args.token or _default_token(config)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with httpx.Client(base_url=args.api, headers=headers, timeout=30) as client:
        if args.submission_ids or args.clear:
            body = {"submission_ids": [] if args.clear else args.submission_ids}
            response = _request(client, "PUT", f"/api/v1/me/finals?track={args.track}", json=body)
        else:
            response = _request(client, "GET", f"/api/v1/me/finals?track={args.track}")
    if response.status_code != 200:
        print("\n".join(_error_lines(response.status_code, response.json())), file=sys.stderr)
        return 1
    chosen = response.json()["finals"]
    print(f"{args.track}: finals {', '.join(chosen)}" if chosen else f"{args.track}: your best released one")
    return 0


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
    started = app.send_task("worker.tasks.rescore_track", args=[args.track, args.dry_run, args.actor])
    plan = started.get(timeout=args.timeout)
    print(f"run {plan['run']}: {plan['chunks']} chunks queued", file=sys.stderr)
    summary = app.AsyncResult(plan["finalize_task_id"]).get(timeout=args.timeout)
    for line in change_lines(summary.get("changes") or []):
        print(line, file=sys.stderr)
    _print(summary)
    return 0


def change_lines(changes: list[dict]) -> list[str]:
    """One readable line per submission whose primary metric or rank moved (or that failed)."""
    lines = []
    for c in changes:
        name = c["model_name"] or c["submission_id"]
        if c.get("error"):
            lines.append(f"{name}: not re-scored ({c['error']})")
            continue
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
    s = sub.add_parser("submit", help="upload a predictions file")
    s.add_argument("file")
    s.add_argument("--track", required=True)
    s.add_argument("--model-name", required=True)
    for name in ("organisation", "model-type", "setting", "paper-url", "code-url", "description"):
        s.add_argument(f"--{name}", default="")
    s.add_argument(
        "--wait",
        action="store_true",
        help="poll until published, rejected, failed or held; end with one summary line",
    )
    s.add_argument("--timeout", type=float, default=600)
    s.add_argument(
        "--api",
        default=_default_api(config),
        help="service URL (default $VARM_API, else http://127.0.0.1:$PORT)",
    )
    s.add_argument("--token", help="bearer token (default $VARM_TOKEN, else the local token file's)")
    s.add_argument("--json", action="store_true", help="print the full answer as JSON instead of one line")
    s.add_argument(
        "--private",
        action="store_true",
        help="scored, but off the board and visible to you only until `make-public ID`",
    )
    s.set_defaults(run=cmd_submit)
    st = sub.add_parser("status", help="show a submission")
    st.add_argument("submission_id")
    st.add_argument("--api", default=_default_api(config), help="service URL (default $VARM_API)")
    st.add_argument("--token", help="bearer token (default $VARM_TOKEN): also shows your hidden submissions")
    st.add_argument("--json", action="store_true", help="print the full record and result as JSON")
    st.set_defaults(run=cmd_status)
    mp = sub.add_parser("make-public", help="put your private submission on the board")
    mp.add_argument("submission_id")
    mp.add_argument("--api", default=_default_api(config), help="service URL (default $VARM_API)")
    mp.add_argument("--token", help="bearer token (default $VARM_TOKEN)")
    mp.set_defaults(run=cmd_make_public)
    fi = sub.add_parser("finals", help="show or choose your finals on a track (at most 2)")
    fi.add_argument("submission_ids", nargs="*")
    fi.add_argument("--track", required=True)
    fi.add_argument("--clear", action="store_true", help="no choice: a release takes your best released one")
    fi.add_argument("--api", default=_default_api(config), help="service URL (default $VARM_API)")
    fi.add_argument("--token", help="bearer token (default $VARM_TOKEN)")
    fi.set_defaults(run=cmd_finals)
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
    for name, what in (
        ("release", "score and publish a held submission; `release cut`: cut a track's release"),
        ("reject", "end a held submission unscored"),
    ):
        rv = sub.add_parser(name, help=f"{what} (maintainers)")
        rv.add_argument("submission_id", help="a held submission's id (or `cut` with --track and --name)")
        rv.add_argument("--reason", required=name == "reject", default="")
        rv.add_argument("--actor", default=os.environ.get("USER", "maintainer"))
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
    try:
        return args.run(args, config)
    except ClientError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
