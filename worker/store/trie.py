"""A store revision's files as a tree of small content-addressed nodes (LocalStore's manifests).

A flat `{path: object id}` manifest per revision costs O(files) to load, copy and write, and a track folder
holds every submission: at 10,000 submissions a publish spent 5 s copying manifests. Here a revision is the
id of its root node, and a commit rewrites only the nodes on the paths it changes, so a read or a commit
touches O(depth · log N) nodes whatever the store's size.

A folder is a map of keys to ids: a file's key is its name (the id is an object id), a sub-folder's key is
its name with a trailing "/" (the id is the sub-folder's node), so `a/b` and `a/b/c` can both exist, as in a
flat manifest. A map with more than `LEAF_LIMIT` keys is split into up to 16 buckets by one hex digit of the
key's sha1 (the next digit at each level, like git's object fan-out and the record index's shards):

    {"e": {key: id, ...}}        a leaf map
    {"b": {hex digit: node id}}  a split map

A node's id is the sha1 of its canonical JSON bytes, so the same folder written twice is one node. Pure
functions over a `Nodes` reader/writer: LocalStore provides the files, the cache and the durability (its
`get(EMPTY_ID)` answers EMPTY without a file).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from typing import Protocol

LEAF_LIMIT = 64  # keys per leaf: ~3 kB of JSON, so a changed folder rewrites little
_MAX_DEPTH = 40  # hex digits of sha1: a map this deep keeps its keys in one leaf

Node = dict[str, dict[str, str]]
Changes = dict[str, "str | None | Changes"]  # key -> object id (set), None (delete) or a sub-folder's changes


class Nodes(Protocol):
    def get(self, node_id: str) -> Node: ...

    def put(self, node: Node) -> str: ...


def encode(node: Node) -> bytes:
    return json.dumps(node, sort_keys=True, separators=(",", ":")).encode()


def node_id(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


EMPTY: Node = {"e": {}}
EMPTY_ID = node_id(encode(EMPTY))


def _digit(key: str, depth: int) -> str:
    return hashlib.sha1(key.encode()).hexdigest()[depth]


def _map_get(nodes: Nodes, map_id: str, key: str) -> str | None:
    node, depth = nodes.get(map_id), 0
    while "b" in node:
        child = node["b"].get(_digit(key, depth))
        if child is None:
            return None
        node, depth = nodes.get(child), depth + 1
    return node["e"].get(key)


def _map_items(nodes: Nodes, map_id: str) -> Iterator[tuple[str, str]]:
    node = nodes.get(map_id)
    if "b" in node:
        for child in node["b"].values():
            yield from _map_items(nodes, child)
    else:
        yield from node["e"].items()


def _folder(nodes: Nodes, root: str, folder: str) -> str | None:
    """The node of `folder` ("" for the root, else "a/b" without a trailing slash); None when absent."""
    current = root
    for name in folder.split("/") if folder else ():
        child = _map_get(nodes, current, name + "/")
        if child is None:
            return None
        current = child
    return current


def lookup(nodes: Nodes, root: str, path: str) -> str | None:
    """The object id of the file at `path`, None when there is none."""
    folder, _, name = path.rpartition("/")
    node = _folder(nodes, root, folder)
    return None if node is None else _map_get(nodes, node, name)


def _walk(nodes: Nodes, node: str, base: str) -> Iterator[tuple[str, str]]:
    for key, ident in _map_items(nodes, node):
        if key.endswith("/"):
            yield from _walk(nodes, ident, base + key)
        else:
            yield base + key, ident


def items(nodes: Nodes, root: str, prefix: str = "") -> Iterator[tuple[str, str]]:
    """(path, object id) of every file whose path starts with `prefix`, in no particular order. Reads only
    the folders under the prefix's deepest whole folder."""
    folder, slash, start = prefix.rpartition("/")
    node = _folder(nodes, root, folder)
    if node is None:
        return
    base = folder + slash
    for key, ident in _map_items(nodes, node):
        if not key.startswith(start):
            continue
        if key.endswith("/"):
            yield from _walk(nodes, ident, base + key)
        else:
            yield base + key, ident


def changes(add: Mapping[str, str], delete: list[str]) -> Changes:
    """The nested changes of a commit: {"a/": {"b.json": oid}} for add {"a/b.json": oid}."""
    out: Changes = {}
    ops: list[tuple[str, str | None]] = [*add.items(), *((path, None) for path in delete)]
    for path, value in ops:
        *folders, name = path.split("/")
        level = out
        for folder in folders:
            level = level.setdefault(folder + "/", {})  # type: ignore[assignment]
        level[name] = value
    return out


def _make_map(nodes: Nodes, entries: dict[str, str], depth: int) -> str:
    if len(entries) <= LEAF_LIMIT or depth >= _MAX_DEPTH:
        return nodes.put({"e": entries})
    buckets: dict[str, dict[str, str]] = {}
    for key, ident in entries.items():
        buckets.setdefault(_digit(key, depth), {})[key] = ident
    return nodes.put({"b": {d: _make_map(nodes, group, depth + 1) for d, group in buckets.items()}})


def _apply_entry(nodes: Nodes, entries: dict[str, str], key: str, change: str | None | Changes) -> None:
    if isinstance(change, dict):
        new = apply(nodes, entries.get(key, EMPTY_ID), change)
        if new == EMPTY_ID:
            entries.pop(key, None)  # a folder left empty goes, as in git
        else:
            entries[key] = new
    elif change is None:
        entries.pop(key, None)
    else:
        entries[key] = change


def _apply_map(nodes: Nodes, map_id: str, change: Changes, depth: int) -> str:
    node = nodes.get(map_id)
    if "e" in node:
        entries = dict(node["e"])
        for key, value in change.items():
            _apply_entry(nodes, entries, key, value)
        return _make_map(nodes, entries, depth)
    grouped: dict[str, Changes] = {}
    for key, value in change.items():
        grouped.setdefault(_digit(key, depth), {})[key] = value
    buckets = dict(node["b"])
    for digit, group in grouped.items():
        new = _apply_map(nodes, buckets.get(digit, EMPTY_ID), group, depth + 1)
        if new == EMPTY_ID:
            buckets.pop(digit, None)
        else:
            buckets[digit] = new
    return nodes.put({"b": buckets}) if buckets else EMPTY_ID


def apply(nodes: Nodes, root: str, change: Changes) -> str:
    """The id of the folder `root` with `change` applied (EMPTY_ID when nothing is left in it)."""
    return _apply_map(nodes, root, change, 0)


def build(nodes: Nodes, manifest: Mapping[str, str]) -> str:
    """The root of a flat `{path: object id}` manifest (a store written before nodes)."""
    return apply(nodes, EMPTY_ID, changes(manifest, []))
