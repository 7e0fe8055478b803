"""`python -m scoring verify`: is a published result the service's, and are its numbers right?

1. Signature: each row (a release's `rows.json`, or one row / result JSON) carries an Ed25519 signature of
   its canonical bytes (scoring/signatures.py) under the service's public key (`keys/ed25519.pub` in the
   results dataset, `GET /api/v1/keys`).
2. Re-derivation, given the predictions and the references (a public test set, or a retired private one):
   the row's full-test numbers (`full.<metric>`, or the plain metric columns of a full-test row) are
   computed again with this scorer and compared exactly, field by field.
Returns a list of problems, one line each, naming the row and the field; empty when everything holds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .signatures import load_public_key, verified


def rows_of(path: Path) -> list[dict[str, Any]]:
    """The signed rows at `path`: a release folder, its rows.json, or one JSON object."""
    if path.is_dir():
        path = path / "rows.json"
    value = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(value, dict) and isinstance(value.get("rows"), list):
        return list(value["rows"])
    return [value]


def check_signatures(rows: list[dict[str, Any]], public_key_text: str) -> list[str]:
    key = load_public_key(public_key_text)
    return [
        f"row {k + 1} ({row.get('submission_id', '?')}): signature does not match its bytes or this key"
        for k, row in enumerate(rows)
        if not verified(key, row)
    ]


def derived_columns(result: dict[str, Any]) -> dict[str, Any]:
    """A scorer result's board columns, as a row carries them: numeric metric leaves by dotted path,
    `explanations.<name>` and `undefined.<metric>` (the reason)."""
    columns = _numbers(result.get("metrics") or {})
    columns.update(_numbers(result.get("explanations") or {}, "explanations."))
    columns.update({f"undefined.{k}": str(v) for k, v in (result.get("undefined") or {}).items()})
    return columns


def _numbers(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            out.update(_numbers(value, f"{prefix}{key}."))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            out[f"{prefix}{key}"] = value
    return out


def check_numbers(row: dict[str, Any], expected: dict[str, Any]) -> list[str]:
    """Compare a row's full-test metric columns with `expected` (flattened, as the board's: `derived_columns`
    of the re-derived result)."""
    if isinstance(row.get("result"), dict):  # a published result envelope (a public test's: full, exact)
        full = derived_columns(row["result"])
    else:
        full = {k.removeprefix("full."): v for k, v in row.items() if k.startswith("full.")}
    if not full:  # a full-test row (a public test set's release)
        full = {k: row[k] for k in expected if k in row}
    problems = []
    for name, value in sorted(full.items()):
        if name not in expected:
            problems.append(
                f"{row.get('submission_id', '?')}: field full.{name} is not a metric of this scorer"
            )
        elif expected[name] != value:
            problems.append(
                f"{row.get('submission_id', '?')}: field full.{name} differs: published {value!r}, "
                f"re-derived {expected[name]!r}"
            )
    return problems
