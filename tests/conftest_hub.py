"""pytest plugin: one fake Hub (tests/fakehub.py) subprocess per session, and Store fixtures.

Register from tests/conftest.py with `pytest_plugins = ["tests.conftest_hub", ...]`, listed FIRST.
Importing this module starts the server and sets HF_ENDPOINT, HF_HOME (a temp dir), HF_TOKEN and
HF_HUB_DISABLE_TELEMETRY, before any other plugin or test module is imported, because huggingface_hub
reads HF_ENDPOINT and HF_HOME once, when huggingface_hub.constants is first imported. Subprocesses
started by tests (Celery workers, CLIs) inherit that environment; `hub_env` adds STORE=hub and the repos.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sys
import tempfile
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests import fakehub
from worker.config import AREAS, Config
from worker.store import Store, open_store

WRITE_TOKEN = "hf_test_write_token"  # user "tester"
OTHER_TOKEN = "hf_test_other"  # user "other"
_SESSION: dict = {}


start_fakehub, stop_fakehub = fakehub.start, fakehub.stop


_ENV_KEYS = (
    "HF_ENDPOINT",
    "HF_HOME",
    "HF_TOKEN",
    "HF_HUB_DISABLE_TELEMETRY",
    "HF_HUB_DISABLE_PROGRESS_BARS",
    "HF_HUB_OFFLINE",
)


def _start_session() -> None:
    """Start the session's fake Hub and point this process's environment at it (idempotent)."""
    if _SESSION:
        return
    if "huggingface_hub.constants" in sys.modules:
        raise pytest.UsageError(
            "huggingface_hub was imported before tests/conftest_hub.py could point HF_ENDPOINT at the fake "
            "Hub: list tests.conftest_hub first in pytest_plugins and import huggingface_hub/gradio only "
            "inside fixtures and tests, not at the top of conftest files or plugins."
        )
    proc, url = start_fakehub()
    home = tempfile.mkdtemp(prefix="hf-home-")
    _SESSION.update(proc=proc, url=url, home=home, saved={k: os.environ.get(k) for k in _ENV_KEYS})
    os.environ.update(
        HF_ENDPOINT=url,
        HF_HOME=home,
        HF_TOKEN=WRITE_TOKEN,
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_DISABLE_PROGRESS_BARS="1",
    )
    os.environ.pop("HF_HUB_OFFLINE", None)
    atexit.register(_stop_session)  # in case pytest_unconfigure never runs


def _stop_session() -> None:
    if not _SESSION:
        return
    stop_fakehub(_SESSION["proc"])
    shutil.rmtree(_SESSION["home"], ignore_errors=True)
    for key, value in _SESSION["saved"].items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    _SESSION.clear()


# At import, not in pytest_configure: pytest imports every plugin listed in conftest.py's pytest_plugins
# before calling any pytest_configure, and a later plugin may import gradio (hence huggingface_hub).
_start_session()


def pytest_unconfigure(config: pytest.Config) -> None:
    _stop_session()


class FakeHubControl:
    """Test-side handle on the fake's admin routes (fault injection, request counters)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def _call(self, method: str, route: str, payload: dict | None = None) -> dict:
        data = None if payload is None else json.dumps(payload).encode()
        request = urllib.request.Request(self.url + route, data=data, method=method)
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def fault(
        self,
        path_regex: str,
        status: int | None = None,
        count: int = 1,
        delay: float = 0.0,
        method: str | None = None,
        after: bool = False,
        headers: dict | None = None,
    ) -> None:
        """The next `count` requests whose path matches get `status` (and/or `delay`, with `headers`);
        see fakehub.py."""
        spec = {
            "path_regex": path_regex,
            "status": status,
            "count": count,
            "delay": delay,
            "after": after,
            "headers": headers or {},
        }
        self._call("POST", "/_fake/faults", spec | ({"method": method} if method else {}))

    def reset(self) -> None:
        self._call("POST", "/_fake/reset", {})

    def stats(self) -> dict[str, int]:
        """Requests per route since the last reset, e.g. {"POST commit": 3, "HEAD resolve": 2}."""
        return self._call("GET", "/_fake/stats")

    def sent(self) -> dict[str, int]:
        """Body bytes answered per route since the last reset."""
        return self._call("GET", "/_fake/sent")

    def commits(self) -> dict[str, list[float]]:
        """Unix times of the commits landed since the last reset, by repo id."""
        return self._call("GET", "/_fake/commits")


