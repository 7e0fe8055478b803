"""The Atom feed of a track (`GET /api/v1/feeds/{track}.atom`): one entry per release and per published
re-score, newest first, so a researcher can subscribe to "the official numbers changed" (issue 24, item 6).

Pure: built from the release metadata (`release.json`) and the re-score reports' headers the Service reads;
entries carry counts and links, never a metric value (the release and report files hold those).
"""

from __future__ import annotations

from xml.etree import ElementTree as ET

ATOM = "http://www.w3.org/2005/Atom"
FEED_ID = "tag:varm-leaderboard,2026:feeds/{track}"


def _text(parent: ET.Element, tag: str, text: str, **attrs: str) -> ET.Element:
    element = ET.SubElement(parent, f"{{{ATOM}}}{tag}", attrs)
    element.text = text
    return element


def release_entry(release: dict, base: str) -> dict:
    counts = release.get("counts") or {}
    name, track = release["name"], release["track"]
    return {
        "id": f"tag:varm-leaderboard,2026:releases/{track}/{name}",
        "title": f"Release {name} of {track}",
        "updated": release["date"],
        "link": f"{base}/api/v1/releases/{track}/{name}",
        "summary": (
            f"{counts.get('finals', 0)} finals of {counts.get('submitters', 0)} submitters, scored with "
            f"scorer {release.get('scorer_version')} on the {release.get('test_status', 'private')} test; "
            "signed rows, a citation block and the Rank Delta in the release."
        ),
    }


def rescore_entry(report: dict, base: str) -> dict:
    summary = report.get("summary") or {}
    track, run = report["track"], report["run"]
    return {
        "id": f"tag:varm-leaderboard,2026:rescore/{track}/{run}",
        "title": f"{track} re-scored with scorer {report.get('scorer_version')}",
        "updated": report["generated_at"],
        "link": f"{base}/api/v1/rescore/{track}/{run}",
        "summary": (
            f"{summary.get('rescored', 0)} of {summary.get('submissions', 0)} submissions re-scored, "
            f"{summary.get('rank_changes', 0)} rank changes; the diff report lists each."
        ),
    }


def atom(track: str, entries: list[dict], base: str) -> bytes:
    """The feed document (UTF-8 Atom 1.0) of `entries` (release_entry / rescore_entry dicts)."""
    ET.register_namespace("", ATOM)
    feed = ET.Element(f"{{{ATOM}}}feed")
    ordered = sorted(entries, key=lambda e: e["updated"], reverse=True)
    _text(feed, "id", FEED_ID.format(track=track))
    _text(feed, "title", f"{track}: releases and re-scores of the VARM-Bench & ToxiTrace leaderboard")
    _text(feed, "updated", ordered[0]["updated"] if ordered else "1970-01-01T00:00:00Z")
    author = ET.SubElement(feed, f"{{{ATOM}}}author")
    _text(author, "name", "VARM-Bench & ToxiTrace leaderboard")
    ET.SubElement(feed, f"{{{ATOM}}}link", {"rel": "self", "href": f"{base}/api/v1/feeds/{track}.atom"})
    for entry in ordered:
        node = ET.SubElement(feed, f"{{{ATOM}}}entry")
        _text(node, "id", entry["id"])
        _text(node, "title", entry["title"])
        _text(node, "updated", entry["updated"])
        ET.SubElement(node, f"{{{ATOM}}}link", {"rel": "alternate", "href": entry["link"]})
        _text(node, "summary", entry["summary"])
    return ET.tostring(feed, encoding="utf-8", xml_declaration=True)
