"""The test Hub's listings (tests/fakehub.py) answer from each commit's sorted paths by bisection (issue 26:
its own cost no longer grows with the repository, so a benchmark of the client measures the client). Here
the real `huggingface_hub` client commits random adds, deletes and folder deletes, and every tree listing
(recursive or not, at the root and in folders) and a paths-info of files, folders and missing paths are
compared with what a scan of the known files gives."""

from __future__ import annotations

import random
import uuid

import pytest


def scanned_tree(files: set[str], base: str, recursive: bool) -> list[tuple[str, str]]:
    """The listing the old test Hub gave: (type, path) of every file and folder below `base`, by scanning."""
    prefix = base + "/" if base else ""
    out: set[tuple[str, str]] = set()
    for path in files:
        if not path.startswith(prefix):
            continue
        parts = path[len(prefix) :].split("/")
        for depth in range(1, len(parts) if recursive else min(len(parts), 2)):
            out.add(("directory", prefix + "/".join(parts[:depth])))
        if recursive or len(parts) == 1:
            out.add(("file", path))
    return sorted(out, key=lambda e: e[1])


def folders_of(files: set[str]) -> set[str]:
    return {p.rsplit("/", n)[0] for p in files for n in range(1, p.count("/") + 1)}


@pytest.mark.usefixtures("fakehub")
def test_tree_and_paths_info_match_a_scan_of_the_files_after_random_commits() -> None:
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi
    from huggingface_hub.hf_api import RepoFile

    from tests.conftest_hub import WRITE_TOKEN

    api, rng = HfApi(token=WRITE_TOKEN), random.Random(26)
    repo = f"tester/tree-{uuid.uuid4().hex[:8]}"
    api.create_repo(repo, repo_type="dataset", private=True)
    files = {".gitattributes"}
    folders_deleted = 0
    names = ["a", "ab", "a-b", "b", "z", "0"]  # "a" beside "ab" and "a-b": a prefix that is not a folder
    for round_ in range(12):
        ops: list = []
        for _ in range(rng.randint(1, 12)):
            path = "/".join(rng.choice(names) for _ in range(rng.randint(1, 4))) + rng.choice(["", ".json"])
            if path in folders_of(files) or any(
                f.startswith(path + "/") or path.startswith(f + "/") for f in files
            ):
                continue  # a path cannot be both a file and a folder
            if any(getattr(o, "path_in_repo", None) == path for o in ops):
                continue
            ops.append(CommitOperationAdd(path_in_repo=path, path_or_fileobj=path.encode()))
            files.add(path)
        touched = {o.path_in_repo for o in ops}
        victims = sorted(files - touched - {".gitattributes"})
        if victims and round_ % 3 == 2:
            gone = rng.choice(victims)
            ops.append(CommitOperationDelete(path_in_repo=gone))
            files.discard(gone)
            folder = rng.choice(sorted(folders_of(files - touched) - folders_of(touched) or {""}))
            if folder:
                ops.append(CommitOperationDelete(path_in_repo=folder + "/", is_folder=True))
                files = {f for f in files if not f.startswith(folder + "/")}
                folders_deleted += 1
        api.create_commit(repo, ops, commit_message=f"round {round_}", repo_type="dataset")
        for base in ["", *sorted(folders_of(files))]:
            for recursive in (False, True):
                listed = api.list_repo_tree(repo, base or None, recursive=recursive, repo_type="dataset")
                got = [("file" if isinstance(e, RepoFile) else "directory", e.path) for e in listed]
                assert got == scanned_tree(files, base, recursive), (round_, base, recursive)
        asked = [
            *rng.sample(sorted(files), min(5, len(files))),
            *sorted(folders_of(files))[:3],
            "no/such",
            "a",
        ]
        info = api.get_paths_info(repo, asked, repo_type="dataset")
        got = sorted((type(e).__name__, e.path) for e in info)
        known = folders_of(files)
        want = sorted(
            ("RepoFile" if p in files else "RepoFolder", p) for p in set(asked) if p in files or p in known
        )
        assert got == want, round_
    assert folders_deleted >= 2 and len(files) > 30 and max(p.count("/") for p in files) >= 3
    # Positive control: the scan itself sees a change the listing must follow.
    assert scanned_tree(files | {"q/r.json"}, "", False) != scanned_tree(files, "", False)
