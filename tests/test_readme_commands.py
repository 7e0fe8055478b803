"""The README's commands, run as a newcomer runs them (issue 28's Done-when): in a fresh copy of the project
whose virtualenv `scripts/serve`'s set-up made (`scripts/setup --runtime`: the runtime packages only), the
"Score locally" commands taken from the README itself, `scripts/serve` (its address and token box), the
CLI client's submit line as the README shows it, and the baselines commands, which need the development
packages and must say so instead of a traceback. Marked `slow` (about two minutes: a pip install from the
local cache and a service start)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest_ui import free_port, stop_group

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
pytestmark = pytest.mark.slow


def _blocks(text: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", text, flags=re.S)


def _commands(block: str, start: str) -> list[str]:
    """The block's lines that start with `start`, without their trailing `# ...` comments."""
    out = []
    for line in block.splitlines():
        if line.startswith(start):
            out.append(re.sub(r"\s+#.*$", "", line).strip())
    return out


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's files (tracked and new, as git sees them; no .venv, no data/ state) in a new folder,
    with the virtualenv `scripts/serve` sets up."""
    copy = tmp_path_factory.mktemp("fresh") / "project"
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (n.decode() for n in listed)):
        source = ROOT / name
        if source.is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "VENV", "PYTHONPATH")}
    setup = subprocess.run(
        ["scripts/setup", "--runtime"], cwd=copy, env=env, capture_output=True, text=True, timeout=900
    )
    assert setup.returncode == 0, setup.stderr[-3000:]
    return copy


def _run(fresh: Path, command: str, timeout: float = 300, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    return subprocess.run(
        shlex.split(command),
        cwd=fresh,
        env={**environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_the_runtime_environment_has_no_test_packages(fresh: Path) -> None:
    probe = _run(fresh, ".venv/bin/python -c 'import pytest'")
    assert probe.returncode != 0 and "pytest" in probe.stderr  # what --runtime promises
    assert _run(fresh, ".venv/bin/python -c 'import scoring, worker, space, varm_client'").returncode == 0


def test_the_score_locally_commands_of_the_readme_run(fresh: Path) -> None:
    block = next(b for b in _blocks(README) if "python -m scoring validate" in b)
    commands = _commands(block, ".venv/bin/python -m scoring")
    assert len(commands) >= 5, block  # validate, score, check-references, subsets, masked-inputs
    for command in commands:
        track = re.search(r"--track (\w+)", command)
        assert track, command
        baselines = fresh / "data" / "demo" / track.group(1) / "baselines"
        # The README's placeholders: a model's test predictions (my.jsonl) and dev predictions (my_dev.jsonl).
        shutil.copy(baselines / "char-ngram.test.jsonl", fresh / "my.jsonl")
        shutil.copy(baselines / "char-ngram.dev.jsonl", fresh / "my_dev.jsonl")
        done = _run(fresh, command)
        assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
        assert "Traceback" not in done.stderr, (command, done.stderr[-2000:])
        assert done.stdout.strip() or any(fresh.glob("masked.jsonl")), command


def test_the_baselines_commands_say_they_need_the_development_packages(fresh: Path) -> None:
    block = next(b for b in _blocks(README) if "python -m baselines" in b)
    assert "scripts/setup" in README[README.index("## Demo benchmark and baselines") :][:1500]
    for command in _commands(block, ".venv/bin/python -m baselines")[:1]:
        done = _run(fresh, command)
        assert done.returncode == 2, (command, done.stderr[-2000:])
        assert "Traceback" not in done.stderr and "scripts/setup" in done.stderr, done.stderr[-2000:]


@pytest.fixture(scope="module")
def served(fresh: Path) -> Iterator[tuple[str, str]]:
    """`scripts/serve` in the fresh copy, as the README runs it; (address, printed output so far)."""
    port = free_port()
    log = fresh / "serve.log"
    environ = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    for name in ("CELERY_BROKER_URL", "STORE", "HF_RESULTS_REPO", "SPACE_ID", "OAUTH_CLIENT_ID", "DATA_DIR"):
        environ.pop(name, None)
    with open(log, "wb") as out:
        process = subprocess.Popen(
            ["scripts/serve"],
            cwd=fresh,
            env={**environ, "PORT": str(port), "PYTHONUNBUFFERED": "1"},
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    address = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 240
        while f"open {address}" not in log.read_text(errors="replace"):
            assert process.poll() is None, log.read_text(errors="replace")[-4000:]
            assert time.monotonic() < deadline, log.read_text(errors="replace")[-4000:]
            time.sleep(0.5)
        yield address, log.read_text(errors="replace")
    finally:
        stop_group(process, grace=30)


def test_serve_prints_the_address_and_the_token_once(fresh: Path, served: tuple[str, str]) -> None:
    address, printed = served
    assert f"open {address}" in printed
    tokens = re.findall(r"API token \(user 'local'\): (\S+)", printed)
    assert len(tokens) == 1, printed[-3000:]  # printed once (issue 28.15)
    assert tokens[0] in (fresh / "data" / "tokens.json").read_text()


def test_the_readme_cli_submit_line_publishes(fresh: Path, served: tuple[str, str]) -> None:
    address, _ = served
    line = re.search(r"`(\.venv/bin/python -m worker submit [^`]+)`", README)
    assert line, "the README's CLI example"
    shutil.copy(fresh / "data" / "demo" / "varm" / "baselines" / "char-ngram.test.jsonl", fresh / "my.jsonl")
    port = address.rsplit(":", 1)[1]
    done = _run(fresh, line.group(1), timeout=300, PORT=port)
    assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    # The README's example line: "<id> · My model (varm): published · JREM ↑ 41.2 % (95% CI 35.0–47.5)"
    said = done.stdout.strip().splitlines()[-1]
    shape = r"\S+ · My model \(varm\): published · JREM ↑ [\d.]+ % \(95% CI [\d.]+–[\d.]+\)"
    assert re.fullmatch(shape, said), said
