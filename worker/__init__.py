"""Worker side: store, Celery app and tasks, lifecycle (see docs/ARCHITECTURE.md)."""
