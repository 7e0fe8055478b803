"""Subprocess side of the scorer-level hostile tests: validate crafted files, measure time and memory.

Run as ``python -m tests.hostile.probe JOB.json``; JOB is ``{"inputs": {track: [{"id","text"}]},
"items": [{"track", "case", "path"}], "tracemalloc": bool}``. Prints one JSON object per item on stdout:
``{"track", "case", "ok": bool, "valid", "errors_total", "first", "report_bytes", "seconds",
"py_peak_bytes", "traceback"}`` and a final ``{"max_rss_bytes"}`` line (ru_maxrss of this process).

Running in a fresh process keeps each heavy case's peak RSS its own, and a crash of the scorer (including
a RecursionError or MemoryError) is reported as data instead of killing the test runner.
"""

from __future__ import annotations

import json
import resource
import sys
import time
import traceback
import tracemalloc
from pathlib import Path


def _probe(track_name: str, data: bytes, inputs: list[dict], trace: bool) -> dict:
    from scoring.tracks import get_track

    track = get_track(track_name)
    if trace:
        tracemalloc.start()
    start = time.perf_counter()
    out: dict = {}
    try:
        report = track.check_predictions(data, inputs)
        as_dict = report.as_dict()
        text = json.dumps(as_dict, ensure_ascii=False)
        try:  # a lone surrogate in a message breaks every UTF-8 JSON response (FastAPI, files)
            text.encode("utf-8")
            encodable = True
        except UnicodeEncodeError:
            encodable = False
        out.update(
            encodable=encodable,
            ok=True,
            valid=bool(as_dict["valid"]),
            errors_total=as_dict["errors_total"],
            errors_kept=len(as_dict["errors"]),
            first=as_dict["errors"][0] if as_dict["errors"] else None,
            max_message_chars=max((len(e["message"]) for e in as_dict["errors"]), default=0),
            report_bytes=len(text.encode("utf-8", "replace")),
        )
    except BaseException as error:  # noqa: BLE001 - any escape is the finding we report
        out.update(
            ok=False,
            error=f"{type(error).__name__}: {str(error)[:300]}",
            traceback=traceback.format_exc()[-2000:],
        )
    out["seconds"] = time.perf_counter() - start
    if trace:
        out["py_peak_bytes"] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return out


def peak_rss_bytes() -> int:
    """Peak RSS of this program's own address space.

    VmHWM belongs to the memory map made at exec, so it excludes the parent's pages; ru_maxrss does not:
    Linux carries the forking parent's high-water mark across exec (a big pytest process would count)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def main(job_path: str) -> int:
    job = json.loads(Path(job_path).read_text())
    for item in job["items"]:
        data = Path(item["path"]).read_bytes()
        result = _probe(item["track"], data, job["inputs"][item["track"]], job.get("tracemalloc", True))
        del data
        print(
            json.dumps(
                {"track": item["track"], "case": item["case"], "bytes": item.get("bytes"), **result},
                ensure_ascii=True,
            ),
            flush=True,
        )
    print(json.dumps({"max_rss_bytes": peak_rss_bytes()}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
