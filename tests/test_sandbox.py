"""The web process's Landlock boundary (space/sandbox.py, WEB_SANDBOX): one uid (a Space) and still the web
process cannot open, list, change or remove the references, nor read the workers' memory or environment;
everything else it needs keeps working (a real upload is scored and published)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
import pytest

from space import sandbox
from tests.conftest_pipeline import WorkerProcess, redis_url, wait_for, worker_env
from tests.conftest_ui import ROOT
from tests.webproc import start_web, stop_web
from worker.config import Config

pytestmark = pytest.mark.skipif(sandbox.abi_version() < 1, reason="this kernel has no Landlock")

PROBE = textwrap.dedent(
    """
    import json, os, sys
    from pathlib import Path
    sys.path.insert(0, {root!r})
    from space import sandbox
    base = Path(sys.argv[1])
    if sys.argv[2] == "restrict":
        sandbox.restrict([base / "private"])
    out = {{}}
    def attempt(name, action):
        try:
            action()
            out[name] = "allowed"
        except PermissionError:
            out[name] = "refused"
    attempt("read private file", lambda: (base / "private" / "gold.jsonl").read_bytes())
    attempt("list private folder", lambda: os.listdir(base / "private"))
    attempt("write private file", lambda: (base / "private" / "gold.jsonl").write_text("forged"))
    attempt("remove private file", lambda: (base / "private" / "gold.jsonl").unlink())
    attempt("read public file", lambda: (base / "public" / "board.json").read_bytes())
    attempt("write public file", lambda: (base / "public" / "new.json").write_text("{{}}"))
    out["unreadable() of private"] = sandbox.unreadable(base / "private" / "gold.jsonl")
    out["unreadable() of public"] = sandbox.unreadable(base / "public" / "board.json")
    print(json.dumps(out))
    """
)


def probe(base: Path, mode: str) -> dict:
    (base / "private").mkdir(parents=True, exist_ok=True)
    (base / "public").mkdir(exist_ok=True)
    (base / "private" / "gold.jsonl").write_text('{"label": 1}\n')
    (base / "public" / "board.json").write_text("{}")
    code = PROBE.format(root=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-c", code, str(base), mode], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_restricted_process_cannot_touch_the_private_paths_and_keeps_the_rest(tmp_path: Path) -> None:
    out = probe(tmp_path / "restricted", "restrict")
    assert out == {
        "read private file": "refused",
        "list private folder": "refused",
        "write private file": "refused",
        "remove private file": "refused",
        "read public file": "allowed",
        "write public file": "allowed",
        "unreadable() of private": True,
        "unreadable() of public": False,
    }
    # Positive control: the same process without the boundary does every one of them.
    free = probe(tmp_path / "free", "none")
    assert {k: v for k, v in free.items() if "()" not in k} == dict.fromkeys(
        [k for k in out if "()" not in k], "allowed"
    )
    assert free["unreadable() of private"] is False


ENVIRON_PROBE = textwrap.dedent(
    """
    import subprocess, sys, tempfile, time
    from pathlib import Path
    sys.path.insert(0, {root!r})
    from space import sandbox
    worker = subprocess.Popen(["sleep", "5"], env={{"SIGNING_KEY": "the workers' secret"}})
    time.sleep(0.5)  # until it has exec'd with its own environment
    if sys.argv[1] == "restrict":
        sandbox.restrict([Path(tempfile.mkdtemp())])
    try:
        with open(f"/proc/{{worker.pid}}/environ", "rb") as f:
            print("read" if b"the workers' secret" in f.read() else "empty")
    except PermissionError:
        print("refused")
    try:
        worker.kill()
        print("signal sent")
    except PermissionError:
        print("signal refused")
    """
)


@pytest.mark.skipif(shutil.which("setpriv") is None and os.getuid() == 0, reason="needs setpriv to drop root")
@pytest.mark.parametrize("mode", ["restrict", "none"])
def test_a_restricted_process_cannot_read_the_workers_environment(mode: str) -> None:
    """Same uid, as on a Space: /proc/PID/environ of a process outside the domain (a worker, holding
    SIGNING_KEY or HF_TOKEN) is refused; without the boundary it is read (positive control). Run as an
    unprivileged user: root's CAP_SYS_PTRACE would pass either way."""
    command = [sys.executable, "-c", ENVIRON_PROBE.format(root=str(ROOT)), mode]
    if os.getuid() == 0:
        command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, cwd="/")
    assert done.returncode == 0, done.stderr
    environ, signal = done.stdout.split()[0], done.stdout.split()[-1]
    assert environ == ("refused" if mode == "restrict" else "read")
    # From Landlock ABI 6 on, it cannot signal (stop, kill) the workers either.
    assert signal == ("refused" if mode == "restrict" and sandbox.abi_version() >= 6 else "sent")


