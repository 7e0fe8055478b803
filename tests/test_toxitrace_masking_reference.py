"""Spec §3 as changed 2026-12 (ERASER: the rationale of the predicted class), checked against an independent
implementation written from the spec text only (plain Python sorting, no numpy), on random cases with ties,
scores at tau, 1-character texts, astral characters and rows predicted 0 and 1; and the parse-time
quantisation of ``char_scores`` with what it must (and must not) change."""

from __future__ import annotations

import hashlib
import json
import math
import random

import numpy as np

from scoring.toxitrace.explanations_input import quantise
from scoring.toxitrace.masked_inputs import masked_inputs_jsonl
from scoring.toxitrace.masking import VARIANTS, masked_texts
from scoring.toxitrace.tracks import CNTP

CASES = 400
ALPHABET = "你这个人真蠢骗子河南abc。！ 😀𠀀𝟘"  # includes astral code points (one character each)


def reference_masked(text: str, scores: list[float], label: int, variant: str) -> str:
    """§3 from its words: top ⌈k·len/100⌉ characters of the predicted class, ties by position."""
    kind, level = variant.split("_")
    m = -(-int(level) * len(text) // 100)  # exact integer ceiling
    sign = -1 if label == 1 else 1  # predicted toxic: highest scores first; non-toxic: lowest first
    ranked = sorted(range(len(text)), key=lambda i: (sign * scores[i], i))
    top = set(ranked[:m])
    return "".join(ch for i, ch in enumerate(text) if (i in top) == (kind == "kept"))


def random_case(rng: random.Random) -> tuple[str, list[float], int]:
    n = rng.choice([1, 1, 2, 3, 5, 10, 11, 20, rng.randint(1, 60)])
    text = "".join(rng.choice(ALPHABET) for _ in range(n))
    pool = [0.5, 0.5, 0.0, -0.0, 1.0, 0.25, -0.3]  # repeated values force ties; 0.5 is tau
    scores = [rng.choice(pool) if rng.random() < 0.6 else round(rng.uniform(-1, 2), 3) for _ in range(n)]
    return text, scores, rng.randint(0, 1)


def test_masked_texts_equal_the_independent_reference_on_random_cases():
    rng = random.Random(25)
    labels_seen, ties = set(), 0
    for _ in range(CASES):
        text, scores, label = random_case(rng)
        q = quantise(scores).tolist()
        got = masked_texts(text, q, label)
        want = {v: reference_masked(text, q, label, v) for v in VARIANTS}
        assert got == want, (text, q, label)
        labels_seen.add(label)
        ties += len(set(q)) < len(q)
    assert labels_seen == {0, 1} and ties > CASES // 4  # the generator really covers both labels and ties


def test_masked_inputs_cli_uses_each_rows_predicted_label():
    inputs = [{"id": "a", "text": "abcde"}, {"id": "b", "text": "abcde"}]
    scores = [0.1, 0.9, 0.1, 0.9, 0.2]
    data = "".join(
        json.dumps({"id": rid, "label": label, "char_scores": scores}) + "\n"
        for rid, label in (("a", 1), ("b", 0))
    ).encode()
    lines = [json.loads(x) for x in masked_inputs_jsonl(inputs, data).decode().splitlines()]
    kept = {(r["id"], r["variant"]): r["text"] for r in lines}
    assert kept[("a", "kept_20")] == "b" and kept[("b", "kept_20")] == "a"


def test_quantise_to_thousandths_and_no_negative_zero():
    got = quantise([0.12345, -0.0004, -0.0, 0.0005, 0.0015, 1e300, -2.0, 0.9999])
    assert got.tolist() == [0.123, 0.0, 0.0, 0.0, 0.002, 1e300, -2.0, 1.0]
    assert not any(math.copysign(1.0, x) < 0 for x in got[:5])  # no -0.0 left
    # Positive control: numpy's own rounding keeps the sign of a negative zero.
    assert math.copysign(1.0, float(np.round(-0.0004, 3))) < 0


CNTP_INPUTS = [{"id": "x1", "text": "你这个人真是蠢到家了"}, {"id": "x2", "text": "今天天气不错"}]


def _cntp_file(first_scores: list[float]) -> bytes:
    rows = [
        {"id": "x1", "label": 1, "char_scores": first_scores},
        {"id": "x2", "label": 0, "char_scores": [0.1] * 6},
    ]
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def test_prediction_keys_see_quantised_scores_only():
    base = [0.0, 0.1, 0.0, 0.0, 0.0, 0.2, 0.9, 0.8, 0.7, 0.6]
    nudged = [*base[:6], 0.9003, *base[7:]]  # moves no quantised score
    moved = [*base[:6], 0.902, *base[7:]]  # moves one (positive control)
    keys = [CNTP.prediction_keys(_cntp_file(s), CNTP_INPUTS) for s in (base, nudged, moved)]
    assert keys[0] == keys[1]
    assert keys[0][0] != keys[2][0] and keys[0][1] == keys[2][1]


def test_hash_check_uses_the_lines_label():
    text = CNTP_INPUTS[0]["text"]
    scores = [0.0, 0.1, 0.0, 0.0, 0.0, 0.2, 0.9, 0.8, 0.7, 0.6]
    for label, ok in (
        (1, True),
        (0, False),
    ):  # hashes of the toxic-class texts on a line predicted 0: refused
        row = {"id": "x1", "label": label, "char_scores": scores}
        row["sha256_removed_20"] = hashlib.sha256(
            masked_texts(text, scores, 1)["removed_20"].encode()
        ).hexdigest()
        data = (
            json.dumps(row) + "\n" + json.dumps({"id": "x2", "label": 0, "char_scores": [0.1] * 6}) + "\n"
        ).encode()
        errors = CNTP.check_predictions(data, CNTP_INPUTS).errors
        assert (not errors) == ok, errors
