"""Worker side: store, Celery app and tasks, lifecycle (see docs/ARCHITECTURE.md)."""

from . import process_env  # noqa: F401 - first, before anything imports numpy or huggingface_hub
