"""The Service (ARCHITECTURE §6): the one API that the REST routes, the Gradio UI and the CLI call.

It runs in the web process, so it never opens the references area: uploads are validated against the
public test inputs, and anything that needs gold labels is sent to a worker.
"""

from __future__ import annotations

from worker.service.intake import Intake, format_report_of
from worker.service.moderation import Moderation
from worker.service.reads import Reads
from worker.service.state import (
    BASELINE_SUBMITTER,
    FORMAT_REPORT_MAX,
    Enqueuer,
    Liveness,
    RescoreReport,
)

__all__ = [
    "BASELINE_SUBMITTER",
    "FORMAT_REPORT_MAX",
    "Enqueuer",
    "Liveness",
    "RescoreReport",
    "Service",
    "format_report_of",
]


class Service(Intake, Reads, Moderation):
    """`head_ttl`: how long (seconds) the results head read by `results_head` is trusted; leaderboards are
    cached per track on that head, so a publish shows up within `head_ttl` seconds.

    The parts, one job each: `Intake` (worker/service/intake.py), `Reads` (reads.py), `Moderation`
    (moderation.py), over the fields of `ServiceBase` (state.py)."""
