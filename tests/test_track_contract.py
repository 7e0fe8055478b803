"""The contract every track keeps (issue 30.3), checked over every track the way scikit-learn's common tests
check every estimator: a new track passes these or is not a track. Each runs on the track's demo test set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scoring.api import dumps_result
from scoring.metrics_spec import headline_keys
from scoring.tracks import TRACK_NAMES, get_track

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"
RESAMPLES = 200


def _rows(track: str) -> list[dict]:
    return [json.loads(line) for line in (DEMO / track / "test.jsonl").read_text().splitlines() if line]


def gold_as_predictions(track: str) -> bytes:
    """The gold answers in the track's prediction format (VARM: each row's gold analysis, a valid output)."""
    if track == "varm":
        out = [{"id": r["id"], "output": r["cot"]} for r in _rows(track)]
    else:
        out = [
            {"id": r["id"], "label": r["label"], **({"spans": r["spans"]} if "spans" in r else {})}
            for r in _rows(track)
        ]
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in out).encode()


def baseline(track: str) -> bytes:
    return (DEMO / track / "baselines" / "lexicon.test.jsonl").read_bytes()


def metric(result: dict, key: str) -> float:
    node = result["metrics"]
    for part in key.split("."):
        node = node[part]
    return node


def score(track: str, data: bytes, *, seed: int = 0) -> dict:
    t = get_track(track)
    return t.score(t.load_references(DEMO / track), data, bootstrap=RESAMPLES, seed=seed)


@pytest.fixture(params=TRACK_NAMES)
def track(request) -> str:
    return request.param


def test_gold_as_predictions_is_perfect(track):
    t = get_track(track)
    result = score(track, gold_as_predictions(track))
    specs = {m.key: m for m in t.metric_specs}
    for key in t.headline_metrics:
        best = 1.0 if specs[key].higher_is_better else 0.0
        assert metric(result, key) == best, (key, metric(result, key))
    # positive control: a real baseline is not perfect on the primary metric
    assert metric(score(track, baseline(track)), t.primary_metric) < 1.0


def test_same_seed_same_bytes(track):
    data = baseline(track)
    assert dumps_result(score(track, data, seed=7)) == dumps_result(score(track, data, seed=7))
    assert dumps_result(score(track, data, seed=7)) != dumps_result(
        score(track, data, seed=8)
    )  # the seed acts


def test_every_interval_brackets_its_point_estimate(track):
    result = score(track, baseline(track))
    assert result["ci"], "a track with intervals"
    for key, (low, high) in result["ci"].items():
        if key.startswith("explanations."):
            continue  # explanation intervals sit beside result["explanations"]
        point = metric(result, key)
        assert low <= point <= high, (key, low, point, high)


def test_row_outcomes_reproduce_the_metrics(track):
    t = get_track(track)
    refs = t.load_references(DEMO / track)
    result, rows = t.score_with_rows(refs, baseline(track), bootstrap=0)
    compared = t.paired_compare(rows, rows, bootstrap=0, seed=0)
    assert set(compared) <= set(t.headline_metrics) and t.primary_metric in compared
    for key, cmp in compared.items():
        assert cmp["a"] == pytest.approx(metric(result, key), abs=1e-12), key
        assert cmp["diff"] == 0.0
    # positive control: against the gold answers the baseline is behind on the primary metric
    _, perfect = t.score_with_rows(refs, gold_as_predictions(track), bootstrap=0)
    assert t.paired_compare(rows, perfect, bootstrap=0, seed=0)[t.primary_metric]["diff"] < 0


def test_headline_metrics_are_the_default_specs_in_board_order(track):
    t = get_track(track)
    assert t.headline_metrics == headline_keys(t.metric_specs)
    assert t.headline_metrics[0] == t.primary_metric == t.metric_specs[0].key
    result = score(track, baseline(track))
    for key in t.headline_metrics:  # each is a metric the scorer publishes
        assert isinstance(metric(result, key), float), key
