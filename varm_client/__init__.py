"""`varm`: the leaderboard's submission client (REST only; no project code, no scorer)."""

__version__ = "0.1.0"
