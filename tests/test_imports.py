"""The imports match docs/ARCHITECTURE.md (issue 30): every arrow between the project's packages is one the
document's `imports` block lists, and no module imports itself back through others (function-level imports
count: a lazy import is still a circle a reader has to untangle)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("scoring", "worker", "space", "varm_client")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    """{module: the project modules it imports}; `from pkg import sub` names the submodule."""
    paths = {module_name(p): p for package in PACKAGES for p in (ROOT / package).rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in paths}
    for module, path in paths.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in paths else base for a in node.names]
            else:
                continue
            for name in names:
                while name and name not in paths:
                    name = name.rpartition(".")[0]
                if name and name != module:
                    graph[module].add(name)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def room(module: str) -> str:
    return "worker.gold" if module.startswith("worker.gold") else module.split(".")[0]


def documented_arrows() -> set[tuple[str, str]]:
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    block = re.search(r"```imports\n(.*?)```", text, re.S)
    assert block, "docs/ARCHITECTURE.md has no imports block"
    arrows = set()
    for line in block.group(1).splitlines():
        source, _, targets = line.partition("->")
        for target in re.sub(r"\(.*\)", "", targets).split(","):
            if target.strip():
                arrows.add((source.strip(), target.strip()))
    return arrows


def undocumented(graph: dict[str, set[str]], allowed: set[tuple[str, str]]) -> list[tuple[str, str]]:
    return sorted(
        (a, b) for a in graph for b in graph[a] if room(a) != room(b) and (room(a), room(b)) not in allowed
    )


def test_no_import_circles():
    graph = import_graph()
    assert circles(graph) == []
    # positive control: one added back-edge is found
    graph["scoring.varm"].add("scoring.tracks")
    assert ["scoring.tracks", "scoring.varm"] in circles(graph)


def test_every_arrow_between_packages_is_documented():
    graph, allowed = import_graph(), documented_arrows()
    assert ("space", "worker") in allowed and ("scoring", "worker") not in allowed
    assert undocumented(graph, allowed) == []
    into_gold = {a for a in graph for b in graph[a] if room(a) == "worker" and room(b) == "worker.gold"}
    assert into_gold == {"worker.cli"}  # as the block says: the maintainers' commands, never the service
    into_client = {
        a for a in graph for b in graph[a] if room(b) == "varm_client" and room(a) != "varm_client"
    }
    assert into_client == {"worker.cli"}  # the one REST client, reused by `python -m worker submit`
    # positive control: the arrow a past version had (the CLI reading the web side's token code) is refused
    graph["worker.cli"].add("space.auth")
    assert undocumented(graph, allowed) == [("worker.cli", "space.auth")]


def test_the_client_stands_alone():
    """varm_client installs with httpx only (packaging/client): it imports nothing of the project."""
    graph = import_graph()
    assert {
        b for a in graph if room(a) == "varm_client" for b in graph[a] if room(b) != "varm_client"
    } == set()
    # positive control: the import the summary line once needed
    graph["varm_client.cli"].add("scoring.tracks")
    assert ("varm_client.cli", "scoring.tracks") in undocumented(graph, documented_arrows())


def test_only_the_server_mounts_the_ui():
    """The REST API and the board query stand without the UI (space/board_query.py serves both); the server
    mounts the UI, and nothing else outside space/ui/ imports it."""
    graph = import_graph()

    def into_ui(graph: dict[str, set[str]]) -> set[str]:
        return {
            a for a in graph for b in graph[a] if b.startswith("space.ui") and not a.startswith("space.ui")
        }

    assert into_ui(graph) == {"space.server"}
    graph["space.board_api"].add("space.ui.tables")  # positive control: the arrow this replaced
    assert into_ui(graph) == {"space.server", "space.board_api"}
