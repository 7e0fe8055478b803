"""The Ladder (../shared/spec/disclosure.md §3): release rule and chain replay."""

from __future__ import annotations

import numpy as np

from scoring.ladder import Margin, bootstrap_margin, per_row_margin
from scoring.tracks import get_track
from tests.conftest_pipeline import DEMO
from worker.gold.ladder import Step, replay
from worker.leaderboard import Entry


def test_per_row_margin_is_mean_difference_and_std_over_root_n():
    new, best = np.array([1, 1, 0, 1]), np.array([1, 0, 0, 0])
    margin = per_row_margin(new, best)
    d = np.array([0, 1, 0, 1], dtype=float)
    assert margin.diff == d.mean() and margin.se == d.std() / 2
    assert margin.released  # 0.5 > 0.25
    assert not per_row_margin(best, best).released  # no gain is never released (0 > 0 is false)
    assert not Margin(0.01, 0.02).released and Margin(0.03, 0.02).released


def test_bootstrap_margin_reads_the_paired_bootstrap():
    track = get_track("cold")
    refs = track.load_references(DEMO / "cold" / "test.jsonl")
    rows = {
        name: track.prepare_compare(
            track.row_outcomes(refs, (DEMO / "cold" / "baselines" / f"{name}.test.jsonl").read_bytes())
        )
        for name in ("char-ngram", "lexicon")
    }
    margin = track.release_margin(rows["char-ngram"], rows["lexicon"], bootstrap=200, seed=0)
    cmp = track.paired_compare_prepared(
        rows["char-ngram"], rows["lexicon"], bootstrap=200, seed=0, metrics=["f1"]
    )
    assert margin == bootstrap_margin(cmp["f1"]) and margin.se > 0
    assert margin.diff == cmp["f1"]["diff"]
    same = track.release_margin(rows["lexicon"], rows["lexicon"], bootstrap=200, seed=0)
    assert same.diff == 0 and not same.released


def test_varm_margin_is_per_row_jrem():
    track = get_track("varm")
    refs = track.load_references(DEMO / "varm" / "test.jsonl", DEMO / "varm" / "subsets")
    prepared = {
        name: track.prepare_compare(
            track.row_outcomes(refs, (DEMO / "varm" / "baselines" / f"{name}.test.jsonl").read_bytes())
        )
        for name in ("char-ngram", "majority")
    }
    margin = track.release_margin(prepared["char-ngram"], prepared["majority"], bootstrap=0, seed=0)
    cmp = track.paired_compare_prepared(
        prepared["char-ngram"], prepared["majority"], bootstrap=10, seed=0, metrics=["jrem"]
    )
    assert abs(margin.diff - cmp["jrem"]["diff"]) < 1e-12 and margin.released


def _entry(sid: str, who: str, at: str, score: float) -> Entry:
    record = {"submission_id": sid, "submitter": who, "created_at": at}
    return Entry(record, {"version": 1}, {"metrics": {"score": score}})


def test_replay_releases_the_first_and_then_only_clear_gains_per_submitter():
    score = lambda e: e.result["metrics"]["score"]  # noqa: E731
    margin = lambda new, best: Margin(score(new) - score(best), 0.05)  # noqa: E731
    entries = [
        _entry("a1", "alice", "2026-01-01", 0.50),
        _entry("b1", "bob", "2026-01-02", 0.10),
        _entry("a2", "alice", "2026-01-03", 0.53),  # +0.03 < SE: not released
        _entry("a3", "alice", "2026-01-04", 0.60),  # +0.10 over a1: released
        _entry("a4", "alice", "2026-01-05", 0.62),  # +0.02 over a3 (not a1): not released
        _entry("b2", "bob", "2026-01-06", 0.16),  # bob's own chain: +0.06 over b1
    ]
    steps = replay(reversed(entries), margin)  # order comes from created_at, not the list
    assert {k[0]: s.released for k, s in steps.items()} == {
        "a1": True,
        "b1": True,
        "a2": False,
        "a3": True,
        "a4": False,
        "b2": True,
    }
    assert steps[("a2", 1)] == Step(False, 0.05)
