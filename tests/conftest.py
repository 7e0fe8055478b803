"""Shared pytest set-up. Fixture plugins live in their own modules, registered here."""

import importlib.util

# Each plugin module is owned by one part of the system (Hub fake, pipeline, UI).
pytest_plugins = [
    name
    for name in ("tests.conftest_hub", "tests.conftest_pipeline", "tests.conftest_ui")
    if importlib.util.find_spec(name) is not None
]
