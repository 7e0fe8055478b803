"""Leaderboard rows, tie groups and the files built from them (ARCHITECTURE §5). Pure functions."""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd

from worker.store import layout

BASE_COLUMNS = (
    "submission_id",
    "version",
    "model_name",
    "organisation",
    "model_type",
    "setting",
    "paper_url",
    "code_url",
    "submitter",
    "is_baseline",
    "verified",
    "created_at",
    "scored_at",
    "scorer_version",
    "references_sha256",
    "predictions_sha256",
    "rank",
    "rank_low",
    "rank_high",
    "tie_group",
)
# `undefined.<metric>`: the scorer's reason why that metric's published 0 is not a measurement (0/0); text
UNDEFINED = "undefined."


@dataclass
class Entry:
    """One published (submission, version): its record (or the index's summary of it), version info, and
    its scorer result or, for an entry already on the board, its row's metric columns (`columns`)."""

    record: dict
    version: dict
    result: dict | None
    columns: dict | None = None
    key: tuple[str, int] = field(init=False)  # (id, version), read thousands of times per board

    def __post_init__(self) -> None:
        self.key = self.record["submission_id"], self.version["version"]

    def metric_columns(self) -> dict[str, float | str | None]:
        """The row's metric, explanation, CI and `undefined.<metric>` columns (from the result the first
        time)."""
        if self.columns is None:
            result = self.result or {}
            columns: dict[str, float | str | None] = {
                k: _finite(v) for k, v in numeric_leaves(result.get("metrics", {})).items()
            }
            # ToxiTrace explanations (spec §3), only for submissions that gave them: `explanations.<name>`
            explanations = numeric_leaves(result.get("explanations", {}), "explanations.")
            columns.update({k: _finite(v) for k, v in explanations.items()})
            columns.update(ci_columns(result.get("ci", {})))
            columns.update({f"{UNDEFINED}{k}": str(v) for k, v in (result.get("undefined") or {}).items()})
            self.columns = columns
        return self.columns


def numeric_leaves(tree: dict, prefix: str = "") -> dict[str, float]:
    """Every numeric leaf of a nested dict, keyed by dotted path (booleans are not metrics)."""
    out: dict[str, float] = {}
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(numeric_leaves(value, f"{path}."))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            out[path] = float(value)
    return out


def ci_columns(ci: dict, prefix: str = "") -> dict[str, float | None]:
    """`ci.<path>.low/high` columns from `{path: [low, high]}` (nested dicts tolerated)."""
    out: dict[str, float | None] = {}
    for key, value in ci.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(ci_columns(value, f"{path}."))
        elif isinstance(value, list | tuple) and len(value) == 2:
            out[f"ci.{path}.low"], out[f"ci.{path}.high"] = (_finite(v) for v in value)
    return out


def _finite(value) -> float | None:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


def metric(result: dict, path: str) -> float | None:
    node = result.get("metrics", {})
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return _finite(node)


def sort_key(entry: Entry, primary: str) -> tuple:
    """Best primary metric first; earlier submissions win exact ties (then id, for determinism)."""
    value = _finite(entry.metric_columns().get(primary))  # a metric column, never an `undefined.` reason
    return (
        -(value if value is not None else -math.inf),
        entry.record["created_at"],
        entry.record["submission_id"],
    )


def sort_entries(entries: list[Entry], primary: str) -> list[Entry]:
    return sorted(entries, key=lambda e: sort_key(e, primary))


def tie_groups(ordered: list[Entry], below: Callable[[Entry, Entry], bool]) -> list[int]:
    """Group numbers (1-based) for `ordered`: a new group starts when an entry is significantly below
    the first entry of the current group (`below(leader, entry)`)."""
    groups: list[int] = []
    leader: Entry | None = None
    for entry in ordered:
        if leader is None or below(leader, entry):
            leader = entry
            groups.append(groups[-1] + 1 if groups else 1)
        else:
            groups.append(groups[-1])
    return groups


