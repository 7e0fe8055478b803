"""Each track describes its metrics once (scoring/metrics_spec.py); the UI, CSV and REST derive from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scoring.tracks import METRIC_SPECS, TRACK_NAMES, get_track, metric_spec, metric_specs
from space.board_query import csv_header, default_columns
from space.ui.tables import better_side, metric_header

GOLDEN = Path(__file__).parent / "golden" / "varm" / "expected_result.json"


def _leaves(prefix: str, value: object):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(f"{prefix}.{k}" if prefix else k, v)
    else:
        yield prefix


@pytest.mark.parametrize("track", TRACK_NAMES)
def test_every_headline_metric_is_described_once(track: str) -> None:
    keys = [m.key for m in metric_specs(track)]
    assert len(keys) == len(set(keys)), keys
    described = set(keys)
    t = get_track(track)
    assert set(t.headline_metrics) <= described and t.primary_metric in described
    primary = metric_spec(track, t.primary_metric)
    assert primary.ci and primary.default and primary.higher_is_better
    assert all(m.en and m.zh and m.unit for m in metric_specs(track))
    assert f"text:{keys[0]}" not in default_columns(track) and keys[0] in default_columns(track)


def test_every_metric_the_varm_scorer_publishes_has_a_spec() -> None:
    result = json.loads(GOLDEN.read_text())
    published = set(_leaves("", result["metrics"]))
    assert published and published <= {m.key for m in METRIC_SPECS["varm"]}, published


def test_direction_drives_names_and_the_better_side() -> None:
    assert metric_header("varm", "jrem") == "JREM ↑" and metric_header("varm", "her_c") == "HER-C ↓"
    # A − B > 0 favours A for a higher-is-better metric and B for a lower-is-better one.
    assert better_side("jrem", 0.02, True, "varm") == "A"
    assert better_side("her_c", 0.02, True, "varm") == "B"
    assert better_side("explanations.sufficiency", -0.1, True, "cold") == "A"
    assert better_side("her_c", 0.02, False, "varm") == ""  # not significant: nobody is better
    assert metric_header("cold", "explanations.spans_per_item") == "Expl. spans per item (spans)"
    unknown = metric_spec("varm", "macro_f1.new_field")  # a key added later still gets a readable name
    assert unknown.en == "Macro f1 · new field" and unknown.higher_is_better


def test_csv_headers_name_the_metric_and_keep_the_key() -> None:
    assert csv_header("varm", "her_c") == "HER-C ↓ (0–1) [her_c]"
    assert csv_header("varm", "ci.jrem.high") == "JREM 95% CI high (0–1) [ci.jrem.high]"
    assert csv_header("varm", "model_name") == "model_name"  # not a metric: the key itself


def test_faithfulness_metrics_read_as_self_reported_everywhere() -> None:
    """Disclosure §7: the masked probabilities are the submitter's own; AUPRC and spans are measured."""
    for track in ("cold", "toxicn", "cntp"):
        flagged = {m.key for m in metric_specs(track) if m.self_reported}
        assert flagged == {
            "explanations.comprehensiveness",
            "explanations.sufficiency",
            "explanations.decision_flip_20",
        }
        for key in flagged:
            spec = metric_spec(track, key)
            assert "(self-reported)" in spec.header("en") and "自报" in spec.header("zh")
            assert spec.as_dict()["self_reported"] is True  # the REST field (GET /api/v1/tracks)
            assert "(self-reported)" in csv_header(track, key)
            assert "(self-reported)" in csv_header(track, f"ci.{key}.low") or not spec.ci
        # Positive control: a measured metric is not flagged.
        assert metric_spec(track, "f1").as_dict()["self_reported"] is False
        assert "self-reported" not in metric_header(track, "explanations.spans_per_item")
    assert not any(m.self_reported for m in metric_specs("varm"))


def test_names_in_chinese_except_acronyms() -> None:
    """Issue 28.9: a Chinese page names a metric in Chinese, and an acronym alike in both languages."""
    from scoring.tracks import metric_spec

    assert metric_spec("varm", "jrem").header("zh") == "JREM ↑" == metric_spec("varm", "jrem").header("en")
    assert metric_spec("varm", "macro_f1.label").header("zh") == "标签 Macro-F1 ↑"
    assert (
        metric_spec("cold", "accuracy").name("zh") == "准确率"
        and metric_spec("cold", "accuracy").name() == "Accuracy"
    )
    assert metric_spec("cold", "explanations.spans_per_item").header("zh") == "每条解释片段数 (个)"
