"""Importers and tools on real-shaped data: the real COLD release's warnings, ToxiCN's one-line JSON
release, the VARM authors' format, `score --output` / `--subsets dev_subsets.json`, `python -m space --help`,
`python -m baselines --tracks --splits` on a bundle without a dev split, and the demo banner."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from scoring.problems import InputError
from scoring.toxitrace.importers import import_dataset
from scoring.varm_import import audit_key, import_varm
from tests.conftest_pipeline import DEMO, ROOT, RecordingEnqueuer
from tests.test_install import COLD_RELEASE, lines, needs_cold
from worker.config import Config
from worker.gold.install import install
from worker.gold.seed import seed
from worker.service import Service
from worker.store import open_store


def run(module: str, *args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        **{"timeout": 300, **kwargs},
    )


# --- ToxiTrace importers -----------------------------------------------------------------------------------


@needs_cold
def test_real_cold_import_summary_warns_without_failing(tmp_path: Path) -> None:
    summary = import_dataset("cold", COLD_RELEASE, tmp_path / "out")
    assert summary["splits"] == {"train": 28_941, "dev": 3_216, "test": 5_323}
    warnings = summary["warnings"]
    assert warnings[0] == (
        "dev.csv: 3,215 of 6,431 rows disagree with the file name (3,215 say train); rows "
        "go where their split column says"
    )
    assert any(w.startswith("test: ") and "also occur in train" in w for w in warnings)
    assert any(w.startswith("train: ") and "repeat a text" in w for w in warnings)
    # The ToxiTrace checker reports the same split warnings on the written bundle.
    checked = run("scoring", "check-references", "--track", "cold", str(tmp_path / "out"))
    assert checked.returncode == 0 and "also occur in train" in checked.stderr
    assert "repeat a text" in checked.stderr


def toxicn_release_rows(n: int) -> list[dict]:
    """Rows in the ToxiCN JSON release's shape (keys and value types of its test.json)."""
    return [
        {
            "platform": "zhihu",
            "topic": "race",
            "content": f"第{i}条评论，内容{i % 97}",
            "toxic": i % 2,
            "toxic_one_hot": [1 - i % 2, i % 2],
            "toxic_type": i % 2,
            "toxic_type_one_hot": [i % 2, 0],
            "expression": i % 2,
            "expression_one_hot": [i % 2, 0, 0],
            "target": [0, i % 2, 0, 0, 0],
            "length": 8,
        }
        for i in range(n)
    ]


def test_toxicn_one_line_json_release_imports_and_warns(tmp_path: Path) -> None:
    src = tmp_path / "data"
    src.mkdir()
    rows = toxicn_release_rows(12_011)
    (src / "test.json").write_text(json.dumps(rows, ensure_ascii=False, separators=(",", ":")))
    assert (src / "test.json").read_text().count("\n") == 0  # one line, as released
    summary = import_dataset("toxicn", src, tmp_path / "out")
    assert summary["splits"] == {"test": 12_011}
    assert any(
        "repeat a text" not in w and "no test split" in w
        for w in import_dataset("toxicn", _train_only(tmp_path), tmp_path / "out2")["warnings"]
    )
    first = lines((tmp_path / "out" / "test.jsonl").read_bytes())[1]
    assert first == {
        "id": "toxicn-test-00002",
        "text": "第1条评论，内容1",
        "label": 1,
        "toxic_type": "offensive",
        "expression": "explicit",
        "target_groups": ["Region"],
        "topic": "race",
    }


def _train_only(tmp_path: Path) -> Path:
    src = tmp_path / "train_only"
    src.mkdir()
    (src / "train.json").write_text(json.dumps(toxicn_release_rows(3), ensure_ascii=False))
    return src


def test_json_errors_name_the_line_their_item_starts_on(tmp_path: Path) -> None:
    """Line numbers are now counted incrementally; they must still be right for a multi-line array."""
    src = tmp_path / "test.json"
    good = json.dumps(toxicn_release_rows(1)[0], ensure_ascii=False)
    bad = good.replace('"toxic": 0', '"toxic": 7')
    assert bad != good
    src.write_text("[\n" + ",\n".join((good, good, bad)) + "\n]\n")
    with pytest.raises(InputError) as caught:
        import_dataset("toxicn", src, tmp_path / "out")
    assert [(p.line, p.field) for p in caught.value.problems] == [(4, "toxic")]
    assert "item 3" in caught.value.problems[0].message


# --- VARM: the authors' release format ------------------------------------------------------------------