def known_verdicts(rows: list[dict]) -> dict[tuple[tuple[str, int], tuple[str, int]], bool]:
    """The `below(leader, entry)` answers that `tie_groups` used to build these published rows (rank
    order): each row after the first was compared with its group's first row, and was below it exactly
    when it starts a new group. Keys are ((id, version) of the leader, (id, version) of the entry)."""
    verdicts: dict[tuple[tuple[str, int], tuple[str, int]], bool] = {}
    leader: tuple[str, int] | None = None
    group = None
    for row in rows:
        key = (row["submission_id"], row["version"])
        if leader is not None:
            verdicts[(leader, key)] = row["tie_group"] != group
        if leader is None or row["tie_group"] != group:
            leader, group = key, row["tie_group"]
    return verdicts


def row_content(entry: Entry) -> dict:
    """An entry's board row without its rank fields (they depend on the other entries)."""
    record, version = entry.record, entry.version
    meta = record["metadata"]
    return {
        "submission_id": record["submission_id"],
        "version": version["version"],
        "model_name": meta.get("model_name", ""),
        "organisation": meta.get("organisation", ""),
        "model_type": meta.get("model_type", ""),
        "setting": meta.get("setting", ""),
        "paper_url": meta.get("paper_url", ""),  # checked http(s) URLs (worker.records), or ""
        "code_url": meta.get("code_url", ""),
        "submitter": record["submitter"],
        "is_baseline": bool(record.get("is_baseline")),
        "verified": bool(record.get("verified")),
        "created_at": record["created_at"],
        "scored_at": version["scored_at"],
        "scorer_version": version["scorer_version"],
        "references_sha256": version["references_sha256"],
        "predictions_sha256": record["sha256"],
        **entry.metric_columns(),
    }


def rank_fields(groups: list[int]) -> list[tuple[int, int, int, int]]:
    """(rank, rank_low, rank_high, tie_group) of each row in rank order, from its tie group number."""
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for position, group in enumerate(groups, start=1):
        first.setdefault(group, position)
        last[group] = position
    return [(position, first[g], last[g], g) for position, g in enumerate(groups, start=1)]


def with_ranks(content: dict, fields: tuple[int, int, int, int]) -> dict:
    rank, low, high, group = fields
    return {**content, "rank": rank, "rank_low": low, "rank_high": high, "tie_group": group}


def build_rows(entries: list[Entry], primary: str, below: Callable[[Entry, Entry], bool]) -> list[dict]:
    ordered = sort_entries(entries, primary)
    ranks = rank_fields(tie_groups(ordered, below))
    return [with_ranks(row_content(e), r) for e, r in zip(ordered, ranks, strict=True)]


def columns(rows: list[dict]) -> list[str]:
    """The base columns, then metric, CI and `undefined.` columns by name: the order cannot depend on whether
    a row was built from its result or reused from a published board."""
    extra = set().union(*(row.keys() for row in rows)) - set(BASE_COLUMNS) if rows else set()
    metrics = sorted(c for c in extra if not c.startswith(("ci.", UNDEFINED)))
    cis = sorted(c for c in extra if c.startswith("ci."))
    return [*BASE_COLUMNS, *metrics, *cis, *sorted(c for c in extra if c.startswith(UNDEFINED))]


def to_parquet(rows: list[dict]) -> bytes:
    names = columns(rows)
    # Column by column (not a list of row dicts): 5x faster for 3,000 rows of ~120 columns.
    frame = pd.DataFrame({name: [row.get(name) for row in rows] for name in names}, columns=names)
    frame = frame.astype(
        {name: "float64" for name in names if name not in BASE_COLUMNS and not name.startswith(UNDEFINED)}
    )
    # A reason column is text (null where the metric is a measurement), even when a page holds no reason.
    frame = frame.astype({name: "string" for name in names if name.startswith(UNDEFINED)})
    buffer = io.BytesIO()
    # Content-defined chunking (pyarrow >= 21): page boundaries follow the content, not row counts, so an
    # export that changes a few rows leaves most pages byte-identical and the Hub's Xet storage uploads
    # only the changed chunks. Deterministic: the same rows give the same bytes. Measured: a board of 30,000
    # rows x 3 columns writes the same bytes with or without it (each column is one page below CDC's 256 KiB
    # minimum chunk); it starts to matter only for columns larger than that.
    frame.to_parquet(buffer, index=False, use_content_defined_chunking=True)
    return buffer.getvalue()


