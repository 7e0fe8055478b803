"""Schema-driven fuzzing of the REST API (schemathesis 4.32.5): no generated request may get a 5xx.

Runs the schemathesis CLI against the shared private deployment's `/openapi.json`, at most
`MAX_EXAMPLES` examples per operation (CI-sized), with the `not_a_server_error` check only: 4xx answers to
nonsense are the point; a 500 is a bug. Needs `schemathesis==4.32.5` in the virtualenv (requirements-dev).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.hostile import figures, procs
from tests.hostile.fixtures import shared_deployment

MAX_EXAMPLES = 30

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("schemathesis") is None,
    reason="schemathesis is not installed (add schemathesis==4.32.5 to requirements-dev)",
)


@pytest.mark.slow
def test_openapi_fuzz_has_no_server_errors(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    dep = shared_deployment(request)
    schema = httpx.get(dep.url + "/openapi.json", timeout=30).json()
    operations = [(m.upper(), p) for p, item in schema["paths"].items() for m in item]
    assert ("POST", "/api/v1/submissions") in operations
    junit = tmp_path / "schemathesis.xml"
    cmd = [
        str(Path(procs.PYTHON).with_name("schemathesis")),
        "run",
        dep.url + "/openapi.json",
        "--checks",
        "not_a_server_error",
        "--max-examples",
        str(MAX_EXAMPLES),
        "--seed",
        "7",
        "--phases",
        "examples,coverage,fuzzing",
        "--request-timeout",
        "60",
        "--no-color",
        "--report",
        "junit",
        "--report-junit-path",
        str(junit),
        "--header",
        "X-User: fuzzer",
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=procs.ROOT)
    out = proc.stdout + proc.stderr
    cases = re.search(r"(\d+) generated", out)
    figures.record(
        "openapi_fuzz",
        operations=len(operations),
        max_examples=MAX_EXAMPLES,
        generated=int(cases.group(1)) if cases else None,
        exit_code=proc.returncode,
        server_errors=out.count("Server error"),
    )
    assert proc.returncode == 0, out[-4000:]
    assert client_alive(dep.url)


def client_alive(url: str) -> bool:
    return httpx.get(url + "/api/v1/health", timeout=30).status_code == 200
