"""One private deployment shared by every reliability test module of a pytest session.

Starting redis-server + seed + Celery workers + the web process costs ~20–30 s, so the REST hostile tests,
the leakage tests and the access tests share one (`shared_deployment(request)`); it is stopped at the end
of the session. Tests that kill or restart processes start their own (`procs.Deployment`).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from . import procs

_SHARED: dict[str, procs.Deployment] = {}

MAINTAINER = "maint-ops"


def shared_deployment(request: pytest.FixtureRequest) -> procs.Deployment:
    """The session's deployment: 2 workers (concurrency 1), AUTH=open, MAINTAINERS=maint-ops."""
    if "dep" not in _SHARED:
        tmp = Path(tempfile.mkdtemp(prefix="reliability-"))
        dep = procs.Deployment(tmp, workers=2, MAINTAINERS=MAINTAINER, QUOTA_PER_DAY="3")
        dep.__enter__()
        _SHARED["dep"] = dep

        def stop() -> None:
            _SHARED.pop("dep").__exit__(None, None, None)

        request.session.config.add_cleanup(stop)
    return _SHARED["dep"]
