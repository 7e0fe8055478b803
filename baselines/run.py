"""Run every baseline on every demo track and write prediction files plus ``baselines.json``."""

from __future__ import annotations

import json
from pathlib import Path

from baselines import BASELINES, SPLITS, TRACKS, lexicon, majority
from baselines.data import DEFAULT_DATA, inputs, prediction_path, read_jsonl, write_jsonl
from baselines.ngram import ToxiNgram, VarmNgram

__all__ = ["DEFAULT_DATA", "BaselineError", "prediction_path", "run"]


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


class BaselineError(Exception):
    """A requested track or split is not in the data (the message says which file is missing)."""


def run(
    data: Path = DEFAULT_DATA,
    out: Path | None = None,
    tracks: tuple[str, ...] = TRACKS,
    splits: tuple[str, ...] | None = None,
) -> list[Path]:
    """Fit on ``<data>/<track>/train.jsonl``, predict each split, write under ``out`` (default ``data``).

    ``splits`` None: every split of SPLITS the track's bundle has (a real bundle may have no dev split);
    given: each must exist."""
    out = out or data
    written = []
    for track in tracks:
        if not (data / track / "train.jsonl").is_file():
            raise BaselineError(f"{data / track / 'train.jsonl'} is missing: the baselines are fitted on it")
        wanted = splits or tuple(s for s in SPLITS if (data / track / f"{s}.jsonl").is_file())
        missing = [s for s in wanted if not (data / track / f"{s}.jsonl").is_file()]
        if missing or not wanted:
            raise BaselineError(f"{data / track} has no {', '.join(missing or SPLITS)} split file")
        train = read_jsonl(data / track / "train.jsonl")
        model = VarmNgram(train) if track == "varm" else ToxiNgram(train)  # fitted once, used for each split
        for split in wanted:
            rows = inputs(read_jsonl(data / track / f"{split}.jsonl"))
            if track == "varm":
                predictions = _varm(train, rows, model)
            else:
                predictions = _toxitrace(track, train, rows, model)
            for name, preds in predictions.items():
                path = prediction_path(out, track, name, split)
                write_jsonl(path, preds)
                written.append(path)
    if data.resolve() != DEFAULT_DATA.resolve():
        return written  # baselines.json describes the demo's baselines only
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
