"""What the project calls its tracks and the submission metadata a board filters by: plain names, importable
without numpy (the web process reads them before it enters its sandbox, space/sandbox.py, which must happen
while the process has one thread; numpy's BLAS starts threads when imported). `scoring/tracks.py` re-exports
them beside the track objects."""

from __future__ import annotations

TRACK_NAMES = ("varm", "cold", "toxicn", "cntp")  # every track the project knows, installed or not
# Submission metadata a board filters by (a submitter may leave either empty; worker.records validates).
MODEL_TYPES = ("open", "closed")
SETTINGS = ("zero-shot", "taxonomy", "fine-tuned")
