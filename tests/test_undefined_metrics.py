"""Metrics whose denominator is 0 are named, not passed off as measurements (issue 16, item 7).

The published value stays 0 (the spec's rule; sklearn's zero_division=0), and `result["undefined"]` says
why. sklearn with zero_division=nan is the oracle for "undefined"; each test next to a 0/0 has a real 0 that
must NOT be named (the positive control), so the rule cannot pass by naming every 0.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import f1_score, precision_recall_fscore_support

from scoring.api import score_file
from scoring.toxitrace.classification import binary_metrics, undefined_binary, undefined_metrics
from scoring.toxitrace.spans import SpanCounts, span_metrics, undefined_span_metrics
from scoring.toxitrace.tracks import COLD

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "data" / "demo"

pairs = st.integers(min_value=1, max_value=40).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 1), min_size=n, max_size=n),
        st.lists(st.integers(0, 1), min_size=n, max_size=n),
    )
)


def sklearn_undefined(gold, pred) -> set[str]:
    """The metrics scikit-learn leaves as NaN under zero_division=nan (an undefined ratio)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p, r, f, _ = precision_recall_fscore_support(gold, pred, average="binary", zero_division=np.nan)
        per_class = f1_score(gold, pred, average=None, labels=[0, 1], zero_division=np.nan)
    named = {k for k, v in (("precision", p), ("recall", r), ("f1", f)) if np.isnan(v)}
    return named | ({"macro_f1"} if np.isnan(per_class).any() else set())


@settings(max_examples=300, deadline=None)
@given(pairs)
def test_named_exactly_where_sklearn_finds_the_ratio_undefined(data):
    gold, pred = data
    named = undefined_binary(gold, pred)
    assert set(named) == sklearn_undefined(gold, pred)
    values = binary_metrics(gold, pred)
    assert all(values[k] == 0.0 for k in named if k != "macro_f1")  # the published value is unchanged


def test_no_positive_predictions_names_precision_but_not_the_real_zeros():
    named = undefined_metrics(tp=0, fp=0, fn=5, tn=5)  # the majority baseline on mixed data
    reason = "TP + FP = 0: no positive predictions; 0 by the protocol's zero-division rule"
    assert named == {"precision": reason}
    # recall = 0/5 and F1 = 0/5 are measurements: the system found none of 5 positive items


def test_a_real_zero_precision_is_not_named():
    assert binary_metrics([0, 0, 1], [1, 1, 0])["precision"] == 0.0  # 0/2: every positive prediction wrong
    assert undefined_metrics(tp=0, fp=2, fn=1, tn=0) == {}


def test_one_class_everywhere_names_every_ratio_of_the_missing_class():
    named = undefined_metrics(tp=0, fp=0, fn=0, tn=4)
    assert set(named) == {"precision", "recall", "f1", "macro_f1"}
    assert named["recall"].startswith("TP + FN = 0") and "class 1" in named["macro_f1"]


def test_span_metrics_name_the_side_without_spans():
    no_pred = SpanCounts(np.array([3, 0]), np.array([0, 0]), np.array([0, 0]))
    assert span_metrics(no_pred)["overlap_precision"] == 0.0
    assert set(undefined_span_metrics(no_pred)) == {"overlap_precision", "char_precision"}
    missed = SpanCounts(np.array([3, 0]), np.array([0, 2]), np.array([0, 0]))  # predicted, all wrong
    assert span_metrics(missed)["overlap_precision"] == 0.0 and undefined_span_metrics(missed) == {}
    nothing = SpanCounts(np.array([0]), np.array([0]), np.array([0]))
    assert set(undefined_span_metrics(nothing)) == {
        "overlap_precision",
        "overlap_recall",
        "overlap_f1",
        "char_precision",
        "char_recall",
        "char_f1",
        "iou",
    }


def test_majority_baseline_result_names_precision_and_keeps_its_value():
    preds = (DEMO / "cold" / "baselines" / "majority.test.jsonl").read_bytes()
    result = score_file("cold", DEMO / "cold", preds, bootstrap=0)
    assert result["metrics"]["precision"] == 0.0
    assert set(result["undefined"]) == {"precision"}
    assert result["undefined"]["precision"].startswith("TP + FP = 0")
    lexicon_file = DEMO / "cold" / "baselines" / "lexicon.test.jsonl"
    lexicon = score_file("cold", DEMO / "cold", lexicon_file.read_bytes(), bootstrap=0)
    assert lexicon["undefined"] == {}  # the positive control: a system that predicts positives
    cells = [c for field in result["breakdowns"].values() for c in field.values()]
    published = [c for c in cells if c["withheld"] is None]
    assert published and all(set(c["undefined"]) == {"precision"} for c in published)


