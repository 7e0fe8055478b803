"""ToxiTrace readers, importers, tracks and CLI on small files written here in the published formats."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from scoring.disclosure import SMALL_CELL
from scoring.problems import InputError
from scoring.toxitrace.importers import import_dataset
from scoring.toxitrace.predictions import parse_predictions
from scoring.toxitrace.references import load_references, parse_references
from scoring.toxitrace.tracks import CNTP, COLD, TOXICN, TRACKS

ROOT = Path(__file__).resolve().parents[1]


def jsonl(*rows: dict | str) -> bytes:
    lines = (r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows)
    return "".join(line + "\n" for line in lines).encode()


REFS = [
    {
        "id": "r1",
        "text": "你这个人真是蠢到家了，滚吧",
        "label": 1,
        "spans": ["蠢到家了"],
        "topic": "race",
        "target_groups": ["Region", "Sexism"],
    },
    {
        "id": "r2",
        "text": "今天天气不错",
        "label": 0,
        "spans": [],
        "topic": "gender",
        "target_groups": ["non-hate"],
    },
    {
        "id": "r3",
        "text": "河南人都是骗子",
        "label": 1,
        "spans": [[0, 7]],
        "topic": "race",
        "target_groups": ["Region"],
    },
    {"id": "r4", "text": "反对地域歧视", "label": 0, "spans": [], "fine_label": "anti_bias"},
]
INPUTS = [{"id": r["id"], "text": r["text"]} for r in REFS]
GOOD = [
    {"id": "r1", "label": 1, "spans": [[6, 10]]},
    {"id": "r2", "label": 0, "spans": []},
    {"id": "r3", "label": 0, "spans": ["骗子"]},
    {"id": "r4", "label": 1, "spans": []},
]


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    (tmp_path / "test.jsonl").write_bytes(jsonl(*REFS))
    return tmp_path


# --- references ------------------------------------------------------------------------------------


def test_references_load_with_breakdowns(bundle: Path):
    refs = CNTP.load_references(bundle)  # a bundle dir means its test.jsonl
    assert refs.ids == ["r1", "r2", "r3", "r4"]
    assert refs.labels.tolist() == [1, 0, 1, 0]
    assert refs.spans[0] == ((6, 10),)
    assert refs.breakdowns["target_groups"][0] == ("Region", "Sexism")
    assert refs.breakdowns["fine_label"] == [(), (), (), ("anti_bias",)]
    assert "expression" not in refs.breakdowns  # absent everywhere
    assert CNTP.public_inputs(refs) == INPUTS


@pytest.mark.parametrize(
    ("row", "field", "words"),
    [
        ({"id": "x", "text": "t", "label": "1"}, "label", "without quotes"),
        ({"id": "x", "text": "t", "label": True}, "label", "true/false"),
        ({"id": "x", "text": "t", "label": 2}, "label", "0 or 1"),
        ({"id": "x", "text": "t", "label": 1.0}, "label", "decimal point"),
        ({"id": "x", "text": "t"}, "label", "missing field 'label'"),
        ({"id": "x", "label": 1}, "text", "non-empty string"),
        ({"id": 7, "text": "t", "label": 1}, "id", "must be a string"),
        ({"text": "t", "label": 1}, "id", "missing field 'id'"),
        ({"id": "r1", "text": "t", "label": 1}, "id", "already appeared on line 1"),
        ({"id": "x", "text": "abc", "label": 1, "spans": [[1, 9]]}, "spans[0]", "outside the text"),
        ({"id": "x", "text": "abc", "label": 1, "spans": "ab"}, "spans", "must be a list"),
        ({"id": "x", "text": "abc", "label": 1, "spans": ["zz"]}, "spans[0]", "does not occur"),
        ({"id": "x", "text": "t", "label": 1, "target_groups": "Region"}, "target_groups", "list of"),
        ({"id": "x", "text": "t", "label": 1, "topic": ["a"]}, "topic", "string or a whole number"),
    ],
)
def test_bad_reference_rows_are_line_numbered(row, field, words):
    first = {"id": "r1", "text": "t", "label": 0}
    data = jsonl(first, "", row)  # the blank line 2 is skipped but counted
    with pytest.raises(InputError) as info:
        parse_references(data)
    problems = [p for p in info.value.problems if p.field == field]
    assert problems and problems[0].line == 3, info.value.problems
    assert words in problems[0].message


def test_references_spans_on_some_rows_only(tmp_path: Path):
    data = jsonl({"id": "a", "text": "ab", "label": 1, "spans": []}, {"id": "b", "text": "cd", "label": 0})
    with pytest.raises(InputError) as info:
        parse_references(data)
    assert [(p.line, p.field) for p in info.value.problems] == [(2, "spans")]


def test_span_track_requires_reference_spans(tmp_path: Path):
    (tmp_path / "test.jsonl").write_bytes(jsonl({"id": "a", "text": "ab", "label": 1}))
    assert COLD.load_references(tmp_path).spans is None
    with pytest.raises(InputError) as info:
        CNTP.load_references(tmp_path)
    assert info.value.problems[0].line == 1 and info.value.problems[0].field == "spans"


def test_references_in_gbk_are_named(tmp_path: Path):
    path = tmp_path / "test.jsonl"
    row = json.dumps({"id": "a", "text": "你好", "label": 1}, ensure_ascii=False)
    path.write_bytes(row.encode("gbk") + b"\n")
    with pytest.raises(InputError) as info:
        load_references(path)
    assert "GBK" in info.value.problems[0].message


# --- predictions -----------------------------------------------------------------------------------


def test_good_predictions_validate():
    preds, report = parse_predictions(jsonl(*reversed(GOOD)), INPUTS, spans="required")
    assert report.valid and report.rows == 4
    assert preds.labels.tolist() == [1, 0, 0, 1]  # aligned to the inputs' order
    assert preds.spans[2] == ((5, 7),)


@pytest.mark.parametrize(
    ("row", "field", "words"),
    [
        ({"id": "r2", "label": "0", "spans": []}, "label", '0 written without quotes, not the string "0"'),
        ({"id": "r2", "label": False, "spans": []}, "label", "true/false"),
        ({"id": "r2", "label": 3, "spans": []}, "label", "0 or 1"),
        ({"id": "r2", "label": None, "spans": []}, "label", "null"),
        ({"id": "r2", "spans": []}, "label", "missing field 'label'"),
        ({"id": "r2", "label": 0, "spans": [[0, 7]]}, "spans[0]", "outside the text, which has 6 characters"),
        ({"id": "r2", "label": 0, "spans": [[3, 3]]}, "spans[0]", "end must be greater than start"),
        ({"id": "r2", "label": 0, "spans": [[1.5, 3]]}, "spans[0]", "whole numbers"),
        ({"id": "r2", "label": 0, "spans": [["1", "3"]]}, "spans[0]", "whole numbers"),
        ({"id": "r2", "label": 0, "spans": ["下雨"]}, "spans[0]", "does not occur"),
        ({"id": "r2", "label": 0, "spans": {"0": 3}}, "spans", "must be a list"),
        ({"id": "r2", "label": 0, "spans": "天气"}, "spans", "must be a list"),
        ({"id": "r2", "label": 0}, "spans", "missing field 'spans'"),
        ({"id": 2, "label": 0, "spans": []}, "id", "must be a string"),
        ({"label": 0, "spans": []}, "id", "missing field 'id'"),
        ({"id": "r1", "label": 0, "spans": []}, "id", "already appeared on line 1"),
        ({"id": "zz", "label": 0, "spans": []}, "id", "not in the test set"),
    ],
)
def test_bad_prediction_rows_are_line_numbered(row, field, words):
    data = jsonl(GOOD[0], "", row, GOOD[2], GOOD[3])
    report = CNTP.check_predictions(data, INPUTS)
    assert not report.valid
    problems = [p for p in report.errors if p.field == field and p.line == 3]
    assert problems, report.as_dict()
    assert words in problems[0].message


def test_missing_ids_are_a_file_level_problem():
    report = CNTP.check_predictions(jsonl(GOOD[0], GOOD[1]), INPUTS)
    missing = [p for p in report.errors if p.line is None]
    assert len(missing) == 1 and '"r3"' in missing[0].message and '"r4"' in missing[0].message


def test_broken_json_line_is_numbered():
    report = COLD.check_predictions(jsonl(GOOD[0], "{not json", GOOD[1]), INPUTS)
    assert any(p.line == 2 and "not valid JSON" in p.message for p in report.errors)


def test_classification_track_spans_optional_but_checked():
    plain = [{"id": r["id"], "label": r["label"]} for r in GOOD]
    assert COLD.check_predictions(jsonl(*plain), INPUTS).valid
    bad = [dict(plain[0], spans=[[0, 99]]), *plain[1:]]
    report = COLD.check_predictions(jsonl(*bad), INPUTS)
    assert [(p.line, p.field) for p in report.errors] == [(1, "spans[0]")]
    mixed = [dict(plain[0], spans=[]), *plain[1:]]
    report = COLD.check_predictions(jsonl(*mixed), INPUTS)
    assert report.valid and report.advice


def test_error_messages_never_quote_gold():
    # A wrong label must not reveal the right one; span messages only cite the public text length.
    report = CNTP.check_predictions(jsonl({"id": "r1", "label": 2, "spans": [[0, 99]]}, *GOOD[1:]), INPUTS)
    text = json.dumps(report.as_dict(), ensure_ascii=False)
    assert "蠢到家了" not in text and "[6, 10]" not in text


# --- scoring ---------------------------------------------------------------------------------------


def _floats_are_plain(value) -> bool:
    if isinstance(value, dict):
        return all(_floats_are_plain(v) for v in value.values())
    if isinstance(value, list):
        return all(_floats_are_plain(v) for v in value)
    return not isinstance(value, np.generic)


def test_score_cntp_result_schema(bundle: Path):
    refs = CNTP.load_references(bundle)
    result = CNTP.score(refs, jsonl(*GOOD), bootstrap=200, seed=3)
    assert result["track"] == "cntp" and result["rows"] == 4 and result["scorer_version"]
    m = result["metrics"]
    assert m["accuracy"] == 0.5 and m["precision"] == 0.5 and m["recall"] == 0.5 and m["f1"] == 0.5
    s = m["spans"]
    # r1: gold 4 chars, predicted 4 of them; r3: gold 7, predicted 2 -> recall 1/2; precision 2/2
    assert s["overlap_recall"] == 0.5 and s["overlap_precision"] == 1.0
    assert s["recipe_overlap"] == 1 / 4  # one hit over all four items
    assert s["char_precision"] == 1.0 and s["char_recall"] == 6 / 11
    assert set(result["ci"]) >= {"accuracy", "f1", "macro_f1", "spans.overlap_f1", "spans.char_f1"}
    assert all(len(v) == 2 and v[0] <= v[1] for v in result["ci"].values())
    assert result["bootstrap"] == {"resamples": 200, "seed": 3, "level": 0.95}
    groups = result["breakdowns"]["target_groups"]
    assert groups["Region"]["rows"] == 2 and groups["Sexism"]["rows"] == 1 and groups["non-hate"]["rows"] == 1
    assert result["breakdowns"]["fine_label"]["anti_bias"] == {  # one row: published as n/a with the reason
        "rows": 1,
        "accuracy": None,
        "precision": None,
        "recall": None,
        "f1": None,
        "macro_f1": None,
        "withheld": SMALL_CELL,
        "undefined": {},  # a withheld metric gets no reason either
    }
    assert result["undefined"] == {}  # every ratio here has a non-zero denominator
    raw = CNTP.score(refs, jsonl(*GOOD), bootstrap=0, disclose=False)["breakdowns"]["fine_label"]["anti_bias"]
    assert set(raw.pop("undefined")) == {"recall"}  # its one row is gold 0: recall is 0/0, the rest real 0s
    assert raw == {
        "rows": 1,
        "accuracy": 0.0,
        "precision": 0.0,
        "recall": 0.0,
        "f1": 0.0,
        "macro_f1": 0.0,
        "withheld": None,
    }
    assert _floats_are_plain(result)
    assert json.loads(json.dumps(result)) == result
    assert CNTP.score(refs, jsonl(*GOOD), bootstrap=200, seed=3) == result  # deterministic


def test_score_without_bootstrap_and_classification_only(bundle: Path):
    refs = COLD.load_references(bundle)
    plain = [{"id": r["id"], "label": r["label"]} for r in GOOD]
    result = COLD.score(refs, jsonl(*plain), bootstrap=0)
    assert result["ci"] == {} and "spans" not in result["metrics"]
    # a classification track scores spans too when references and every prediction carry them
    assert "spans" in COLD.score(refs, jsonl(*GOOD), bootstrap=0)["metrics"]


def test_score_rejects_invalid_predictions(bundle: Path):
    refs = CNTP.load_references(bundle)
    with pytest.raises(InputError) as info:
        CNTP.score(refs, jsonl(GOOD[0]))
    assert any("no prediction" in p.message for p in info.value.problems)


def test_paired_compare(tmp_path: Path):
    rng = np.random.default_rng(0)
    gold = rng.integers(0, 2, 400)
    rows = [{"id": f"x{i}", "text": "文本", "label": int(g)} for i, g in enumerate(gold)]
    (tmp_path / "test.jsonl").write_bytes(jsonl(*rows))
    refs = TOXICN.load_references(tmp_path)
    good = jsonl(*({"id": r["id"], "label": r["label"]} for r in rows))
    noisy = jsonl(*({"id": r["id"], "label": int(rng.integers(0, 2))} for r in rows))
    a, b = TOXICN.row_outcomes(refs, good), TOXICN.row_outcomes(refs, noisy)
    assert set(a) == {"id", "gold", "pred"}
    out = TOXICN.paired_compare(a, b, bootstrap=300, seed=0)
    assert list(out) == list(TOXICN.headline_metrics)
    assert out["f1"]["a"] == 1.0 and out["f1"]["significant"]
    assert math.isclose(out["f1"]["diff"], out["f1"]["a"] - out["f1"]["b"])
    same = TOXICN.paired_compare(a, a, bootstrap=100, seed=0)
    assert same["accuracy"] == {
        "a": 1.0,
        "b": 1.0,
        "diff": 0.0,
        "ci": [0.0, 0.0],
        "significant": False,
        "se": 0.0,
    }
    assert TOXICN.paired_compare(a, b, bootstrap=300, seed=0) == out


def test_registry_exposes_three_tracks():
    assert set(TRACKS) == {"cold", "toxicn", "cntp"}
    assert CNTP.primary_metric == "spans.overlap_f1" and COLD.primary_metric == "f1"
    for track in TRACKS.values():
        assert track.headline_metrics[0] == track.primary_metric
    try:
        from scoring.tracks import get_track
    except ImportError:
        pytest.skip("scoring.tracks not there yet")
    assert get_track("cntp") is CNTP


# --- importers -------------------------------------------------------------------------------------

COLD_TEST = (
    ",split,topic,label,fine-grained-label,TEXT\n"
    "1949,test,race,1,2,外国人都一个样\n"
    '1750,test,gender,0,3,"反对歧视女性,人人平等\n第二行"\n'
    "12,test,region,0,0,今天去了上海\n"
)
COLD_DEV = ",split,topic,label,TEXT\n8168,dev,race,1,某某不好看\n2079,dev,region,0,我也是新疆人\n"


def test_import_cold(tmp_path: Path):
    src = tmp_path / "COLDataset"
    src.mkdir()
    (src / "test.csv").write_text(COLD_TEST, encoding="utf-8")
    (src / "dev.csv").write_text(COLD_DEV, encoding="utf-8-sig")  # a BOM is fine
    out = tmp_path / "bundle"
    summary = import_dataset("cold", src, out)
    assert summary["splits"] == {"dev": 2, "test": 3} and summary["toxic"] == {"dev": 1, "test": 1}
    rows = [json.loads(line) for line in (out / "test.jsonl").read_text(encoding="utf-8").splitlines()]
    assert rows[1] == {
        "id": "cold-test-00002",
        "text": "反对歧视女性,人人平等\n第二行",
        "label": 0,
        "topic": "gender",
        "fine_label": "anti_bias",
    }
    assert [r["fine_label"] for r in rows] == ["attack_group", "anti_bias", "other_non_offensive"]
    dev = (out / "dev.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(dev[0]) == {"id": "cold-dev-00001", "text": "某某不好看", "label": 1, "topic": "race"}
    # the imported bundle is a valid reference bundle, and scores
    refs = COLD.load_references(out)
    preds = jsonl(*({"id": i, "label": 1} for i in refs.ids))
    result = COLD.score(refs, preds, bootstrap=50, disclose=False)
    assert set(result["breakdowns"]) == {"topic", "fine_label"}
    assert result["breakdowns"]["fine_label"]["anti_bias"]["accuracy"] == 0.0  # the lexical-cue trap


@pytest.mark.parametrize(
    ("row", "line", "field", "words"),
    [
        ("5,test,race,2,2,文本", 6, "label", "label must be 0 or 1"),
        ("5,final,race,1,2,文本", 6, "split", "split must be train, dev or test"),
        ("5,test,race,1,7,文本", 6, "fine-grained-label", "0, 1, 2 or 3"),
        ("5,test,race,1,文本", 6, None, "row has 5 fields but the header has 6"),
        ("5,test,race,1,1,", 6, "TEXT", "TEXT is empty"),
    ],
)
def test_import_cold_bad_rows(tmp_path: Path, row, line, field, words):
    src = tmp_path / "test.csv"
    src.write_text(COLD_TEST + row + "\n", encoding="utf-8")  # lines 1-5: header, 3 rows (one spans 2 lines)
    with pytest.raises(InputError) as info:
        import_dataset("cold", src, tmp_path / "out")
    problem = info.value.problems[0]
    assert (problem.line, problem.field) == (line, field)
    assert words in problem.message and "test.csv" in problem.message
    assert not (tmp_path / "out").exists()  # nothing written


def test_import_cold_missing_column(tmp_path: Path):
    src = tmp_path / "test.csv"
    src.write_text(",split,topic,TEXT\n1,test,race,文本\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        import_dataset("cold", src, tmp_path / "out")
    assert "missing column(s) label" in info.value.problems[0].message


TOXICN_CSV = (
    "platform,topic,content,toxic,toxic_one_hot,toxic_type,toxic_type_one_hot,expression,expression_one_hot,"
    "target,length,num_attacked\n"
    'zhihu,region,就凭你,0,"[1, 0]",0,"[1, 0, 0]",0,"[1, 0, 0, 0]","[0, 0, 0, 0, 0, 1]",3,0\n'
    'tieba,race,某种说法,1,"[0, 1]",2,"[0, 0, 1]",2,"[0, 0, 1, 0]","[0, 0, 1, 1, 0, 0]",4,2\n'
)
TOXICN_JSON = [
    {
        "platform": "zhihu",
        "topic": "region",
        "content": "北京人计较",
        "toxic": 0,
        "toxic_one_hot": [1, 0],
        "toxic_type": 0,
        "expression": 0,
        "target": [0, 0, 0, 0, 0],
    },
    {
        "platform": "tieba",
        "topic": "gender",
        "content": "某些分子",
        "toxic": 1,
        "toxic_type": 2,
        "expression": 1,
        "target": [0, 0, 1, 0, 0],
    },
    {
        "platform": "tieba",
        "topic": "lgbt",
        "content": "一句话",
        "toxic": 1,
        "toxic_type": 1,
        "expression": 3,
        "target": ["LGBT", "others"],
    },
]


def test_import_toxicn_csv_and_json(tmp_path: Path):
    src = tmp_path / "toxicn"
    src.mkdir()
    (src / "ToxiCN_1.0.csv").write_text(TOXICN_CSV, encoding="utf-8")
    (src / "test.json").write_text(json.dumps(TOXICN_JSON, ensure_ascii=False), encoding="utf-8")
    (src / "lexicon").mkdir()  # sub-folders are not read
    (src / "lexicon" / "LGBT.json").write_text('{"a": [1]}', encoding="utf-8")
    summary = import_dataset("toxicn", src, tmp_path / "out")
    assert summary["splits"] == {"test": 3, "all": 2}  # the CSV has no split: it goes to all.jsonl
    test = [json.loads(x) for x in (tmp_path / "out" / "test.jsonl").read_text(encoding="utf-8").splitlines()]
    assert test[0] == {
        "id": "toxicn-test-00001",
        "text": "北京人计较",
        "label": 0,
        "toxic_type": "non_toxic",
        "expression": "non_hate",
        "target_groups": ["non-hate"],
        "topic": "region",
    }
    assert test[1]["target_groups"] == ["Sexism"] and test[1]["expression"] == "explicit"
    assert test[2]["target_groups"] == ["LGBTQ", "others"] and test[2]["expression"] == "reporting"
    every = [json.loads(x) for x in (tmp_path / "out" / "all.jsonl").read_text(encoding="utf-8").splitlines()]
    assert every[1]["target_groups"] == ["Sexism", "Racism"] and every[1]["toxic_type"] == "hate"
    refs = TOXICN.load_references(tmp_path / "out")
    result = TOXICN.score(refs, jsonl(*({"id": i, "label": 1} for i in refs.ids)), bootstrap=20)
    assert set(result["breakdowns"]) == {"toxic_type", "expression", "target_groups", "topic"}


def test_import_toxicn_csv_hate_row_with_all_zero_target_is_not_called_non_hate(tmp_path: Path):
    """ToxiCN_1.0.csv lines 957, 8967, 9944: toxic hate rows with an all-zero six-place target, whose groups
    the JSON release gives (Racism, ...). The CSV cannot tell them: no target_groups, and a warning naming
    the line."""
    src = tmp_path / "ToxiCN_1.0.csv"
    untold = 'weibo,race,那帮人,1,"[0, 1]",2,"[0, 0, 1]",2,"[0, 0, 1, 0]","[0, 0, 0, 0, 0, 0]",3,1\n'
    src.write_text(TOXICN_CSV + untold, encoding="utf-8")
    summary = import_dataset("toxicn", src, tmp_path / "out")
    rows = [json.loads(x) for x in (tmp_path / "out" / "all.jsonl").read_text(encoding="utf-8").splitlines()]
    assert "target_groups" not in rows[2] and rows[2]["toxic_type"] == "hate"
    assert [w for w in summary["warnings"] if "ToxiCN_1.0.csv line 4" in w and "all-zero target" in w]
    # Positive controls: an explicit non-hate place, and an all-zero target on a non-hate row, stay non-hate.
    assert rows[0]["target_groups"] == ["non-hate"]
    benign = 'weibo,race,那帮人,0,"[1, 0]",0,"[1, 0, 0]",0,"[1, 0, 0, 0]","[0, 0, 0, 0, 0, 0]",3,0\n'
    src.write_text(TOXICN_CSV + benign, encoding="utf-8")
    summary = import_dataset("toxicn", src, tmp_path / "out2")
    rows = [json.loads(x) for x in (tmp_path / "out2" / "all.jsonl").read_text(encoding="utf-8").splitlines()]
    assert rows[2]["target_groups"] == ["non-hate"]
    assert not [w for w in summary["warnings"] if "all-zero target" in w]


def test_import_toxicn_errors_name_line_and_item(tmp_path: Path):
    items = [*TOXICN_JSON, dict(TOXICN_JSON[0], target="[0, 2, 0]"), dict(TOXICN_JSON[0], toxic="yes")]
    src = tmp_path / "train.json"
    src.write_text(json.dumps(items, ensure_ascii=False, indent=1), encoding="utf-8")
    with pytest.raises(InputError) as info:
        import_dataset("toxicn", src, tmp_path / "out")
    problems = info.value.problems
    assert [p.field for p in problems] == ["target", "toxic"]
    assert "train.json item 4" in problems[0].message and "train.json item 5" in problems[1].message
    text = src.read_text(encoding="utf-8").splitlines()
    assert text[problems[0].line - 1].strip() == "{"  # the line the bad item starts on


def test_import_toxicn_jsonl_with_split_field(tmp_path: Path):
    src = tmp_path / "data.jsonl"
    src.write_text(
        jsonl(dict(TOXICN_JSON[0], split="dev"), dict(TOXICN_JSON[1], split="test")).decode(),
        encoding="utf-8",
    )
    assert import_dataset("toxicn", src, tmp_path / "out")["splits"] == {"dev": 1, "test": 1}


# --- CLI (python -m scoring) -----------------------------------------------------------------------

CLI_FILES = ("__main__.py", "cli.py")
needs_cli = pytest.mark.skipif(
    not all((ROOT / "scoring" / name).exists() for name in CLI_FILES), reason="CLI not written yet"
)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scoring", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


@needs_cli
def test_cli_validate_and_score_cntp(bundle: Path, tmp_path: Path):
    preds = tmp_path / "preds.jsonl"
    preds.write_bytes(jsonl(*GOOD))
    refs = str(bundle / "test.jsonl")
    ok = run_cli("validate", "--track", "cntp", "--references", refs, "--predictions", str(preds))
    assert ok.returncode == 0, ok.stderr
    out = tmp_path / "result.json"
    scored = run_cli(
        "score", "--track", "cntp", "--references", refs, "--predictions", str(preds), "--output", str(out)
    )
    assert scored.returncode == 0, scored.stderr
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["track"] == "cntp" and result["metrics"]["spans"]["recipe_overlap"] == 0.25
    preds.write_bytes(jsonl(GOOD[0], {"id": "r2", "label": "0", "spans": []}, *GOOD[2:]))
    bad = run_cli("validate", "--track", "cntp", "--references", refs, "--predictions", str(preds))
    assert bad.returncode != 0
    assert "without quotes" in bad.stdout + bad.stderr


@needs_cli
def test_cli_import_cold(tmp_path: Path):
    src = tmp_path / "test.csv"
    src.write_text(COLD_TEST, encoding="utf-8")
    done = run_cli("import", "--dataset", "cold", str(src), str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert len((tmp_path / "out" / "test.jsonl").read_text(encoding="utf-8").splitlines()) == 3


def test_check_reference_bundle(tmp_path: Path):
    (tmp_path / "test.jsonl").write_bytes(jsonl({"id": "a", "text": "x", "label": 1}))
    train = jsonl({"id": "a", "text": "y", "label": 0}, {"id": "b", "text": "z"})
    (tmp_path / "train.jsonl").write_bytes(train)
    problems = COLD.check_reference_bundle(tmp_path)
    assert [(p.line, p.field) for p in problems] == [(2, "label")]
    assert problems[0].message.startswith("train.jsonl: ")
    (tmp_path / "train.jsonl").write_bytes(jsonl({"id": "a", "text": "y", "label": 0}))
    problems = COLD.check_reference_bundle(tmp_path)
    assert len(problems) == 1 and "also used in train.jsonl" in problems[0].message
    assert CNTP.check_reference_bundle(tmp_path)[0].field == "spans"  # cntp test rows need spans


@needs_cli
def test_cli_import_error_exit_code(tmp_path: Path):
    src = tmp_path / "test.csv"
    src.write_text(COLD_TEST + "9,test,race,7,2,文本\n", encoding="utf-8")
    done = run_cli("import", "--dataset", "cold", str(src), str(tmp_path / "out"))
    assert done.returncode == 1
    assert "line 6, field 'label'" in done.stderr


def test_breakdown_codes_are_named():
    data = jsonl(
        {"id": "a", "text": "x", "label": 0, "fine_label": 3, "topic": 5},
        {"id": "b", "text": "y", "label": 1, "fine_label": "attack_group", "expression": 2, "toxic_type": 2},
    )
    refs = parse_references(data)
    assert refs.breakdowns["fine_label"] == [("anti_bias",), ("attack_group",)]
    assert refs.breakdowns["expression"] == [(), ("implicit",)]
    assert refs.breakdowns["toxic_type"] == [(), ("hate",)]
    assert refs.breakdowns["topic"] == [("5",), ()]  # no code table: the number itself
    with pytest.raises(InputError) as info:
        parse_references(jsonl({"id": "a", "text": "x", "label": 0, "fine_label": 7}))
    assert info.value.problems[0].field == "fine_label" and "3 (anti_bias)" in info.value.problems[0].message
