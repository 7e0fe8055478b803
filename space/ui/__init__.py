"""The Space's Gradio UI: `build_demo(service) -> gr.Blocks`, mounted at `/` by `space.server`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import gradio as gr

    from worker.service import Service

__all__ = ["CSS", "build_demo"]


def build_demo(service: Service, **kwargs: object) -> gr.Blocks:
    """Build the Blocks app (imported lazily: importing gradio takes seconds)."""
    from .app import build_demo as _build

    return _build(service, **kwargs)


def __getattr__(name: str) -> object:
    if name == "CSS":
        from .app import CSS

        return CSS
    raise AttributeError(name)
