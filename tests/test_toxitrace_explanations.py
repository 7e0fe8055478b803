"""Spec §3 explanations: masking, every metric with hand-worked values, the scikit-learn equality, the
reader's line-numbered checks (each with its positive control), the result JSON and `masked-inputs`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import average_precision_score

from scoring.api import dumps_result, score_file, validate_file
from scoring.bootstrap import percentile_ci, resample_indices
from scoring.limits import MAX_LINE_BYTES
from scoring.problems import InputError
from scoring.toxitrace.explanations import (
    Faithfulness,
    SpanShape,
    attribution_auprc,
    average_precision,
    canonical_rows,
    derive_spans,
    faithfulness,
    fragmentation,
)
from scoring.toxitrace.masked_inputs import masked_inputs_jsonl
from scoring.toxitrace.masking import (
    HASH_KEYS,
    PROB_KEYS,
    VARIANTS,
    masked_text,
    masked_texts,
    text_sha256,
    top_count,
)
from scoring.toxitrace.tracks import CNTP, COLD

ROOT = Path(__file__).resolve().parents[1]


def jsonl(*rows: dict) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


REFS = [
    {"id": "r1", "text": "你这个人真是蠢到家了", "label": 1, "spans": [[6, 10]]},
    {"id": "r2", "text": "今天天气不错", "label": 0, "spans": []},
    {"id": "r3", "text": "河南人都是骗子", "label": 1, "spans": [[5, 7]]},
]
INPUTS = [{"id": r["id"], "text": r["text"]} for r in REFS]
SCORES = {
    "r1": [0.0, 0.1, 0.0, 0.0, 0.0, 0.2, 0.9, 0.8, 0.7, 0.6],
    "r2": [0.1, 0.0, 0.0, 0.0, 0.3, 0.2],
    "r3": [0.6, 0.6, 0.1, 0.0, 0.0, 0.9, 0.95],
}
LABELS = {"r1": 1, "r2": 0, "r3": 1}


def explained(rid: str, *, probs: bool = True, hashes: bool = False, **extra) -> dict:
    row = {"id": rid, "label": LABELS[rid], "char_scores": SCORES[rid]}
    if probs:
        row.update({"prob": 0.9, **{f"prob_{v}": 0.3 for v in VARIANTS}})
    if hashes:
        text = next(r["text"] for r in REFS if r["id"] == rid)
        row.update(
            {f"sha256_{v}": text_sha256(t) for v, t in masked_texts(text, SCORES[rid], LABELS[rid]).items()}
        )
    return {**row, **extra}


@pytest.fixture
def refs_path(tmp_path: Path) -> Path:
    path = tmp_path / "test.jsonl"
    path.write_bytes(jsonl(*REFS))
    return path


def problems(track, data: bytes) -> list[tuple[int | None, str | None, str]]:
    report = track.check_predictions(data, INPUTS)
    return [(p.line, p.field, p.message) for p in report.errors]


# --- masking ---------------------------------------------------------------------------------------


def test_top_count_is_the_integer_ceiling():
    assert [top_count(n, 10) for n in (0, 1, 7, 10, 11, 20)] == [0, 1, 1, 1, 2, 2]
    assert [top_count(n, 50) for n in (1, 2, 3, 5)] == [1, 1, 2, 3]


def test_masking_by_hand_ties_broken_by_position():
    text, scores = "abcde", [0.1, 0.9, 0.5, 0.9, 0.2]
    # k=10, 20: one character; 0.9 at positions 1 and 3 tie -> the earlier (b). k=50: three -> b, d, c.
    assert masked_texts(text, scores, 1) == {
        "removed_10": "acde",
        "removed_20": "acde",
        "removed_50": "ae",
        "kept_10": "b",
        "kept_20": "b",
        "kept_50": "bcd",
    }
    assert masked_text("", [], "kept_50", 1) == "" and masked_text("x", [0.0], "removed_10", 0) == ""
    with pytest.raises(ValueError):
        masked_text(text, scores, "removed_30", 1)
    with pytest.raises(ValueError):
        masked_text(text, scores, "removed_10", 2)


def test_masking_predicted_non_toxic_takes_the_lowest_scores():
    """ERASER (§3 as changed 2026-12): on a row predicted 0 the rationale is the least toxic evidence."""
    text, scores = "abcde", [0.1, 0.9, 0.1, 0.9, 0.2]
    # k=10, 20: one character; 0.1 at positions 0 and 2 tie -> the earlier (a). k=50: three -> a, c, e.
    assert masked_texts(text, scores, 0) == {
        "removed_10": "bcde",
        "removed_20": "bcde",
        "removed_50": "bd",
        "kept_10": "a",
        "kept_20": "a",
        "kept_50": "ace",
    }
    # Positive control: the same scores predicted toxic give the highest (b, then d).
    assert masked_text(text, scores, "kept_20", 1) == "b"


def test_hash_is_sha256_of_the_utf8_masked_text():
    import hashlib

    assert text_sha256("蠢到") == hashlib.sha256("蠢到".encode()).hexdigest()


# --- metrics, hand-worked ----------------------------------------------------------------------------


def test_derive_spans_by_hand():
    assert derive_spans([0.9, 0.8, 0.1, 0.7, 0.2, 0.5, 0.5, 0.5]) == ((0, 2), (5, 8))  # the lone 0.7 dropped
    assert derive_spans([0.49, 0.5]) == ()  # 0.5 >= tau but a run of one
    assert derive_spans([1, 1, 1], tau=2) == () and derive_spans([]) == ()
    assert derive_spans([0.6, 0.6, 0.0, 0.6, 0.6]) == ((0, 2), (3, 5))


def test_average_precision_by_hand_and_no_positive():
    # thresholds 0.9 (P 1, R .5), 0.8 (P .5, R .5), 0.7 (P 2/3, R 1), 0.1 (P .5, R 1): AP = .5·1 + .5·2/3
    assert average_precision([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1]) == pytest.approx(0.5 + 1 / 3, abs=1e-15)
    # a tie group counts as one threshold: 0.9 (P 1, R .5), {0.5, 0.5} (P 2/3, R 1) -> AP = .5 + .5·2/3
    assert average_precision([1, 1, 0], [0.9, 0.5, 0.5]) == pytest.approx(0.5 + 1 / 3, abs=1e-15)
    assert average_precision([0, 0], [0.3, 0.2]) == 0.0


@pytest.mark.parametrize("seed", range(40))
def test_average_precision_equals_scikit_learn(seed: int):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 300))
    y = rng.integers(0, 2, n)
    y[0] = 1
    s = rng.integers(0, 6, n) / 5 if seed % 2 else rng.random(n)  # ties on odd seeds
    w = rng.integers(1, 4, n) if seed % 3 == 0 else None
    assert average_precision(y, s, w) == average_precision_score(y, s, sample_weight=w)  # the same float


def test_attribution_auprc_is_micro_over_items_with_gold_and_equals_scikit_learn():
    scores = [np.asarray(SCORES[r["id"]]) for r in REFS]
    gold = [[tuple(s) for s in r["spans"]] for r in REFS]
    flags = np.r_[[0] * 6 + [1] * 4, [0] * 5 + [1] * 2]  # r2 has no gold: left out
    concatenated = np.r_[SCORES["r1"], SCORES["r3"]]
    assert attribution_auprc(scores, gold) == average_precision_score(flags, concatenated)
    # by hand: 0.95, 0.9 (x2), 0.8, 0.7 are gold (P 1 up to R 5/6); the 0.6 tie group holds one gold and
    # two non-gold -> R 1 at P 6/8. AP = 5/6 · 1 + 1/6 · 6/8
    assert attribution_auprc(scores, gold) == pytest.approx(5 / 6 + (1 / 6) * (6 / 8), abs=1e-15)
    assert attribution_auprc(scores[1:2], gold[1:2]) is None


def test_fragmentation_by_hand():
    shape = SpanShape.from_spans([((0, 2), (4, 7)), (), ((1, 2),)])
    out = fragmentation(shape)
    assert float(out["spans_per_item"]) == 1.5  # 3 spans over the 2 items that have any
    assert float(out["mean_span_length"]) == 2.0  # (2 + 3 + 1) characters / 3 spans
    assert {k: float(v) for k, v in fragmentation(SpanShape.from_spans([(), ()])).items()} == {
        "spans_per_item": 0.0,
        "mean_span_length": 0.0,
    }


FAITH_PROBS = {  # item A: label 1; item B: label 0 (p = 1 - prob)
    "prob": [0.9, 0.2],
    "prob_removed_10": [0.6, 0.3],
    "prob_removed_20": [0.4, 0.6],
    "prob_removed_50": [0.2, 0.2],
    "prob_kept_10": [0.7, 0.5],
    "prob_kept_20": [0.8, 0.2],
    "prob_kept_50": [0.9, 0.1],
}


def test_faithfulness_by_hand():
    faith = Faithfulness.from_probs(np.array([1, 0]), {k: np.asarray(v) for k, v in FAITH_PROBS.items()})
    out = {k: float(v) for k, v in faithfulness(faith).items()}
    # A: comp .3 .5 .7, suff .2 .1 0, flips (.4 < .5). B: p(x) .8; comp .1 .4 0, suff .3 0 -.1, flips (.6).
    expected = {
        "comprehensiveness_k.10": 0.2,
        "comprehensiveness_k.20": 0.45,
        "comprehensiveness_k.50": 0.35,
        "sufficiency_k.10": 0.25,
        "sufficiency_k.20": 0.05,
        "sufficiency_k.50": -0.05,
        "comprehensiveness": 1 / 3,
        "sufficiency": 1 / 12,
        "decision_flip_20": 1.0,
    }
    assert out == pytest.approx(expected, abs=1e-12)
    assert set(out) == set(expected)


def test_faithfulness_split_by_predicted_label_by_hand():
    """``explanations.by_predicted.<0|1>``: the same terms averaged over the rows of each predicted label."""
    from scoring.toxitrace.explanations import explanation_result

    probs = {k: np.asarray(v, dtype=np.float64) for k, v in FAITH_PROBS.items()}
    result, _ = explanation_result(
        np.array([1, 0]), [np.zeros(3), np.zeros(3)], probs, [(), ()], "derived", None, np.zeros((0, 2))
    )
    one, zero = result["by_predicted"]["1"], result["by_predicted"]["0"]
    # A alone (label 1): comp .3 .5 .7 -> .5; suff .2 .1 0 -> .1; flips.
    # B alone (label 0): comp .1 .4 0, suff .3 0 -.1
    assert one["comprehensiveness"] == pytest.approx(0.5, abs=1e-12)
    assert one["sufficiency"] == pytest.approx(0.1, abs=1e-12) and one["decision_flip_20"] == 1.0
    assert zero["comprehensiveness_k"]["20"] == pytest.approx(0.4, abs=1e-12)
    assert zero["comprehensiveness"] == pytest.approx(1 / 6, abs=1e-12)
    assert zero["sufficiency"] == pytest.approx(0.2 / 3, abs=1e-12)
    # Positive control: the overall figure is the mean of the two single-row parts here.
    assert result["comprehensiveness"] == pytest.approx((0.5 + 1 / 6) / 2, abs=1e-12)


# --- reader ----------------------------------------------------------------------------------------------


def test_valid_explanations_pass_on_every_track_and_stay_optional():
    data = jsonl(*(explained(r["id"], hashes=True) for r in REFS))
    assert problems(COLD, data) == []
    assert problems(CNTP, data) == []  # char_scores stand in for spans on the span track
    assert problems(COLD, jsonl(*({"id": r["id"], "label": 1} for r in REFS))) == []  # none: still fine
    assert problems(COLD, jsonl(*(explained(r["id"], probs=False) for r in REFS))) == []  # scores alone


def test_cntp_still_needs_spans_without_char_scores():
    rows = [explained("r1"), explained("r2"), {"id": "r3", "label": 1}]
    found = problems(CNTP, jsonl(*rows))
    assert (3, "spans", found[0][2]) in found and "missing field 'spans'" in found[0][2]


@pytest.mark.parametrize(
    ("change", "line", "field", "words"),
    [
        ({"char_scores": [0.1] * 9}, 1, "char_scores", "has 9 numbers but the item's text has 10 characters"),
        ({"char_scores": "0.1"}, 1, "char_scores", "must be a list of numbers"),
        ({"char_scores": [0.1] * 9 + [True]}, 1, "char_scores[9]", "must be a number; got true/false"),
        ({"prob_kept_20": 1.5}, 1, "prob_kept_20", "must be a probability from 0 to 1; got 1.5"),
        ({"prob": -0.1}, 1, "prob", "from 0 to 1; got -0.1"),
        ({"prob": "0.5"}, 1, "prob", "must be a probability, a number from 0 to 1; got a string"),
        ({"sha256_removed_20": "0" * 64}, 1, "sha256_removed_20", "does not match the removed_20 text"),
        ({"sha256_kept_50": 7}, 1, "sha256_kept_50", "must be a string of 64 hexadecimal digits"),
    ],
)
def test_bad_explanation_fields_are_line_numbered(change, line, field, words):
    rows = [explained("r1", hashes=True, **change), explained("r2"), explained("r3")]
    found = problems(COLD, jsonl(*rows))
    assert len(found) == 1 and found[0][:2] == (line, field) and words in found[0][2], found


def test_non_finite_score_is_refused():
    data = jsonl(explained("r2"), explained("r3")).decode()
    line = json.dumps(explained("r1")).replace('"char_scores": [0.0', '"char_scores": [1e999', 1)
    found = problems(COLD, (line + "\n" + data).encode())
    assert found == [(1, "char_scores[0]", "must be a finite number; got a number too large to represent")]
    # NaN/Infinity literals never reach the check: the JSON reader refuses them on the line
    nan = json.dumps(explained("r1")).replace("0.9, 0.8", "NaN, 0.8")
    assert problems(COLD, (nan + "\n" + data).encode())[0][0] == 1


def test_hash_mismatch_positive_control_and_case():
    good = explained("r1", hashes=True)
    assert problems(COLD, jsonl(good, explained("r2"), explained("r3"))) == []
    upper = {**good, "sha256_kept_10": good["sha256_kept_10"].upper()}
    assert problems(COLD, jsonl(upper, explained("r2"), explained("r3"))) == []
    swapped = {**good, "sha256_kept_10": good["sha256_removed_50"]}  # another variant's (valid) hash
    found = problems(COLD, jsonl(swapped, explained("r2"), explained("r3")))
    assert [p[1] for p in found] == ["sha256_kept_10"]


def test_partial_or_orphan_probabilities_are_refused():
    partial = {k: v for k, v in explained("r1").items() if k != "prob_kept_50"}
    found = problems(COLD, jsonl(partial, explained("r2"), explained("r3")))
    assert found[0][:2] == (1, "prob_kept_50") and "all together or not at all" in found[0][2]
    orphan = {k: v for k, v in explained("r1").items() if k != "char_scores"}
    fields = [p[1] for p in problems(COLD, jsonl(orphan, explained("r2"), explained("r3")))]
    assert "char_scores" in fields


def test_mixed_files_are_refused_with_a_clear_message():
    rows = [explained("r1"), {"id": "r2", "label": 0}, explained("r3", probs=False)]
    found = problems(COLD, jsonl(*rows))
    assert (2, "char_scores") in [p[:2] for p in found]
    assert (2, "prob") in [p[:2] for p in found] and (3, "prob") in [p[:2] for p in found]
    message = next(p[2] for p in found if p[:2] == (2, "char_scores"))
    assert "given on 2 of 3 lines (first on line 1) but not on this one" in message
    assert "on every line or on none" in message


def test_a_long_text_line_fits_the_line_limit():
    """char_scores at full float precision for 3,000 characters, plus probabilities and hashes."""
    text = "蠢" * 3000
    scores = list(np.random.default_rng(0).random(len(text)))
    row = {
        "id": "x" * 40,
        "label": 1,
        "char_scores": scores,
        "prob": 0.123456789012345678,
        **{f"prob_{v}": 0.987654321098765 for v in VARIANTS},
        **{f"sha256_{v}": text_sha256(t) for v, t in masked_texts(text, scores, 1).items()},
    }
    assert len(json.dumps(row).encode()) < MAX_LINE_BYTES
    assert set(HASH_KEYS) <= set(row) and set(PROB_KEYS) <= set(row)


# --- result JSON ---------------------------------------------------------------------------------------


def test_no_explanations_no_key(refs_path: Path):
    plain = score_file(
        "cntp",
        refs_path,
        jsonl(*({"id": r["id"], "label": r["label"], "spans": r["spans"]} for r in REFS)),
        bootstrap=20,
    )
    assert "explanations" not in plain and not any(k.startswith("explanations") for k in plain["ci"])


def test_cntp_result_with_scores_and_probs(refs_path: Path):
    data = jsonl(*(explained(r["id"]) for r in REFS))
    result = score_file("cntp", refs_path, data, bootstrap=50, seed=3)
    e = result["explanations"]
    derived = [derive_spans(SCORES[r["id"]]) for r in REFS]
    assert derived == [((6, 10),), (), ((0, 2), (5, 7))]
    assert e["spans_source"] == "derived" and e["tau"] == 0.5
    assert e["spans_per_item"] == 1.5 and e["mean_span_length"] == 8 / 3
    assert e["auprc"] == pytest.approx(5 / 6 + (1 / 6) * (6 / 8), abs=1e-15)
    # every row: prob .9, masked .3. Labels 1, 0, 1: p(x) .9 / .1 / .9, masked p .3 / .7 / .3.
    assert e["comprehensiveness_k"] == pytest.approx({"10": 0.2, "20": 0.2, "50": 0.2}, abs=1e-12)
    assert e["sufficiency"] == pytest.approx(0.2, abs=1e-12)
    assert e["decision_flip_20"] == pytest.approx(2 / 3)  # rows 1 and 3 drop below .5; row 2 stays 0
    # the span metrics of §2 are computed on the derived spans: r1 exact, r3 half right (precision 2/4)
    assert result["metrics"]["spans"]["char_precision"] == pytest.approx(6 / 8)
    names = {k.removeprefix("explanations.") for k in result["ci"] if k.startswith("explanations.")}
    assert names == {
        "spans_per_item",
        "mean_span_length",
        "auprc",
        "comprehensiveness",
        "sufficiency",
        "decision_flip_20",
        *(f"{m}_k.{k}" for m in ("comprehensiveness", "sufficiency") for k in (10, 20, 50)),
    }
    assert dumps_result(score_file("cntp", refs_path, data, bootstrap=50, seed=3)) == dumps_result(result)


def test_given_spans_are_used_for_fragmentation(refs_path: Path):
    data = jsonl(*(explained(r["id"], spans=r["spans"]) for r in REFS))
    e = score_file("cntp", refs_path, data, bootstrap=0)["explanations"]
    assert e["spans_source"] == "given" and e["spans_per_item"] == 1.0 and e["mean_span_length"] == 3.0


def test_scores_only_without_gold_spans_has_no_auprc_and_no_faithfulness(tmp_path: Path):
    refs = tmp_path / "cold.jsonl"
    refs.write_bytes(jsonl(*({k: v for k, v in r.items() if k != "spans"} for r in REFS)))
    data = jsonl(*(explained(r["id"], probs=False) for r in REFS))
    result = score_file("cold", refs, data, bootstrap=10)
    assert set(result["explanations"]) == {"tau", "spans_source", "spans_per_item", "mean_span_length"}
    assert "spans" not in result["metrics"]  # no gold spans: derived spans feed fragmentation only
    assert {k for k in result["ci"] if k.startswith("explanations.")} == {
        "explanations.spans_per_item",
        "explanations.mean_span_length",
    }


def test_bootstrap_interval_uses_the_shared_resamples(refs_path: Path):
    data = jsonl(*(explained(r["id"]) for r in REFS))
    result = score_file("cold", refs_path, data, bootstrap=30, seed=5)
    idx = resample_indices(3, 30, 5)
    per_row = np.array([(0.9 - 0.3), (0.1 - 0.7), (0.9 - 0.3)])  # comprehensiveness, same at every k
    order = canonical_rows(
        np.array([1, 0, 1]),
        [np.asarray(SCORES[r["id"]]) for r in REFS],
        {k: np.full(3, 0.9 if k == "prob" else 0.3) for k in PROB_KEYS},
        None,
    )
    assert sorted(order.tolist()) == [0, 1, 2]
    assert result["ci"]["explanations.comprehensiveness"] == pytest.approx(
        percentile_ci(per_row[order][idx].mean(axis=1)), abs=1e-12
    )
    assert (
        result["ci"]["f1"]
        == score_file(
            "cold",
            refs_path,
            jsonl(*({"id": r["id"], "label": LABELS[r["id"]]} for r in REFS)),
            bootstrap=30,
            seed=5,
        )["ci"]["f1"]
    )


def test_intervals_do_not_depend_on_the_row_order(tmp_path: Path):
    """The same rows in another test order give the same explanation intervals (rows are resampled in an
    order defined by their content, as the other metrics' intervals are), and the same point values."""
    rows = [explained(r["id"]) for r in REFS]
    rows[1]["prob_removed_10"] = 0.05  # make the rows' terms differ
    forward, backward = tmp_path / "f.jsonl", tmp_path / "b.jsonl"
    forward.write_bytes(jsonl(*REFS))
    backward.write_bytes(jsonl(*REFS[::-1]))
    a = score_file("cntp", forward, jsonl(*rows), bootstrap=40, seed=2)
    b = score_file("cntp", backward, jsonl(*rows[::-1]), bootstrap=40, seed=2)
    expl_ci = {k: v for k, v in a["ci"].items() if k.startswith("explanations.")}
    assert expl_ci == {k: v for k, v in b["ci"].items() if k.startswith("explanations.")}
    flat = [{k: v for k, v in r["explanations"].items() if isinstance(v, float)} for r in (a, b)]
    assert flat[0] == pytest.approx(flat[1], abs=1e-12) and flat[0]["comprehensiveness"] > 0


def test_near_copy_keys_count_scores_on_the_span_track_only():
    """One row's char_scores changed: on cntp that row's key changes (derived spans and AUPRC depend on
    gold spans); on cold the keys stay labels only (the scores feed gold-independent metrics there)."""
    rows = [explained(r["id"], probs=False) for r in REFS]
    other = [dict(r) for r in rows]
    other[1]["char_scores"] = [0.9] + other[1]["char_scores"][1:]
    a, b = (CNTP.prediction_keys(jsonl(*x), INPUTS) for x in (rows, other))
    assert [x != y for x, y in zip(a, b, strict=True)] == [False, True, False]
    assert COLD.prediction_keys(jsonl(*rows), INPUTS) == COLD.prediction_keys(jsonl(*other), INPUTS)
    assert a[0].startswith("1|[(6, 10)]|")  # the derived span is part of the key


# --- masked-inputs --------------------------------------------------------------------------------------


def run_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scoring", *map(str, args)], cwd=ROOT, capture_output=True, text=True
    )


