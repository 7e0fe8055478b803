"""VARM reference bundles: reading the hidden gold, and the maintainer's bundle checker.

Messages name the file, line and field and say what was expected; they never quote a gold value (they may
end up in logs), only the public value sets.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np

from .jsonl import ProblemList, describe_found, read_jsonl
from .limits import MAX_FILE_BYTES
from .problems import InputError, Problem
from .protocol import (
    ANALYSIS_PREFIX,
    DISCRETE_FIELDS,
    FIELD_ANCHOR,
    FIELDS,
    NO_TARGET,
    VALUE_SETS,
    consistency_issues,
    parse_output,
)
from .varm_metrics import gold_target

__all__ = [
    "SPLITS",
    "BundleProblem",
    "audit_key",
    "VarmReferences",
    "bundle_warnings",
    "check_reference_bundle",
    "load_references",
    "near_duplicate_pairs",
    "resolve_bundle",
    "validate_gold_record",
]

SPLITS = ("train", "dev", "test")
NEAR_DUPLICATE_RATIO = 95  # RapidFuzz fuzz.ratio on the audit key (the authors' split rule)
# Reference files are maintainer-made and larger than uploads (train has 5,600 rows); still bounded.
REFERENCE_MAX_BYTES = 4 * MAX_FILE_BYTES


@dataclass(frozen=True)
class BundleProblem(Problem):
    """A Problem that also names the bundle file it was found in."""

    file: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"file": self.file, **super().as_dict()}

    def __str__(self) -> str:
        return f"{self.file}: {super().__str__()}" if self.file else super().__str__()


def _in_file(problems: list[Problem], name: str) -> list[BundleProblem]:
    return [BundleProblem(p.line, p.field, p.message, file=name) for p in problems]


@dataclass
class VarmReferences:
    """The gold test rows (reference order) and the cue subsets as row-index arrays."""

    rows: list[dict[str, Any]]
    ids: list[str]
    texts: list[str]
    subsets: dict[str, np.ndarray] = field(default_factory=dict)
    has_ids: bool = True

    def __len__(self) -> int:
        return len(self.rows)

    def restricted(self, rows: np.ndarray) -> VarmReferences:
        """The references of the rows `rows` (ascending indices), the subsets re-indexed to them: what a slice
        of the test (scoring/slices.py) is scored on."""
        rows = np.asarray(rows, dtype=np.int64)
        position = np.full(len(self.rows), -1, dtype=np.int64)
        position[rows] = np.arange(len(rows))
        subsets = {name: position[members][position[members] >= 0] for name, members in self.subsets.items()}
        return VarmReferences(
            rows=[self.rows[k] for k in rows],
            ids=[self.ids[k] for k in rows],
            texts=[self.texts[k] for k in rows],
            subsets=subsets,
            has_ids=self.has_ids,
        )

    def strata(self) -> list[tuple[Any, ...]]:
        """Each row's slice stratum: its gold label and the cue subsets it is in."""
        member: list[list[str]] = [[] for _ in self.rows]
        for name, rows in sorted(self.subsets.items()):
            for k in rows:
                member[int(k)].append(name)
        return [(row.get("label"), tuple(names)) for row, names in zip(self.rows, member, strict=True)]


def resolve_bundle(path: Path, subsets_dir: Path | None = None) -> tuple[Path, Path | None]:
    """(test file, subsets dir or None) for a test.jsonl path or a bundle directory."""
    path = Path(path)
    if path.is_dir():
        test = path / "test.jsonl"
        if subsets_dir is None and (path / "subsets").is_dir():
            subsets_dir = path / "subsets"
        return test, subsets_dir
    return path, subsets_dir


def subset_files(subsets_dir: Path | None) -> list[Path]:
    """Subset files sorted by name (the canonical order used for hashing and results)."""
    if subsets_dir is None:
        return []
    return sorted(Path(subsets_dir).glob("*.jsonl"), key=lambda p: p.name)


