"""`scripts/check` (run first by scripts/test) fails on what it guards (issue 30.4): an unformatted file, a
type error, a function over the complexity limit, each planted in a temporary copy of the code; the
untouched copy passes (the positive control), so a check that stopped running would fail here."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow  # three mypy runs over the code (~30 s)

COMPLEX = (
    "def branchy(x: int) -> int:\n"
    + "".join(f"    if x == {k}:\n        return {k}\n" for k in range(12))
    + "    return -1\n"
)


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("checked")
    for package in ("scoring", "worker", "space", "varm_client"):
        shutil.copytree(ROOT / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", root)
    (root / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "check", root / "scripts")
    (root / ".venv").symlink_to(ROOT / ".venv")
    return root


def check(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(root / "scripts" / "check"), "--code-only"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.parametrize(
    ("path", "source", "says"),
    [
        ("space/planted.py", "x = ( 1,2 )\n", "--> space/planted.py:1"),
        ("scoring/planted.py", 'def f() -> int:\n    return "x"\n', "scoring/planted.py:2: error"),
        ("worker/planted.py", COMPLEX, "C901"),
    ],
    ids=["format", "mypy", "complexity"],
)
def test_check_fails_on_a_planted_problem(copy, path, source, says):
    clean = check(copy)
    assert clean.returncode == 0, clean.stdout + clean.stderr  # positive control: the code as it is passes
    planted = copy / path
    planted.write_text(source)
    try:
        found = check(copy)
    finally:
        planted.unlink()
    assert found.returncode == 1
    assert says in found.stdout + found.stderr, found.stdout + found.stderr
