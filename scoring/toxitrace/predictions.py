"""Gold-independent reader for ToxiTrace predictions.

One object per line, one line per test row, any order::

    {"id": "cold-test-00001", "label": 1}
    {"id": "cntp-test-00001", "label": 1, "spans": [[3, 5], "傻子"]}

``label`` is the number 0 or 1 (see the package docstring for the label policy). ``spans`` follows the span
policy of ``spans.py`` and is checked against the PUBLIC text of the row, so validation never needs gold.
On span tracks every line needs ``spans`` (``[]`` for none) unless it gives ``char_scores`` (spans are then
derived from the scores, spec §3); elsewhere it is optional, checked when given, and scored only when every
line has it and the references carry spans. Unknown keys are ignored.

Explanations (spec §3), optional on every track, all-or-none across the file:

- ``char_scores``: one finite number per code point of the row's public text;
- ``prob`` and ``prob_removed_<k>`` / ``prob_kept_<k>`` for k in 10, 20, 50 (all seven or none; they need
  ``char_scores``): probabilities in [0, 1];
- ``sha256_<variant>`` (each optional): checked against the masked text recomputed from ``char_scores``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from ..jsonl import coverage_problems, read_jsonl
from ..problems import Problem
from ..report import Report
from .explanations_input import ExplanationRows, parse_explanation_fields
from .fields import id_problem, label_problem
from .spans import Span, parse_spans

SpanMode = Literal["required", "optional"]


@dataclass
class ToxiPredictions:
    """Predictions aligned to the public inputs' order; ``spans`` None when not given on every line.

    ``char_scores`` (one float64 array per row) and ``probs`` (key -> per-row array) are None when the
    submission has no explanations; the reader refuses files that give them on some lines only.
    """

    labels: np.ndarray
    spans: list[tuple[Span, ...]] | None
    char_scores: list[np.ndarray] | None = None
    probs: dict[str, np.ndarray] | None = None


def parse_predictions(  # noqa: C901
    data: bytes, inputs: list[dict[str, Any]], *, spans: SpanMode = "optional", split: str = "test"
) -> tuple[ToxiPredictions | None, Report]:
    """Validate ``data`` against the public inputs ``[{"id", "text"}]`` of ``split`` (named in messages).

    Returns the aligned predictions (None when invalid) and the report shown to the submitter.
    """
    report = Report()
    rows, problems = read_jsonl(data, what="predictions")
    report.rows = len(rows)
    text_of = {inp["id"]: inp["text"] for inp in inputs}
    found: list[tuple[int, str]] = []
    labels: dict[str, int] = {}
    row_spans: dict[str, tuple[Span, ...]] = {}
    lines_without_spans = 0
    explained = ExplanationRows()

    for line, obj in rows:
        if "id" not in obj:
            problems.add(Problem(line, "id", "missing field 'id'"))
            rid = None
        elif (msg := id_problem(obj["id"])) is not None:
            problems.add(Problem(line, "id", msg))
            rid = None
        else:
            rid = obj["id"]
            found.append((line, rid))

        line_label = None
        if "label" not in obj:
            problems.add(Problem(line, "label", "missing field 'label' (the number 0 or 1)"))
        elif (msg := label_problem(obj["label"])) is not None:
            problems.add(Problem(line, "label", msg))
        else:
            line_label = int(obj["label"])
            if rid is not None and rid not in labels:
                labels[rid] = obj["label"]

        text = text_of.get(rid) if rid is not None else None
        for problem in parse_explanation_fields(line, obj, rid, text, explained, line_label):
            problems.add(problem)

        if "spans" not in obj:
            lines_without_spans += 1
            if spans == "required" and "char_scores" not in obj:
                problems.add(
                    Problem(
                        line,
                        "spans",
                        "missing field 'spans': this track scores toxic spans; "
                        "write [] when the model marks none",
                    )
                )
        elif rid is not None and rid in text_of:  # unknown ids are reported by the coverage check
            parsed, span_problems = parse_spans(obj["spans"], text_of[rid])
            for fld, msg in span_problems:
                problems.add(Problem(line, fld, msg))
            row_spans.setdefault(rid, parsed)

    for problem in coverage_problems(found, list(text_of), split=split):
        problems.add(problem)
    for problem in explained.mixing_problems(len(rows)):
        problems.add(problem)
    report.extend(list(problems))
    report.errors_total = problems.total  # the reader counted problems beyond those it kept
    if 0 < lines_without_spans < len(rows) and (spans == "optional" or explained.lines_with["char_scores"]):
        report.advice.append(
            "Some lines give 'spans' and some do not; spans are only scored when every line has them"
            + (
                " (otherwise they are derived from 'char_scores')."
                if explained.lines_with["char_scores"]
                else "."
            )
        )
    if not report.valid:
        return None, report
    order = [inp["id"] for inp in inputs]
    return (
        ToxiPredictions(
            labels=np.asarray([labels[i] for i in order], dtype=np.int8),
            spans=[row_spans[i] for i in order] if lines_without_spans == 0 else None,
            char_scores=explained.aligned_scores(order),
            probs=explained.aligned_probs(order),
        ),
        report,
    )