def test_allowed_roots_leave_out_the_private_paths_and_their_way(tmp_path: Path) -> None:
    (tmp_path / "a" / "private").mkdir(parents=True)
    (tmp_path / "a" / "sibling").mkdir()
    (tmp_path / "b").mkdir()
    roots = set(sandbox.allowed_roots([tmp_path / "a" / "private"]))
    assert tmp_path / "a" / "sibling" in roots and tmp_path / "b" in roots
    assert not {tmp_path / "a" / "private", tmp_path / "a", tmp_path} & roots
    assert not any(tmp_path / "a" / "private" in p.parents for p in roots)
    (tmp_path / "link").symlink_to(tmp_path / "a")  # a link to a folder on the way gets no rule
    assert tmp_path / "link" not in set(sandbox.allowed_roots([tmp_path / "a" / "private"]))
    assert sandbox.allowed_roots([]) == [Path("/")]


@pytest.mark.slow
def test_the_web_process_runs_inside_it_and_an_upload_is_published(tmp_path: Path) -> None:
    """`python -m space` with WEB_SANDBOX=require (Redis broker, local store, the demo's references and a
    real worker): health checks the private paths live from inside the web process, and a REST upload is
    scored and shown on the board. Its DATA_DIR is under /tmp, so /tmp is on the way to a private path and
    the web process's temporary files move to a folder of their own (they would be refused otherwise)."""
    web = start_web(tmp_path, WEB_SANDBOX="require")
    worker = None
    try:
        health = httpx.get(f"{web.url}/api/v1/health", timeout=10).json()
        line = health["sandbox"]
        assert line.startswith("landlock ABI") and "private paths unreadable" in line, line
        assert "INFO space: web process sandbox: landlock ABI" in web.tail()
        config = Config(data_dir=web.data_dir, celery_broker_url=redis_url())
        env = worker_env(config, {"CELERY_KEY_PREFIX": web.prefix})
        worker = WorkerProcess(env, tmp_path / "worker.log").start()
        data = (ROOT / "data" / "demo" / "cold" / "baselines" / "lexicon.test.jsonl").read_bytes()
        sent = httpx.post(
            f"{web.url}/api/v1/submissions",
            headers={"Authorization": "Bearer tok-alice-0123456789"},
            data={"track": "cold", "model_name": "inside the sandbox"},
            files={"file": ("p.jsonl", data)},
            timeout=60,
        )
        assert sent.status_code == 202, sent.text
        sid = sent.json()["submission_id"]

        def on_board() -> bool:
            board = httpx.get(f"{web.url}/api/v1/leaderboard", params={"track": "cold"}, timeout=10).json()
            return any(row["submission_id"] == sid for row in board["rows"])

        wait_for(on_board, timeout=90, what="the upload on the board")
        assert "Traceback" not in web.tail(100_000)
        check_token_file_edits(web)
    finally:
        if worker is not None:
            worker.stop()
        stop_web(web)


def whoami(web, token: str) -> int:
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.get(f"{web.url}/api/v1/me/submissions", headers=headers, timeout=10).status_code


def check_token_file_edits(web) -> None:
    """tokens.json lies on the way to the references area (DATA_DIR), so the web process keeps the file it
    was given: an edit in place is read (a new user works), a replacing write is not readable to it (the
    users read before keep working, and the log says what to do)."""
    path = web.data_dir / "tokens.json"
    tokens = json.loads(path.read_text())
    with open(path, "w") as f:  # in place: same file
        json.dump({**tokens, "tok-newcomer-0123456789": "newcomer"}, f)
    os.utime(path, (1, 1))  # a new mtime however fast the edit was
    assert whoami(web, "tok-newcomer-0123456789") == 200
    replacement = path.with_suffix(".new")
    replacement.write_text(json.dumps({**tokens, "tok-late-0123456789": "late"}))
    replacement.replace(path)  # what an editor's "write a new file, rename it" does
    assert whoami(web, "tok-late-0123456789") == 401 and whoami(web, "tok-alice-0123456789") == 200
    assert "was replaced by a file this process may not read" in web.tail(20_000)


def test_without_it_health_says_so(tmp_path: Path) -> None:
    """Positive control for the health line: WEB_SANDBOX unset is "off", and the embedded default cannot
    have it (its worker is the web process's child) and WEB_SANDBOX=require then refuses to start."""
    web = start_web(tmp_path / "off")
    try:
        assert httpx.get(f"{web.url}/api/v1/health", timeout=10).json()["sandbox"] == "off: WEB_SANDBOX=off"
    finally:
        stop_web(web)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CELERY_")}
    env.update(DATA_DIR=str(tmp_path / "embedded"), WEB_SANDBOX="require", SEED_DEMO="0", PORT="1")
    done = subprocess.run(
        [sys.executable, "-m", "space"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and "WEB_SANDBOX=require, but no sandbox: the embedded worker" in done.stderr


def test_web_sandbox_takes_three_values() -> None:
    assert Config.from_env({"WEB_SANDBOX": "Auto"}).web_sandbox == "auto"
    assert Config.from_env({}).web_sandbox == "off"
    with pytest.raises(ValueError, match="WEB_SANDBOX must be one of off, auto, require"):
        Config.from_env({"WEB_SANDBOX": "maybe"})
