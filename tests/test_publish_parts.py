"""The publish package's shape (issue 22 item 7): the disclosure gate is the only part that turns a stored
result into a published value, and the memo tables say when a remembered value is not used."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.factories import make_entries
from worker.gold.publish.cache import Built, Cache

PACKAGE = Path(__file__).resolve().parents[1] / "worker" / "gold" / "publish"
# What makes a published value of a stored result: a board row's content and metric columns, an envelope.
GATE_NAMES = {"row_content", "metric_columns", "public_view"}


def gate_uses(source: str) -> set[str]:
    """The gate's names that `source` uses (as a name, an attribute or an import)."""
    used = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and node.id in GATE_NAMES:
            used.add(node.id)
        elif isinstance(node, ast.Attribute) and node.attr in GATE_NAMES:
            used.add(node.attr)
        elif isinstance(node, ast.ImportFrom):
            used |= {a.name for a in node.names} & GATE_NAMES
    return used


def test_only_the_disclosure_gate_makes_published_values_of_stored_results() -> None:
    modules = {p.name: p.read_text() for p in PACKAGE.glob("*.py")}
    assert {"disclosure.py", "listing.py", "ranking.py", "history.py", "change.py", "marks.py"} <= set(
        modules
    )
    assert gate_uses(modules["disclosure.py"]) == GATE_NAMES  # positive control: the gate uses them all
    assert gate_uses("from worker.records import public_view\nrow = e.metric_columns()") == {
        "public_view",
        "metric_columns",
    }
    outside = {name: gate_uses(src) for name, src in modules.items() if name != "disclosure.py"}
    assert {name: used for name, used in outside.items() if used} == {}


def test_a_built_row_is_reused_only_while_its_record_is_the_same() -> None:
    cache = Cache()
    entry = make_entries("cold", 1, seed=3)[0]
    cache.built["cold"] = {entry.key: Built(entry.record, {"row": 1}, (0,), None, None)}
    assert cache.built_row("cold", entry) is not None  # positive control: same record, reused
    equal = type(entry)(dict(entry.record), entry.version, entry.result)
    assert cache.built_row("cold", equal) is not None  # an equal summary (another dict) is the same record
    changed = type(entry)({**entry.record, "verified": not entry.record.get("verified")}, entry.version, None)
    assert cache.built_row("cold", changed) is None


def test_remembered_columns_and_contents_are_for_one_revision_and_one_board() -> None:
    cache = Cache()
    cache.columns["cold"] = ("rev-1", {("a", 1): {"m": 1.0}})
    assert cache.columns_at("cold", "rev-1") == {("a", 1): {"m": 1.0}}
    assert cache.columns_at("cold", "rev-2") is None
    board = {"rows": []}
    cache.contents["cold"] = (board, {"a": {}})
    assert cache.contents_of("cold", board) == {"a": {}}
    assert cache.contents_of("cold", {"rows": []}) is None  # an equal board that is another object
    cache.listed["cold"] = (("stamp", frozenset()), {"a": None})
    assert cache.listing("cold", ("stamp", frozenset())) == {"a": None}
    assert cache.listing("cold", (None, frozenset())) == {}


def test_a_hidden_record_is_seen_empty_until_it_changes() -> None:
    cache = Cache()
    record = {"submission_id": "a", "updated_at": "t1"}
    assert not cache.seen_empty("cold", record)
    cache.cleared[("cold", "a")] = "t1"
    assert cache.seen_empty("cold", record)
    assert not cache.seen_empty("cold", {**record, "updated_at": "t2"})
    assert not cache.seen_empty("cold", {"submission_id": "a"})  # no updated_at: looked at every time
