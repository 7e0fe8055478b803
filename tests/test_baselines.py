"""The demo baselines: one command end to end, valid and deterministic predictions, the lexical-cue gap."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from baselines import BASELINES, SPLITS, TRACKS, lexicon
from baselines.run import prediction_path, run
from baselines.scores import collect, markdown
from scoring.api import score_file, validate_file
from scoring.protocol import parse_output

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "data" / "demo"
NAMES = tuple(b.name for b in BASELINES)
RUNS = {t: tuple(b.name for b in BASELINES if t in b.tracks) for t in TRACKS}  # baselines per track
EXPLANATION_KEYS = {
    "char_scores",
    "prob",
    "prob_removed_10",
    "prob_removed_20",
    "prob_removed_50",
    "prob_kept_10",
    "prob_kept_20",
    "prob_kept_50",
}


def api_scorer(
    track: str, references: Path, subsets: Path | None, predictions: Path, bootstrap: int = 0
) -> dict:
    return score_file(track, references, predictions.read_bytes(), subsets_dir=subsets, bootstrap=bootstrap)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two independent runs: the documented command in a subprocess, then the library in-process."""
    first, second = tmp_path_factory.mktemp("run1"), tmp_path_factory.mktemp("run2")
    done = subprocess.run(
        [sys.executable, "-m", "baselines", "--out", str(first)], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    run(DEMO, second)
    return first, second


def _outputs(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


@pytest.mark.slow
def test_one_command_writes_every_prediction_file(runs: tuple[Path, Path]) -> None:
    first, _ = runs
    expected = [str(prediction_path(Path(), t, n, s)) for t in TRACKS for n in RUNS[t] for s in SPLITS]
    assert _outputs(first) == sorted([*expected, "baselines.json"])
    meta = json.loads((first / "baselines.json").read_text(encoding="utf-8"))
    assert [b["name"] for b in meta["baselines"]] == list(NAMES)
    assert all(set(b) == {"name", "description", "model_type", "setting"} for b in meta["baselines"])


@pytest.mark.slow
def test_runs_are_byte_identical_and_match_the_committed_files(runs: tuple[Path, Path]) -> None:
    first, second = runs
    for name in _outputs(first):
        data = (first / name).read_bytes()
        assert data == (second / name).read_bytes(), name
        assert data == (DEMO / name).read_bytes(), f"{name}: committed file is stale; run python -m baselines"


@pytest.mark.parametrize("track", TRACKS)
def test_predictions_pass_validation(runs: tuple[Path, Path], track: str) -> None:
    first, _ = runs
    for name in RUNS[track]:
        for split in SPLITS:
            path = prediction_path(first, track, name, split)
            report = validate_file(track, path.read_bytes(), references=DEMO / track / f"{split}.jsonl")
            assert report.valid, (track, name, split, report.as_dict())
            rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
            keys = {"varm": {"id", "output"}, "cntp": {"id", "label", "spans"}}.get(track, {"id", "label"})
            if track != "varm" and name.startswith("char-ngram"):
                keys = (keys - {"spans"} if name == "char-ngram-random" else keys) | EXPLANATION_KEYS
            assert all(set(r) == keys for r in rows), (track, name)


def test_scores_are_deterministic(runs: tuple[Path, Path]) -> None:
    first, second = runs
    for track in TRACKS:
        subsets = DEMO / "varm" / "subsets" if track == "varm" else None
        for name in RUNS[track]:
            results = [
                api_scorer(
                    track,
                    DEMO / track / "test.jsonl",
                    subsets,
                    prediction_path(root, track, name, "test"),
                    bootstrap=50,
                )
                for root in (first, second)
            ]
            assert results[0] == results[1], (track, name)


def test_varm_baselines_always_parse(runs: tuple[Path, Path]) -> None:
    first, _ = runs
    for name in RUNS["varm"]:
        result = api_scorer("varm", DEMO / "varm", None, prediction_path(first, "varm", name, "test"))
        assert result["metrics"]["parse_success"] == 1.0, name


def test_lexicon_fails_on_non_harmful_cue_rows(runs: tuple[Path, Path]) -> None:
    first, _ = runs
    result = api_scorer("varm", DEMO / "varm", None, prediction_path(first, "varm", "lexicon", "test"))
    assert set(result["subsets"]) == {
        "demographic_identity",
        "social_status_role",
        "body_health_disability",
        "general_abuse",
    }
    shown = 0
    for name, subset in result["subsets"].items():
        if subset["rows_non_harmful"] < 30:  # a small label-defined group: withheld on the board
            assert subset["jrem_non_harmful"] is None and "fewer than 30 rows" in subset["withheld"], name
            continue
        assert subset["jrem_non_harmful"] < subset["jrem_harmful"], name
        shown += 1
    assert shown >= 3


def test_lexicon_flags_a_quoted_insult() -> None:
    parsed = parse_output(lexicon.varm_output("看到有人说“河南人都是骗子”，我觉得这种话不对"))
    assert parsed.schema_valid
    assert parsed.record["label"] == "有害" and parsed.record["target"] == "河南人"


def test_char_ngram_beats_majority_on_jrem() -> None:
    scores = {
        name: api_scorer(
            "varm", DEMO / "varm" / "test.jsonl", None, prediction_path(DEMO, "varm", name, "test")
        )["metrics"]["jrem"]
        for name in RUNS["varm"]
    }
    assert scores["majority"] < scores["lexicon"] < scores["char-ngram"] < 1.0


def test_readme_table_matches_the_scorer() -> None:
    readme = (DEMO / "README.md").read_text(encoding="utf-8")
    table = readme.split("<!-- scores:start -->\n", 1)[1].split("<!-- scores:end -->", 1)[0]
    assert table == markdown(collect(DEMO, api_scorer)), "README scores are stale; see data/demo/README.md"
