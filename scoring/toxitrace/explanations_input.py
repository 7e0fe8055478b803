"""Validation of the optional explanation fields of a ToxiTrace prediction line (spec §3).

Checked against the PUBLIC text of the row only (its length, and the masked texts recomputed from the
submitted scores), so validation never needs gold. Messages name the field and what was expected.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, TypeGuard

import numpy as np

from ..jsonl import describe_found
from ..problems import Problem
from .masking import HASH_KEYS, PROB_KEYS, masked_text, text_sha256

MAX_LINES_NAMED = 5  # a mixed file names the first few lines that lack explanations, then counts

SCORES_HINT = "one number per character (code point) of the item's text"


QUANTUM = 1000  # char_scores are quantised to multiples of 1/QUANTUM at parse time (§3)
QUANTISE_ABOVE = 1e15  # larger magnitudes are already multiples of 0.001 in float64 (and x·1000 may overflow)


def quantise(values: list[Any]) -> np.ndarray:
    """Scores rounded to multiples of 0.001 (half to even), ``-0.0`` -> ``0.0``.

    Everything downstream (derived spans, AUPRC, masking and the near-copy guard's row keys) sees these
    values, so a change that moves no quantised score changes nothing.
    """
    raw = np.asarray(values, dtype=np.float64)
    small = np.abs(raw) < QUANTISE_ABOVE
    out = np.where(small, np.round(np.where(small, raw, 0.0) * QUANTUM) / QUANTUM, raw)
    return out + 0.0  # -0.0 + 0.0 == +0.0 in IEEE 754


def _is_number(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


@dataclass
class ExplanationRows:
    """What the reader collected: per id the parsed explanation, and which lines have which part."""

    scores: dict[str, np.ndarray] = field(default_factory=dict)
    probs: dict[str, dict[str, float]] = field(default_factory=dict)
    lines_with: dict[str, list[int]] = field(default_factory=lambda: {"char_scores": [], "prob": []})
    lines_without: dict[str, list[int]] = field(default_factory=lambda: {"char_scores": [], "prob": []})

    def mixing_problems(self, rows: int) -> list[Problem]:
        """A file that gives explanations on some lines but not all is refused (scores would be partial)."""
        out = []
        for part, what in (
            ("char_scores", "'char_scores'"),
            ("prob", "the masked probabilities ('prob', 'prob_removed_10', ...)"),
        ):
            with_, without = self.lines_with[part], self.lines_without[part]
            if not with_ or not without:
                continue
            message = (
                f"{what} is given on {len(with_):,} of {rows:,} lines (first on line {with_[0]}) but "
                "not on this one; explanations are scored on every row, so give them on every line "
                "or on none"
            )
            out += [Problem(line, part, message) for line in without[:MAX_LINES_NAMED]]
            if len(without) > MAX_LINES_NAMED:
                out.append(
                    Problem(
                        None,
                        part,
                        f"{len(without):,} lines lack {what} in total "
                        f"(the first {MAX_LINES_NAMED} are listed)",
                    )
                )
        return out

    def aligned_scores(self, order: list[str]) -> list[np.ndarray] | None:
        if not self.lines_with["char_scores"]:
            return None
        return [self.scores[i] for i in order]

    def aligned_probs(self, order: list[str]) -> dict[str, np.ndarray] | None:
        if not self.lines_with["prob"]:
            return None
        return {key: np.asarray([self.probs[i][key] for i in order], dtype=np.float64) for key in PROB_KEYS}


def _scores_problem(value: object, text: str | None) -> tuple[np.ndarray | None, str | None, str]:
    """Parsed scores, or None with (field, message)."""
    if not isinstance(value, list):
        found = describe_found(value)
        return None, "char_scores", f"char_scores must be a list of numbers, {SCORES_HINT}; got {found}"
    for k, item in enumerate(value):
        if not _is_number(item):
            return None, f"char_scores[{k}]", f"must be a number; got {describe_found(item)}"
        if not math.isfinite(item):  # 1e999 parses as inf (NaN/Infinity literals are refused by the reader)
            return None, f"char_scores[{k}]", "must be a finite number; got a number too large to represent"
    if text is not None and len(value) != len(text):
        return (
            None,
            "char_scores",
            (
                f"has {len(value):,} numbers but the item's text has {len(text):,} "
                f"characters (code points); give {SCORES_HINT}"
            ),
        )
    return quantise(value), None, ""


def _prob_problem(key: str, value: object) -> str | None:
    if not _is_number(value):
        return f"{key} must be a probability, a number from 0 to 1; got {describe_found(value)}"
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        shown = value if math.isfinite(value) else "a number too large to represent"
        return f"{key} must be a probability from 0 to 1; got {shown}"
    return None


def parse_explanation_fields(  # noqa: C901
    line: int,
    obj: dict[str, Any],
    rid: str | None,
    text: str | None,
    rows: ExplanationRows,
    label: int | None,
) -> list[Problem]:
    """Check ``char_scores``, the probabilities and the hashes of one line; record valid parts in ``rows``.

    ``text`` is the row's public text (None for an unknown or invalid id: the coverage check reports it,
    and the length and hash checks are skipped). ``label`` is the line's valid predicted label (None when
    invalid: already reported, and the hashes, which depend on it, are not checked). Returns the problems.
    """
    problems: list[Problem] = []
    scores = None
    if "char_scores" in obj:
        rows.lines_with["char_scores"].append(line)
        scores, where, message = _scores_problem(obj["char_scores"], text)
        if where is not None:
            problems.append(Problem(line, where, message))
        elif rid is not None and text is not None and scores is not None:
            rows.scores.setdefault(rid, scores)
    else:
        rows.lines_without["char_scores"].append(line)

    given = [key for key in PROB_KEYS if key in obj]
    if given:
        rows.lines_with["prob"].append(line)
        missing = [key for key in PROB_KEYS if key not in obj]
        if missing:
            problems.append(
                Problem(
                    line,
                    missing[0],
                    f"the masked probabilities come all together or not at "
                    f"all: this line lacks {', '.join(missing)}",
                )
            )
        if "char_scores" not in obj:
            problems.append(
                Problem(
                    line,
                    "char_scores",
                    "the masked probabilities need 'char_scores': the masked texts are defined by them",
                )
            )
        bad = [Problem(line, key, msg) for key in given if (msg := _prob_problem(key, obj[key])) is not None]
        problems += bad
        if not missing and not bad and rid is not None:
            rows.probs.setdefault(rid, {key: float(obj[key]) for key in PROB_KEYS})
    else:
        rows.lines_without["prob"].append(line)

    for key in HASH_KEYS:
        if key not in obj:
            continue
        value = obj[key]
        if not isinstance(value, str):
            problems.append(
                Problem(
                    line, key, f"{key} must be a string of 64 hexadecimal digits; got {describe_found(value)}"
                )
            )
            continue
        if "char_scores" not in obj:
            message = f"{key} needs 'char_scores': the masked text is defined by them"
            problems.append(Problem(line, key, message))
            continue
        if scores is None or text is None or label is None:
            continue  # the scores, the id or the label are already reported; no text to hash
        variant = key.removeprefix("sha256_")
        if value.strip().lower() != text_sha256(masked_text(text, scores, variant, label)):
            problems.append(
                Problem(
                    line,
                    key,
                    f"does not match the {variant} text computed from this line's "
                    "char_scores and label; write the masked inputs with `python -m scoring "
                    "masked-inputs` and run the model on those texts",
                )
            )
    return problems
