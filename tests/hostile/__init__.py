"""Hostile-input corpus: crafted uploads and metadata that a public leaderboard must refuse cleanly."""
