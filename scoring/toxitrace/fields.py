"""Field checks shared by the reference and prediction readers (one policy, one wording)."""

from __future__ import annotations

import json

from ..jsonl import describe_found

# Published integer codes and the names we store and show (COLD fine-grained label; ToxiCN fields).
FINE_LABELS = {0: "other_non_offensive", 1: "attack_individual", 2: "attack_group", 3: "anti_bias"}
TOXIC_TYPES = {0: "non_toxic", 1: "offensive", 2: "hate"}
EXPRESSIONS = {0: "non_hate", 1: "explicit", 2: "implicit", 3: "reporting"}
TARGET_GROUPS = ("LGBTQ", "Region", "Sexism", "Racism", "others", "non-hate")
CODE_NAMES = {"fine_label": FINE_LABELS, "toxic_type": TOXIC_TYPES, "expression": EXPRESSIONS}


def label_problem(value: object) -> str | None:
    """None for the JSON numbers 0 and 1; otherwise a plain-words message.

    Strings are rejected rather than coerced so that ``"0"`` can never silently mean 0 to one reader and
    something else to another; booleans are rejected although Python treats True as 1.
    """
    if isinstance(value, bool):
        return "label must be the number 0 or 1, not true/false"
    if isinstance(value, int):
        return None if value in (0, 1) else f"label must be 0 or 1; got {value}"
    if isinstance(value, str) and value.strip() in ("0", "1"):
        shown = json.dumps(value, ensure_ascii=False)
        return f"label must be the number {value.strip()} written without quotes, not the string {shown}"
    if isinstance(value, float):
        return "label must be the whole number 0 or 1, written without a decimal point"
    if value is None:
        return "label is null; it must be the number 0 or 1"
    return f"label must be the number 0 or 1; got {describe_found(value)}"


def id_problem(value: object) -> str | None:
    """None for a non-empty string id."""
    if isinstance(value, str):
        return None if value.strip() else "id is empty"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f'id must be a string; write it in quotes, e.g. "{value}"'
    return f"id must be a string; got {describe_found(value)}"
