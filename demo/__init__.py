"""Synthetic demo benchmark for the leaderboard (NOT VARM-Bench, NOT COLD/ToxiCN/CNTP).

The real test sets are held by their maintainers and cannot ship with the service. This package
composes a small, deterministic, clearly-labelled synthetic stand-in so that a fresh checkout (and every
test) has realistic reference bundles to score against. Run ``python -m demo.generate`` to rebuild
``data/demo/``; the output is byte-identical for a given seed.
"""

DEMO_SEED = 20260512
