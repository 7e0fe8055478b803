"""The web process: Gradio UI + FastAPI REST API over one Service. Never reads references."""

from worker import threads  # noqa: F401 - first, before anything imports numpy
