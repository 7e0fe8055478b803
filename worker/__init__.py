"""Worker side: store, Celery app and tasks, lifecycle (see docs/ARCHITECTURE.md)."""

from . import threads  # noqa: F401 - first, before anything imports numpy
