"""Loaded by every service process of `bench/bench_burst.py --trace-reads` (this folder first on PYTHONPATH):
each GET of a file from the Hub (`HubStore._fetch`) is appended to $BENCH_TRACE_READS/<pid>.log as
`time, process role, path, the project's calling functions`, so the benchmark can say who reads what.
Outside such a run (no BENCH_TRACE_READS) it does nothing."""

from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
import time
import traceback
from pathlib import Path
from types import ModuleType

OUT = os.environ.get("BENCH_TRACE_READS")
ROOT = str(Path(__file__).resolve().parents[2]) + os.sep
CALLERS = 4  # the project's frames kept per read, innermost first (the store's own left out)


def role() -> str:
    argv = " ".join(sys.argv)
    return "web" if "space" in argv else "worker" if "celery" in argv else Path(sys.argv[0]).stem


def callers() -> str:
    frames = [
        f"{Path(frame.filename).stem}.{frame.name}"
        for frame in reversed(traceback.extract_stack()[:-2])
        if frame.filename.startswith(ROOT) and "/store/hub.py" not in frame.filename
    ]
    return " < ".join(frames[:CALLERS])


def trace(module: ModuleType) -> None:
    store = module.HubStore
    fetch = store._fetch
    who = role()

    def traced_fetch(self, repo: str, path: str, rev: str) -> bytes | None:
        # The pid at the read, not at the import: a Celery worker imports the client before it forks its pool.
        with (Path(OUT or ".") / f"{os.getpid()}.log").open("a") as out:
            out.write(f"{time.time():.3f}\t{who}\t{repo.split('/')[-1]}:{path}\t{callers()}\n")
        return fetch(self, repo, path, rev)

    store._fetch = traced_fetch


class _TraceHubStore(importlib.abc.MetaPathFinder):
    """Wraps HubStore._fetch once worker.store.hub is imported (the processes import it late, if at all)."""

    def find_spec(self, name, path, target=None):
        if name != "worker.store.hub":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            execute(module)
            trace(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


if OUT:
    sys.meta_path.insert(0, _TraceHubStore())