def validate_gold_record(  # noqa: C901
    obj: dict[str, Any], line: int, *, require_cot: bool = False, require_id: bool = False
) -> list[Problem]:
    """Keys, types, value sets and the cross-field rules of one gold record (no values quoted)."""
    problems: list[Problem] = []
    keys = ("text", *FIELDS) + (("cot",) if require_cot else ()) + (("id",) if require_id else ())
    for key in keys:
        if key not in obj:
            problems.append(Problem(line, key, f"missing '{key}'"))
        elif not isinstance(obj[key], str):
            problems.append(Problem(line, key, f"'{key}' must be a string, found {describe_found(obj[key])}"))
    if "id" in obj and not require_id and not isinstance(obj["id"], str):
        problems.append(Problem(line, "id", f"'id' must be a string, found {describe_found(obj['id'])}"))
    if problems:
        return problems
    if not obj["text"].strip():
        problems.append(Problem(line, "text", "'text' is empty"))
    for name in DISCRETE_FIELDS:
        if obj[name] not in VALUE_SETS[name]:
            problems.append(Problem(line, name, f"value is not one of {', '.join(VALUE_SETS[name])}"))
    if not obj["target"].strip() and obj["target_type"] != NO_TARGET:
        message = f"'target' is empty; it may be empty only when target_type is {NO_TARGET}"
        problems.append(Problem(line, "target", message))
    if problems:
        return problems
    record = {name: obj[name] for name in FIELDS}
    record["target"] = gold_target(obj)
    for issue in consistency_issues(record):
        problems.append(Problem(line, None, f"the fields break the rule {issue} (spec §2.3)"))
    return problems


def cot_lacks_prefix(obj: dict[str, Any]) -> bool:
    """A gold `cot` without the 分析： opening: the authors' validator accepts it when the rest parses to
    the record's own fields (spec "Release formats"), so it is checked as if prefixed, and warned about."""
    return isinstance(obj.get("cot"), str) and not obj["cot"].startswith(ANALYSIS_PREFIX)


def _cot_problems(obj: dict[str, Any], line: int) -> list[Problem]:
    """The record's `cot` must parse (strictly) to a schema-valid record equal to its own fields (a missing
    分析： opening aside, see ``cot_lacks_prefix``)."""
    cot = obj["cot"]
    parsed = parse_output(ANALYSIS_PREFIX + cot if cot_lacks_prefix(obj) else cot)
    problems = []
    if not parsed.schema_valid:
        problems.append(
            Problem(
                line,
                "cot",
                "cot is not a schema-valid output; format issues: " + ", ".join(parsed.format_issues),
            )
        )
    expected = {name: obj[name] for name in FIELDS}
    expected["target"] = gold_target(obj)
    for name in FIELDS:
        if name in parsed.record and parsed.record[name] != expected[name]:
            message = f"the cot's [{FIELD_ANCHOR[name]}] value differs from the record's '{name}'"
            problems.append(Problem(line, "cot", message))
    return problems


def _read_file(path: Path, what: str) -> tuple[list[tuple[int, dict[str, Any]]], ProblemList]:
    try:
        data = path.read_bytes()
    except OSError as error:
        problems = ProblemList()
        problems.add(Problem(None, None, f"cannot read {what}: {error.strerror}"))
        return [], problems
    return read_jsonl(data, what=what, max_bytes=REFERENCE_MAX_BYTES)


def _gold_file(path: Path, *, require_cot: bool) -> tuple[list[tuple[int, dict[str, Any]]], list[Problem]]:
    records, read_problems = _read_file(path, path.name)
    problems: list[Problem] = list(read_problems)
    has_id = [("id" in obj) for _, obj in records]
    mixed = any(has_id) and not all(has_id)
    for line, obj in records:
        found = validate_gold_record(obj, line, require_cot=require_cot, require_id=mixed)
        if not found and require_cot:
            found = _cot_problems(obj, line)
        problems.extend(found)
    return records, problems


def _uniqueness(records: list[tuple[int, dict[str, Any]]], key: str) -> list[Problem]:
    seen: dict[str, int] = {}
    problems = []
    for line, obj in records:
        value = obj.get(key)
        if not isinstance(value, str):
            continue
        if value in seen:
            message = f"same {key} as line {seen[value]}; every {key} must be unique"
            problems.append(Problem(line, key, message))
        else:
            seen[value] = line
    return problems


def _match_subset(
    records: list[tuple[int, dict[str, Any]]], refs_ids: dict[str, int], refs_texts: dict[str, int]
) -> tuple[list[int], list[Problem]]:
    """Row indices of a subset's rows in the test split: by id when both have one, else by exact text."""
    rows: list[int] = []
    problems: list[Problem] = []
    seen: dict[int, int] = {}  # test row -> the subset line that named it
    for line, obj in records:
        row_id, text = obj.get("id"), obj.get("text")
        if isinstance(row_id, str) and refs_ids:
            index = refs_ids.get(row_id)
            how = "id"
        elif isinstance(text, str):
            index = refs_texts.get(text)
            how = "text"
        else:
            problems.append(Problem(line, None, "a subset row needs an 'id' or a 'text' string"))
            continue
        if index is None:
            problems.append(Problem(line, how, f"no test row has this {how}"))
        elif index in seen:
            problems.append(Problem(line, how, f"the same test row as line {seen[index]}"))
        else:
            seen[index] = line
            rows.append(index)
    return rows, problems


