"""Run every baseline on every demo track and write prediction files plus ``baselines.json``."""

from __future__ import annotations

import json
from pathlib import Path

from baselines import BASELINES, SPLITS, TRACKS, lexicon, majority
from baselines.data import inputs, read_jsonl, write_jsonl
from baselines.ngram import ToxiNgram, VarmNgram

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO_ROOT / "data" / "demo"


def prediction_path(out: Path, track: str, name: str, split: str) -> Path:
    """Where a baseline's predictions for one split live: ``<out>/<track>/baselines/<name>.<split>.jsonl``."""
    return out / track / "baselines" / f"{name}.{split}.jsonl"


def _varm(train: list[dict], rows: list[dict], model: VarmNgram) -> dict[str, list[dict]]:
    majority_output = majority.varm_output(train)
    return {
        "majority": [{"id": r["id"], "output": majority_output} for r in rows],
        "lexicon": [{"id": r["id"], "output": lexicon.varm_output(r["text"])} for r in rows],
        "char-ngram": [
            {"id": r["id"], "output": out}
            for r, out in zip(rows, model.predict_many([r["text"] for r in rows]), strict=True)
        ],
    }


def _toxitrace(track: str, train: list[dict], rows: list[dict], model: ToxiNgram) -> dict[str, list[dict]]:
    spans = track == "cntp"
    label = majority.majority_label(train)
    return {
        "majority": [{"id": r["id"], "label": label, **({"spans": []} if spans else {})} for r in rows],
        "lexicon": [lexicon.toxitrace_prediction(r, spans) for r in rows],
        "char-ngram": model.explain_many(rows, spans),
        "char-ngram-random": model.explain_many(rows, spans, random_scores=True),
    }


def run(data: Path = DEFAULT_DATA, out: Path | None = None, tracks: tuple[str, ...] = TRACKS) -> list[Path]:
    """Fit on ``<data>/<track>/train.jsonl``, predict dev and test, write under ``out`` (default ``data``).

    ``tracks``: a subset to run, e.g. ``("cold",)`` on an imported real bundle. ``baselines.json`` (which
    describes the demo baselines) is written only by a run over every track."""
    out = out or data
    written = []
    for track in tracks:
        train = read_jsonl(data / track / "train.jsonl")
        model = VarmNgram(train) if track == "varm" else ToxiNgram(train)  # fitted once, used for both splits
        for split in SPLITS:
            rows = inputs(read_jsonl(data / track / f"{split}.jsonl"))
            if track == "varm":
                predictions = _varm(train, rows, model)
            else:
                predictions = _toxitrace(track, train, rows, model)
            for name, preds in predictions.items():
                path = prediction_path(out, track, name, split)
                write_jsonl(path, preds)
                written.append(path)
    if tuple(tracks) != TRACKS:
        return written
    meta = {
        "note": "Baselines for the SYNTHETIC DEMO benchmark (data/demo), "
        "not for VARM-Bench, COLD, ToxiCN or CNTP.",
        "command": "python -m baselines",
        "files": "<track>/baselines/<name>.<split>.jsonl (track: varm, cold, toxicn, cntp; split: dev, test; "
        "char-ngram-random: cold, toxicn, cntp only)",
        "baselines": [b.as_dict() for b in BASELINES],
    }
    meta_path = out / "baselines.json"
    meta_path.parent.mkdir(parents=True, exist_ok=True)
    meta_path.write_bytes((json.dumps(meta, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
    written.append(meta_path)
    return written
