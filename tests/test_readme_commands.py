"""The README's commands, run as a newcomer runs them (issue 28's Done-when): in a fresh copy of the project
whose virtualenv `scripts/serve`'s set-up made (`scripts/setup --runtime`: the runtime packages only), with
`scripts/serve` running there (the `served` fixture). Every command the README shows is taken from the README
itself (its ```bash blocks and its inline `python -m ...` / `curl ...` spans), its placeholders (ids, tokens,
ports, file names) filled from the running service, and run for its effect: "Score locally", the REST `curl`
examples, the CLI (`submit`, `status`, `withdraw`, `make-public`, `submit --private`, `finals`), the
maintainers' commands (`rescore --dry-run` and `--force`, `rescore`, `held`, `release`, `reject`, `reindex`,
`reconcile`, `seed`, `release cut` then `python -m scoring verify`), installing a real benchmark (`scoring
import` / `check-references` / `worker install`, on a COLD-format release written from the demo's COLD set),
and "Demo benchmark and baselines". A command not run is in `SKIPPED` with its reason; a guard test fails on a
README command in neither `COVERED` nor `SKIPPED`. Marked `slow` (about two minutes: a pip install from the
local cache, a service start, the baselines' fits with the development packages)."""

from __future__ import annotations

import csv
import json
import os
import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
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
    needs_sklearn = [
        c for c in _commands(block, ".venv/bin/python -m baselines") if "baselines.scores" not in c
    ]
    assert len(needs_sklearn) == 2 and "development packages" in block.splitlines()[2], block
    for command in needs_sklearn:  # `python -m baselines`, and on real bundles
        done = _run(fresh, command.replace("BUNDLES", "data/demo"))
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


# Every command the README shows: run below (COVERED: the test that runs it), or SKIPPED with the reason.

