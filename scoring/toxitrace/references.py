"""Reader for our ToxiTrace reference JSONL (the hidden gold of cold, toxicn and cntp).

One object per line::

    {"id": "cold-test-00001", "text": "...", "label": 1, "topic": "race", "fine_label": "attack_group"}
    {"id": "cntp-test-00001", "text": "...", "label": 1, "spans": [[3, 5], "傻子"]}
    {"id": "toxicn-test-00001", "text": "...", "label": 1, "expression": "implicit",
     "target_groups": ["Sexism", "Racism"]}

``id`` (non-empty string, unique), ``text`` (non-empty string) and ``label`` (the number 0 or 1) are
required. ``spans`` is optional, but a file either gives it on every row (``[]`` for none) or on none; the
cntp track requires it. Breakdown fields (all optional, per row): ``topic``, ``fine_label``,
``toxic_type``, ``expression`` (a string, or a whole number; the published integer codes of the last three
are shown by name, e.g. fine_label 3 as ``anti_bias``) and ``target_groups`` (a list of strings; a row
counts towards every group it lists). Other keys are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..jsonl import ProblemList, describe_found, quote, read_jsonl
from ..problems import InputError, Problem
from .fields import CODE_NAMES, id_problem, label_problem
from .quality import split_warnings
from .spans import Span, parse_spans

SPLIT_FILES = ("train.jsonl", "dev.jsonl", "test.jsonl")
SCALAR_BREAKDOWNS = ("topic", "fine_label", "toxic_type", "expression")
LIST_BREAKDOWNS = ("target_groups",)
BREAKDOWN_FIELDS = SCALAR_BREAKDOWNS + LIST_BREAKDOWNS


@dataclass
class ToxiReferences:
    """Gold rows in file order. ``spans`` is None when the file has no spans at all."""

    ids: list[str]
    texts: list[str]
    labels: np.ndarray
    spans: list[tuple[Span, ...]] | None
    breakdowns: dict[str, list[tuple[str, ...]]] = field(default_factory=dict)  # field -> per-row values

    def __len__(self) -> int:
        return len(self.ids)

    def public_inputs(self) -> list[dict[str, Any]]:
        return [{"id": i, "text": t} for i, t in zip(self.ids, self.texts, strict=True)]

    def restricted(self, rows: np.ndarray) -> ToxiReferences:
        """The references of the rows `rows` (ascending indices): what a slice of the test is scored on."""
        rows = np.asarray(rows, dtype=np.int64)
        return ToxiReferences(
            ids=[self.ids[k] for k in rows],
            texts=[self.texts[k] for k in rows],
            labels=self.labels[rows],
            spans=None if self.spans is None else [self.spans[k] for k in rows],
            breakdowns={name: [values[k] for k in rows] for name, values in self.breakdowns.items()},
        )

    def strata(self) -> list[tuple[Any, ...]]:
        """Each row's slice stratum: its gold label and, where the set has topics, its topic."""
        topics = self.breakdowns.get("topic") or [()] * len(self.ids)
        if not any(topics):
            topics = [()] * len(self.ids)
        return [(int(label), tuple(topic)) for label, topic in zip(self.labels, topics, strict=True)]


def resolve_path(path: Path) -> Path:
    """A bundle directory means its ``test.jsonl``."""
    path = Path(path)
    return path / "test.jsonl" if path.is_dir() else path


def load_references(path: Path, *, require_spans: bool = False) -> ToxiReferences:
    """Read and validate a reference file (or bundle dir); InputError lists every bad line."""
    path = resolve_path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        message = f"cannot read the references file {path}: {error.strerror}"
        raise InputError([Problem(None, None, message)]) from None
    return parse_references(data, require_spans=require_spans)


