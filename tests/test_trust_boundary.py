"""The trust boundary as a package boundary: the web process never loads `worker.gold`.

`worker.gold` holds every module that reads the hidden references or data derived from them (scoring jobs,
reference loading, publishing with tie groups, re-score, seed/install, the Celery tasks). The web process
(`space/`) gets a store without the references area; this test makes sure it does not even load the code
that would read them. Two checks, each with a positive control so it cannot pass by being broken:

1. at run time: the web app is built as `python -m space` builds it and exercised over HTTP (REST, the
   Gradio page and config, a validation); afterwards no `worker.gold` module is in `sys.modules`;
2. statically: no module of the web process's import closure names `worker.gold`, not even in a
   function-level import that the run-time check might not reach.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOLD = "worker.gold"

HARNESS = r"""
import json, sys
from fastapi.testclient import TestClient
from space.server import create_app
from worker.config import Config

extra = sys.argv[1:]
for name in extra:  # the positive control imports a gold module on purpose
    __import__(name)
client = TestClient(create_app(Config.from_env()))
answers = [
    client.get("/api/v1/health").status_code,
    client.get("/api/v1/leaderboard", params={"track": "varm"}).status_code,
    client.get("/").status_code,
    client.get("/config").status_code,
    client.get("/gradio_api/info").status_code,
    client.post("/api/v1/validate", data={"track": "cold"},
                files={"file": ("p.jsonl", b'{"id": "x", "label": 0}\n')}).status_code,
]
print(json.dumps({"answers": answers, "modules": sorted(sys.modules)}))
"""


def _web_modules(tmp_path: Path, *extra_imports: str) -> tuple[list[int], list[str]]:
    env = {
        **os.environ,
        "DATA_DIR": str(tmp_path / "data"),
        "SEED_DEMO": "0",
        "AUTH": "token",
        "STORE": "local",
        "GRADIO_ANALYTICS_ENABLED": "False",
    }
    env.pop("CELERY_BROKER_URL", None)
    out = subprocess.run(
        [sys.executable, "-c", HARNESS, *extra_imports],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    last = out.stdout.strip().splitlines()[-1]
    report = json.loads(last)
    return report["answers"], report["modules"]


def test_web_process_loads_no_gold_module(tmp_path: Path):
    answers, modules = _web_modules(tmp_path)
    assert answers[2:5] == [200, 200, 200], answers  # the UI really was built and served
    assert "space.server" in modules and "worker.service" in modules
    assert [m for m in modules if m == GOLD or m.startswith(GOLD + ".")] == []


def test_run_time_check_sees_a_gold_import(tmp_path: Path):
    """Positive control: the same harness reports a gold module when one is imported."""
    _, modules = _web_modules(tmp_path, "worker.gold.tasks")
    assert "worker.gold.tasks" in modules


def _imports(path: Path) -> set[str]:
    """Every module name an import statement in `path` names, at any depth (function-level included),
    relative imports resolved against the file's package."""
    package = list(path.relative_to(ROOT).parent.parts)
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            names.add(module)
            names.update(f"{module}.{alias.name}" for alias in node.names)
    return names


def _names_gold(path: Path) -> bool:
    return any(n == GOLD or n.startswith(GOLD + ".") for n in _imports(path))


def _web_closure() -> list[Path]:
    """The project's source files the web process imports, followed through every import statement."""
    todo = [ROOT / "space" / "__main__.py", ROOT / "space" / "server.py"]
    seen: set[Path] = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for name in _imports(path):
            if name == GOLD or name.startswith(GOLD + "."):
                continue  # reported by the assertion, not followed
            parts = name.split(".")
            if parts[0] not in ("space", "worker", "scoring"):
                continue
            for candidate in (ROOT.joinpath(*parts).with_suffix(".py"), ROOT.joinpath(*parts, "__init__.py")):
                if candidate.exists():
                    todo.append(candidate)
    return sorted(seen)


def test_no_module_of_the_web_closure_names_gold():
    closure = _web_closure()
    assert (
        ROOT / "worker" / "service" / "intake.py" in closure and ROOT / "space" / "ui" / "app.py" in closure
    )
    offenders = [str(p.relative_to(ROOT)) for p in closure if _names_gold(p)]
    assert offenders == []


def test_static_check_sees_a_gold_import():
    """Positive control: the maintainer CLI imports gold modules inside functions, and the scan finds them."""
    assert _names_gold(ROOT / "worker" / "cli.py")
    assert not _names_gold(ROOT / "worker" / "service" / "intake.py")