COVERED = {
    "scripts/serve": "test_serve_prints_the_address_and_the_token_once",
    ".venv/bin/python -m scoring validate --track varm --inputs data/demo/varm/public/test_inputs.jsonl "
    "--predictions my.jsonl": "test_the_score_locally_commands_of_the_readme_run",
    ".venv/bin/python -m scoring score --track varm --references data/demo/varm/dev.jsonl --predictions "
    "my_dev.jsonl": "test_the_score_locally_commands_of_the_readme_run",
    ".venv/bin/python -m scoring check-references --track varm data/demo/varm": (
        "test_the_score_locally_commands_of_the_readme_run"
    ),
    ".venv/bin/python -m scoring score --track varm --references data/demo/varm/dev.jsonl --subsets "
    "data/demo/varm/public/dev_subsets.json --predictions my_dev.jsonl": (
        "test_the_score_locally_commands_of_the_readme_run"
    ),
    ".venv/bin/python -m scoring masked-inputs --track cold --inputs data/demo/cold/public/test_inputs.jsonl "
    "--predictions my.jsonl masked.jsonl": "test_the_score_locally_commands_of_the_readme_run",
    'curl -H "Authorization: Bearer $TOKEN" -F file=@my.jsonl -F track=varm -F model_name="My model" '
    "http://127.0.0.1:7860/api/v1/submissions": "test_the_rest_examples_of_the_readme",
    'curl -H "Authorization: Bearer $TOKEN" http://127.0.0.1:7860/api/v1/submissions/<id>': (
        "test_the_rest_examples_of_the_readme"
    ),
    'curl "http://127.0.0.1:7860/api/v1/leaderboard?track=varm"': "test_the_rest_examples_of_the_readme",
    'curl -OJ "http://127.0.0.1:7860/api/v1/leaderboard/download?track=varm"': (
        "test_the_rest_examples_of_the_readme"
    ),
    "curl http://127.0.0.1:7860/api/v1/health": "test_the_rest_examples_of_the_readme",
    '.venv/bin/python -m worker submit my.jsonl --track varm --model-name "My model" --wait': (
        "test_the_readme_cli_submit_line_publishes"
    ),
    "python -m worker status ID": "test_status_withdraw_make_public_and_a_private_submission",
    "python -m worker make-public ID": "test_status_withdraw_make_public_and_a_private_submission",
    "python -m worker finals --track T ID [ID]": "test_finals_a_release_cut_and_its_verification",
    "python -m worker release cut --track T --name 2027-03": "test_finals_a_release_cut_and_its_verification",
    "python -m scoring verify RELEASE_DIR --public-key KEY": "test_finals_a_release_cut_and_its_verification",
    ".venv/bin/python -m worker rescore --track varm --dry-run": "test_the_rescore_commands",
    "python -m worker rescore --track T": "test_the_rescore_commands",
    "docker run --rm ... IMAGE python -m worker seed": "test_held_release_reject_and_the_one_off_commands",
    "docker run --rm IMAGE python -m worker reconcile": "test_held_release_reject_and_the_one_off_commands",
    "python -m worker seed": "test_held_release_reject_and_the_one_off_commands",
    ".venv/bin/python -m scoring import --dataset cold RELEASE OUT": "test_installing_a_real_benchmark",
    ".venv/bin/python -m scoring check-references --track cold OUT": "test_installing_a_real_benchmark",
    ".venv/bin/python -m worker install --track cold OUT": "test_installing_a_real_benchmark",
    "python -m worker install --track T DIR": "test_installing_a_real_benchmark",
    "python -m worker install --test-status": "test_installing_a_real_benchmark",
    ".venv/bin/python -m demo.generate": "test_the_demo_and_baselines_commands",
    ".venv/bin/python -m baselines": "test_the_demo_and_baselines_commands",
    ".venv/bin/python -m baselines --data BUNDLES --tracks cold --splits test --out OUT": (
        "test_the_demo_and_baselines_commands"
    ),
    ".venv/bin/python -m baselines.scores": "test_the_demo_and_baselines_commands",
    "python -m baselines": "test_the_demo_and_baselines_commands",
    "python -m scoring score --all-cells": "test_the_other_inline_commands",
    "python -m scoring check-references --track varm DIR": "test_the_other_inline_commands",
    "python -m worker.hub_cards": "test_the_other_inline_commands",
}
BENCHMARK = "a benchmark: prints figures over minutes (some against Redis or the test Hub), not pass/fail"
SKIPPED = {
    "scripts/test": "the whole suite with Redis and Chromium; this file is part of it",
    **{
        f".venv/bin/python bench/{name}.py": BENCHMARK
        for name in (
            "bench_scorer",
            "bench_pipeline",
            "bench_ui",
            "bench_import",
            "bench_load",
            "bench_growth",
            "label_leak",
            "bench_burst",
            "bench_explanations",
        )
    },
    ".venv/bin/python bench/reliability.py": "re-runs the reliability suite (Redis) and rewrites a doc",
    "python -m scoring ...": "names the command family (every subcommand shown is run above)",
    "python -m scoring": "names the scorer, not a command line",
    "python -m worker": "names the operator commands, not a command line",
    "python -m space": "what scripts/serve runs (the served fixture runs scripts/serve)",
    "python -m scoring verify": "names the command run in full as `python -m scoring verify RELEASE_DIR ...`",
    "python -m scoring import --dataset cold|toxicn PATH OUT_DIR": (
        "the general form of the install block's import, run there with --dataset cold"
    ),
    "python -m scoring masked-inputs --track T --inputs test_inputs.jsonl --predictions P OUT": (
        "the general form of the Score-locally masked-inputs line, run there"
    ),
}


def _shell_lines(block: str) -> list[str]:
    """A bash block's command lines: comment-only lines dropped, trailing `# ...` cut, `\\` continuations
    joined."""
    out, pending = [], ""
    for line in block.splitlines():
        code = re.sub(r"(^|\s+)#.*$", "", line).strip()
        if not code:
            continue
        if code.endswith("\\"):
            pending += code[:-1].strip() + " "
            continue
        out.append(pending + code)
        pending = ""
    return out


def readme_commands(text: str) -> list[str]:
    """Every command a README shows: the command lines of its ```bash blocks (those starting with
    `.venv/bin/python`, `curl` or `scripts/`) and its inline code spans holding `python -m` or starting with
    `curl` (whitespace made single spaces)."""
    found = []
    for block in _blocks(text):
        found += [c for c in _shell_lines(block) if re.match(r"(\.venv/bin/python|curl|scripts/)", c)]
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    for span in re.findall(r"`([^`]+)`", prose):
        command = re.sub(r"\s+", " ", span).strip()
        if "python -m" in command or command.startswith("curl "):
            found.append(command)
    return list(dict.fromkeys(found))


def unaccounted(text: str) -> list[str]:
    return [c for c in readme_commands(text) if c not in COVERED and c not in SKIPPED]


