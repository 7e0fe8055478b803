"""Hidden-reference needles and a scanner: does any published byte, response or log line carry gold?

Needles are built from a reference bundle (`data/demo/<track>/test.jsonl`) minus everything public by
design (the public test inputs, the dev split, the closed value sets):

- ``cot``: every gold rationale of the VARM test split (the whole string, and a 24-character slice from
  its middle, which would survive truncation);
- ``target``: gold VARM targets of 3+ characters that occur in no public text (implicit targets);
- ``labels``: the test split's gold label sequence, rendered the ways code tends to render a list
  (JSON list, comma-joined, concatenated; first 32 rows), for every track;
- ``fine_labels``: the same for COLD's fine-grained labels / ToxiCN's extra gold fields when present.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SEQ_LEN = 32


@dataclass(frozen=True)
class Needle:
    track: str
    kind: str
    text: str


@dataclass(frozen=True)
class Hit:
    where: str
    needle: Needle
    context: str


def _rows(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text(encoding="utf-8-sig").splitlines() if x.strip()]


def _sequence_needles(track: str, kind: str, values: list) -> list[Needle]:
    head = values[:SEQ_LEN]
    if len(head) < SEQ_LEN or len({json.dumps(v) for v in head}) < 2:
        return []  # too short, or constant: not distinguishable from innocent data
    strs = [str(v) for v in head]
    forms = {json.dumps(head, ensure_ascii=False), json.dumps(head), ",".join(strs), ", ".join(strs)}
    if all(len(s) == 1 for s in strs) or all(len(s) >= 2 for s in strs):
        forms.add("".join(strs))
    return [Needle(track, kind, f) for f in forms]


def needles_for(track: str, bundle: Path | None = None) -> list[Needle]:
    """Secret strings of one track's hidden test split (see module docstring)."""
    bundle = bundle or ROOT / "data" / "demo" / track
    test = _rows(bundle / "test.jsonl")
    public_text = "\n".join(r.get("text", "") for r in _rows(bundle / "public" / "test_inputs.jsonl") or test)
    if (bundle / "dev.jsonl").exists():
        public_text += "\n" + (bundle / "dev.jsonl").read_text(encoding="utf-8")
    out: list[Needle] = []
    if track == "varm":
        for row in test:
            cot = row.get("cot") or ""
            if len(cot) >= 40 and cot not in public_text:
                out.append(Needle(track, "cot", cot))
                mid = len(cot) // 2
                if cot[mid - 12 : mid + 12] not in public_text:  # templated slices recur in the dev split
                    out.append(Needle(track, "cot", cot[mid - 12 : mid + 12]))
            target = (row.get("target") or "").strip()
            if len(target) >= 3 and target not in public_text and target != "无明确对象":
                out.append(Needle(track, "target", target))
    out += _sequence_needles(track, "labels", [r.get("label") for r in test if "label" in r])
    for key in ("fine_label", "fine-grained-label", "toxic_type", "expression", "category", "stance"):
        values = [r[key] for r in test if key in r]
        if len(values) == len(test):
            out += _sequence_needles(track, key, values)
    return out


def all_needles(tracks: tuple[str, ...] = ("varm", "cold", "toxicn", "cntp")) -> list[Needle]:
    return [n for t in tracks for n in needles_for(t)]


def scan(where: str, blob: bytes | str, needles: list[Needle]) -> list[Hit]:
    """Every needle found in `blob` (decoded as UTF-8, and also with JSON \\u-escapes undone)."""
    text = blob.decode("utf-8", "replace") if isinstance(blob, bytes | bytearray) else blob
    variants = [text]
    if "\\u" in text:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # "\/" and friends in JSON text
            try:
                variants.append(text.encode("latin-1", "backslashreplace").decode("unicode_escape"))
            except UnicodeDecodeError:
                pass
    hits = []
    for needle in needles:
        for variant in variants:
            pos = variant.find(needle.text)
            if pos >= 0:
                hits.append(Hit(where, needle, variant[max(0, pos - 60) : pos + len(needle.text) + 60]))
                break
    return hits


def scan_tree(root: Path, needles: list[Needle], label: str = "") -> tuple[int, list[Hit]]:
    """Scan every file under `root`; returns (files scanned, hits)."""
    count, hits = 0, []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        count += 1
        hits += scan(f"{label}{path.relative_to(root)}", path.read_bytes(), needles)
    return count, hits
