"""The web process: Gradio UI + FastAPI REST API over one Service. Never reads references."""
