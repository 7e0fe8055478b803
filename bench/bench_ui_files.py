"""Upload and export files of the web process: how much the upload folder holds during a burst of Export
clicks and uploads, and how long until it is empty again.

Starts the production web process (`python -m space`, Gradio mounted in FastAPI; Redis broker, no worker)
with a short `UI_FILE_TTL_SECONDS`, makes `--exports` Export calls and `--uploads` uploads, and prints the
folder's peak file count and bytes and the seconds until it holds no file. Before issue 11 the folder only
grew (61 MB after 101 exports).

    .venv/bin/python bench/bench_ui_files.py [--exports 101] [--uploads 101] [--ttl 10]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import httpx  # noqa: E402

from tests.webproc import start_web, stop_web  # noqa: E402


def usage(folder: Path) -> tuple[int, int]:
    files = [p for p in folder.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--exports", type=int, default=101)
    ap.add_argument("--uploads", type=int, default=101)
    ap.add_argument("--ttl", type=int, default=10)
    args = ap.parse_args()
    from gradio_client import Client

    web = start_web(Path(tempfile.mkdtemp(prefix="bench-ui-files-")), UI_FILE_TTL_SECONDS=str(args.ttl))
    try:
        ui = Client(web.url + "/", verbose=False)
        peak = (0, 0)
        started = time.monotonic()
        for _ in range(args.exports):
            ui.predict("varm", "", [], [], True, "rank", [], 1, api_name="/export")
            peak = max(peak, usage(web.upload_dir))
        with httpx.Client(base_url=web.url, timeout=60) as c:
            for i in range(args.uploads):
                data = f'{{"id": "{i}", "label": 0}}\n'.encode() * 2000
                c.post("/gradio_api/upload", files={"files": (f"u{i}.jsonl", data)}).raise_for_status()
                peak = max(peak, usage(web.upload_dir))
        burst = time.monotonic() - started
        ui.close()
        done = time.monotonic()
        while usage(web.upload_dir)[0] and time.monotonic() - done < 20 * args.ttl:
            time.sleep(0.5)
        left = usage(web.upload_dir)
        print(f"{args.exports} exports + {args.uploads} uploads in {burst:.1f} s (TTL {args.ttl} s)")
        print(f"upload folder peak: {peak[0]} files, {peak[1] / 1e6:.1f} MB")
        print(f"empty again after {time.monotonic() - done:.1f} s: {left[0]} files, {left[1]} bytes left")
    finally:
        stop_web(web)
    print(f"after exit: {usage(web.upload_dir)[0]} files")


if __name__ == "__main__":
    main()
