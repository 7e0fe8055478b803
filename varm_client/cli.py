"""`varm submit|status|validate|list|finals|make-public|withdraw`: the service's REST API from a shell.

--api defaults to $VARM_API (else http://127.0.0.1:7860), --token to $VARM_TOKEN. Errors are one line
(or one line per refused row: line, field, message), never a traceback. Exit codes: 0 done, 1 refused or
failed, 2 timed out waiting, 3 the server does not offer the command (an older deployment).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import httpx

FINAL = {"published", "rejected", "failed", "held"}  # held: waits for a maintainer, not for a worker
DEFAULT_API = "http://127.0.0.1:7860"
MADE_PUBLIC = "public; it joins the board at the next publish"
ALREADY_PUBLIC = "already public; nothing changed"
WITHDRAWN = "withdrawn: off every public page at the next publish (make-public puts it back)"


class ClientError(Exception):
    """Something the user can act on: one line, no traceback."""


class NotSupported(ClientError):
    """The server has no such route (404/405 on the route itself): an older deployment."""


def _print(obj) -> None:
    print(json.dumps(obj, ensure_ascii=False, indent=2))


def _client(args, timeout: float = 30) -> httpx.Client:
    token = args.token or os.environ.get("VARM_TOKEN")
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=args.api, headers=headers, timeout=timeout)


def _request(client: httpx.Client, method: str, path: str, route: str = "", **kwargs) -> httpx.Response:
    """One call. `route` names a command whose route may be missing on older servers: a 404 or 405
    without a JSON `detail` of ours (FastAPI's bare "Not Found"/"Method Not Allowed") means unsupported."""
    try:
        response = client.request(method, path, **kwargs)
    except httpx.TransportError as exc:
        raise ClientError(
            f"cannot reach the leaderboard service at {client.base_url} ({type(exc).__name__}): "
            "is it running? Point --api / VARM_API at it"
        ) from None
    if route and response.status_code in (404, 405):
        detail = _json(response).get("detail")
        if response.status_code == 405 or detail in (None, "Not Found"):
            raise NotSupported(f"`varm {route}` is not supported by this server ({client.base_url})")
    if response.status_code == 401:
        raise ClientError(
            f"the service at {client.base_url} refused the token (401): pass --token or set VARM_TOKEN"
        )
    if not isinstance(_json(response), dict | list) or response.content[:1] not in (b"{", b"["):
        raise ClientError(
            f"{client.base_url} answered HTTP {response.status_code} without JSON: is --api / VARM_API the "
            "leaderboard service?"
        )
    return response


def _json(response: httpx.Response):
    try:
        return response.json()
    except ValueError:
        return {}


def _error_line(error: dict) -> str:
    """ "line 11, output: ..." / "line 11: ..." / "output: ..." / "file: ..." (no part that is not there)."""
    where = [f"line {error['line']}"] if error.get("line") is not None else []
    where += [str(error["field"])] if error.get("field") else []
    return f"{', '.join(where) or 'file'}: {error.get('message')}"


def _error_lines(status_code: int, body) -> list[str]:
    if isinstance(body, dict) and isinstance(body.get("errors"), list):
        lines = [_error_line(e) for e in body["errors"]]
        total = body.get("errors_total", len(lines))
        more = [f"... {total - len(lines)} more"] if total > len(lines) else []
        return [f"rejected (HTTP {status_code}):", *lines, *more]
    detail = body.get("detail", body) if isinstance(body, dict) else body
    return [f"error (HTTP {status_code}): {detail}"]


def _done(response: httpx.Response, as_json: bool, ok=(200,), line=None) -> int:
    body = response.json()
    if response.status_code not in ok:
        print("\n".join(_error_lines(response.status_code, body)), file=sys.stderr)
        return 1
    _print(body) if as_json or line is None else print(line(body))
    return 0


def _dig(tree: object, dotted: str) -> object:
    for part in dotted.split("."):
        tree = tree.get(part) if isinstance(tree, dict) else None
    return tree


def _primary_score(body: dict) -> str:
    """ " · JREM ↑ 61.2 % (95% CI 58.0–64.3)" for a submission page with a shown result (or a row of `list`
    with its headline scores), else ""."""
    key = body.get("primary_metric")
    if not isinstance(key, str):
        return ""
    scored = (body.get("result") or {}).get("result") or {}
    value = _dig(scored.get("metrics") or {}, key)
    if value is None:
        value = (body.get("scores") or {}).get(key)
    if not isinstance(value, int | float) or isinstance(value, bool):
        return ""
    text = f" · {body.get('primary_metric_label') or key} {100 * value:.1f} %"
    ci = (scored.get("ci") or {}).get(key)
    if isinstance(ci, list) and len(ci) == 2 and all(isinstance(x, int | float) for x in ci):
        text += f" (95% CI {100 * ci[0]:.1f}–{100 * ci[1]:.1f})"
    return text


def summary_line(body: dict) -> str:
    """One line for a submission: id, model, track, status; once shown, the primary metric with its CI;
    why the Ladder withheld it, why it failed or is held."""
    model = str((body.get("metadata") or {}).get("model_name") or body.get("model_name") or "")
    hidden = " (private or hidden: off the board)" if body.get("hidden") else ""
    line = f"{body.get('submission_id')} · {model} ({body.get('track')}): {body.get('status')}{hidden}"
    line += _primary_score(body)
    if body.get("not_released"):  # the Ladder withheld it: no number, and why
        line += f" · {body['not_released']}"
    if body.get("error"):
        line += f" · {body['error']}"
    elif body.get("status") == "held" and body.get("reason"):
        line += f" · {body['reason']}"
    return line


def _read(path: str) -> tuple[str, bytes]:
    try:
        return Path(path).name, Path(path).read_bytes()
    except OSError as exc:
        raise ClientError(f"cannot read {path}: {exc.strerror}") from None


def cmd_submit(args) -> int:
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
    with _client(args, timeout=120) as client:
        upload = {"file": _read(args.file)}
        response = _request(client, "POST", "/api/v1/submissions", data=fields, files=upload)
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
        if body.get("status") != status:
            status = body.get("status")
            print(f"{submission_id}: {status}", file=sys.stderr)
        private_done = status == "scored" and body.get("hidden")  # a hidden result is never published
        if status in FINAL or private_done:
            _print(body) if as_json else print(summary_line(body))
            return 0 if status == "published" or private_done else 1
        time.sleep(0.5)
    print(
        f"{submission_id}: timed out after {timeout:g} s (still {status}); check later with `status "
        f"{submission_id}`",
        file=sys.stderr,
    )
    return 2


def cmd_status(args) -> int:
    with _client(args) as client:
        response = _request(client, "GET", f"/api/v1/submissions/{args.submission_id}")
    return _done(response, args.json, line=summary_line)


def cmd_validate(args) -> int:
    with _client(args, timeout=120) as client:
        response = _request(
            client, "POST", "/api/v1/validate", data={"track": args.track}, files={"file": _read(args.file)}
        )
    body = response.json()
    if response.status_code != 200 or (isinstance(body, dict) and body.get("errors")):
        print("\n".join(_error_lines(response.status_code, body)), file=sys.stderr)
        return 1
    _print(body) if args.json else print(f"{args.file}: valid for track {args.track}")
    return 0


def cmd_list(args) -> int:
    with _client(args) as client:
        response = _request(client, "GET", "/api/v1/me/submissions")
    body = response.json()
    if response.status_code != 200:
        print("\n".join(_error_lines(response.status_code, body)), file=sys.stderr)
        return 1
    rows = body.get("submissions", body) if isinstance(body, dict) else body
    if args.json:
        _print(body)
    else:
        for row in rows:
            print(summary_line(row))
    return 0


def cmd_finals(args) -> int:
    """Show your finals on a track, or choose them (at most 2; --clear: your best released one)."""
    params = {"track": args.track}
    with _client(args) as client:
        if args.submission_ids or args.clear:
            body = {"submission_ids": [] if args.clear else args.submission_ids}
            response = _request(client, "PUT", "/api/v1/me/finals", route="finals", params=params, json=body)
        else:
            response = _request(client, "GET", "/api/v1/me/finals", route="finals", params=params)
    return _done(response, True)


def cmd_make_public(args) -> int:
    with _client(args) as client:
        response = _request(client, "POST", f"/api/v1/submissions/{args.submission_id}/make-public")
    return _done(response, args.json, line=lambda body: f"{args.submission_id}: {made_public_line(body)}")


def made_public_line(body: dict) -> str:
    """What make-public did: made it public, or nothing (`changed` false: it already was; an older server
    that does not say is taken at its word)."""
    return ALREADY_PUBLIC if body.get("changed") is False else MADE_PUBLIC


def cmd_withdraw(args) -> int:
    path = f"/api/v1/submissions/{args.submission_id}/withdraw"
    with _client(args) as client:
        response = _request(client, "POST", path, route="withdraw")
    return _done(response, args.json, line=lambda body: f"{args.submission_id}: {WITHDRAWN}")


def common_options(
    api: str, token_help: str = "bearer token (default $VARM_TOKEN)"
) -> argparse.ArgumentParser:
    """The options every command takes (a parent parser): --api (default `api`), --token, --json."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--api", default=api, help=f"service URL (default {api})")
    common.add_argument("--token", help=token_help)
    common.add_argument("--json", action="store_true", help="print the server's JSON")
    return common


COMMANDS = ("submit", "status", "validate", "list", "finals", "make-public", "withdraw")


def add_commands(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """The client's commands (`COMMANDS`) on `sub`; `python -m worker` adds the same ones to its own."""
    s = sub.add_parser("submit", parents=[common], help="upload a predictions file")
    s.add_argument("file")
    s.add_argument("--track", required=True)
    s.add_argument("--model-name", required=True)
    s.add_argument("--organisation", default="")
    s.add_argument("--model-type", default="")
    s.add_argument("--setting", default="")
    s.add_argument("--paper-url", default="")
    s.add_argument("--code-url", default="")
    s.add_argument("--description", default="")
    s.add_argument("--private", action="store_true", help="keep the result off the board until make-public")
    s.add_argument("--wait", action="store_true", help="wait until published, failed, rejected or held")
    s.add_argument("--timeout", type=float, default=600, help="seconds to --wait (default 600)")
    s.set_defaults(run=cmd_submit)

    st = sub.add_parser("status", parents=[common], help="a submission's status and result")
    st.add_argument("submission_id")
    st.set_defaults(run=cmd_status)

    v = sub.add_parser("validate", parents=[common], help="check a predictions file without submitting")
    v.add_argument("file")
    v.add_argument("--track", required=True)
    v.set_defaults(run=cmd_validate)

    ls = sub.add_parser("list", parents=[common], help="your own submissions, newest first")
    ls.set_defaults(run=cmd_list)

    f = sub.add_parser("finals", parents=[common], help="show or choose your finals (at most 2 per track)")
    f.add_argument("submission_ids", nargs="*")
    f.add_argument("--track", required=True)
    f.add_argument("--clear", action="store_true", help="no choice: a release takes your best released one")
    f.set_defaults(run=cmd_finals)

    mp = sub.add_parser("make-public", parents=[common], help="put your private submission on the board")
    mp.add_argument("submission_id")
    mp.set_defaults(run=cmd_make_public)

    w = sub.add_parser("withdraw", parents=[common], help="take your submission off the board")
    w.add_argument("submission_id")
    w.set_defaults(run=cmd_withdraw)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="varm", description=(__doc__ or "").split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    add_commands(sub, common_options(os.environ.get("VARM_API") or DEFAULT_API))
    return p


def run(args: argparse.Namespace) -> int:
    """Run a parsed command: its exit code, and an error as one line on stderr (never a traceback)."""
    try:
        return args.run(args)
    except NotSupported as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    except ClientError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


def main(argv: list[str] | None = None) -> int:
    return run(parser().parse_args(argv))