def varm_rows() -> list[dict]:
    from tests.test_varm_conformance import GOOD, NONE_ROW, rationale

    return [
        {"text": "外地人都滚出去，这里不欢迎你们", **GOOD, "cot": rationale(GOOD)},
        {"text": "今天天气不错，大家出去走走吧", **NONE_ROW, "target": "", "cot": rationale(NONE_ROW)},
    ]


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def test_varm_import_of_the_authors_single_gold_file(tmp_path: Path) -> None:
    gold = tmp_path / "release" / "varm_test.jsonl"
    write_jsonl(gold, varm_rows())
    assert all("id" not in r and len(r) == 8 for r in varm_rows())  # the authors' 8 keys, no id
    checked = run("scoring", "check-references", "--track", "varm", str(gold))
    assert checked.returncode == 0, checked.stderr
    assert "is a valid varm gold file" in checked.stdout
    assert "1 row(s) have a blank gold target" in checked.stderr

    summary = import_varm(gold, tmp_path / "bundle")
    assert summary["given"] == "a single gold file" and summary["splits"] == {"test": 2}
    assert summary["blank_targets"] == {"test": 1} and summary["filled_blank_targets"] == 0
    assert "blank target" in summary["warnings"][0]
    rows = lines((tmp_path / "bundle" / "test.jsonl").read_bytes())
    assert [r["id"] for r in rows] == ["varm-test-00001", "varm-test-00002"] and rows[1]["target"] == ""

    filled = run(
        "scoring", "import", "--dataset", "varm", str(gold), str(tmp_path / "filled"), "--fill-blank-targets"
    )
    assert filled.returncode == 0, filled.stderr
    assert json.loads(filled.stdout)["filled_blank_targets"] == 1
    assert "filled 1 blank gold target" in filled.stderr
    assert lines((tmp_path / "filled" / "test.jsonl").read_bytes())[1]["target"] == "无明确对象"
    # The two bundles differ in their reference hash, as the spec asks (an explicit, recorded step).
    from scoring.api import references_sha256

    assert references_sha256(tmp_path / "bundle") != references_sha256(tmp_path / "filled")


def test_varm_import_of_split_files_with_subsets(tmp_path: Path) -> None:
    release = tmp_path / "release"
    train, test = varm_rows()
    write_jsonl(release / "train.jsonl", [train])
    write_jsonl(release / "test.jsonl", [test, {**train, "text": "外地人滚，别来我们这里"}])
    write_jsonl(release / "subsets" / "region.jsonl", [{**train, "text": "外地人滚，别来我们这里"}])
    summary = import_varm(release, tmp_path / "bundle")
    assert summary["given"] == "a release folder" and summary["splits"] == {"train": 1, "test": 2}
    subset = lines((tmp_path / "bundle" / "subsets" / "region.jsonl").read_bytes())
    assert subset[0]["id"] == "varm-test-00002"  # the test row's id, matched by text
    assert run("scoring", "check-references", "--track", "varm", str(tmp_path / "bundle")).returncode == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    wrong = run("scoring", "import", "--dataset", "varm", str(empty), str(tmp_path / "x"))
    assert wrong.returncode == 1 and "expected the authors' split files" in wrong.stderr


def test_varm_import_reads_subsets_q2_and_refuses_a_subset_row_that_differs(tmp_path: Path) -> None:
    """Spec "Release formats": the authors' evaluate_q2.py looks in subsets/q2/; a subset row differing from
    its test row is an error naming both lines (the authors score the subset row as written)."""
    release = tmp_path / "release"
    train, test = varm_rows()
    cue = {**train, "text": "外地人滚，别来我们这里"}
    write_jsonl(release / "test.jsonl", [test, cue])
    write_jsonl(release / "subsets" / "q2" / "region.jsonl", [cue])
    summary = import_varm(release, tmp_path / "bundle")
    assert summary["subsets_from"] == ["subsets/q2/"]
    assert (
        lines((tmp_path / "bundle" / "subsets" / "region.jsonl").read_bytes())[0]["id"] == "varm-test-00002"
    )
    # A row that differs (another stance) from test line 2: refused, both lines named, nothing replaced.
    other = "中立" if cue["stance"] != "中立" else "支持"
    write_jsonl(release / "subsets" / "q2" / "region.jsonl", [{**cue, "stance": other}])
    with pytest.raises(InputError) as raised:
        import_varm(release, tmp_path / "bundle2")
    message = str(raised.value.problems[0])
    assert "subsets/q2/region.jsonl" in message and "test.jsonl line 2" in message and "stance" in message
    assert raised.value.problems[0].line == 1
    assert not (tmp_path / "bundle2").exists()
    # A blank-target row filled on request (--fill-blank-targets) is filled in its subset row too.
    _, blank = varm_rows()
    write_jsonl(release / "test.jsonl", [blank, cue])
    write_jsonl(release / "subsets" / "q2" / "region.jsonl", [blank])
    import_varm(release, tmp_path / "bundle4", fill_blank_targets=True)
    assert (
        lines((tmp_path / "bundle4" / "subsets" / "region.jsonl").read_bytes())[0]["target"] == "无明确对象"
    )
    import_varm(release, tmp_path / "bundle5")  # without the fill: kept blank in both
    assert lines((tmp_path / "bundle5" / "subsets" / "region.jsonl").read_bytes())[0]["target"] == ""
    write_jsonl(release / "test.jsonl", [test, cue])
    # The same subset file under subsets/ as well: one must go.
    write_jsonl(release / "subsets" / "q2" / "region.jsonl", [cue])
    write_jsonl(release / "subsets" / "region.jsonl", [cue])
    with pytest.raises(InputError, match="also in subsets/region.jsonl"):
        import_varm(release, tmp_path / "bundle3")


