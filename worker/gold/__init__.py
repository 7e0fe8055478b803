"""The gold-touching side of the trust boundary: code that reads the hidden references or data derived
from them (per-row outcomes, tie groups) and writes results.

Only Celery workers and maintainer commands import this package. The web process (`space/`) must never
import it, directly or through another module; `tests/test_trust_boundary.py` starts the web app and checks
that no `worker.gold` module was loaded, and scans `space/` and the modules it imports for such imports.
"""
