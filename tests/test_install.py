"""`python -m worker install`: real reference sets into LocalStore and HubStore (fake Hub, real client),
with the real COLD release (../shared/data/real/COLDataset) where sizes matter."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from baselines import BASELINES
from scoring.toxitrace.importers import import_dataset
from tests.conftest_pipeline import DEMO, ROOT, RecordingEnqueuer
from tests.realdata import cold_release
from worker.config import Config
from worker.gold.install import InstallRefused, install
from worker.gold.publish import Publisher
from worker.gold.references import ReferenceCache
from worker.gold.scoring_job import score_submission
from worker.gold.seed import seed
from worker.service import Service
from worker.store import Store

COLD_RELEASE = cold_release()
COLD_TEST_ROWS = 5_323
needs_cold = pytest.mark.skipif(
    not (COLD_RELEASE / "test.csv").is_file(), reason=f"the real COLD release is not at {COLD_RELEASE}"
)


@pytest.fixture(scope="module")
def cold_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real COLD release imported once (`python -m scoring import --dataset cold`)."""
    if not (COLD_RELEASE / "test.csv").is_file():
        pytest.skip(f"the real COLD release is not at {COLD_RELEASE}")
    out = tmp_path_factory.mktemp("cold") / "bundle"
    import_dataset("cold", COLD_RELEASE, out)
    return out


def lines(data: bytes) -> list[dict]:
    return [json.loads(x) for x in data.splitlines() if x.strip()]


def heads(store: Store) -> dict[str, str]:
    return {area: store.head(area) for area in ("references", "submissions", "results")}


def score_and_publish(store: Store, track: str, sids: list[str]) -> None:
    """What the worker does for each submission, in-process: score on the pinned set, then publish."""
    cache = ReferenceCache(store)
    for sid in sids:
        assert score_submission(store, cache.get, track, sid, time_limit=300) == "scored"
    Publisher(store).publish(track)


def board(store: Store, track: str) -> list[dict]:
    return json.loads(store.read("results", f"{track}/leaderboard.json"))["rows"]


def all_zero_predictions(bundle: Path) -> bytes:
    return b"".join(
        json.dumps({"id": r["id"], "label": 0}).encode() + b"\n"
        for r in lines((bundle / "test.jsonl").read_bytes())
    )


def test_install_real_cold_on_a_fresh_store(store: Store, store_config: Config, cold_bundle: Path) -> None:
    installed = install(store, "cold", cold_bundle)
    assert installed.changed and installed.rows == {"test": COLD_TEST_ROWS, "dev": 3_216, "train": 28_941}
    assert store.read("references", "cold/test.jsonl") == (cold_bundle / "test.jsonl").read_bytes()
    manifest = json.loads(store.read("references", "cold/reference_set.json"))
    assert manifest["kind"] == "real" and manifest["sha256"] == installed.sha256
    # Public: the 5,323 inputs, ids and texts only; dev with labels (public by design); never train.
    inputs = lines(store.read("results", "cold/public/test_inputs.jsonl"))
    assert len(inputs) == COLD_TEST_ROWS and all(set(row) == {"id", "text"} for row in inputs)
    assert len(lines(store.read("results", "cold/public/dev.jsonl"))) == 3_216
    assert not any("train" in p for p in store.list("results", "cold/"))
    public_manifest = json.loads(store.read("results", "cold/public/reference_set.json"))
    assert public_manifest["kind"] == "real" and public_manifest["rows"]["test"] == COLD_TEST_ROWS
    assert board(store, "cold") == []
    service = Service(store_config, store, RecordingEnqueuer())
    assert service.reference_set("cold")["kind"] == "real" and service.reference_set("varm")["ready"] is False

    # The same install again changes nothing (a container may run it on every start).
    before = heads(store)
    again = install(store, "cold", cold_bundle)
    assert not again.changed and again.sha256 == installed.sha256 and heads(store) == before
    assert "already installed" in again.lines()[0]


def test_install_replaces_the_demo_and_retires_its_rows(
    store: Store, store_config: Config, cold_bundle: Path, tmp_path: Path
) -> None:
    demo = tmp_path / "demo"
    shutil.copytree(DEMO / "cold", demo / "cold", ignore=shutil.ignore_patterns("train.jsonl"))
    service = Service(store_config, store, RecordingEnqueuer())
    seeded = seed(store, service, demo)
    demo_baselines = len([b for b in BASELINES if "cold" in b.tracks])  # char-ngram-random too (issue 17)
    assert seeded["tracks"] == {"cold": "demo installed"} and len(seeded["baselines"]) == demo_baselines
    demo_ids = [r["submission_id"] for r in _records(store, "cold")]
    score_and_publish(store, "cold", demo_ids)
    assert len(board(store, "cold")) == demo_baselines  # the demo board, before

    installed = install(store, "cold", cold_bundle, demo_dir=demo)
    assert installed.replaced["kind"] == "demo"
    assert {r["submission_id"] for r in installed.retired} == set(demo_ids)
    assert board(store, "cold") == []  # a real track never shows demo entries
    assert store.list("results", "cold/results/") == []  # their published result files are gone
    for record in _records(store, "cold"):
        assert record["hidden"] and record["retired"]["references_sha256"] != installed.sha256
    assert len(lines(store.read("results", "cold/public/test_inputs.jsonl"))) == COLD_TEST_ROWS
    assert store.read("results", "cold/public/subsets.json") is not None
    # Seeding again (every start of the embedded default) leaves the real set alone.
    before = heads(store)
    again = seed(store, Service(store_config, store, RecordingEnqueuer()), demo)
    assert again["tracks"]["cold"].startswith("skipped: a real reference set is installed")
    assert again["baselines"] == [] and heads(store) == before