HUB_TAGS = ("leaderboard", "submission:automatic", "judge:auto", "modality:text", "language:chinese")


def finder_test_tag(statuses: dict[str, str]) -> str:
    """The Hub's Leaderboard Finder tag for the tests' status (../shared/spec/disclosure.md §1)."""
    found = set(statuses.values()) or {"private"}
    return f"test:{found.pop()}" if len(found) == 1 else "test:mix"


def size_category(rows: int) -> str:
    """The Hub's `size_categories` value for a dataset of `rows` rows ("n<1K", "1K<n<10K", ...)."""
    names = ["1K", "10K", "100K", "1M", "10M", "100M", "1B", "10B", "100B", "1T"]
    bound = next((k for k, name in enumerate(names) if rows < 1000 * 10**k), None)
    if bound is None:
        return "n>1T"
    return "n<1K" if bound == 0 else f"{names[bound - 1]}<n<{names[bound]}"


def dataset_card(
    tracks: dict[str, str],
    statuses: dict[str, str] | None = None,
    public_key: str | None = None,
    rows: int = 0,
) -> bytes:
    """README.md for the results dataset: one `datasets` config per track with a leaderboard, the Hub's
    tags (the test status among them), its size (`rows`: the rows of every track's board), each track's test
    status and the key that signs the results."""
    from huggingface_hub import DatasetCardData  # the Hub's own card schema, so its parser agrees

    statuses = {name: (statuses or {}).get(name, "private") for name in tracks}
    metadata = DatasetCardData(
        language=["zh"],
        license="cc-by-4.0",
        task_categories=["text-classification"],
        size_categories=[size_category(rows)],
        pretty_name="Chinese abusive-speech moderation leaderboard",
        tags=[*HUB_TAGS, finder_test_tag(statuses)],
        configs=[
            {"config_name": name, "data_files": [{"split": "test", "path": layout.leaderboard_parquet(name)}]}
            for name in sorted(tracks)
        ],
    )
    lines = ["---", metadata.to_yaml(), "---", ""]
    lines += [
        "## Test sets",
        "",
        *[
            f"- `{name}`: **{status}** test labels"
            + (
                " (published with the dataset: self-reported scores, not a held-out evaluation)"
                if status == "public"
                else " (held out: the live board shows a public slice; official numbers come from releases)"
            )
            for name, status in sorted(statuses.items())
        ],
        "",
        "## Verifying a result",
        "",
        "Every result file and release row is signed (Ed25519) with the key at `keys/ed25519.pub`; check one "
        "with `python -m scoring verify FILE --public-key keys/ed25519.pub` (`pip install varm-score`).",
        *(["", "```", public_key.strip(), "```"] if public_key else []),
        "",
    ]
    lines += [
        "# Leaderboard results",
        "",
        "Published results of the VARM-Bench and ToxiTrace leaderboard. One config per track:",
        "",
        *[
            f"- `{name}`: {title} (`{layout.leaderboard_parquet(name)}`, same rows in "
            f"`{layout.leaderboard_json(name)}`)"
            for name, title in sorted(tracks.items())
        ],
        "",
        "```python",
        "from datasets import load_dataset",
        'board = load_dataset("<this repo>", "varm", split="test")',
        '# or: pandas.read_parquet("hf://datasets/<this repo>/varm/leaderboard.parquet")',
        "```",
        "",
        "The parquet and JSON boards are rebuilt every few minutes while submissions arrive (`generated_at` "
        "says when); the live board, current at every publish, is `<track>/board/` (a rank table and row "
        "segments). Per-submission result files: `<track>/results/<submission_id>/v<N>.json`. Publishing "
        "history: `changelog/<NNNNN>.jsonl` in order, then `changelog.jsonl`; re-scoring diff reports: "
        "`rescore/<track>/`.",
        "",
    ]
    return "\n".join(lines).encode()