def test_every_readme_command_is_run_or_skipped_with_a_reason() -> None:
    assert unaccounted(README) == [], "run these in this file, or add them to SKIPPED with the reason"
    shown = readme_commands(README)
    assert [c for c in (*COVERED, *SKIPPED) if c not in shown] == []  # no stale entries
    assert not set(COVERED) & set(SKIPPED)
    assert all(callable(globals().get(name)) and name.startswith("test_") for name in COVERED.values())
    assert all(reason.strip() for reason in SKIPPED.values())
    # The positive control: a command planted in a bash block and one in the prose are both flagged.
    planted = (
        README + "\n```bash\n.venv/bin/python -m worker frobnicate --track varm   # new\n```\n"
        "Also `curl http://127.0.0.1:7860/api/v1/new` and `python -m worker\n  frobnicate ID`.\n"
    )
    assert unaccounted(planted) == [
        ".venv/bin/python -m worker frobnicate --track varm",
        "curl http://127.0.0.1:7860/api/v1/new",
        "python -m worker frobnicate ID",
    ]


def _readme(prefix: str) -> str:
    """The one README command starting with `prefix`, as the README shows it (and as COVERED lists it)."""
    found = [c for c in readme_commands(README) if c.startswith(prefix)]
    assert len(found) == 1, (prefix, found)
    assert found[0] in COVERED, found[0]
    return found[0]


def _local(command: str) -> str:
    """An inline `python -m ...` as run in the project folder: the project's virtualenv's python."""
    command = command[command.index("python -m") :]  # `docker run --rm IMAGE python -m ...`: the command
    return ".venv/bin/" + command


def _ok(done: subprocess.CompletedProcess, command: str) -> str:
    assert done.returncode == 0, (command, done.stdout[-3000:], done.stderr[-3000:])
    assert "Traceback" not in done.stderr, (command, done.stderr[-3000:])
    return done.stdout


def _port(served: tuple[str, str]) -> str:
    return served[0].rsplit(":", 1)[1]


def _token(served: tuple[str, str]) -> str:
    return re.findall(r"API token \(user 'local'\): (\S+)", served[1])[0]


def _cli(
    fresh: Path, served: tuple[str, str], command: str, timeout: float = 300
) -> subprocess.CompletedProcess:
    return _run(fresh, command, timeout=timeout, PORT=_port(served))


