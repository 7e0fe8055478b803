"""The scorer's version. Bump it (semver) with a docs/CHANGELOG.md entry whenever a metric changes."""

SCORER_VERSION = "4.0.1"