def parse_references(data: bytes, *, require_spans: bool = False) -> ToxiReferences:  # noqa: C901
    rows, problems = read_jsonl(data, what="references")
    ids: list[str] = []
    texts: list[str] = []
    labels: list[int] = []
    spans: list[tuple[Span, ...]] = []
    with_spans: list[int] = []  # lines that have a spans key
    without_spans: list[int] = []
    breakdowns: dict[str, list[tuple[str, ...]]] = {name: [] for name in BREAKDOWN_FIELDS}
    first_line: dict[str, int] = {}

    for line, obj in rows:
        ok = True
        rid = obj.get("id")
        if "id" not in obj:
            problems.add(Problem(line, "id", "missing field 'id'"))
            ok = False
        elif (msg := id_problem(rid)) is not None:
            problems.add(Problem(line, "id", msg))
            ok = False
        elif not isinstance(rid, str):  # id_problem refuses every other type; says so to the checker
            ok = False
        elif rid in first_line:
            problems.add(Problem(line, "id", f"id {quote(rid)} already appeared on line {first_line[rid]}"))
            ok = False
        else:
            first_line[rid] = line

        text = obj.get("text")
        if not isinstance(text, str) or not text:
            found = "missing" if "text" not in obj else f"got {describe_found(text)}"
            problems.add(Problem(line, "text", f"text must be a non-empty string; {found}"))
            ok = False
            text = ""

        if "label" not in obj:
            problems.add(Problem(line, "label", "missing field 'label' (the number 0 or 1)"))
            ok = False
        elif (msg := label_problem(obj["label"])) is not None:
            problems.add(Problem(line, "label", msg))
            ok = False

        row_spans: tuple[Span, ...] = ()
        if "spans" in obj:
            with_spans.append(line)
            if text:
                row_spans, span_problems = parse_spans(obj["spans"], text)
                for fld, msg in span_problems:
                    problems.add(Problem(line, fld, msg))
                    ok = False
        else:
            without_spans.append(line)

        row_groups: dict[str, tuple[str, ...]] = {}
        for name in BREAKDOWN_FIELDS:
            values, msg = _breakdown_values(name, obj.get(name))
            if msg is not None:
                problems.add(Problem(line, name, msg))
                ok = False
            row_groups[name] = values

        if ok:
            assert isinstance(rid, str)  # an ok row passed id_problem
            ids.append(rid)
            texts.append(text)
            labels.append(obj["label"])
            spans.append(row_spans)
            for name in BREAKDOWN_FIELDS:
                breakdowns[name].append(row_groups[name])

    if require_spans and without_spans:
        _add_span_coverage(
            problems, without_spans, "this track scores toxic spans: every row needs 'spans' ([] for none)"
        )
    elif with_spans and without_spans:
        message = (
            f"'spans' is given on {len(with_spans):,} rows but not on this one; "
            "give it on every row ([] for none) or on none"
        )
        _add_span_coverage(problems, without_spans, message)
    if problems.total:
        raise InputError(list(problems), problems.total)
    return ToxiReferences(
        ids=ids,
        texts=texts,
        labels=np.asarray(labels, dtype=np.int8),
        spans=spans if with_spans else None,
        breakdowns={name: vals for name, vals in breakdowns.items() if any(vals)},
    )


def _add_span_coverage(problems: ProblemList, lines: list[int], message: str) -> None:
    for line in lines:
        problems.add(Problem(line, "spans", message))


def _breakdown_values(name: str, value: object) -> tuple[tuple[str, ...], str | None]:
    """The group(s) a row belongs to for one breakdown field; () when absent or null."""
    if value is None:
        return (), None
    if name in LIST_BREAKDOWNS:
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            return (), f"{name} must be a list of non-empty strings; got {describe_found(value)}"
        return tuple(dict.fromkeys(value)), None  # de-duplicated, order kept
    if isinstance(value, str) and value:
        return (value,), None
    if isinstance(value, int) and not isinstance(value, bool):
        names = CODE_NAMES.get(name)
        if names is None:
            return (str(value),), None
        if value not in names:  # a published code we do not know: better an error than a "7" column
            codes = ", ".join(f"{k} ({v})" for k, v in names.items())
            return (), f"{name} code must be one of {codes}, or a name; got {value}"
        return (names[value],), None
    return (), f"{name} must be a non-empty string or a whole number; got {describe_found(value)}"


def bundle_warnings(directory: Path) -> list[str]:
    """What a maintainer should know about a valid bundle (see `quality.split_warnings`)."""
    texts: dict[str, list[str]] = {}
    for name in SPLIT_FILES:
        path = Path(directory) / name
        if path.is_file():
            try:
                texts[name.removesuffix(".jsonl")] = load_references(path).texts
            except InputError:
                continue  # reported as problems by check_reference_bundle
    return split_warnings(texts)


def check_reference_bundle(directory: Path, *, require_spans: bool = False) -> list[Problem]:
    """Maintainer check of a bundle folder: test.jsonl required, each split file valid, ids unique across
    splits. Messages start with the file name."""
    directory = Path(directory)
    problems: list[Problem] = []
    if not (directory / "test.jsonl").is_file():
        problems.append(Problem(None, None, f"{directory} has no test.jsonl"))
    seen: dict[str, str] = {}
    for name in SPLIT_FILES:
        path = directory / name
        if not path.is_file():
            continue
        try:
            refs = load_references(path, require_spans=require_spans and name == "test.jsonl")
        except InputError as error:
            problems += [Problem(p.line, p.field, f"{name}: {p.message}") for p in error.problems]
            continue
        clashes = [i for i in refs.ids if i in seen]
        if clashes:
            shown = ", ".join(quote(i) for i in clashes[:5])
            problems.append(
                Problem(
                    None,
                    "id",
                    f"{name}: {len(clashes):,} id(s) also used in {seen[clashes[0]]}, e.g. {shown}",
                )
            )
        seen.update({i: name for i in refs.ids if i not in seen})
    return problems