def _get(served: tuple[str, str], path: str, token: str | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.get(served[0] + path, headers=headers, timeout=30)


def _board_ids(served: tuple[str, str], track: str) -> set[str]:
    answer = _get(served, f"/api/v1/leaderboard?track={track}&page_size=1000")
    assert answer.status_code == 200, answer.text[:2000]
    return {row["submission_id"] for row in answer.json()["rows"]}


def _eventually(check, what: str, timeout: float = 120):
    deadline = time.monotonic() + timeout
    while not (value := check()):
        assert time.monotonic() < deadline, what
        time.sleep(0.5)
    return value


@pytest.fixture(scope="module")
def published(fresh: Path, served: tuple[str, str]) -> tuple[str, str]:
    """The README's CLI submit line, run with a copy of the varm char-ngram baseline as my.jsonl: (id, the
    line it ended with)."""
    line = _readme(".venv/bin/python -m worker submit")
    shutil.copy(fresh / "data" / "demo" / "varm" / "baselines" / "char-ngram.test.jsonl", fresh / "my.jsonl")
    said = _ok(_cli(fresh, served, line), line).strip().splitlines()[-1]
    return said.split(" · ")[0], said


def test_the_readme_cli_submit_line_publishes(published: tuple[str, str]) -> None:
    # The README's example line: "<id> · My model (varm): published · JREM ↑ 41.2 % (95% CI 35.0–47.5)"
    shape = r"\S+ · My model \(varm\): published · JREM ↑ [\d.]+ % \(95% CI [\d.]+–[\d.]+\)"
    assert re.fullmatch(shape, published[1]), published[1]
    example = re.search(r"ends with one line such as `([^`]+)`", README)
    assert example and re.fullmatch(shape.replace(r"\S+", r"\S+…"), example.group(1)), "the README's example"


def test_the_rest_examples_of_the_readme(
    fresh: Path, served: tuple[str, str], published: tuple[str, str]
) -> None:
    block = next(b for b in _blocks(README) if "curl" in b)
    assert "TOKEN=..." in block
    submit, status, board, download, health = (c for c in _shell_lines(block) if c.startswith("curl"))

    def curl(command: str, **placeholders: str) -> tuple[int, str]:
        command = command.replace("http://127.0.0.1:7860", served[0]).replace("$TOKEN", _token(served))
        for name, value in placeholders.items():
            command = command.replace(name, value)
        done = subprocess.run(
            [*shlex.split(command), "-sS", "-w", "\n%{http_code}"], cwd=fresh, capture_output=True, text=True
        )
        assert done.returncode == 0, (command, done.stderr)
        body, code = done.stdout.rsplit("\n", 1)
        return int(code), body

    # The README's my.jsonl: here the lexicon baseline's predictions (the CLI test sent char-ngram's).
    shutil.copy(fresh / "data" / "demo" / "varm" / "baselines" / "lexicon.test.jsonl", fresh / "my.jsonl")
    code, body = curl(submit)
    assert code == 202, body
    sid = json.loads(body)["submission_id"]
    assert json.loads(body)["status"] in ("received", "queued"), body

    def scored() -> dict | None:
        code, body = curl(status, **{"<id>": sid})
        assert code == 200, body
        answer = json.loads(body)
        return answer if answer["status"] in ("scored", "published") else None

    answer = _eventually(scored, f"{sid} scored")
    # Without the token (the README's example before issue 28's check sent none) a not-released one is 404.
    assert _get(served, f"/api/v1/submissions/{sid}").status_code == 404
    # The Ladder: lexicon does not beat this submitter's released char-ngram: scored, stored, not released.
    assert answer["released"] is False and answer["result"] is None and answer["not_released"], answer

    code, body = curl(board)
    assert code == 200, body
    page = json.loads(body)
    assert {"total", "matched", "pages"} <= set(page), list(page)
    ids = {row["submission_id"] for row in page["rows"]}
    assert published[0] in ids and sid not in ids, ids

    downloaded = fresh / "varm-leaderboard.json"
    downloaded.unlink(missing_ok=True)
    code, _ = curl(download)
    assert code == 200 and downloaded.is_file(), sorted(p.name for p in fresh.iterdir())
    assert published[0] in {row["submission_id"] for row in json.loads(downloaded.read_text())["rows"]}

    code, body = curl(health)
    assert code == 200, body


def test_status_withdraw_make_public_and_a_private_submission(
    fresh: Path, served: tuple[str, str], published: tuple[str, str]
) -> None:
    sid, said = published
    status = _local(_readme("python -m worker status ID")).replace(" ID", f" {sid}")
    assert _ok(_cli(fresh, served, status), status).strip() == said  # "prints the same line"

    # withdraw: the client's `varm withdraw ID`, which `python -m worker` runs as its own
    assert "`varm withdraw ID`" in README
    withdraw = f".venv/bin/python -m worker withdraw {sid}"
    assert "withdrawn" in _ok(_cli(fresh, served, withdraw), withdraw)
    _eventually(lambda: sid not in _board_ids(served, "varm"), "withdrawn: off the board")
    assert _get(served, f"/api/v1/submissions/{sid}").status_code == 404  # to everyone but its submitter
    make_public = _local(_readme("python -m worker make-public ID")).replace(" ID", f" {sid}")
    assert f"{sid}: public" in _ok(_cli(fresh, served, make_public), make_public)
    _eventually(lambda: sid in _board_ids(served, "varm"), "made public: back on the board")
    again = _ok(_cli(fresh, served, make_public), make_public)
    assert "already public" in again, again  # `changed: false` / "already public"

    # `-F private=true; CLI submit --private`: scored, off the board, 404 to others; make-public shows it.
    assert "CLI `submit --private`" in README
    shutil.copy(
        fresh / "data" / "demo" / "cntp" / "baselines" / "char-ngram.test.jsonl", fresh / "mine.jsonl"
    )
    private = '.venv/bin/python -m worker submit mine.jsonl --track cntp --model-name "Mine" --private --wait'
    mine = _ok(_cli(fresh, served, private), private).strip().splitlines()[-1].split(" · ")[0]
    assert mine not in _board_ids(served, "cntp")
    assert _get(served, f"/api/v1/submissions/{mine}").status_code == 404
    assert _get(served, f"/api/v1/submissions/{mine}", _token(served)).status_code == 200
    made = make_public.replace(sid, mine)
    assert "public; it joins the board" in _ok(_cli(fresh, served, made), made)
    _eventually(lambda: mine in _board_ids(served, "cntp"), "the private submission made public")


def test_finals_a_release_cut_and_its_verification(
    fresh: Path, served: tuple[str, str], published: tuple[str, str]
) -> None:
    sid = published[0]
    finals = _local(_readme("python -m worker finals")).replace(" [ID]", "").replace(" ID", f" {sid}")
    finals = finals.replace("--track T", "--track varm")
    assert json.loads(_ok(_cli(fresh, served, finals), finals))["finals"] == [sid]

    cut = _local(_readme("python -m worker release cut")).replace("--track T", "--track varm")
    said = _ok(_cli(fresh, served, cut), cut)
    assert "varm release 2027-03:" in said and "releases/varm/2027-03/" in said, said
    answer = _get(served, "/api/v1/releases/varm/2027-03")
    assert answer.status_code == 200, answer.text[:2000]
    assert sid in {row["submission_id"] for row in answer.json()["rows"]}
    # RELEASE_DIR: the release's rows as the REST answer gives them; KEY: GET /api/v1/keys
    release_dir = fresh / "release-varm-2027-03"
    release_dir.mkdir()
    (release_dir / "rows.json").write_text(answer.text)
    key = _get(served, "/api/v1/keys").json()["ed25519"]
    verify = _local(_readme("python -m scoring verify RELEASE_DIR"))
    verify = verify.replace("RELEASE_DIR", release_dir.name).replace(
        "--public-key KEY", f"--public-key {key}"
    )
    said = _ok(_run(fresh, verify), verify)
    assert re.search(r"^OK: \d+ row\(s\) checked, 0 problem\(s\)$", said, flags=re.M), said
    rows = answer.json()
    rows["rows"][0]["submission_id"] = "0000000000000000"  # the negative control: one changed row is refused
    (release_dir / "rows.json").write_text(json.dumps(rows))
    refused = _run(fresh, verify)
    assert refused.returncode != 0 and "row 1" in refused.stdout + refused.stderr, refused.stdout

    clear = finals.replace(f" {sid}", " --clear")
    assert json.loads(_ok(_cli(fresh, served, clear), clear))["finals"] == []


def test_the_rescore_commands(fresh: Path, served: tuple[str, str], published: tuple[str, str]) -> None:
    dry = _readme(".venv/bin/python -m worker rescore --track varm --dry-run")
    done = _cli(fresh, served, dry)
    summary = json.loads(_ok(done, dry))
    # Every submission of the track with its primary metric before and after and its rank: the deltas.
    on_board = _board_ids(served, "varm")
    assert on_board <= {c["submission_id"] for c in summary["changes"]}, summary
    for change in summary["changes"]:
        assert change["metric"] == "jrem" and isinstance(change["old"], float), change
        assert isinstance(change["new"], float) and isinstance(change["new_rank"], int), change
    moved = r".+: jrem [\d.]+ -> [\d.]+ \([+-][\d.]+\), rank \d+ -> \d+"
    lines = [line for line in done.stderr.splitlines() if not line.startswith("run ")]
    assert lines and all(line == "no metric or rank changed" or re.fullmatch(moved, line) for line in lines)
    assert summary["report"] is None  # a dry run publishes nothing (test_pipeline_e2e holds the CLI to it)

    forced = _cli(fresh, served, dry + " --force")  # `--force`: each row reproduced or DIFFERS
    summary = json.loads(_ok(forced, dry + " --force"))
    assert summary["reproduced"] == len(summary["changes"]) and summary["differs"] == 0, summary
    assert forced.stderr.count("reproduced (version ") == len(summary["changes"]), forced.stderr

    real = _local(_readme("python -m worker rescore --track T")).replace("--track T", "--track varm")
    summary = json.loads(_ok(_cli(fresh, served, real), real))
    assert summary["report"] == f"rescore/varm/{summary['run']}.json", summary
    assert _get(served, f"/api/v1/rescore/varm/{summary['run']}").status_code == 200


def test_held_release_reject_and_the_one_off_commands(fresh: Path, served: tuple[str, str]) -> None:
    for command in ("`held`", "`release ID`", "`reject ID --reason R`", "`reindex`", "`reconcile`"):
        assert command in README, command  # the maintainers' commands the README names
    rows = (
        (fresh / "data" / "demo" / "toxicn" / "baselines" / "char-ngram.test.jsonl").read_text().splitlines()
    )
    held = []
    for n in (1, 2):  # near-copies: one row's label differs from an earlier submission's
        row = json.loads(rows[n])
        row["label"] = 1 - row["label"]
        (fresh / f"near{n}.jsonl").write_text("\n".join([*rows[:n], json.dumps(row), *rows[n + 1 :]]) + "\n")
        submit = (
            f'.venv/bin/python -m worker submit near{n}.jsonl --track toxicn --model-name "near {n}" --wait'
        )
        done = _cli(fresh, served, submit)
        assert done.returncode == 1 and ": held · " in done.stdout, (
            done.stdout,
            done.stderr,
        )  # exits 1: held
        held.append(done.stdout.strip().splitlines()[-1].split(" · ")[0])

    listed = json.loads(_ok(_cli(fresh, served, ".venv/bin/python -m worker held"), "held"))
    assert {h["submission_id"] for h in listed} == set(held) and {h["held_for"] for h in listed} == {
        "near_copy"
    }
    release = f".venv/bin/python -m worker release {held[0]}"
    assert json.loads(_ok(_cli(fresh, served, release), release))["status"] == "queued"
    reject = f'.venv/bin/python -m worker reject {held[1]} --reason "label probe"'
    rejected = json.loads(_ok(_cli(fresh, served, reject), reject))
    assert rejected["status"] == "rejected" and "label probe" in rejected["error"], rejected
    assert json.loads(_ok(_cli(fresh, served, ".venv/bin/python -m worker held"), "held")) == []
    status = f".venv/bin/python -m worker status {held[0]}"
    _eventually(
        lambda: ": published · " in _ok(_cli(fresh, served, status), status), "released, then published"
    )

    reindex = ".venv/bin/python -m worker reindex"
    assert set(json.loads(_ok(_cli(fresh, served, reindex), reindex))) == {"varm", "cold", "toxicn", "cntp"}
    reconcile = _local(_readme("docker run --rm IMAGE python -m worker reconcile"))
    assert "requeued" in json.loads(_ok(_cli(fresh, served, reconcile), reconcile))
    seed = _local(_readme("docker run --rm ... IMAGE python -m worker seed"))
    assert seed == _local(_readme("python -m worker seed"))
    said = _ok(_cli(fresh, served, seed), seed)
    assert "varm: demo already present" in said and "baselines submitted: none" in said, said  # idempotent


@pytest.fixture(scope="module")
def cold_bundles(fresh: Path) -> tuple[Path, str]:
    """The README's import line run on a release in COLD's published layout (COLDataset/{train,dev,test}.csv),
    written from the demo's COLD set: (the BUNDLES folder holding cold/, what the import printed)."""
    release = fresh / "COLDataset"
    release.mkdir()
    for split in ("train", "dev", "test"):
        rows = [json.loads(line) for line in (fresh / "data" / "demo" / "cold" / f"{split}.jsonl").open()]
        fine = ["fine-grained-label"] if split == "test" else []
        with open(release / f"{split}.csv", "w", newline="", encoding="utf-8") as out:
            table = csv.writer(out)
            table.writerow(["", "split", "topic", "label", *fine, "TEXT"])
            for k, row in enumerate(rows):
                extra = [row["fine_label"]] if fine else []
                table.writerow([k, split, row["topic"], row["label"], *extra, row["text"]])
    line = _readme(".venv/bin/python -m scoring import")
    line = re.sub(r"\bOUT\b", "bundles/cold", re.sub(r"\bRELEASE\b", release.name, line))
    return fresh / "bundles", _ok(_run(fresh, line), line)


def test_installing_a_real_benchmark(
    fresh: Path, served: tuple[str, str], cold_bundles: tuple[Path, str]
) -> None:
    assert '"warnings": []' in cold_bundles[1], cold_bundles[1]
    block = next(b for b in _blocks(README) if "python -m scoring import" in b)
    check, install = [c for c in _shell_lines(block) if c.startswith(".venv")][1:]
    check, install = (re.sub(r"\bOUT\b", "bundles/cold", c) for c in (check, install))
    assert "valid cold reference bundle" in _ok(_run(fresh, check), check)
    assert install == _local(_readme("python -m worker install --track T DIR")).replace(
        "--track T DIR", "--track cold bundles/cold"
    )
    said = _ok(_cli(fresh, served, install), install)
    assert "cold: reference set installed" in said and "test status: public" in said, said
    assert "retired" in said and "baseline: char-ngram" in said, said  # the demo's rows of the track
    tracks = _get(served, "/api/v1/tracks").text
    cold = next(t for t in json.loads(tracks)["tracks"] if t["track"] == "cold")
    assert (cold["kind"], cold["test_status"], cold["ready"]) == ("real", "public", True), cold
    _eventually(lambda: not _board_ids(served, "cold"), "a real board never shows demo entries")
    # `install --test-status`: the same set with the status the importer recorded changes nothing
    again = _ok(_cli(fresh, served, install + " --test-status public"), install)
    assert "already installed (nothing changed)" in again, again
    assert _readme("python -m worker install --test-status")


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_demo_and_baselines_commands(fresh: Path, cold_bundles: tuple[Path, str]) -> None:
    block = next(b for b in _blocks(README) if "python -m baselines" in b)
    generate, baselines, on_bundles, scores = [c for c in _shell_lines(block) if c.startswith(".venv")]
    assert baselines == _local(_readme("python -m baselines"))
    demo = fresh / "data" / "demo"
    before = _tree(demo)
    _ok(_run(fresh, generate), generate)
    assert _tree(demo) == before  # "the data (byte-identical on rerun)"

    # `python -m baselines` needs the development packages (scikit-learn): the runtime set says so (exit 2,
    # test_the_baselines_commands_say_they_need_the_development_packages); with them, in the fresh copy:
    developer = str(ROOT / ".venv" / "bin" / "python")
    _ok(_run(fresh, baselines.replace(".venv/bin/python", developer), timeout=600), baselines)
    assert _tree(demo) == before  # the same baseline predictions again
    on_bundles = on_bundles.replace("BUNDLES", cold_bundles[0].name).replace(
        "--out OUT", "--out baselines-out"
    )
    _ok(_run(fresh, on_bundles.replace(".venv/bin/python", developer), timeout=600), on_bundles)
    written = sorted(p.name for p in (fresh / "baselines-out" / "cold").rglob("*.test.jsonl"))
    assert "char-ngram.test.jsonl" in written and "majority.test.jsonl" in written, written

    table = _ok(_run(fresh, scores, timeout=600), scores)  # the runtime set suffices
    # The README's VARM demo test table is this output's test rows (HER-L and the split left out).
    printed = {
        cells[0]: [*cells[2:6], cells[6], cells[8]]
        for cells in (
            [c.strip() for c in line.strip("|").split("|")]
            for line in table.splitlines()
            if "| test |" in line
        )
        if cells[0] in ("majority", "lexicon", "char-ngram")
    }
    shown = README[README.index("| baseline | JREM | Label M-F1 |") :].split("\n\n")[0].splitlines()[2:]
    readme = {cells[0]: cells[1:] for cells in ([c.strip() for c in r.strip("|").split("|")] for r in shown)}
    assert readme == printed, table[:3000]


def test_the_other_inline_commands(fresh: Path) -> None:
    shutil.copy(
        fresh / "data" / "demo" / "varm" / "baselines" / "char-ngram.dev.jsonl", fresh / "my_dev.jsonl"
    )
    subsets = _readme(
        ".venv/bin/python -m scoring score --track varm --references data/demo/varm/dev.jsonl --subsets"
    )
    default = json.loads(_ok(_run(fresh, subsets), subsets))["subsets"]
    assert any(cell["jrem_gap"] is None for cell in default.values())  # the small demo dev split: withheld
    all_cells = subsets + " " + _readme("python -m scoring score --all-cells").split(" score ")[1]
    kept = json.loads(_ok(_run(fresh, all_cells), all_cells))["subsets"]
    assert all(isinstance(cell["jrem_gap"], float) for cell in kept.values()), kept

    check = _local(_readme("python -m scoring check-references --track varm DIR")).replace(
        "DIR", "data/demo/varm"
    )
    assert "valid varm reference bundle" in _ok(_run(fresh, check), check)

    cards = _local(_readme("python -m worker.hub_cards"))
    before = {name: (fresh / name).read_bytes() for name in ("README.md", "docs/deploy.md")}
    _ok(_run(fresh, cards), cards)
    assert {
        name: (fresh / name).read_bytes() for name in before
    } == before  # the README's front matter is current
