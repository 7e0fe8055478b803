"""One-call helpers used by the worker and the CLI: score a file, validate a file, canonical JSON."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from .jsonl import read_jsonl, string_problem
from .problems import InputError
from .references import resolve_bundle, subset_files
from .report import Report
from .tracks import get_track
from .version import SCORER_VERSION

__all__ = ["dumps_result", "read_public_inputs", "references_sha256", "score_file", "validate_file"]


def read_public_inputs(data: bytes) -> list[dict[str, Any]]:
    """Public test inputs, one `{"id", "text"}` per line (to validate without references)."""
    records, read_problems = read_jsonl(data, what="inputs")
    problems = list(read_problems)
    inputs = []
    for line, obj in records:
        bad = [p for p in (string_problem(obj, "id", line), string_problem(obj, "text", line)) if p]
        problems += bad
        if not bad:
            inputs.append({"id": obj["id"], "text": obj["text"]})
    if problems:
        raise InputError(problems[:200], total=read_problems.total + len(problems) - len(read_problems))
    return inputs


def references_sha256(path: Path, subsets_dir: Path | None = None) -> str:
    """SHA-256 of the canonical bundle bytes: the test file, then each subset file sorted by name.

    Each part is framed as `<name>\\n<byte length>\\n<bytes>` so that no two bundles share a byte stream.
    `path` is a test.jsonl file or a bundle directory (as for `Track.load_references`).
    """
    test, subsets_dir = resolve_bundle(Path(path), subsets_dir)
    digest = hashlib.sha256()
    parts = [("test.jsonl", test)] + [(f"subsets/{p.name}", p) for p in subset_files(subsets_dir)]
    for name, part in parts:
        data = part.read_bytes()
        digest.update(f"{name}\n{len(data)}\n".encode())
        digest.update(data)
    return digest.hexdigest()


def score_file(
    track: str,
    references: Path,
    predictions: bytes,
    *,
    subsets_dir: Path | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    disclose: bool = True,
) -> dict[str, Any]:
    """Score a predictions file; the result dict (ARCHITECTURE.md §2) with `provenance` added.
    `disclose=False` keeps small and label-pure cells (`scoring.disclosure`): for public data only.

    Raises InputError when the references or the predictions cannot be used, ValueError for a bad track.
    """
    scorer = get_track(track)
    refs = scorer.load_references(Path(references), subsets_dir)
    result = scorer.score(refs, predictions, bootstrap=bootstrap, seed=seed, disclose=disclose)
    result["provenance"] = {
        "scorer_version": SCORER_VERSION,
        "references_sha256": references_sha256(Path(references), subsets_dir),
        "predictions_sha256": hashlib.sha256(predictions).hexdigest(),
    }
    return result


def validate_file(
    track: str,
    predictions: bytes,
    *,
    references: Path | None = None,
    inputs: list[dict[str, Any]] | None = None,
) -> Report:
    """Gold-independent validation against public inputs (given, or taken from the references)."""
    scorer = get_track(track)
    if inputs is None:
        if references is None:
            raise ValueError("validate_file needs references or public inputs")
        inputs = scorer.public_inputs(scorer.load_references(Path(references)))
    return scorer.check_predictions(predictions, inputs)


def dumps_result(result: dict[str, Any]) -> bytes:
    """Canonical JSON bytes: same result, same bytes (sorted keys, UTF-8, indent 2, final newline)."""
    return (json.dumps(result, sort_keys=True, ensure_ascii=False, indent=2, allow_nan=False) + "\n").encode()
