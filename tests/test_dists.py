"""The two installable distributions (scripts/build-dists): each built, installed into a fresh virtualenv
in an empty folder (no project file on its path), and run for real.

- `varm-score` on the demo dev split prints byte-for-byte what `python -m scoring` prints;
- `varm submit --wait` against a running service (`python -m space`, embedded default) ends published;
- `varm finals` and `varm withdraw` use the server's routes (a missing route answers "not supported by this
  server", exit 3).

Slow (pip installs numpy and httpx from the index); run by scripts/test like the rest of the suite.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import venv
from pathlib import Path

import httpx
import pytest

from tests.conftest_pipeline import DEMO, ROOT, baseline_file, variant, wait_for
from tests.test_pipeline_e2e import assert_alive, free_port

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    env = {**os.environ, "PYTHON": sys.executable}
    subprocess.run([str(ROOT / "scripts" / "build-dists"), str(out)], check=True, env=env, cwd=ROOT)
    return out


def fresh_venv(tmp: Path, wheel: Path) -> Path:
    """A virtualenv without the project's site-packages, with only `wheel` and its dependencies."""
    home = tmp / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(home)
    subprocess.run([str(home / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)], check=True)
    return home / "bin"


def isolated_env() -> dict[str, str]:
    return {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "VARM_API", "VARM_TOKEN")
    }


def test_varm_score_matches_python_m_scoring(wheels, tmp_path):
    bin_dir = fresh_venv(tmp_path, next(wheels.glob("varm_score-*.whl")))
    work = tmp_path / "empty"  # the run's folder: nothing of the project around
    work.mkdir()
    refs, preds = work / "dev.jsonl", work / "preds.jsonl"
    shutil.copy(DEMO / "varm" / "dev.jsonl", refs)
    shutil.copy(DEMO / "varm" / "baselines" / "lexicon.dev.jsonl", preds)
    args = ["score", "--track", "varm", "--references", str(refs), "--predictions", str(preds)]
    installed = subprocess.run(
        [str(bin_dir / "varm-score"), *args], cwd=work, env=isolated_env(), capture_output=True, check=True
    )
    # the installed copy really is the one that ran (not the project's scoring/ via the cwd)
    where = subprocess.run(
        [str(bin_dir / "python"), "-c", "import scoring; print(scoring.__file__)"],
        cwd=work,
        env=isolated_env(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert str(bin_dir.parent) in where and str(ROOT) not in where
    reference = subprocess.run(
        [sys.executable, "-m", "scoring", *args], cwd=ROOT, capture_output=True, check=True
    )
    assert installed.stdout == reference.stdout
    assert json.loads(installed.stdout)  # a real result, not two empty outputs
    version = subprocess.run([str(bin_dir / "varm-score"), "--version"], capture_output=True, text=True)
    from scoring.version import SCORER_VERSION

    assert version.stdout.strip() == SCORER_VERSION


def test_varm_client_submits_and_waits_for_publication(wheels, tmp_path):
    bin_dir = fresh_venv(tmp_path, next(wheels.glob("varm_client-*.whl")))
    port, data = free_port(), tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if k not in ("CELERY_BROKER_URL", "STORE", "AUTH")}
    demo = tmp_path / "demo"
    shutil.copytree(DEMO / "cold", demo / "cold", ignore=shutil.ignore_patterns("train.jsonl"))
    env.update(DATA_DIR=str(data), PORT=str(port), HOST="127.0.0.1", DEMO_DIR=str(demo))
    log_path = tmp_path / "space.log"
    log = open(log_path, "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "space"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:

        def healthy():
            try:
                return httpx.get(f"{base}/api/v1/health", timeout=2).status_code == 200
            except httpx.HTTPError:
                return assert_alive(proc, log_path)

        wait_for(healthy, 90, interval=0.3, what="python -m space to serve")
        token = next(iter(json.loads((data / "tokens.json").read_text())))
        work = tmp_path / "empty"
        work.mkdir()
        (work / "p.jsonl").write_bytes(variant(baseline_file("cold"), 1))
        client_env = {**isolated_env(), "VARM_API": base, "VARM_TOKEN": token}

        def varm(*args: str) -> subprocess.CompletedProcess:
            return subprocess.run(
                [str(bin_dir / "varm"), *args],
                cwd=work,
                env=client_env,
                capture_output=True,
                text=True,
                timeout=180,
            )

        bad = work / "bad.jsonl"
        bad.write_text('{"id": 1}\n')
        refused = varm("validate", str(bad), "--track", "cold")  # positive control: the check can refuse
        assert refused.returncode == 1 and "line 1" in refused.stderr and "Traceback" not in refused.stderr
        assert varm("validate", "p.jsonl", "--track", "cold").returncode == 0

        done = varm("submit", "p.jsonl", "--track", "cold", "--model-name", "mine", "--wait", "--json")
        assert done.returncode == 0, done.stderr
        body = json.loads(done.stdout)
        assert body["status"] == "published"
        rows = httpx.get(f"{base}/api/v1/leaderboard", params={"track": "cold"}).json()["rows"]
        assert body["submission_id"] in {r["submission_id"] for r in rows}

        status = varm("status", body["submission_id"])
        assert status.returncode == 0 and "published" in status.stdout
        assert " F1 ↑ " in status.stdout and "95% CI" in status.stdout, status.stdout  # named by the answer
        listed = varm("list")
        assert listed.returncode == 0 and body["submission_id"] in listed.stdout

        # finals: the server's route (the submission is the submitter's best released one, so choose it)
        chosen = varm("finals", body["submission_id"], "--track", "cold")
        assert chosen.returncode == 0 and body["submission_id"] in chosen.stdout, chosen.stderr
        shown = varm("finals", "--track", "cold")
        assert shown.returncode == 0 and body["submission_id"] in shown.stdout
        # withdraw: off the board (private); a second withdraw changes nothing and still answers cleanly
        out = varm("withdraw", body["submission_id"])
        assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
        assert "withdrawn" in out.stdout, out.stdout
        assert varm("withdraw", body["submission_id"]).returncode == 0
        unreachable = subprocess.run(
            [str(bin_dir / "varm"), "status", "x", "--api", "http://127.0.0.1:9"],
            env=isolated_env(),
            capture_output=True,
            text=True,
        )
        assert unreachable.returncode == 1 and "cannot reach" in unreachable.stderr
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        log.close()
