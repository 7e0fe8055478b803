"""Deterministic scorer for VARM-Bench and the ToxiTrace tracks (pure library: no Celery, Gradio or Hub)."""

from .version import SCORER_VERSION

__all__ = ["SCORER_VERSION"]
