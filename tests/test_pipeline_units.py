"""Pure pipeline pieces: leaderboard rows and tie groups, quotas, metadata, records, the Celery config."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

import pandas as pd
import pytest
import yaml

from worker import quotas
from worker.celery import broker_urls, make_app
from worker.config import Config
from worker.leaderboard import (
    Entry,
    build_rows,
    ci_columns,
    columns,
    dataset_card,
    numeric_leaves,
    tie_groups,
    to_parquet,
)
from worker.records import new_record, public_view, record_path, transition, validate_metadata


def entry(sid: str, jrem: float, created: str = "2026-01-01T00:00:00Z") -> Entry:
    record = new_record(
        submission_id=sid,
        track="varm",
        sha256="0" * 64,
        submitter="s",
        metadata={"model_name": sid},
        at=created,
    )
    version = {"version": 1, "scorer_version": "1.0.0", "references_sha256": "r", "scored_at": created}
    result = {
        "metrics": {"jrem": jrem, "macro_f1": {"label": 0.5}, "ok": True},
        "ci": {"jrem": [jrem - 0.1, jrem + 0.1]},
    }
    return Entry(record, version, result)


def test_numeric_leaves_and_ci_columns():
    assert numeric_leaves({"a": 1, "b": {"c": 0.5, "d": "x", "e": True}}) == {"a": 1.0, "b.c": 0.5}
    assert ci_columns({"jrem": [0.1, 0.2], "macro_f1.label": [0.3, float("nan")]}) == {
        "ci.jrem.low": 0.1,
        "ci.jrem.high": 0.2,
        "ci.macro_f1.label.low": 0.3,
        "ci.macro_f1.label.high": None,
    }


def test_tie_groups_start_when_significantly_below_the_group_leader():
    entries = [entry(s, v) for s, v in (("a", 0.9), ("b", 0.88), ("c", 0.7), ("d", 0.69), ("e", 0.2))]
    below = {("a", "c"), ("a", "d"), ("a", "e"), ("c", "e")}  # pairs (leader, entry) that differ

    def is_below(leader: Entry, e: Entry) -> bool:
        return (leader.record["submission_id"], e.record["submission_id"]) in below

    assert tie_groups(entries, is_below) == [1, 1, 2, 2, 3]
    rows = build_rows(list(reversed(entries)), "jrem", is_below)
    assert [r["submission_id"] for r in rows] == ["a", "b", "c", "d", "e"]
    assert [(r["rank"], r["rank_low"], r["rank_high"]) for r in rows] == [
        (1, 1, 2),
        (2, 1, 2),
        (3, 3, 4),
        (4, 3, 4),
        (5, 5, 5),
    ]
    assert rows[0]["macro_f1.label"] == 0.5 and rows[0]["ci.jrem.low"] == pytest.approx(0.8)
    assert "ok" not in rows[0]


def test_exact_ties_go_to_the_earlier_submission():
    late, early = entry("late", 0.5, "2026-01-02T00:00:00Z"), entry("early", 0.5, "2026-01-01T00:00:00Z")
    rows = build_rows([late, early], "jrem", lambda a, b: False)
    assert [r["submission_id"] for r in rows] == ["early", "late"]


def test_parquet_and_dataset_card_are_readable():
    rows = build_rows([entry("a", 0.9), entry("b", 0.5)], "jrem", lambda a, b: True)
    frame = pd.read_parquet(io.BytesIO(to_parquet(rows)))
    assert list(frame["submission_id"]) == ["a", "b"] and frame["jrem"].dtype == "float64"
    card = dataset_card({"varm": "VARM-Bench", "cold": "COLD"}).decode()
    meta = yaml.safe_load(card.split("---")[1])
    assert [c["config_name"] for c in meta["configs"]] == ["cold", "varm"]
    assert meta["configs"][1]["data_files"][0]["path"] == "varm/leaderboard.parquet"
    assert "test:private" in meta["tags"] and "leaderboard" in meta["tags"] and meta["language"] == ["zh"]
    key = "-----BEGIN PUBLIC KEY-----"
    mixed = dataset_card({"varm": "VARM-Bench", "cold": "COLD"}, {"cold": "public"}, key)
    meta = yaml.safe_load(mixed.decode().split("---")[1])
    assert "test:mix" in meta["tags"] and "test:private" not in meta["tags"]
    assert "`cold`: **public**" in mixed.decode() and "`varm`: **private**" in mixed.decode()
    assert "BEGIN PUBLIC KEY" in mixed.decode()  # the key that signs the results, in the card


def test_rows_carry_undefined_reasons_as_text_columns_the_parquet_keeps():
    reason = "TP + FP = 0: no positive predictions; 0 by the protocol's zero-division rule"
    silent, measured = entry("silent", 0.5), entry("measured", 0.6)
    silent.result["undefined"] = {"precision": reason}
    measured.result["undefined"] = {}  # the control: a metric that is a measurement gets no column value
    rows = build_rows([silent, measured], "jrem", lambda a, b: True)
    by_id = {r["submission_id"]: r for r in rows}
    assert by_id["silent"]["undefined.precision"] == reason and "undefined.precision" not in by_id["measured"]
    assert columns(rows)[-1] == "undefined.precision"  # after the metric and CI columns
    frame = pd.read_parquet(io.BytesIO(to_parquet(rows))).set_index("submission_id")
    assert frame.loc["silent", "undefined.precision"] == reason and pd.isna(
        frame.loc["measured", "undefined.precision"]
    )
    assert frame["jrem"].dtype == "float64"


def test_quota_window_and_next_slot():
    now = datetime(2026, 1, 2, 12, tzinfo=UTC)
    times = [(now - timedelta(hours=h)).isoformat().replace("+00:00", "Z") for h in (30, 20, 10, 1)]
    state = quotas.window_state(times, 3, now)
    assert state["used"] == 3 and state["remaining"] == 0
    assert state["next_slot_at"] == "2026-01-02T16:00:00Z"  # the oldest counted upload (20 h ago) + 24 h
    with pytest.raises(quotas.QuotaExceeded) as exc:
        quotas.check(times, 3, now, "quota")
    assert exc.value.next_slot_at == "2026-01-02T16:00:00Z"
    assert quotas.check(times, 4, now, "quota")["remaining"] == 1
    assert quotas.index_path("Alice ", "varm") == quotas.index_path("alice", "varm")


def test_metadata_validation():
    meta, problems = validate_metadata(
        {
            "model_name": " m ",
            "model_type": "Open",
            "setting": "zero-shot",
            "paper_url": "https://a.b/c",
            "description": "line\nline",
        }
    )
    assert problems == [] and meta["model_name"] == "m" and meta["model_type"] == "open"
    _, problems = validate_metadata(
        {
            "model_name": "m",
            "code_url": "ftp://x",
            "paper_url": "http://",
            "model_type": "weights",
            "setting": "few",
            "organisation": "\x1b[31m",
        }
    )
    assert {p.field for p in problems} == {"code_url", "paper_url", "model_type", "setting", "organisation"}
    _, problems = validate_metadata({"model_name": "m", "description": "x" * 2001})
    assert [p.field for p in problems] == ["description"]


def test_records_transitions_keep_history_and_public_view_hides_private_fields():
    rec = new_record(
        submission_id="0123456789abcdef",
        track="varm",
        sha256="f" * 64,
        submitter="s",
        metadata={"model_name": "m"},
    )
    failed = transition(rec, "failed", "boom", error="reason")
    assert failed["error"] == "reason" and [h["status"] for h in failed["history"]][-1] == "failed"
    assert rec["status"] == "queued"  # the original is untouched
    assert set(public_view(rec)) == {
        "submission_id",
        "track",
        "sha256",
        "metadata",
        "submitter",
        "is_baseline",
        "verified",
        "created_at",
    }
    with pytest.raises(ValueError):
        record_path("varm", "../x")
    with pytest.raises(ValueError):
        record_path("../etc", "0123456789abcdef")


def test_celery_config_is_json_only_with_late_acks(tmp_path):
    app = make_app(Config(data_dir=tmp_path))
    conf = app.conf
    assert conf.accept_content == ["json"] and conf.task_serializer == "json"
    assert conf.task_acks_late and conf.task_reject_on_worker_lost and conf.worker_prefetch_multiplier == 1
    assert conf.task_soft_time_limit < conf.task_time_limit
    assert {q.name for q in conf.task_queues} == {"submissions", "publish", "rescore"}
    for queue in conf.task_queues:  # one binding per queue, so a message lands in exactly one queue
        assert queue.exchange.name == queue.routing_key == queue.name
    assert app.amqp.router.route({}, "worker.tasks.publish_track")["queue"].name == "publish"
    broker, backend = broker_urls(Config(data_dir=tmp_path))
    assert broker == f"sqla+sqlite:///{tmp_path.resolve()}/broker.sqlite" and backend.startswith(
        "db+sqlite:///"
    )
    assert broker_urls(Config(data_dir=tmp_path, celery_broker_url="redis://h:1/2")) == ("redis://h:1/2",) * 2


def test_rescore_report_deltas_and_competition_ranks():
    from worker.gold.rescore import report

    def e(old, new, hidden=False):
        return {
            "model_name": "m",
            "hidden": hidden,
            "old_version": 1,
            "new_version": 2,
            "skipped": False,
            "old": {"jrem": old},
            "new": {"jrem": new},
        }

    chunks = [{"a": e(0.5, 0.6), "b": e(0.5, 0.4)}, {"c": e(0.9, 0.9), "h": e(0.1, 0.95, hidden=True)}]
    out = report("varm", "run", "maint", False, chunks)
    rows = {r["submission_id"]: r for r in out["submissions"]}
    assert set(rows) == {"a", "b", "c"}  # hidden submissions stay out of the public report
    assert rows["a"]["delta"]["jrem"] == pytest.approx(0.1) and rows["b"]["delta"]["jrem"] == pytest.approx(
        -0.1
    )
    assert (rows["a"]["old_rank"], rows["b"]["old_rank"]) == (2, 2)  # equal scores share a rank
    assert (rows["a"]["new_rank"], rows["b"]["new_rank"], rows["c"]["new_rank"]) == (2, 3, 1)
    assert out["summary"] == {"submissions": 3, "rescored": 3, "skipped": 0, "errors": 0, "rank_changes": 1}


def test_parquet_export_is_deterministic():
    """Same rows, same bytes (content-defined chunking must not depend on anything but the content)."""
    rows = [
        {"submission_id": f"s{i:05d}", "model_name": f"m{i}", "f1": (i * 7919 % 10007) / 10007}
        for i in range(3000)
    ]
    first = to_parquet(rows)
    assert first == to_parquet(rows)
    assert pd.read_parquet(io.BytesIO(first))["submission_id"].tolist() == [r["submission_id"] for r in rows]
