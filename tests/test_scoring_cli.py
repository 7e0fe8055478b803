"""`python -m scoring` end to end (subprocess), the golden VARM result, and the api helpers.

Regenerate the golden result only when a metric change is intended (and bump SCORER_VERSION):
    .venv/bin/python -m scoring score --track varm --references tests/golden/varm \
        --predictions tests/golden/varm/predictions.jsonl --bootstrap 200 --seed 7 \
        --output tests/golden/varm/expected_result.json
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from scoring.api import dumps_result, references_sha256, score_file, validate_file
from scoring.tracks import TRACK_NAMES, get_track
from scoring.version import SCORER_VERSION
from tests.varm_factory import jsonl

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "varm"
PREDICTIONS = GOLDEN / "predictions.jsonl"


def run(*args: str) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [sys.executable, "-m", "scoring", *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in result.stderr, result.stderr
    return result


def golden_predictions() -> list[dict]:
    return [json.loads(line) for line in PREDICTIONS.read_text(encoding="utf-8").splitlines()]


# --- golden result ----------------------------------------------------------------------------------------


def test_golden_result_bytes_via_cli(tmp_path: Path) -> None:
    out = tmp_path / "deep" / "result.json"
    result = run(
        "score",
        "--track",
        "varm",
        "--references",
        GOLDEN,
        "--predictions",
        PREDICTIONS,
        "--bootstrap",
        "200",
        "--seed",
        "7",
        "--output",
        out,
    )
    assert result.returncode == 0, result.stderr
    assert out.read_bytes() == (GOLDEN / "expected_result.json").read_bytes()
    assert [p.name for p in out.parent.iterdir()] == ["result.json"]  # no temporary file left behind


def test_golden_result_bytes_via_api_and_stdout() -> None:
    expected = (GOLDEN / "expected_result.json").read_bytes()
    result = score_file("varm", GOLDEN, PREDICTIONS.read_bytes(), bootstrap=200, seed=7)
    assert dumps_result(result) == expected
    args = [
        "score",
        "--track",
        "varm",
        "--references",
        str(GOLDEN),
        "--predictions",
        str(PREDICTIONS),
        "--bootstrap",
        "200",
        "--seed",
        "7",
    ]
    stdout = subprocess.run(
        [sys.executable, "-m", "scoring", *args], cwd=ROOT, capture_output=True, timeout=120
    ).stdout
    assert stdout == expected


def test_golden_result_hand_checked_values() -> None:
    """The committed golden numbers, worked out by hand (6 rows; g3 and g6 invalid; g1 JREM; g4's gold
    target is blank, so its [T:无明确对象] is target-wrong since 2.0.0: spec §1)."""
    result = json.loads((GOLDEN / "expected_result.json").read_text(encoding="utf-8"))
    m = result["metrics"]
    assert result["rows"] == 6 and result["track"] == "varm" and result["scorer_version"] == SCORER_VERSION
    assert m["jrem"] == 1 / 6 and m["parse_success"] == 4 / 6 and m["anchor_schema_valid"] == 5 / 6
    assert m["field_accuracy"]["target"] == 2 / 6 and m["field_accuracy"]["target_explicitness"] == 3 / 6
    assert m["her_c"] == (4 - 1) / 4 and m["her_l"] == (4 - 1) / 4
    assert m["macro_f1"]["label"] == (1.0 + 0.5) / 2  # 无害: TP 1, P 1, G 3
    assert m["t_f1"] == pytest.approx((1 + 2 / 3) / 6)
    assert result["format_issues"]["anchor_sequence_or_value_invalid"] == 1
    assert result["format_issues"]["stance_label_inconsistent"] == 1
    # Both cue subsets are under 30 rows: published with sizes and format-issue counts, every metric n/a.
    abuse = result["subsets"]["abuse"]
    assert (abuse["rows"], abuse["rows_harmful"], abuse["rows_non_harmful"]) == (3, 2, 1)
    assert abuse["jrem"] is None and abuse["her_c"] is None and abuse["jrem_gap"] is None
    assert abuse["field_accuracy"]["label"] is None
    assert abuse["withheld"].startswith("n/a: fewer than 30 rows")
    assert abuse["format_issues"]["stance_label_inconsistent"] == 1
    assert sum(abuse["format_issues"].values()) == 1
    identity = result["subsets"]["identity"]
    assert identity["jrem_harmful"] is None and identity["jrem_non_harmful"] is None
    assert identity["jrem_gap"] is None
    # The withheld values themselves, worked out by hand, from the unpublished form (--all-cells).
    raw = score_file("varm", GOLDEN, PREDICTIONS.read_bytes(), bootstrap=0, disclose=False)["subsets"]
    assert raw["abuse"]["jrem"] == 0.0 and raw["abuse"]["her_c"] == 1.0 and raw["abuse"]["jrem_gap"] == 0.0
    assert (raw["identity"]["jrem_harmful"], raw["identity"]["jrem_non_harmful"]) == (1.0, 0.0)
    assert set(result["ci"]) >= {"jrem", "macro_f1.label", "macro_f1.category", "t_f1", "parse_success"}
    assert all(low <= high for low, high in result["ci"].values())
    assert result["bootstrap"] == {"resamples": 200, "seed": 7, "level": 0.95}
    assert result["provenance"]["references_sha256"] == references_sha256(GOLDEN)
    assert set(result["provenance"]) == {"scorer_version", "references_sha256", "predictions_sha256"}


def test_same_inputs_and_seed_give_identical_bytes_other_seed_differs() -> None:
    data = PREDICTIONS.read_bytes()
    first = dumps_result(score_file("varm", GOLDEN, data, bootstrap=300, seed=1))
    assert first == dumps_result(score_file("varm", GOLDEN, data, bootstrap=300, seed=1))
    assert first != dumps_result(score_file("varm", GOLDEN, data, bootstrap=300, seed=2))


def test_references_hash_covers_test_and_subsets(tmp_path: Path) -> None:
    copy = tmp_path / "bundle"
    (copy / "subsets").mkdir(parents=True)
    for name in ("test.jsonl", "subsets/identity.jsonl", "subsets/abuse.jsonl"):
        (copy / name).write_bytes((GOLDEN / name).read_bytes())
    assert references_sha256(copy) == references_sha256(GOLDEN)
    assert references_sha256(copy / "test.jsonl") != references_sha256(copy)
    assert references_sha256(copy / "test.jsonl", copy / "subsets") == references_sha256(copy)
    (copy / "subsets" / "abuse.jsonl").rename(copy / "subsets" / "zz.jsonl")
    assert references_sha256(copy) != references_sha256(GOLDEN)


def test_track_registry() -> None:
    assert TRACK_NAMES == ("varm", "cold", "toxicn", "cntp")
    varm = get_track("varm")
    assert (varm.name, varm.title, varm.primary_metric) == ("varm", "VARM-Bench", "jrem")
    assert varm.headline_metrics[0] == "jrem"
    with pytest.raises(ValueError, match="unknown track"):
        get_track("nope")


def test_result_never_contains_gold_values() -> None:
    text = (GOLDEN / "expected_result.json").read_text(encoding="utf-8")
    for row in map(json.loads, (GOLDEN / "test.jsonl").read_text(encoding="utf-8").splitlines()):
        assert row["text"] not in text and f'"{row["target"]}"' not in text


# --- validate -----------------------------------------------------------------------------------------------


def test_validate_ok_reports_invalid_outputs_and_advice() -> None:
    result = run("validate", "--track", "varm", "--references", GOLDEN, "--predictions", PREDICTIONS)
    assert result.returncode == 0, result.stderr
    assert "valid: 6 predictions" in result.stdout
    assert "2 outputs are not schema-valid" in result.stdout
    assert "line 3 (id g3): anchor_sequence_or_value_invalid" in result.stdout
    assert "line 6 (id g6): stance_label_inconsistent" in result.stdout
    assert "advice: 1 output uses full-width brackets around anchors" in result.stdout


def test_validate_against_public_inputs(tmp_path: Path) -> None:
    track = get_track("varm")
    inputs = track.public_inputs(track.load_references(GOLDEN))
    path = tmp_path / "inputs.jsonl"
    path.write_bytes(jsonl(inputs))
    result = run("validate", "--track", "varm", "--inputs", path, "--predictions", PREDICTIONS)
    assert result.returncode == 0, result.stderr
    report = validate_file("varm", PREDICTIONS.read_bytes(), inputs=inputs)
    assert report.valid and report.rows == 6
    assert [entry["id"] for entry in report.format_report] == ["g3", "g6"]


def test_validate_lists_duplicate_unknown_and_missing_ids(tmp_path: Path) -> None:
    rows = golden_predictions()
    rows[1]["id"] = "g1"  # duplicate -> g2 missing
    rows[4]["id"] = "zzz"  # unknown -> g5 missing
    path = tmp_path / "p.jsonl"
    path.write_bytes(jsonl(rows))
    result = run("validate", "--track", "varm", "--references", GOLDEN, "--predictions", path)
    assert result.returncode == 1
    err = result.stderr
    assert "invalid: 3 problem(s)" in err
    assert "line 2, field 'id': id \"g1\" already appeared on line 1" in err
    assert "line 5, field 'id': id \"zzz\" is not in the test set" in err
    assert '2 test rows have no prediction: id "g2", id "g5"' in err


def test_validate_names_bad_lines(tmp_path: Path) -> None:
    rows = golden_predictions()
    rows[2]["output"] = {"T": "x"}
    del rows[3]["text"]
    rows[5]["id"] = 6
    path = tmp_path / "p.jsonl"
    path.write_bytes(jsonl(rows).replace(b"\n", b"\n\nnot json\n", 1))
    err = run("validate", "--track", "varm", "--references", GOLDEN, "--predictions", path).stderr
    assert "line 3: not valid JSON (Expecting value at column 1); each line must be one JSON object" in err
    assert (
        "line 5, field 'output': 'output' must be a string (the model's raw response), found an object" in err
    )
    assert "line 6: the line has neither 'id' nor 'text'" in err
    assert "line 8, field 'id': 'id' must be a string, found a number" in err


def test_validate_gbk_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(PREDICTIONS.read_text(encoding="utf-8").encode("gbk"))
    result = run("validate", "--track", "varm", "--references", GOLDEN, "--predictions", path)
    assert result.returncode == 1
    assert "the predictions file is encoded as GBK/GB18030; save it as UTF-8" in result.stderr


def test_validate_bom_is_fine(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + PREDICTIONS.read_bytes())
    assert run("validate", "--track", "varm", "--references", GOLDEN, "--predictions", path).returncode == 0


# --- usage errors, bad references, other commands -------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["validate", "--track", "nope", "--references", "x", "--predictions", "y"],
        ["validate", "--track", "varm", "--predictions", "y"],
        ["validate", "--track", "varm", "--references", "x", "--inputs", "y", "--predictions", "z"],
        ["score", "--track", "varm", "--references", "tests/golden/varm", "--predictions", "missing.jsonl"],
        [
            "score",
            "--track",
            "varm",
            "--references",
            "missing",
            "--predictions",
            "tests/golden/varm/test.jsonl",
        ],
        [
            "score",
            "--track",
            "varm",
            "--references",
            "tests/golden/varm",
            "--predictions",
            "tests/golden/varm/predictions.jsonl",
            "--bootstrap",
            "-1",
        ],
        ["check-references", "--track", "varm", "missing-dir"],
    ],
)
def test_usage_errors_exit_2(args: list[str]) -> None:
    result = run(*args)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stderr.strip()


def test_score_with_invalid_predictions_exits_1(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(jsonl(golden_predictions()[:-1]))
    result = run("score", "--track", "varm", "--references", GOLDEN, "--predictions", path)
    assert result.returncode == 1 and result.stdout == ""
    assert '1 test rows have no prediction: id "g6"' in result.stderr


def test_bad_references_exit_1_without_gold_values(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in (GOLDEN / "test.jsonl").read_text(encoding="utf-8").splitlines()]
    rows[2]["label"] = "秘密标签"
    (tmp_path / "test.jsonl").write_bytes(jsonl(rows))
    result = run("score", "--track", "varm", "--references", tmp_path, "--predictions", PREDICTIONS)
    assert result.returncode == 1
    assert "test.jsonl: line 3, field 'label': value is not one of 有害, 无害" in result.stderr
    assert "秘密标签" not in result.stderr and rows[2]["text"] not in result.stderr


def test_check_references(tmp_path: Path) -> None:
    ok = run("check-references", "--track", "varm", GOLDEN)
    assert ok.returncode == 0 and ok.stdout.startswith("ok:")
    rows = [json.loads(line) for line in (GOLDEN / "test.jsonl").read_text(encoding="utf-8").splitlines()]
    rows[0]["cot"] = rows[0]["cot"].replace("[TT:明示]", "[TT:隐含]")
    (tmp_path / "test.jsonl").write_bytes(jsonl(rows))
    bad = run("check-references", "--track", "varm", tmp_path)
    assert bad.returncode == 1
    assert "test.jsonl: line 1, field 'cot': the cot's [TT] value differs" in bad.stderr


def test_import_requires_a_known_dataset_and_existing_path(tmp_path: Path) -> None:
    assert run("import", "--dataset", "nope", "x", tmp_path).returncode == 2
    assert run("import", "--dataset", "cold", tmp_path / "missing", tmp_path / "out").returncode == 2


DEMO = ROOT / "data" / "demo" / "varm"


@pytest.mark.skipif(not (DEMO / "test.jsonl").exists(), reason="demo data not present")
def test_demo_bundle_checks_and_baselines_score() -> None:
    assert run("check-references", "--track", "varm", DEMO).returncode == 0
    inputs = DEMO / "public" / "test_inputs.jsonl"
    for predictions in sorted((DEMO / "baselines").glob("*.test.jsonl")):
        if inputs.exists():
            checked = run("validate", "--track", "varm", "--inputs", inputs, "--predictions", predictions)
            assert checked.returncode == 0, checked.stderr
        result = score_file("varm", DEMO, predictions.read_bytes(), bootstrap=50, seed=0)
        assert set(result["subsets"]) == {p.stem for p in (DEMO / "subsets").glob("*.jsonl")}
        assert 0.0 <= result["metrics"]["jrem"] <= 1.0
