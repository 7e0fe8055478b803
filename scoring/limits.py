"""Upload limits, shared by every reader so the Space, the worker and the CLI agree."""

MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_LINE_BYTES = 64 * 1024
MAX_ERRORS_KEPT = 200  # a report lists this many problems and counts the rest
MAX_IDS_LISTED = 20  # duplicate/unknown/missing ids: the first 20 are named, the rest counted
MAX_ROWS = 200_000  # records per file; far above any test split, bounds memory on hostile uploads