def test_varm_import_accepts_a_gold_cot_without_the_analysis_opening_with_a_warning(tmp_path: Path) -> None:
    """The authors' validator accepts a cot not starting with 分析： when it parses to the row's fields."""
    train, test = varm_rows()
    bare = {**train, "cot": train["cot"].removeprefix("分析：")}
    assert bare["cot"] != train["cot"]
    gold = tmp_path / "test.jsonl"
    write_jsonl(gold, [bare, test])
    summary = import_varm(gold, tmp_path / "bundle")
    assert [w for w in summary["warnings"] if "do not start with 分析" in w and "line(s) 1)" in w]
    assert run("scoring", "check-references", "--track", "varm", str(tmp_path / "bundle")).returncode == 0
    # Positive control: without the opening, a cot whose fields differ from the row's is still refused.
    stance = next(v for v in ("攻击或认同", "反对攻击", "引用或转述", "中性提及") if v != train["stance"])
    assert train["stance"] in bare["cot"]
    write_jsonl(gold, [{**bare, "cot": bare["cot"].replace(train["stance"], stance)}, test])
    with pytest.raises(InputError, match="field 'cot'"):
        import_varm(gold, tmp_path / "bundle2")


def test_varm_import_warns_of_duplicates_and_leaks_on_the_audit_key(tmp_path: Path) -> None:
    """Spec "Release formats": two texts differing only in final punctuation are the same text (the authors'
    audit key); duplicates within a split and leaks across splits are import warnings with the line pairs."""
    release = tmp_path / "release"
    train, test = varm_rows()
    write_jsonl(release / "train.jsonl", [train, {**test, "text": test["text"] + "。"}])
    write_jsonl(release / "test.jsonl", [test, {**train, "text": train["text"] + "！"}])
    warnings = import_varm(release, tmp_path / "bundle")["warnings"]
    leak = [w for w in warnings if "shared across splits" in w]
    assert leak and "train.jsonl line 1 ~ test.jsonl line 2" in leak[0]
    assert "train.jsonl line 2 ~ test.jsonl line 1" in leak[0]
    assert not [w for w in warnings if "duplicate text" in w]
    # Within a split: a duplicate on the audit key, named by its two lines.
    write_jsonl(release / "test.jsonl", [test, {**test, "text": " " + test["text"] + "！"}])
    (release / "train.jsonl").unlink()
    warnings = import_varm(release, tmp_path / "bundle2")["warnings"]
    assert [w for w in warnings if "test.jsonl: 1 duplicate text" in w and "lines 1 and 2" in w]
    assert audit_key("ＡＢ c\u3000，") == "abc" and audit_key("你好，世界！") == audit_key("你好世界。")
    # Positive control: distinct texts give neither warning.
    write_jsonl(release / "test.jsonl", [test, train])
    warnings = import_varm(release, tmp_path / "bundle3")["warnings"]
    assert not [w for w in warnings if "duplicate text" in w or "shared across" in w]


def test_validate_says_what_references_it_expected(tmp_path: Path) -> None:
    (tmp_path / "p.jsonl").write_text("{}\n")
    out = run(
        "scoring",
        "validate",
        "--track",
        "varm",
        "--references",
        str(tmp_path),
        "--predictions",
        str(tmp_path / "p.jsonl"),
    )
    assert out.returncode == 1 and "expected a reference bundle folder" in out.stderr
    assert "single gold JSONL file" in out.stderr and "Traceback" not in out.stderr


# --- scoring score ------------------------------------------------------------------------------------------


def test_score_output_is_a_normally_readable_file(tmp_path: Path) -> None:
    target = tmp_path / "result.json"
    done = run(
        "scoring",
        "score",
        "--track",
        "cold",
        "--references",
        str(DEMO / "cold"),
        "--predictions",
        str(DEMO / "cold" / "baselines" / "lexicon.test.jsonl"),
        "--bootstrap",
        "0",
        "--output",
        str(target),
        env={**os.environ},
        preexec_fn=lambda: os.umask(0o022),
    )
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(target.stat().st_mode) == 0o644  # 0600 before: mkstemp's mode leaked through
    assert json.loads(target.read_text())["track"] == "cold"