def test_second_install_is_refused_after_submissions_unless_replace(
    store: Store, store_config: Config, cold_bundle: Path, tmp_path: Path
) -> None:
    install(store, "cold", cold_bundle)
    service = Service(store_config, store, RecordingEnqueuer())
    out = service.submit(
        identity="alice",
        track="cold",
        data=all_zero_predictions(cold_bundle),
        metadata={"model_name": "always zero"},
    )
    assert out["status"] == "queued", out
    score_and_publish(store, "cold", [out["submission_id"]])
    assert [r["submission_id"] for r in board(store, "cold")] == [out["submission_id"]]

    corrected = tmp_path / "corrected"  # a corrected release: one test label flipped
    shutil.copytree(cold_bundle, corrected)
    rows = lines((corrected / "test.jsonl").read_bytes())
    rows[0]["label"] = 1 - rows[0]["label"]
    (corrected / "test.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    before = heads(store)
    with pytest.raises(InstallRefused) as refused:
        install(store, "cold", corrected)
    message = str(refused.value)
    assert "already has a real reference set" in message and out["submission_id"] in message
    assert "always zero" in message and "--replace" in message and "rescore --track cold" in message
    assert heads(store) == before  # nothing written

    replaced = install(store, "cold", corrected, replace=True)
    assert replaced.changed and [r["submission_id"] for r in replaced.needs_rescore] == [out["submission_id"]]
    assert any("need a re-score" in line for line in replaced.lines())
    assert json.loads(store.read("references", "cold/reference_set.json"))["sha256"] == replaced.sha256


def test_a_bad_bundle_is_refused_with_the_checkers_report(store: Store, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "test.jsonl").write_text(
        '{"id": "a", "text": "x", "label": "1"}\n{"id": "a", "text": "y", "label": 0}\n'
    )
    before = heads(store)
    with pytest.raises(InstallRefused) as refused:
        install(store, "cold", bad)
    assert "not a valid cold reference bundle" in str(refused.value) and "line 1" in str(refused.value)
    with pytest.raises(InstallRefused, match="expected a folder holding test.jsonl"):
        install(store, "cold", tmp_path / "nowhere")
    assert heads(store) == before


def _records(store: Store, track: str) -> list[dict]:
    from worker.submissions import list_records

    return list_records(store, track)


# --- the command line ---------------------------------------------------------------------------------


def run_cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "worker", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def cli_env(tmp_path: Path) -> Callable[..., dict[str, str]]:
    import os

    def make(**extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("CELERY_BROKER_URL", "STORE")}
        return {**env, "DATA_DIR": str(tmp_path / "data"), **extra}

    return make


def test_cli_install_prints_what_it_did_or_fails_with_the_reason(cli_env, cold_bundle: Path, tmp_path: Path):
    env = cli_env()
    done = run_cli(env, "install", "--track", "cold", str(cold_bundle))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("cold: reference set installed, sha256 ")
    assert f"test: {COLD_TEST_ROWS:,} rows" in done.stdout and "dev: 3,216 rows" in done.stdout
    again = run_cli(env, "install", "--track", "cold", str(cold_bundle))
    assert again.returncode == 0 and "already installed (nothing changed)" in again.stdout
    missing = run_cli(env, "install", "--track", "cold", str(tmp_path / "nowhere"))
    assert missing.returncode == 1 and "expected a folder holding test.jsonl" in missing.stderr
    assert "Traceback" not in missing.stderr
    unknown = run_cli(env, "install", "--track", "nope", str(cold_bundle))
    assert unknown.returncode == 1 and "unknown track" in unknown.stderr


def test_cli_seed_says_what_it_did_and_fails_loudly(cli_env, tmp_path: Path):
    demo = tmp_path / "demo"
    shutil.copytree(DEMO / "cold", demo / "cold", ignore=shutil.ignore_patterns("train.jsonl", "baselines"))
    env = cli_env(DEMO_DIR=str(demo))
    first = run_cli(env, "seed", "--demo-dir", str(demo))
    assert first.returncode == 0, first.stderr
    assert "cold: demo installed" in first.stdout
    second = run_cli(env, "seed", "--demo-dir", str(demo))
    assert second.returncode == 0 and "cold: demo already present" in second.stdout
    nothing = run_cli(env, "seed", "--demo-dir", str(tmp_path / "empty"))
    assert nothing.returncode == 1 and "holds no demo track" in nothing.stderr


# --- the "done when", literally ------------------------------------------------------------------


@needs_cold
@pytest.mark.slow
def test_done_when_real_cold_on_a_fresh_embedded_service_without_the_demo(tmp_path: Path) -> None:
    """SEED_DEMO=0 on a fresh DATA_DIR: `python -m scoring import --dataset cold <release> OUT`, `python -m
    worker install --track cold OUT`; the running service then serves the 5,323 public COLD inputs, scores
    a REST upload on them, and the COLD board shows no demo rows."""
    import os
    import signal

    import httpx

    from tests.conftest_pipeline import wait_for
    from tests.test_pipeline_e2e import assert_alive, free_port

    port, data, out = free_port(), tmp_path / "data", tmp_path / "OUT"
    env = {k: v for k, v in os.environ.items() if k not in ("CELERY_BROKER_URL", "STORE", "AUTH")}
    env.update(DATA_DIR=str(data), PORT=str(port), HOST="127.0.0.1", SEED_DEMO="0")
    base = f"http://127.0.0.1:{port}"
    imported = subprocess.run(
        [sys.executable, "-m", "scoring", "import", "--dataset", "cold", str(COLD_RELEASE), str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert imported.returncode == 0, imported.stderr
    assert "dev.csv: 3,215 of 6,431 rows disagree with the file name" in imported.stderr  # a warning
    log_path = tmp_path / "space.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "space"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:

        def healthy():
            try:
                return httpx.get(f"{base}/api/v1/health", timeout=2).status_code == 200
            except httpx.HTTPError:
                return assert_alive(proc, log_path)

        wait_for(healthy, 90, interval=0.3, what="python -m space to serve")
        token = next(iter(json.loads((data / "tokens.json").read_text())))  # tokens are still created
        headers = {"Authorization": f"Bearer {token}"}
        predictions = all_zero_predictions(out)
        # Before the install: no demo, and the track says it has no reference set instead of failing.
        tracks = httpx.get(f"{base}/api/v1/tracks").json()["tracks"]
        assert all(t["ready"] is False and t["kind"] is None for t in tracks)
        early = httpx.post(
            f"{base}/api/v1/submissions",
            headers=headers,
            data={"track": "cold", "model_name": "m"},
            files={"file": ("p.jsonl", predictions)},
            timeout=60,
        )
        assert early.status_code == 503 and "no reference set installed" in early.json()["detail"]
        assert httpx.get(f"{base}/api/v1/leaderboard", params={"track": "varm"}).json()["rows"] == []

        installed = subprocess.run(
            [sys.executable, "-m", "worker", "install", "--track", "cold", str(out)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert installed.returncode == 0, installed.stderr
        assert f"test: {COLD_TEST_ROWS:,} rows" in installed.stdout and "sha256" in installed.stdout

        inputs = httpx.get(f"{base}/api/v1/public/cold/test_inputs.jsonl", timeout=30).content
        assert len(lines(inputs)) == COLD_TEST_ROWS
        response = httpx.post(
            f"{base}/api/v1/submissions",
            headers=headers,
            data={"track": "cold", "model_name": "always zero"},
            files={"file": ("p.jsonl", predictions)},
            timeout=60,
        )
        assert response.status_code == 202, response.text
        sid = response.json()["submission_id"]
        done = wait_for(
            lambda: (
                (b := httpx.get(f"{base}/api/v1/submissions/{sid}").json())["status"] == "published" and b
            ),
            120,
            what="the upload to be scored and published",
        )
        assert done["result"]["result"]["rows"] == COLD_TEST_ROWS
        assert done["result"]["result"]["metrics"]["accuracy"] == pytest.approx(1 - 2_107 / COLD_TEST_ROWS)
        board_now = httpx.get(f"{base}/api/v1/leaderboard", params={"track": "cold"}).json()
        assert [r["submission_id"] for r in board_now["rows"]] == [sid]  # no demo rows
        assert not any(r["is_baseline"] for r in board_now["rows"])
        assert board_now["reference_set"]["kind"] == "real"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    assert "SEED_DEMO=0: no demo seeded" in log_path.read_text()


def test_cli_install_on_hub_repos(
    hub_env: dict[str, str], hub_store: Store, cold_bundle: Path, cli_env
) -> None:
    """`python -m worker install` with STORE=hub: the real huggingface_hub client against the fake Hub."""
    done = run_cli(cli_env(**hub_env), "install", "--track", "cold", str(cold_bundle))
    assert done.returncode == 0, done.stderr
    sha = done.stdout.split("sha256 ")[1].split()[0]
    assert json.loads(hub_store.read("references", "cold/reference_set.json"))["sha256"] == sha
    assert len(lines(hub_store.read("results", "cold/public/test_inputs.jsonl"))) == COLD_TEST_ROWS
    assert hub_store.read("results", "cold/leaderboard.json") is not None