@pytest.fixture(scope="session")
def fakehub_url() -> str:
    return _SESSION["url"]


@pytest.fixture
def fakehub(fakehub_url: str) -> Iterator[FakeHubControl]:
    control = FakeHubControl(fakehub_url)
    control.reset()
    yield control
    control.reset()


# The fake Hub takes any number of commits: tests do not wait for the commit budget's slots unless they
# test it (tests/test_hub_budget.py).
UNPACED = 1_000_000


def make_hub_config(url: str, data_dir: Path, token: str | None = WRITE_TOKEN) -> Config:
    """A STORE=hub config with fresh repo names, so every test starts from empty repos."""
    tag = uuid.uuid4().hex[:10]
    return Config(
        data_dir=data_dir,
        store="hub",
        hf_token=token,
        hf_endpoint=url,
        hf_commits_per_hour=UNPACED,
        hf_references_repo=f"tester/references-{tag}",
        hf_submissions_repo=f"tester/submissions-{tag}",
        hf_results_repo=f"tester/results-{tag}",
    )


@pytest.fixture
def hub_config(fakehub_url: str, tmp_path: Path) -> Config:
    return make_hub_config(fakehub_url, tmp_path / "data")


@pytest.fixture
def hub_env(hub_config: Config) -> dict[str, str]:
    """Environment for a subprocess (Celery worker, CLI) that should use `hub_config`'s repos."""
    return {
        "STORE": "hub",
        "DATA_DIR": str(hub_config.data_dir),
        "HF_TOKEN": hub_config.hf_token or "",
        "HF_ENDPOINT": hub_config.hf_endpoint,
        "HF_REFERENCES_REPO": hub_config.hf_references_repo or "",
        "HF_SUBMISSIONS_REPO": hub_config.hf_submissions_repo or "",
        "HF_RESULTS_REPO": hub_config.hf_results_repo or "",
        "HF_COMMITS_PER_HOUR": str(hub_config.hf_commits_per_hour),
    }


HUB_TEST_OPTIONS = {"base_delay": 0.01}  # fast retries in tests


@pytest.fixture
def local_store(tmp_path: Path) -> Store:
    return open_store(Config(data_dir=tmp_path / "data"))


@pytest.fixture
def hub_store(hub_config: Config, tmp_path: Path) -> Store:
    return open_store(hub_config, cache_dir=tmp_path / "hf-cache", **HUB_TEST_OPTIONS)


@pytest.fixture(params=["local", "hub"])
def store_config(request: pytest.FixtureRequest, tmp_path: Path) -> Config:
    if request.param == "hub":
        return request.getfixturevalue("hub_config")
    return Config(data_dir=tmp_path / "data")


@pytest.fixture
def open_test_store(store_config: Config, tmp_path: Path) -> Callable[..., Store]:
    """open_test_store(areas=...) -> a new Store over the same data (same folder / same repos)."""

    def _open(areas=AREAS, **options) -> Store:
        return open_store(
            store_config,
            areas=areas,
            cache_dir=tmp_path / f"hf-cache-{uuid.uuid4().hex[:6]}",
            **(HUB_TEST_OPTIONS | options),
        )

    return _open


@pytest.fixture
def store(open_test_store: Callable[..., Store]) -> Store:
    """The same contract tests run on LocalStore and on HubStore + fake Hub."""
    return open_test_store()