def test_score_accepts_the_public_dev_subsets_file(tmp_path: Path) -> None:
    membership = DEMO / "varm" / "public" / "dev_subsets.json"
    # The dev split is public, so --all-cells keeps the small cells the leaderboard would withhold.
    done = run(
        "scoring",
        "score",
        "--track",
        "varm",
        "--references",
        str(DEMO / "varm" / "dev.jsonl"),
        "--subsets",
        str(membership),
        "--bootstrap",
        "0",
        "--all-cells",
        "--predictions",
        str(DEMO / "varm" / "baselines" / "lexicon.dev.jsonl"),
    )
    assert done.returncode == 0, done.stderr
    subsets = json.loads(done.stdout)["subsets"]
    expected = json.loads(membership.read_text())
    assert set(subsets) == set(expected) and all(subsets[k]["rows"] == len(v) for k, v in expected.items())
    assert all(subsets[k]["jrem_gap"] is not None for k in subsets)  # the cue-subset gap, on dev
    (tmp_path / "bad.json").write_text('{"x": [1]}')
    bad = run(
        "scoring",
        "score",
        "--track",
        "varm",
        "--references",
        str(DEMO / "varm" / "dev.jsonl"),
        "--subsets",
        str(tmp_path / "bad.json"),
        "--predictions",
        str(DEMO / "varm" / "baselines" / "lexicon.dev.jsonl"),
    )
    assert bad.returncode == 2 and "lists of ids" in bad.stderr


# --- tools that assumed the demo ----------------------------------------------------------------------------


def test_python_m_space_help_prints_help_and_exits(tmp_path: Path) -> None:
    done = run("space", "--help", env={**os.environ, "DATA_DIR": str(tmp_path / "data")}, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("usage: python -m space")
    assert "SEED_DEMO=0" in done.stdout
    assert not (tmp_path / "data").exists()  # nothing started, nothing created


@pytest.mark.slow
@needs_cold
def test_baselines_on_a_real_bundle_without_a_dev_split(tmp_path: Path) -> None:
    bundle = tmp_path / "bundles" / "cold"
    import_dataset("cold", COLD_RELEASE / "test.csv", bundle)  # test only
    write_jsonl(bundle / "train.jsonl", lines((bundle / "test.jsonl").read_bytes())[:300])  # a small train
    done = run(
        "baselines", "--data", str(tmp_path / "bundles"), "--tracks", "cold", "--out", str(tmp_path / "o")
    )
    assert done.returncode == 0, done.stderr
    written = sorted(p.name for p in (tmp_path / "o" / "cold" / "baselines").iterdir())
    assert written == [
        "char-ngram-random.test.jsonl",
        "char-ngram.test.jsonl",
        "lexicon.test.jsonl",
        "majority.test.jsonl",
    ]
    assert len(lines((tmp_path / "o" / "cold" / "baselines" / "lexicon.test.jsonl").read_bytes())) == 5_323
    asked = run("baselines", "--data", str(tmp_path / "bundles"), "--tracks", "cold", "--splits", "dev")
    assert asked.returncode == 2 and "has no dev split file" in asked.stderr


def test_demo_tracks_carry_a_banner_and_empty_tracks_say_so(tmp_path: Path) -> None:
    from space.ui.app import build_app
    from space.ui.pages.board import reference_banner

    config = Config(data_dir=tmp_path / "data")
    store = open_store(config)
    demo = tmp_path / "demo"
    import shutil

    shutil.copytree(DEMO / "cold", demo / "cold", ignore=shutil.ignore_patterns("train.jsonl", "baselines"))
    seed(store, Service(config, store, RecordingEnqueuer()), demo)
    service = Service(config, store, RecordingEnqueuer(), head_ttl=0)
    ctx = build_app(service, auth_mode="open", warm=False).ctx
    assert "Synthetic demo data" in reference_banner(ctx, "cold", "en")
    assert "No reference set is installed" in reference_banner(ctx, "toxicn", "en")
    with pytest.raises(Exception, match="no reference set installed yet"):
        service.validate("toxicn", b"")
    real = tmp_path / "real"
    shutil.copytree(DEMO / "cold", real, ignore=shutil.ignore_patterns("baselines", "public"))
    install(store, "cold", real, demo_dir=demo)
    banner = reference_banner(ctx, "cold", "en")  # a real, private set: no demo warning, the board's rule
    assert "Synthetic demo data" not in banner and "public slice" in banner
    install(store, "cold", real, demo_dir=demo, test_status="public")  # its labels published: said plainly
    assert "The test labels of COLD are public" in reference_banner(ctx, "cold", "en")
