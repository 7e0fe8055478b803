"""Demo-specific checks on top of the scorer (``scoring``), which is the authority for every rule.

The parser, value sets, cross-field rules, near-duplicate normalisation and threshold all come from
``scoring.protocol`` and ``scoring.references``; this module only adds what the demo generator needs:
the exact key order of a demo row, and near-duplicate look-ups phrased for the generator's messages.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

from scoring.protocol import DISCRETE_FIELDS, FIELDS, VALUE_SETS, consistency_issues, parse_output
from scoring.references import audit_key, near_duplicate_pairs

__all__ = ["audit_key", "cross_split_near_duplicates", "is_near_duplicate", "loose_key", "record_problems"]


def loose_key(text: str) -> str:
    """The ToxiTrace demos' own uniqueness rule: NFKC, lower case, whitespace removed (punctuation kept).
    The VARM demo follows the authors' audit key (`scoring.references.audit_key`), which
    `check-references` enforces; the ToxiTrace bundles have no such rule, so their demos keep this one."""
    return "".join(unicodedata.normalize("NFKC", text).lower().split())


ROW_KEYS = ("id", "text", *FIELDS, "cot")


def record_problems(row: dict) -> list[str]:
    """Plain-words problems of one demo reference record (empty list when it is valid)."""
    if list(row) != list(ROW_KEYS):
        return [f"keys {list(row)} != {list(ROW_KEYS)}"]
    if not all(isinstance(row[k], str) and row[k] for k in ROW_KEYS):
        return ["every value must be a non-empty string"]
    problems = [
        f"{f} value {row[f]!r} not in value set" for f in DISCRETE_FIELDS if row[f] not in VALUE_SETS[f]
    ]
    if not problems:
        problems += consistency_issues(row)
    parsed = parse_output(row["cot"])
    problems += [f"cot: {i}" for i in parsed.format_issues]
    if parsed.schema_valid and any(parsed.record[f] != row[f] for f in FIELDS):
        problems.append("cot anchors do not parse back to the row's own fields")
    return problems


def is_near_duplicate(norm: str, pool: list[str]) -> bool:
    """True when the normalised ``norm`` is a scorer near-duplicate of some normalised string in ``pool``."""
    return bool(near_duplicate_pairs([norm], pool))


def cross_split_near_duplicates(
    splits: dict[str, list[str]], key: Callable[[str], str]
) -> list[tuple[str, str, str, str]]:
    """All (split_a, text_a, split_b, text_b) near-duplicate pairs across different splits (raw texts),
    compared on `key`."""
    found = []
    names = list(splits)
    normalised = {s: [key(t) for t in splits[s]] for s in names}
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            for ia, ib, _ in near_duplicate_pairs(normalised[a], normalised[b]):
                found.append((a, splits[a][ia], b, splits[b][ib]))
    return found
