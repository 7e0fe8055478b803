"""A forced re-score (`python -m worker rescore --force`, a real Celery worker on Redis) recomputes every
submission, even one whose version of the current (scorer, references) exists: an identical result is
"reproduced" and nothing is attached; a different one (a determinism bug, here a stored file changed on
disk) is reported per row, attached as a further version and published, and named in the history. Without
`--force` the same tampered submission is skipped, as before."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from scoring.tracks import get_track
from scoring.version import SCORER_VERSION
from tests.conftest_pipeline import (
    ROOT,
    RecordingEnqueuer,
    WorkerProcess,
    baseline_file,
    seed_store,
    wait_for,
    worker_env,
)
from worker.config import Config
from worker.gold import rescore
from worker.gold.publish import Publisher
from worker.gold.references import ReferenceCache
from worker.gold.scoring_job import score_submission
from worker.records import rows_path, sealed_result_path, staged_result_path
from worker.service import Service
from worker.store import open_store

pytestmark = pytest.mark.slow


def record(store, sid: str) -> dict:
    return json.loads(store.read("submissions", f"varm/{sid}/submission.json"))


def scored_store(tmp_path: Path, demo_dir: Path, redis_url: str | None = None):
    """A store with two published varm submissions (lexicon, majority), each at version 1."""
    config = Config(data_dir=tmp_path / "data", **({"celery_broker_url": redis_url} if redis_url else {}))
    seed_store(config, demo_dir)
    store = open_store(config)
    service = Service(config, store, RecordingEnqueuer())
    ids = []
    for name in ("lexicon", "majority"):
        sid = service.submit(
            identity=f"u-{name}",
            track="varm",
            data=baseline_file("varm", name),
            metadata={"model_name": name},
        )["submission_id"]
        assert score_submission(store, ReferenceCache(store).get, "varm", sid, time_limit=300) == "scored"
        ids.append(sid)
    Publisher(store).publish("varm")
    return config, store, ids


def tamper(store, path: str) -> None:
    """Change one stored file of a version as a determinism bug would have (a metric off in its last digit,
    a row outcome, a sealed byte)."""
    data = store.read("submissions", path)
    assert data is not None, path
    if path.endswith(".sealed") or not data.startswith(b"{"):
        changed = data[:-1] + bytes([data[-1] ^ 1])
    else:
        body = json.loads(data)
        if "metrics" in body:  # the public result: its primary metric 0.1 point higher
            assert isinstance(body["metrics"]["jrem"], float), body["metrics"]["jrem"]
            body["metrics"]["jrem"] += 0.001
        else:
            column = next(iter(body))
            body[column] = body[column][::-1] if isinstance(body[column], list) else {**body[column], "x": 1}
        changed = json.dumps(body).encode()
    assert changed != data
    store.commit("submissions", {path: changed}, [], "test: tamper")


def chunk(store, ids: list[str], force: bool) -> dict:
    pinned = ReferenceCache(store).get("varm")
    return rescore.score_chunk(store, pinned, "varm", rescore.stamp(), 0, ids, dry_run=True, force=force)


@pytest.mark.parametrize("part", ["result", "rows", "sealed"])
def test_a_forced_dry_run_compares_every_stored_file_of_the_version(tmp_path, demo_dir, part) -> None:
    """In process, the chunk step alone: every part a version stores is compared byte for byte."""
    _, store, (a, b) = scored_store(tmp_path, demo_dir)
    path = {"result": staged_result_path, "rows": rows_path, "sealed": sealed_result_path}[part]("varm", a, 1)
    forced = chunk(store, [a, b], force=True)
    assert [forced[s]["check"] for s in (a, b)] == ["reproduced", "reproduced"], forced
    tamper(store, path)
    plain, forced = chunk(store, [a, b], force=False), chunk(store, [a, b], force=True)
    assert plain[a]["skipped"] and "check" not in plain[a]  # without force: not recomputed, not compared
    assert (forced[a]["check"], forced[a]["differs"], forced[a]["compared_version"]) == ("differs", [part], 1)
    assert forced[b]["check"] == "reproduced" and forced[b]["new_version"] == 1
    assert [v["version"] for v in record(store, a)["versions"]] == [1]  # a dry run attaches nothing


def run_cli(config: Config, *args: str) -> tuple[dict, str]:
    done = subprocess.run(
        [sys.executable, "-m", "worker", "rescore", "--track", "varm", "--timeout", "120", *args],
        cwd=ROOT,
        env=worker_env(config),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), done.stderr


def test_forced_rescore_over_the_worker_reports_reproduced_and_differing_rows(
    tmp_path: Path, demo_dir: Path, redis_available: str, key_prefix: str, workers: list
) -> None:
    config, store, (a, b) = scored_store(tmp_path, demo_dir, redis_available)
    workers.append(WorkerProcess(worker_env(config), tmp_path / "worker.log").start())

    # Nothing tampered: a forced dry run reproduces both, byte for byte.
    summary, err = run_cli(config, "--dry-run", "--force")
    assert (summary["reproduced"], summary["differs"], summary["errors"]) == (2, 0, 0), summary
    assert {c["check"] for c in summary["changes"]} == {"reproduced"}
    assert err.count("reproduced (version 1, byte for byte)") == 2, err

    # The positive control: lexicon's stored public result changed on disk. Without --force it is skipped.
    tamper(store, staged_result_path("varm", a, 1))
    summary, err = run_cli(config, "--dry-run")
    assert summary["skipped"] == 2 and "reproduced" not in summary and "DIFFERS" not in err, summary
    summary, err = run_cli(config, "--dry-run", "--force")
    assert (summary["reproduced"], summary["differs"]) == (1, 1), summary
    assert "lexicon: DIFFERS from stored version 1 (result)" in err and "dry run: nothing attached" in err, (
        err
    )
    assert "majority: reproduced (version 1, byte for byte)" in err, err
    assert [v["version"] for v in record(store, a)["versions"]] == [1]
    assert store.list("results", "rescore/varm/") == []  # a dry run publishes nothing

    # The real forced run: the differing one gets version 2, published with the run and flagged; the
    # reproduced one keeps its version 1 (nothing attached, nothing in its history).
    history_b = record(store, b)["history"]
    summary, err = run_cli(config, "--force")
    assert (summary["reproduced"], summary["differs"]) == (1, 1), summary
    assert "lexicon: DIFFERS from stored version 1 (result)" in err and "new version 2" in err, err
    versions = wait_for(
        lambda: (v := record(store, a)["versions"]) and "pending_rescore" not in v[-1] and v,
        30,
        what="the new version to be marked published",
    )
    assert [(v["version"], v["scorer_version"]) for v in versions] == [
        (1, SCORER_VERSION),
        (2, SCORER_VERSION),
    ]
    assert [v["version"] for v in record(store, b)["versions"]] == [1]
    assert record(store, b)["history"] == history_b
    board = json.loads(store.read("results", "varm/leaderboard.json"))
    assert {r["submission_id"]: r["version"] for r in board["rows"]} == {a: 2, b: 1}
    assert any("forced: differs from version 1 (result)" in h["note"] for h in record(store, a)["history"])

    report = json.loads(store.read("results", summary["report"]))
    assert report["force"] is True and report["summary"]["differs"] == 1
    rows = {r["submission_id"]: r for r in report["submissions"]}
    assert (rows[a]["check"], rows[a]["differs"], rows[a]["new_version"]) == ("differs", ["result"], 2)
    assert (rows[b]["check"], rows[b]["new_version"]) == ("reproduced", 1)
    # The published report carries the public headline numbers only: no sealed (private/full) part.
    headline = set(get_track("varm").headline_metrics)
    assert all(set(r["new"]) <= headline and set(r["old"]) <= headline for r in report["submissions"])
    assert "private" not in json.dumps(report) and "sealed" not in json.dumps(report)

    # Forced again: version 2 is what the scorer gives, so both now reproduce and nothing is attached.
    summary, err = run_cli(config, "--force")
    assert (summary["reproduced"], summary["differs"]) == (2, 0), summary
    assert [v["version"] for v in record(store, a)["versions"]] == [1, 2]


def test_the_maintainers_tab_says_per_row_what_a_forced_run_found() -> None:
    """The diff table of a forced report: a reproduced row is one line saying so; a differing one names the
    stored version and the files (in the page's language), then its metric rows. Positive control: the same
    report without the forced fields reads as an ordinary re-score (no verdict row)."""
    from space.ui.pages.maintainers import diff_rows, summary_text

    base = {"model_name": "m", "old_rank": 1, "new_rank": 1, "skipped": False, "error": None}
    report = {
        "submissions": [
            {
                **base,
                "submission_id": "a" * 16,
                "old": {"f1": 0.5},
                "new": {"f1": 0.5},
                "check": "reproduced",
                "compared_version": 1,
                "differs": [],
            },
            {
                **base,
                "submission_id": "b" * 16,
                "old": {"f1": 0.5},
                "new": {"f1": 0.6},
                "check": "differs",
                "compared_version": 2,
                "differs": ["result", "sealed"],
            },
        ]
    }
    en, zh = diff_rows(report, "cold", "en"), diff_rows(report, "cold", "zh")
    assert (
        en[0][2] == "reproduced (byte for byte as version 1; nothing attached)"
        and len([r for r in en if r[0] == "a" * 16]) == 1
    )
    assert en[1][2].startswith("⚠ differs from stored version 2 (public result, sealed private part)"), en[1]
    assert [r[0] for r in en[2:]] == ["b" * 16] * (len(en) - 2) and len(en) > 2  # its metric rows follow
    assert zh[0][2].startswith("已复现") and "公开结果、封存的私有部分" in zh[1][2], zh[:2]
    assert not any(re.search(r"[A-Za-z]{4,}", str(r[2])) for r in zh[:2])  # no English in the verdicts
    assert (
        summary_text({"reproduced": 1, "differs": 1}, "en")
        == "1 reproduced · 1 differ from the stored result"
    )
    plain = {
        "submissions": [
            {k: v for k, v in s.items() if k not in ("check", "differs")} for s in report["submissions"]
        ]
    }
    assert not any(
        "reproduced" in str(r[2]) or "differs" in str(r[2]) for r in diff_rows(plain, "cold", "en")
    )