def test_withheld_metrics_carry_no_undefined_reason(tmp_path: Path):
    # 40 gold-1 rows and 40 gold-0 rows of one topic; fine_label is defined by the label: accuracy only.
    refs = [
        {
            "id": f"r{i:03d}",
            "text": f"文本{i}",
            "label": int(i < 40),
            "topic": "race",
            "fine_label": "attack_group" if i < 40 else "anti_bias",
        }
        for i in range(80)
    ]
    (tmp_path / "test.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in refs))
    preds = "".join(json.dumps({"id": r["id"], "label": 0}) + "\n" for r in refs).encode()
    result = COLD.score(COLD.load_references(tmp_path), preds, bootstrap=0)
    anti_bias = result["breakdowns"]["fine_label"]["anti_bias"]  # "no positive items" would name its labels
    assert anti_bias["precision"] is None and anti_bias["undefined"] == {}
    race = result["breakdowns"]["topic"]["race"]
    assert race["withheld"] is None and set(race["undefined"]) == {"precision"}
    raw = COLD.score(COLD.load_references(tmp_path), preds, bootstrap=0, disclose=False)
    assert set(raw["breakdowns"]["fine_label"]["anti_bias"]["undefined"]) == {
        "precision",
        "recall",
        "f1",
        "macro_f1",
    }


def _cold_results() -> dict[str, dict]:
    return {
        name: score_file(
            "cold",
            DEMO / "cold",
            (DEMO / "cold" / "baselines" / f"{name}.test.jsonl").read_bytes(),
            bootstrap=20,
        )
        for name in ("majority", "lexicon")
    }


def test_board_shows_na_with_the_reason_where_a_row_names_its_metric_undefined():
    from space.board_query import rows_frame
    from space.ui.tables import SHOWN, dataframe_value, display_frame
    from worker.leaderboard import Entry, build_rows
    from worker.records import new_record

    entries = []
    for i, (name, result) in enumerate(_cold_results().items()):
        record = new_record(
            submission_id=f"{i:016x}",
            track="cold",
            sha256="0" * 64,
            submitter="s",
            metadata={"model_name": name},
            at=f"2026-01-0{i + 1}T00:00:00Z",
        )
        version = {"version": 1, "scorer_version": "x", "references_sha256": "r", "scored_at": "t"}
        entries.append(Entry(record, version, result))
    frame = rows_frame(build_rows(entries, "f1", lambda a, b: True))
    table, types = display_frame(frame, "cold", ["precision", "recall", "f1"], "en")
    kinds = dict(zip(table.columns, types, strict=True))
    # What a cell shows (the n/a with its reason) and what the browser sorts it by (no number).
    cells = dict(zip(frame["model_name"], table.attrs[SHOWN]["Precision ↑"], strict=True))
    values = dict(zip(frame["model_name"], table["Precision ↑"], strict=True))
    assert kinds["Precision ↑"] == "markdown" and cells["majority"].endswith(">n/a</span>")
    assert (
        'title="TP + FP = 0: no positive predictions; 0 by the protocol&#x27;s zero-division rule"'
        in (cells["majority"])
    )
    lexicon = round(frame.loc[frame["model_name"] == "lexicon", "precision"].iloc[0] * 100, 1)
    assert cells["lexicon"] == str(lexicon) and values["lexicon"] == lexicon
    sent = dataframe_value(table)
    column = sent["headers"].index("Precision ↑")
    assert [row[column] for row in sent["data"]] == [None if v == "majority" else values[v] for v in values]
    assert [row[column] for row in sent["metadata"]["display_value"]] == list(cells.values())
    # Recall of the majority baseline is a real 0 (it found none of the positive items): a number column
    assert kinds["Recall ↑"] == kinds["F1 ↑"] == "number" and 0.0 in table["Recall ↑"].tolist()


def test_submission_page_shows_na_with_the_reason_for_undefined_metrics():
    from space.ui.i18n import t
    from space.ui.submission import METRIC_TYPES, WITHHELD_COLUMN, breakdowns_table, metrics_table

    results = _cold_results()
    table = metrics_table(results["majority"], "cold", "en").set_index("Metric")
    assert METRIC_TYPES[list(table.reset_index().columns).index("Value")] == "markdown"
    assert 'title="TP + FP = 0' in table.loc["Precision", "Value"]
    assert table.loc["Precision", "95% CI"] == ""  # the interval of a 0/0 is no measurement either
    assert table.loc["Recall", "Value"] == "0.0 %"  # a real 0 stays a number
    control = metrics_table(results["lexicon"], "cold", "en").set_index("Metric")
    assert "n/a" not in " ".join(control["Value"])
    cells = breakdowns_table(results["majority"], "en").set_index(["Field", "Value"])
    race = cells.loc[("topic", "race")]
    assert race["Precision ↑"] == "n/a" and "Precision ↑: TP + FP = 0" in race[t(WITHHELD_COLUMN, "en")]
    assert race["Recall ↑"] == 0.0
