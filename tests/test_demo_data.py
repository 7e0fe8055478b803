"""The committed SYNTHETIC DEMO benchmark (data/demo): validity, sizes, coverage, no leakage, determinism."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from demo.checks import audit_key, cross_split_near_duplicates, loose_key, record_problems
from demo.generate import SUBSETS, generate
from scoring.protocol import FIELDS, VALUE_SETS, parse_output
from scoring.references import check_reference_bundle
from scoring.toxitrace.references import load_references as load_toxitrace

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "data" / "demo"
SPLITS = ("train", "dev", "test")
TOXITRACE = ("cold", "toxicn", "cntp")
MIN_VARM = {"train": 1000, "dev": 200, "test": 2000}
# Words well beyond the "mild insult" register the demo promises; none may occur anywhere.
STRONG_WORDS = (
    "傻逼",
    "他妈",
    "你妈",
    "去死",
    "贱人",
    "婊",
    "狗日",
    "草泥马",
    "尼玛",
    "操你",
    "滚犊子",
    "畜生",
)


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def varm() -> dict[str, list[dict]]:
    return {split: read(DEMO / "varm" / f"{split}.jsonl") for split in SPLITS}


@pytest.fixture(scope="module")
def subsets() -> dict[str, list[dict]]:
    return {name: read(DEMO / "varm" / "subsets" / f"{name}.jsonl") for name in SUBSETS}


# ---- reference checker -------------------------------------------------------------------------------
@pytest.mark.parametrize("track", ["varm", *TOXITRACE])
def test_bundle_passes_the_reference_checker_cli(track: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "scoring", "check-references", "--track", track, str(DEMO / track)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_varm_bundle_has_no_problems_in_any_split() -> None:
    assert [str(p) for p in check_reference_bundle(DEMO / "varm")] == []


@pytest.mark.parametrize("track", TOXITRACE)
@pytest.mark.parametrize("split", SPLITS)
def test_toxitrace_split_loads(track: str, split: str) -> None:
    refs = load_toxitrace(DEMO / track / f"{split}.jsonl", require_spans=track == "cntp")
    assert len(refs) == len(read(DEMO / track / f"{split}.jsonl"))


# ---- VARM records ------------------------------------------------------------------------------------
def test_varm_records_are_valid_and_cots_parse_back(varm: dict[str, list[dict]]) -> None:
    for rows in varm.values():
        for row in rows:
            assert record_problems(row) == [], row["id"]
            parsed = parse_output(row["cot"])  # the scorer's strict parser, not only ours
            assert parsed.schema_valid, (row["id"], parsed.format_issues)
            assert parsed.record == {f: row[f] for f in FIELDS}, row["id"]
            assert row["cot"] == row["cot"].strip() and "\n" not in row["cot"]


def test_varm_sizes_and_harmful_ratio(varm: dict[str, list[dict]]) -> None:
    for split, rows in varm.items():
        assert len(rows) >= MIN_VARM[split]
        harmful = sum(r["label"] == "有害" for r in rows)
        assert harmful == round(0.55 * len(rows)), split


def test_varm_coverage(varm: dict[str, list[dict]]) -> None:
    for split, rows in varm.items():
        for field in ("target_type", "target_explicitness", "stance", "label", "category"):
            assert set(VALUE_SETS[field]) == {r[field] for r in rows}, (split, field)
        non_harmful = [r for r in rows if r["label"] == "无害"]
        # Hard cases: quoted/rebutted abuse, identity mentions, personal accounts, behaviour criticism.
        assert sum(r["stance"] == "引用或转述" for r in non_harmful) >= 0.1 * len(non_harmful)
        assert sum(r["stance"] == "反对攻击" for r in non_harmful) >= 0.1 * len(non_harmful)
        assert any(r["stance"] == "中性提及" and r["target_type"] == "群体对象" for r in non_harmful)
        assert any(r["text"].startswith(("作为一个", "身为", "本人", "我自己就是")) for r in non_harmful)
        assert any(r["stance"] == "中性提及" and r["target_type"] == "单一对象" for r in non_harmful)
        assert any(r["target"] == "无明确对象" for r in non_harmful)
        harmful = [r for r in rows if r["label"] == "有害"]
        assert any(r["target_explicitness"] == "隐含" for r in harmful)
        assert any(r["target"] == "无明确对象" for r in harmful)


def test_varm_ids_and_texts_unique_and_no_cross_split_near_duplicates(varm: dict[str, list[dict]]) -> None:
    everything = [r for rows in varm.values() for r in rows]
    assert len({r["id"] for r in everything}) == len(everything)
    assert len({audit_key(r["text"]) for r in everything}) == len(everything)  # the authors' audit key
    assert all(
        r["id"] == f"varm-demo-{split}-{k:04d}"
        for split, rows in varm.items()
        for k, r in enumerate(rows, start=1)
    )
    texts = {s: [r["text"] for r in rows] for s, rows in varm.items()}
    assert cross_split_near_duplicates(texts, audit_key) == []


def test_cue_subsets(varm: dict[str, list[dict]], subsets: dict[str, list[dict]]) -> None:
    assert sorted(p.stem for p in (DEMO / "varm" / "subsets").glob("*.jsonl")) == sorted(SUBSETS)
    test_by_id = {r["id"]: r for r in varm["test"]}
    for name, rows in subsets.items():
        assert len(rows) >= 40, name
        labels = Counter(r["label"] for r in rows)
        assert labels["有害"] >= 10 and labels["无害"] >= 10, (name, labels)
        assert len({r["id"] for r in rows}) == len(rows)
        for row in rows:
            assert row == test_by_id[row["id"]], (name, row["id"])  # exact copies of test rows


def test_public_dev_subsets_cover_every_cue_subset(varm: dict[str, list[dict]]) -> None:
    path = DEMO / "varm" / "public" / "dev_subsets.json"
    assert path.is_file()
    membership = json.loads(path.read_text(encoding="utf-8"))
    assert list(membership) == list(SUBSETS)
    dev_by_id = {r["id"]: r for r in varm["dev"]}
    for name, ids in membership.items():
        assert ids and len(set(ids)) == len(ids), name
        assert set(ids) <= set(dev_by_id), name  # dev ids only: nothing of the hidden test split
        labels = Counter(dev_by_id[i]["label"] for i in ids)
        assert labels["有害"] and labels["无害"], (name, labels)
    # A row carries at most one identity word / insult, so it is in at most one subset.
    every = [i for ids in membership.values() for i in ids]
    assert len(every) == len(set(every))


# ---- ToxiTrace-shaped tracks -------------------------------------------------------------------------
def _toxitrace_rows(track: str) -> dict[str, list[dict]]:
    return {split: read(DEMO / track / f"{split}.jsonl") for split in SPLITS}


@pytest.mark.parametrize("track", TOXITRACE)
def test_toxitrace_sizes_ratios_and_uniqueness(track: str) -> None:
    splits = _toxitrace_rows(track)
    assert {s: len(rows) for s, rows in splits.items()} == {"train": 300, "dev": 100, "test": 1000}
    for rows in splits.values():
        share = sum(r["label"] for r in rows) / len(rows)
        assert 0.4 <= share <= 0.6
        assert all(r["label"] in (0, 1) and type(r["label"]) is int for r in rows)
    everything = [r for rows in splits.values() for r in rows]
    assert len({r["id"] for r in everything}) == len({r["text"] for r in everything}) == len(everything)
    assert (
        cross_split_near_duplicates({s: [r["text"] for r in rows] for s, rows in splits.items()}, loose_key)
        == []
    )


def test_cold_breakdown_fields() -> None:
    for rows in _toxitrace_rows("cold").values():
        assert list(rows[0]) == ["id", "text", "label", "topic", "fine_label"]
        assert {r["topic"] for r in rows} == {"race", "gender", "region"}
        assert {r["fine_label"] for r in rows} == {0, 1, 2, 3}
        assert all(r["label"] == int(r["fine_label"] in (1, 2)) for r in rows)


def test_toxicn_breakdown_fields() -> None:
    groups = {"LGBTQ", "Region", "Sexism", "Racism", "others"}
    for rows in _toxitrace_rows("toxicn").values():
        assert {r["expression"] for r in rows} == {0, 1, 2, 3}
        assert {r["toxic_type"] for r in rows} == {0, 1, 2}
        for r in rows:
            assert r["label"] == int(r["toxic_type"] > 0)
            assert (r["expression"] > 0) == (r["toxic_type"] == 2)  # expression subdivides hate speech
            if r["toxic_type"] == 2:
                assert r["target_groups"] and set(r["target_groups"]) <= groups
            else:
                assert r["target_groups"] == ["non-hate"]
        assert groups <= {g for r in rows for g in r["target_groups"]}


def test_cntp_spans() -> None:
    for rows in _toxitrace_rows("cntp").values():
        assert any(len(r["spans"]) > 1 for r in rows)
        for r in rows:
            assert bool(r["spans"]) == (r["label"] == 1), r["id"]
            previous_end = 0
            for start, end in r["spans"]:
                assert previous_end <= start < end <= len(r["text"]), r["id"]
                previous_end = end


# ---- public parts, language, size --------------------------------------------------------------------
@pytest.mark.parametrize("track", ["varm", *TOXITRACE])
def test_public_test_inputs_have_no_labels(track: str) -> None:
    public = read(DEMO / track / "public" / "test_inputs.jsonl")
    test = read(DEMO / track / "test.jsonl")
    assert public == [{"id": r["id"], "text": r["text"]} for r in test]


def test_language_is_mild_and_data_is_small() -> None:
    files = sorted(DEMO.rglob("*.jsonl"))
    text = "".join(p.read_text(encoding="utf-8") for p in files)
    assert not [w for w in STRONG_WORDS if w in text]
    # The test splits are large enough for a public slice with real cells (issue 22): ~10 MB in all.
    assert sum(p.stat().st_size for p in DEMO.rglob("*") if p.is_file()) < 12 * 1024 * 1024


def test_readme_marks_the_set_as_synthetic() -> None:
    readme = (DEMO / "README.md").read_text(encoding="utf-8")
    assert "SYNTHETIC DEMO" in readme and "not VARM-Bench" in readme


# ---- determinism -------------------------------------------------------------------------------------
def test_regeneration_is_byte_identical(tmp_path: Path) -> None:
    written = generate(tmp_path)
    relative = sorted(str(p.relative_to(tmp_path)) for p in written)
    committed = sorted(
        str(p.relative_to(DEMO))
        for p in [*DEMO.rglob("*.jsonl"), *DEMO.glob("*/public/*.json")]
        if "baselines" not in p.parts
    )
    assert relative == committed  # nothing stale, nothing missing
    for name in relative:
        assert (tmp_path / name).read_bytes() == (DEMO / name).read_bytes(), name
