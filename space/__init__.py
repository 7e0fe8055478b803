"""The web process: Gradio UI + FastAPI REST API over one Service. Never reads references."""

from worker import process_env  # noqa: F401 - first, before anything imports numpy or huggingface_hub
