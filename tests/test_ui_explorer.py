"""Dev-split explorer: per-item outcomes from the scoring library on the PUBLIC demo dev split."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from space.ui import explorer

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"


def _dev(track: str) -> bytes:
    return (DEMO / track / "dev.jsonl").read_bytes()


def test_varm_explorer_matches_gold_and_flags_fields() -> None:
    exp = explorer.explore("varm", _dev("varm"), (DEMO / "varm/baselines/lexicon.dev.jsonl").read_bytes())
    assert exp.report["valid"] and len(exp.items) == 200
    item = exp.items[0]
    assert set(item["gold"]) == set(explorer.FIELDS)
    # An item is JREM-correct exactly when no field is wrong.
    jrem = sum(not it["wrong"] for it in exp.items) / len(exp.items)
    assert exp.summary["jrem"] == pytest.approx(jrem)
    wrong_stance = explorer.filter_items(exp.items, wrong_field="stance")
    assert wrong_stance and all("stance" in it["wrong"] for it in wrong_stance)
    neutral = explorer.filter_items(exp.items, stance="中性提及")
    assert all(it["gold"]["stance"] == "中性提及" for it in neutral)
    table = explorer.items_table(exp.items)
    assert list(table.columns)[:2] == ["#", "ID"]


def test_varm_invalid_output_counts_every_field_wrong() -> None:
    rows = [json.loads(x) for x in _dev("varm").splitlines()[:3]]
    preds = "\n".join(json.dumps({"id": r["id"], "output": r["cot"]}) for r in rows[:2])
    preds += "\n" + json.dumps({"id": rows[2]["id"], "output": "【T:x】 not the format"})
    exp = explorer.explore_varm(rows, preds.encode())
    assert [it["wrong"] for it in exp.items[:2]] == [[], []]  # the gold rationale parses to the gold record
    bad = exp.items[2]
    assert not bad["valid"] and bad["wrong"] == list(explorer.FIELDS) and bad["issues"]


def test_detail_html_escapes_user_text() -> None:
    item = {
        "n": 1,
        "id": "<b>id</b>",
        "text": "他说<script>alert(1)</script>外地人",
        "raw": "<img src=x>",
        "gold": {f: "外地人" if f == "target" else "<i>x</i>" for f in explorer.FIELDS},
        "pred": {f: "<svg onload=alert(1)>" for f in explorer.FIELDS},
        "valid": False,
        "issues": ["<x>"],
        "wrong": list(explorer.FIELDS),
        "target_f1": 0.0,
    }
    html = explorer.item_html(item)
    for raw in ("<script>", "<img", "<svg", "<i>", "<b>id", "<x>"):
        assert raw not in html
    assert '<mark class="varm-target">外地人</mark>' in html


def test_toxitrace_spans_explorer() -> None:
    exp = explorer.explore("cntp", _dev("cntp"), (DEMO / "cntp/baselines/lexicon.dev.jsonl").read_bytes())
    assert len(exp.items) == 100
    with_gold = next(it for it in exp.items if it["gold_spans"])
    html = explorer.item_html(with_gold)
    assert "<u>" in html
    assert exp.summary["accuracy"] == pytest.approx(sum(not it["wrong"] for it in exp.items) / 100)


def test_partial_dev_predictions_still_explored_with_report() -> None:
    lines = (DEMO / "varm/baselines/lexicon.dev.jsonl").read_bytes().splitlines()[:10]
    exp = explorer.explore("varm", _dev("varm"), b"\n".join(lines) + b"\nnot json\n")
    assert len(exp.items) == 10
    assert not exp.report["valid"] and any(p["line"] == 11 for p in exp.report["errors"])
    missing = [p["message"] for p in exp.report["errors"] if "have no prediction" in p["message"]]
    assert missing and missing[0].startswith("190 dev rows have no prediction"), missing  # dev, not test


def test_explorer_names_the_dev_split_for_unknown_ids() -> None:
    for track, good in (("varm", "lexicon.dev.jsonl"), ("cold", "lexicon.dev.jsonl")):
        lines = (DEMO / track / "baselines" / good).read_bytes().splitlines()
        stray = json.loads(lines[0])
        stray["id"] = "no-such-dev-id"
        exp = explorer.explore(track, _dev(track), b"\n".join([*lines, json.dumps(stray).encode()]))
        unknown = [p["message"] for p in exp.report["errors"] if "no-such-dev-id" in p["message"]]
        assert unknown and unknown[0].endswith("is not in the dev set"), exp.report["errors"]
        assert not any("test" in p["message"] for p in exp.report["errors"]), exp.report["errors"]


def test_toxitrace_breakdown_values_filter_like_subsets() -> None:
    exp = explorer.explore("cold", _dev("cold"), (DEMO / "cold/baselines/lexicon.dev.jsonl").read_bytes())
    names = sorted({s for it in exp.items for s in it["subsets"]})
    assert names and all("=" in n for n in names)
    chosen = explorer.filter_items(exp.items, subset=names[0], only_errors=True)
    assert all(names[0] in it["subsets"] and it["wrong"] for it in chosen)


def test_varm_subset_filter_uses_public_dev_membership() -> None:
    membership_bytes = (DEMO / "varm" / "public" / "dev_subsets.json").read_bytes()
    membership = json.loads(membership_bytes)
    preds = (DEMO / "varm/baselines/lexicon.dev.jsonl").read_bytes()
    exp = explorer.explore("varm", _dev("varm"), preds, membership_bytes)
    assert sorted({s for it in exp.items for s in it["subsets"]}) == sorted(membership)
    for name, ids in membership.items():
        chosen = explorer.filter_items(exp.items, subset=name)
        assert sorted(it["id"] for it in chosen) == sorted(ids), name
        assert {it["gold"]["label"] for it in chosen} == {"有害", "无害"}, name
        errors = explorer.filter_items(exp.items, subset=name, only_errors=True)
        assert errors and all(it["id"] in ids and it["wrong"] for it in errors), name
    # Without the membership file the dev rows carry no subset (the dev split has no subset field).
    assert not any(it["subsets"] for it in explorer.explore("varm", _dev("varm"), preds).items)
    assert explorer.read_dev_subsets(b"not json") == {} and explorer.read_dev_subsets(None) == {}


@pytest.mark.parametrize("track", ["varm", "cold"])
def test_a_test_file_in_the_dev_explorer_is_recognised(track: str) -> None:
    """The demo's own test and dev prediction files: the test one gets the hint, the dev one does not."""
    test_inputs = explorer.read_lines((DEMO / track / "public" / "test_inputs.jsonl").read_bytes())
    dev_rows = explorer.read_lines(_dev(track))
    test_file = (DEMO / track / "baselines" / "lexicon.test.jsonl").read_bytes()
    dev_file = (DEMO / track / "baselines" / "lexicon.dev.jsonl").read_bytes()
    assert explorer.looks_like_test_file(test_file, test_inputs, dev_rows)
    assert not explorer.looks_like_test_file(dev_file, test_inputs, dev_rows)  # negative control
    assert not explorer.looks_like_test_file(b"", test_inputs, dev_rows)


def test_a_varm_test_file_keyed_by_text_is_recognised() -> None:
    test_inputs = explorer.read_lines((DEMO / "varm/public/test_inputs.jsonl").read_bytes())
    dev_rows = explorer.read_lines(_dev("varm"))
    by_text = "\n".join(
        json.dumps({"text": r["text"], "output": "x"}, ensure_ascii=False) for r in test_inputs[:20]
    ).encode()
    dev_by_text = "\n".join(
        json.dumps({"text": r["text"], "output": "x"}, ensure_ascii=False) for r in dev_rows[:20]
    ).encode()
    assert explorer.looks_like_test_file(by_text, test_inputs, dev_rows)
    assert not explorer.looks_like_test_file(dev_by_text, test_inputs, dev_rows)