def load_references(path: Path, subsets_dir: Path | None = None) -> VarmReferences:
    """Read and validate the gold test rows (+ subsets); InputError naming every bad line otherwise."""
    test_path, subsets_dir = resolve_bundle(path, subsets_dir)
    if Path(path).is_dir() and not test_path.exists():
        raise InputError([Problem(None, None, f"{path}: no test.jsonl here; expected {EXPECTED_REFERENCES}")])
    records, problems = _gold_file(test_path, require_cot=False)
    all_problems: list[Problem] = list(_in_file(problems, test_path.name))
    all_problems += _in_file(_uniqueness(records, "id") + _uniqueness(records, "text"), test_path.name)
    has_ids = bool(records) and all("id" in obj for _, obj in records)
    # Without ids in the bundle, rows are named by position so that public inputs still carry an id.
    ids = [obj["id"] if has_ids else f"{k + 1}" for k, (_, obj) in enumerate(records)]
    texts = cast(list[str], [obj.get("text") for _, obj in records])  # a missing one raises below
    refs = VarmReferences(rows=[obj for _, obj in records], ids=ids, texts=texts, has_ids=has_ids)
    id_index = {row_id: k for k, row_id in enumerate(ids)} if has_ids else {}
    text_index = {text: k for k, text in enumerate(texts) if isinstance(text, str)}
    for subset_path in subset_files(subsets_dir):
        name = f"subsets/{subset_path.name}"
        subset_records, read_problems = _read_file(subset_path, name)
        rows, match_problems = _match_subset(subset_records, id_index, text_index)
        all_problems += _in_file(list(read_problems) + match_problems, name)
        refs.subsets[subset_path.stem] = np.asarray(sorted(rows), dtype=np.int64)
    if all_problems:
        raise InputError(all_problems[:200], total=len(all_problems))
    return refs


def audit_key(text: str) -> str:
    """The authors' audit key (`preprocess.audit_release`): NFKC, lower case, alphanumeric characters only,
    so two texts differing only in punctuation, spacing or case are the same text."""
    return "".join(ch for ch in unicodedata.normalize("NFKC", text).lower() if ch.isalnum())


def near_duplicate_pairs(
    a: list[str], b: list[str], cutoff: float = NEAR_DUPLICATE_RATIO
) -> list[tuple[int, int, float]]:
    """(i, j, ratio) for every pair with RapidFuzz fuzz.ratio >= cutoff (inputs already normalised)."""
    if not a or not b:
        return []
    from rapidfuzz import fuzz, process

    scores = process.cdist(a, b, scorer=fuzz.ratio, score_cutoff=cutoff, workers=-1)
    rows, cols = np.nonzero(scores)
    return [(int(i), int(j), float(scores[i, j])) for i, j in zip(rows, cols, strict=True)]


EXPECTED_REFERENCES = (
    "a reference bundle folder (test.jsonl, optional train.jsonl, dev.jsonl, subsets/) "
    "or a single gold JSONL file (the authors' format: the 8 official keys, no id)"
)


def _split_files(path: Path) -> tuple[dict[str, Path], list[BundleProblem]]:
    """The gold files to check: a bundle folder's split files, or one gold file read as the test split."""
    if path.is_file():
        return {"test": path}, []
    if not path.is_dir():
        return {}, [BundleProblem(None, None, f"{path} does not exist; expected {EXPECTED_REFERENCES}")]
    files = {split: path / f"{split}.jsonl" for split in SPLITS if (path / f"{split}.jsonl").exists()}
    if "test" not in files:
        message = f"the folder has no test.jsonl; expected {EXPECTED_REFERENCES}"
        return files, [BundleProblem(None, None, message, file="test.jsonl")]
    return files, []


def blank_target_rows(rows: list[dict[str, Any]]) -> int:
    """Gold rows whose target is empty or blank (they can never be target-correct: spec §1)."""
    return sum(1 for row in rows if isinstance(row.get("target"), str) and not row["target"].strip())


