"""Every sentence the scorer can show a submitter, and the pipeline's history notes, said in Chinese on a
Chinese page (space/ui/scorer_text.py, issue 28.9). The messages are produced by the real validators from
files broken in every way the tests know, so a new message shape fails here until a rule says it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scoring.disclosure import DERIVED_CELL, LABEL_PURE, SMALL_CELL
from scoring.jsonl import read_jsonl
from scoring.tracks import get_track
from space.ui.scorer_text import say
from worker.nearcopy import COPY_OF_ANOTHER, COPY_OF_CONCEALED, held_reason

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"
# What may stay Latin on a Chinese page: field names, formats, quoted values and code.
ALLOWED = re.compile(
    r"'[^']*'|\"[^\"]*\"|`[^`]*`|\[[^\]]*\]|\b(?:id|text|output|label|spans|char_scores|prob\w*|sha256\w*|"
    r"JSON|UTF-8|UTF-16|GBK|GB18030|NUL|null|true|false|n/a|TP|FP|FN|Ladder|start|end|NaN|Infinity|"
    r"ASCII|JREM|uD800|uDFFF|uXXXX|masked-inputs|python|scoring|removed_\d+|kept_\d+|cli|e\.g)\b"
)


DATA = re.compile(r"\b(?:boss|spam)\b")  # a maintainer's name and reason in a history note: user data


def english_left(text: str) -> list[str]:
    return re.findall(r"[A-Za-z]{2,}", ALLOWED.sub(" ", DATA.sub(" ", text)))


def inputs(track: str) -> list[dict]:
    return [json.loads(x) for x in (DEMO / track / "public" / "test_inputs.jsonl").read_text().splitlines()]


def lines(rows: list[object]) -> bytes:
    return b"".join(
        (r if isinstance(r, bytes) else json.dumps(r, ensure_ascii=False).encode()) + b"\n" for r in rows
    )


def varm_messages() -> list[str]:
    ins = inputs("varm")
    ok = [
        json.loads(x) for x in (DEMO / "varm" / "baselines" / "lexicon.test.jsonl").read_text().splitlines()
    ]
    good = ok[0]["output"]
    rows: list[object] = [
        {"text": "not a test text", "output": good},
        {"output": good},
        {"id": 5, "output": good},
        {"id": ins[1]["id"]},
        {"id": ins[2]["id"], "output": ["x"]},
        {"id": ins[3]["id"], "output": good.replace("[", "【").replace("]", "】")},
        {"id": ins[4]["id"], "output": good.replace(":", "：")},
        {"id": ins[5]["id"], "output": good.replace("[T:", "[ T :")},
        {"id": ins[6]["id"], "output": good},
        {"id": ins[6]["id"], "output": good},
        {"id": "no-such-id", "output": good},
        b'{"id": "x", "output": ',
        b'{"id": "x" "output": "y"}',
        b"{'id': 'x'}",
        b'{"id": "x", "output": "a\x01b"}',
        b'{"id": "x", "output": NaN}',
        b"[1, 2]",
        b'{"id": "x\\ud800", "output": "y"}',
        b'{"id": "a"} extra',
        b'"just a string"',
        b'{"id": "x", "output": "\x00"}',
        b'{"n": ' + b"1" * 5000 + b"}",
    ]
    data = lines(rows) + lines([{"id": r["id"], "output": good} for r in ins[7:600]])
    report = get_track("varm").check_predictions(data, ins)
    return [p["message"] for p in report.as_dict()["errors"]] + list(report.advice)


def file_messages() -> list[str]:
    out = []
    for data, options in (
        (b"", {}),
        ('{"id": "x"}\n'.encode("utf-16"), {}),
        ('{"id": "中文"}\n'.encode("gb18030"), {}),
        (b'{"id": "x"}\n\xff\xfe\xfa\n', {}),
        (b'{"id": "x"}\n' * 10, {"max_bytes": 20}),
        (b'{"id": "x"}\n' * 10, {"max_rows": 3}),
        (b'{"id": "' + b"x" * 100 + b'"}\n', {"max_line_bytes": 50}),
        (b"[1]\n" * 300, {}),
    ):
        out += [p.message for p in read_jsonl(data, **options)[1]]
    return out


def toxitrace_messages(track: str) -> list[str]:
    ins = inputs(track)
    text = ins[0]["text"]
    rows: list[object] = [
        {"id": ins[0]["id"], "label": True},
        {"id": ins[1]["id"], "label": 2},
        {"id": ins[2]["id"], "label": "1"},
        {"id": ins[3]["id"], "label": 1.0},
        {"id": ins[4]["id"], "label": None},
        {"id": ins[5]["id"], "label": []},
        {"id": 17, "label": 1},
        {"id": "", "label": 1},
        {"id": [], "label": 1},
        {"label": 1},
        {"id": ins[6]["id"]},
        {"id": ins[7]["id"], "label": 1, "spans": "x"},
        {"id": ins[8]["id"], "label": 1, "spans": [""]},
        {"id": ins[9]["id"], "label": 1, "spans": ["不在文本里的片段片段"]},
        {"id": ins[10]["id"], "label": 1, "spans": [[1, 2, 3]]},
        {"id": ins[11]["id"], "label": 1, "spans": [["1", 2.5]]},
        {"id": ins[12]["id"], "label": 1, "spans": [[3, 1]]},
        {"id": ins[13]["id"], "label": 1, "spans": [[0, 10_000]]},
        {"id": ins[14]["id"], "label": 1, "spans": [{"a": 1}]},
        {"id": ins[15]["id"], "label": 1, "char_scores": "x"},
        {"id": ins[16]["id"], "label": 1, "char_scores": ["x"] * len(ins[16]["text"])},
        {"id": ins[17]["id"], "label": 1, "char_scores": [1e400] * len(ins[17]["text"])},
        {"id": ins[18]["id"], "label": 1, "char_scores": [0.5]},
        {"id": ins[19]["id"], "label": 1, "prob": 2},
        {"id": ins[20]["id"], "label": 1, "prob": "x"},
        {"id": ins[21]["id"], "label": 1, "char_scores": [0.1] * len(ins[21]["text"]), "prob": 0.5},
        {"id": ins[22]["id"], "label": 1, "char_scores": [0.1] * len(ins[22]["text"]), "masked_sha256": 5},
    ]
    del text
    data = lines(rows) + lines([{"id": r["id"], "label": 1} for r in ins[23:]])
    report = get_track(track).check_predictions(data, ins)
    return [p["message"] for p in report.as_dict()["errors"]]


def na_reasons() -> list[str]:
    # scoring/varm_metrics.py's subset cells: "<groups> JREM <reason>"
    names = ("harmful", "non-harmful", "harmful and non-harmful")
    out = [SMALL_CELL, LABEL_PURE, DERIVED_CELL, *(f"{n} JREM {SMALL_CELL}" for n in names)]
    for track in ("cold", "cntp"):
        refs = get_track(track).load_references(DEMO / track / "test.jsonl")
        majority = (DEMO / track / "baselines" / "majority.test.jsonl").read_bytes()
        zero = b"".join(
            json.dumps({**json.loads(x), "label": 0, **({"spans": []} if track == "cntp" else {})}).encode()
            + b"\n"
            for x in majority.splitlines()
        )
        for data in (majority, zero):
            result = get_track(track).score(refs, data, bootstrap=0, disclose=False)
            out += [str(v) for v in (result.get("undefined") or {}).values()]
    return out


HISTORY = [
    "upload validated",
    "waiting for a worker",
    "attempt 2",
    "scored",
    "already scored by an earlier delivery",
    "time limit",
    "scorer error",
    "too many attempts",
    "invalid at scoring time",
    "on the leaderboard as version 1",
    "scored as version 2; not released (the Ladder)",
    "re-score 20261206T000000Z published: version 2 is shown",
    "re-scored as version 2 (scorer 4.1.0, re-score 20261206T000000Z)",
    "re-sent by the reconciler (was queued for 31 s; the worker scoring it stopped)",
    "re-sent by the reconciler (was scoring for 400 s)",
    "reconciler",
    "moderated by boss: spam",
    held_reason(3),
    COPY_OF_ANOTHER,
    COPY_OF_CONCEALED,
]


def corpus() -> dict[str, list[str]]:
    return {
        "varm": varm_messages(),
        "file": file_messages(),
        "cold": toxitrace_messages("cold"),
        "cntp": toxitrace_messages("cntp"),
        "n/a": na_reasons(),
        "history": HISTORY,
    }


@pytest.mark.parametrize("kind", ["varm", "file", "cold", "cntp", "n/a", "history"])
def test_every_message_reads_in_chinese_on_a_chinese_page(kind: str) -> None:
    messages = corpus()[kind]
    assert len(messages) >= 3, messages  # the corpus really produced messages
    untranslated = {m: english_left(say(m, "zh")) for m in messages if english_left(say(m, "zh"))}
    assert untranslated == {}, untranslated
    assert all(say(m, "en") == m for m in messages)  # an English page keeps the scorer's words


def test_an_unknown_sentence_stays_whole_and_is_caught() -> None:
    # Positive control: a sentence no rule knows stays English (never half-translated) and the checker
    # above sees it.
    sentence = "the frobnicator rejected line 3; fix the widget"
    assert say(sentence, "zh") == sentence and english_left(sentence)
    # A known shape whose part is unknown is not half-said either.
    assert say("the flux file is empty", "zh") == "the flux file is empty"
    assert say("the predictions file is empty", "zh") == "预测文件是空的"