def test_masked_inputs_cli_round_trip(tmp_path: Path, refs_path: Path):
    (tmp_path / "inputs.jsonl").write_bytes(jsonl(*INPUTS))
    (tmp_path / "p.jsonl").write_bytes(jsonl(*(explained(r["id"], probs=False) for r in REFS)))
    for out in ("a.jsonl", "b.jsonl"):
        done = run_cli(
            "masked-inputs",
            "--track",
            "cold",
            "--inputs",
            tmp_path / "inputs.jsonl",
            "--predictions",
            tmp_path / "p.jsonl",
            tmp_path / out,
        )
        assert done.returncode == 0, done.stderr
    lines = [json.loads(x) for x in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert [(x["id"], x["variant"]) for x in lines] == [(r["id"], v) for r in REFS for v in VARIANTS]
    assert lines[0] == {
        "id": "r1",
        "variant": "removed_10",
        "text": "你这个人真是到家了",
        "sha256": text_sha256("你这个人真是到家了"),
    }
    # A submitter fills in the probabilities and copies the hashes: the scorer accepts them.
    rows = {r["id"]: explained(r["id"]) for r in REFS}
    for x in lines:
        rows[x["id"]][f"sha256_{x['variant']}"] = x["sha256"]
    assert validate_file("cold", jsonl(*rows.values()), inputs=INPUTS).valid


def test_masked_inputs_refuses_bad_predictions(tmp_path: Path):
    (tmp_path / "inputs.jsonl").write_bytes(jsonl(*INPUTS))
    (tmp_path / "p.jsonl").write_bytes(jsonl(*({"id": r["id"], "label": 1} for r in REFS)))
    done = run_cli(
        "masked-inputs",
        "--track",
        "cold",
        "--inputs",
        tmp_path / "inputs.jsonl",
        "--predictions",
        tmp_path / "p.jsonl",
        tmp_path / "out.jsonl",
    )
    assert done.returncode == 1 and "no 'char_scores'" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out.jsonl").exists()
    done = run_cli(
        "masked-inputs",
        "--track",
        "varm",
        "--inputs",
        tmp_path / "inputs.jsonl",
        "--predictions",
        tmp_path / "p.jsonl",
        tmp_path / "out.jsonl",
    )
    assert done.returncode == 2 and "ToxiTrace tracks" in done.stderr
    with pytest.raises(InputError) as error:
        masked_inputs_jsonl(INPUTS, jsonl(explained("r1", char_scores=[1.0])))
    assert any(p.field == "char_scores" and p.line == 1 for p in error.value.problems)
