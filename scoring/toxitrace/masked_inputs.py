"""``python -m scoring masked-inputs``: the masked texts a submitter runs their model on (spec §3).

One JSON line per test row and variant, rows in the order of the public inputs and variants in the order
``removed_10, removed_20, removed_50, kept_10, kept_20, kept_50``::

    {"id": "cold-test-00001", "variant": "removed_20", "text": "...", "sha256": "<64 hex digits>"}

The submitter writes the model's toxic probability on ``text`` as ``prob_<variant>`` (and may copy
``sha256`` as ``sha256_<variant>``, which the scorer then checks). Same inputs and scores, same bytes.
"""

from __future__ import annotations

import json
from typing import Any

from ..problems import InputError, Problem
from .masking import masked_texts, text_sha256
from .predictions import SpanMode, parse_predictions


def masked_inputs_jsonl(
    inputs: list[dict[str, Any]], predictions: bytes, *, spans: SpanMode = "optional"
) -> bytes:
    """Validate ``predictions`` (which must carry ``char_scores``) and return the masked-inputs JSONL.

    Raises InputError with every problem when the predictions are invalid or have no ``char_scores``.
    """
    preds, report = parse_predictions(predictions, inputs, spans=spans)
    if preds is None:
        raise InputError(report.errors, report.errors_total)
    if preds.char_scores is None:
        raise InputError(
            [
                Problem(
                    None,
                    "char_scores",
                    "the predictions have no 'char_scores'; the masked "
                    "texts are the texts minus (or only) their top-scored "
                    "characters for the predicted label, so every line needs them",
                )
            ]
        )
    lines = []
    for row, scores, label in zip(inputs, preds.char_scores, preds.labels, strict=True):
        for variant, text in masked_texts(row["text"], scores, int(label)).items():
            record = {"id": row["id"], "variant": variant, "text": text, "sha256": text_sha256(text)}
            lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    return "".join(lines).encode("utf-8")