def bundle_warnings(path: Path) -> list[str]:
    """Things a maintainer must know that do not make the bundle invalid (spec §1: blank gold targets)."""
    files, _ = _split_files(Path(path))
    warnings = []
    for file in files.values():
        records, _ = _read_file(file, file.name)
        blank = blank_target_rows([obj for _, obj in records])
        if blank:
            warnings.append(
                f"{file.name}: {blank:,} row(s) have a blank gold target; the official metrics compare with "
                "the target as written (the authors' evaluate.py), so no output can get them target-correct. "
                "`python -m scoring import --dataset varm --fill-blank-targets` fills them with 无明确对象."
            )
    return warnings


def check_reference_bundle(directory: Path) -> list[BundleProblem]:  # noqa: C901
    """Every problem of a VARM bundle directory (test.jsonl, optional train/dev.jsonl, subsets/), or of
    a single gold file (checked as the test split)."""
    directory = Path(directory)
    files, problems = _split_files(directory)
    splits: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for split, path in files.items():
        records, found = _gold_file(path, require_cot=True)
        problems += _in_file(found, path.name)
        problems += _in_file(_uniqueness(records, "id") + _uniqueness(records, "text"), path.name)
        splits[split] = records

    # Ids and texts unique across splits; no near-duplicate pair across splits.
    for key in ("id", "text"):
        first: dict[str, tuple[str, int]] = {}
        for split, records in splits.items():
            local: dict[str, int] = {}
            for line, obj in records:
                value = obj.get(key)
                if not isinstance(value, str) or value in local:
                    continue
                local[value] = line
                if value in first and first[value][0] != split:
                    other, other_line = first[value]
                    message = f"same {key} as {other}.jsonl line {other_line}; splits must not share rows"
                    problems.append(BundleProblem(line, key, message, file=f"{split}.jsonl"))
                first.setdefault(value, (split, line))
    # The authors' audit (spec "Release formats"): on the audit key, equal texts within a split are
    # duplicates, and equal or RapidFuzz ratio >= 95 across splits a leak. Exact copies are reported above.
    names = list(splits)
    keys = {s: [audit_key(obj.get("text") or "") for _, obj in splits[s]] for s in names}
    for split in names:
        first_row: dict[str, int] = {}
        for k, key in enumerate(keys[split]):
            line, obj = splits[split][k]
            if key in first_row and splits[split][first_row[key]][1].get("text") != obj.get("text"):
                message = (
                    f"same text as line {splits[split][first_row[key]][0]} on the authors' audit key (NFKC, "
                    "lower case, letters and digits only: it differs in punctuation, spacing or case); "
                    "every text must be unique"
                )
                problems.append(BundleProblem(line, "text", message, file=f"{split}.jsonl"))
            first_row.setdefault(key, k)
    for i, left in enumerate(names):
        for right in names[i + 1 :]:
            for a, b, ratio in near_duplicate_pairs(keys[left], keys[right]):
                line_a, obj_a = splits[left][a]
                line_b, obj_b = splits[right][b]
                if obj_a.get("text") == obj_b.get("text"):
                    continue  # exact duplicates are reported above
                message = (
                    f"near-duplicate of {left}.jsonl line {line_a} (RapidFuzz ratio {ratio:.1f} >= "
                    f"{NEAR_DUPLICATE_RATIO} on the authors' audit key); keep such pairs in one split"
                )
                problems.append(BundleProblem(line_b, "text", message, file=f"{right}.jsonl"))

    # Subsets: rows must be test rows (by id, else exact text) and copies of them.
    test = splits.get("test", [])
    has_ids = bool(test) and all("id" in obj for _, obj in test)
    id_index = {obj["id"]: k for k, (_, obj) in enumerate(test)} if has_ids else {}
    text_index = {obj["text"]: k for k, (_, obj) in enumerate(test) if isinstance(obj.get("text"), str)}
    subsets_dir = directory / "subsets"
    for path in subset_files(subsets_dir if subsets_dir.is_dir() else None):  # a file has no subsets/
        name = f"subsets/{path.name}"
        records, found = _read_file(path, name)
        _, match_problems = _match_subset(records, id_index, text_index)
        problems += _in_file(list(found) + match_problems, name)
        for line, obj in records:
            row_id, text = obj.get("id"), obj.get("text")
            index = id_index.get(row_id) if isinstance(row_id, str) and id_index else text_index.get(text)
            if index is None:
                continue
            gold = test[index][1]
            differing = [k for k in ("text", *FIELDS) if k in obj and obj[k] != gold.get(k)]
            if differing:
                problems.append(
                    BundleProblem(
                        line,
                        differing[0],
                        "subset row differs from its test row in " + ", ".join(differing),
                        file=name,
                    )
                )
    problems.sort(key=lambda p: (p.file, p.line or 0))  # stable: a line's problems keep their order
    return problems
