"""Every sentence the scorer can show a submitter, and the pipeline's history notes, said in Chinese on a
Chinese page (space/ui/scorer_text.py, issue 28.9). The messages are produced by the real validators from
files broken in every way the tests know, so a new message shape fails here until a rule says it."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from scoring.disclosure import DERIVED_CELL, LABEL_PURE, SMALL_CELL
from scoring.jsonl import read_jsonl
from scoring.tracks import get_track
from space.ui.scorer_text import say
from worker.gold.references import GOLD_MATCH_REASON
from worker.nearcopy import COPY_OF_ANOTHER, COPY_OF_CONCEALED, held_reason
from worker.own import PRIVATE_REASON

DEMO = Path(__file__).resolve().parents[1] / "data" / "demo"
# What may stay Latin on a Chinese page: field names, formats, quoted values and code.
ALLOWED = re.compile(
    r"'[^']*'|\"[^\"]*\"|`[^`]*`|\[[^\]]*\]|\b(?:id|text|output|label|spans|char_scores|prob\w*|sha256\w*|"
    r"JSON|UTF-8|UTF-16|GBK|GB18030|NUL|null|true|false|n/a|TP|FP|FN|Ladder|start|end|NaN|Infinity|"
    r"ASCII|JREM|uD800|uDFFF|uXXXX|masked-inputs|python|scoring|removed_\d+|kept_\d+|cli|e\.g)\b"
)


DATA = re.compile(r"\b(?:boss|spam|ValueError)\b")  # a maintainer's name and reason, an exception's type


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


ROOT = Path(__file__).resolve().parents[1]
RUN = "20261206T000000Z"
# Calls that write a record's history note: the note's position (and their `error=` is the record's error).
NOTE_ARG = {"transition": 2, "move": 2, "noted": 1, "held_record": 1, "_review": 2, "scored_or_held": None}
# Values for the f-string slots of those sentences, by the slot's source text. A new slot fails the test
# below until it is given a value here (user data - a maintainer's name and reason - is matched by DATA).
SLOTS = {
    "attempts": "2",
    "MAX_ATTEMPTS": "3",
    "rec['attempts']": "3",
    "time_limit": "300",
    "type(exc).__name__": "ValueError",
    "actor": "boss",
    "reason": "spam",
    "number": "2",
    "SCORER_VERSION": "4.1.0",
    "run": RUN,
    "parts": "result, rows",
    "chunk[sid]['compared_version']": "1",
    "new['versions'][-1]['version']": "2",
    "e.key[1]": "2",
    "ver['pending_rescore']": RUN,
    "ver['version']": "2",
    "rec['status']": "queued",
    "int(age)": "31",
}


class Sentences(ast.NodeVisitor):
    """Every sentence `worker/` writes into a record's history or error, rendered from its source: the
    literal or f-string passed to `transition`/`noted`/... (or built in a variable first, with its `+=`
    suffixes; module constants and the returns of worker functions such as `safe_error` followed). A
    sentence whose parts come from a caller (a parameter) is rendered at the caller."""

    def __init__(self, modules: list[ast.Module]) -> None:
        self.constants: dict[str, ast.expr] = {}
        self.returns: dict[str, list[ast.expr]] = {}
        for module in modules:
            for node in module.body:
                if isinstance(node, ast.Assign) and len(node.targets) == 1:
                    if isinstance(node.targets[0], ast.Name):
                        self.constants[node.targets[0].id] = node.value
            for node in ast.walk(module):
                if isinstance(node, ast.FunctionDef):
                    found = [r.value for r in ast.walk(node) if isinstance(r, ast.Return) and r.value]
                    self.returns.setdefault(node.name, []).extend(found)
        self.scopes: list[dict[str, list[ast.expr]]] = []
        self.suffixes: list[dict[str, list[ast.expr]]] = []
        self.found: set[str] = set()
        for module in modules:
            self.visit(module)

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        assigned: dict[str, list[ast.expr]] = {}
        appended: dict[str, list[ast.expr]] = {}
        for sub in ast.walk(node):
            if isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Name):
                assigned.setdefault(sub.targets[0].id, []).append(sub.value)
            elif isinstance(sub, ast.AugAssign) and isinstance(sub.target, ast.Name):
                appended.setdefault(sub.target.id, []).append(sub.value)
        self.scopes.append(assigned)
        self.suffixes.append(appended)
        self.generic_visit(node)
        self.scopes.pop()
        self.suffixes.pop()

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        said = []
        if name in NOTE_ARG:
            at = NOTE_ARG[name]
            if at is not None and len(node.args) > at:
                said.append(node.args[at])
            said += [k.value for k in node.keywords if k.arg == "note"]
        said += [k.value for k in node.keywords if k.arg == "error"]
        if name == "moderate":  # "moderated by {actor}: {reason}" with the service's own reasons
            for k in node.keywords:
                if k.arg == "reason":
                    self.found.update(f"moderated by boss: {r}" for r in self.render(k.value))
        for expr in said:
            self.found.update(self.render(expr))
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:  # a history entry written whole: {"note": ...}
        for key, value in zip(node.keys, node.values, strict=True):
            if isinstance(key, ast.Constant) and key.value == "note":
                self.found.update(self.render(value))
        self.generic_visit(node)

    def lookup(self, name: str) -> tuple[list[ast.expr], list[ast.expr]] | None:
        """The values assigned to `name` in the innermost function that assigns it, and its `+=` suffixes
        there; a module constant; None for a parameter (its caller renders it)."""
        for assigned, appended in zip(reversed(self.scopes), reversed(self.suffixes), strict=True):
            if name in assigned:
                return assigned[name], appended.get(name, [])
        return ([self.constants[name]], []) if name in self.constants else None

    def render(self, expr: ast.expr) -> list[str]:  # noqa: C901, PLR0911
        """The sentences `expr` can be ([] when it comes from a caller, a record or an exception)."""
        if isinstance(expr, ast.Constant):
            return [expr.value] if isinstance(expr.value, str) else []
        if isinstance(expr, ast.JoinedStr):
            out = [""]
            for part in expr.values:
                if isinstance(part, ast.Constant):
                    out = [o + str(part.value) for o in out]
                    continue
                assert isinstance(part, ast.FormattedValue)
                slot = ast.unparse(part.value)
                values = self.render(part.value) if isinstance(part.value, ast.Name) else []
                if not values:
                    assert slot in SLOTS, f"give the slot {{{slot}}} a value in SLOTS"
                    values = [SLOTS[slot]]
                out = [o + v for o in out for v in values]
            return out
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            left, right = self.render(expr.left), self.render(expr.right)
            return [a + b for a in left for b in right]
        if isinstance(expr, ast.IfExp):
            return self.render(expr.body) + self.render(expr.orelse)
        if isinstance(expr, ast.Name):
            found = self.lookup(expr.id)
            if found is None:
                return []
            values, suffixes = found
            out = [s for v in values for s in self.render(v)]
            for suffix in suffixes:
                out += [o + s for o in list(out) for s in self.render(suffix)]
            return out
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in self.returns:
            return [s for r in self.returns[expr.func.id] for s in self.render(r)]
        return []


def worker_sentences(sources: list[str] | None = None) -> set[str]:
    """The history notes and errors of `worker/` (its store excepted: it writes no sentence a submitter
    reads), or of `sources`."""
    if sources is None:
        paths = sorted(p for p in (ROOT / "worker").rglob("*.py") if "store" not in p.relative_to(ROOT).parts)
        sources = [p.read_text() for p in paths]
    return Sentences([ast.parse(s) for s in sources]).found


def held_history() -> list[str]:
    """A public test's gold-match hold as `scored_or_held` writes it (note and error), and the near-copy
    holds' reasons (worker/nearcopy.py)."""
    from worker.gold.references import PUBLIC, Pinned
    from worker.gold.scoring_job import scored_or_held

    pinned = Pinned("cold", "r", None, "0" * 64, test_status=PUBLIC)
    record = {"status": "scoring", "error": None, "history": [], "updated_at": ""}
    held = scored_or_held(record, pinned, {"metrics": {"accuracy": 1.0}}, note="scored as version 2")
    assert held["status"] == "held", held
    return [held["history"][-1]["note"], held["error"], held_reason(3), COPY_OF_ANOTHER, COPY_OF_CONCEALED]


def history() -> list[str]:
    found = worker_sentences()
    # The extractor really reads the pipeline: sentences of each kind are among what it found.
    for known in (
        "upload validated",
        "attempt 2",
        "scoring took longer than 300 seconds",
        "internal error while scoring (ValueError); the maintainers can see the log",
        "released by boss",
        "released by boss: spam",
        "rejected by boss after review: spam",
        "rejected after review: spam",
        f"re-scored as version 2 (scorer 4.1.0, re-score {RUN}); "
        "forced: differs from version 1 (result, rows)",
        "re-sent by the reconciler (was queued for 31 s; the worker scoring it stopped)",
        f"moderated by boss: {PRIVATE_REASON}",
        GOLD_MATCH_REASON,
    ):
        assert known in found, (known, sorted(found))
    return sorted(found) + held_history()


def corpus() -> dict[str, list[str]]:
    return {
        "varm": varm_messages(),
        "file": file_messages(),
        "cold": toxitrace_messages("cold"),
        "cntp": toxitrace_messages("cntp"),
        "n/a": na_reasons(),
        "history": history(),
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


def test_a_new_pipeline_sentence_is_found_and_fails_until_a_rule_says_it() -> None:
    # Positive control of `worker_sentences`: a note and an error a new transition would write are found
    # (with the variable's suffix and the slot's value), and no rule says them, so the history test fails.
    source = """
def fail(rec, attempts):
    why = "; the frobnicator stopped" if attempts else ""
    note = f"gave up after {attempts} tries{why}"
    return transition(rec, "failed", note, error="the widget broke")
"""
    found = worker_sentences([source])
    assert found == {
        "gave up after 2 tries; the frobnicator stopped",
        "gave up after 2 tries",
        "the widget broke",
    }
    assert all(english_left(say(s, "zh")) for s in found)
    with pytest.raises(AssertionError, match="frob"):  # a slot without a value is named, not skipped
        worker_sentences(['transition(r, "x", f"waited {frob} s")'])


def reasons() -> list[tuple[str, str]]:
    """(status, error) of a held, rejected or failed record, as worker/ writes them."""
    from worker.gold.scoring_job import safe_error

    held = held_history()
    return [
        ("held", held[1]),  # gold match
        ("held", held_reason(3)),
        ("held", COPY_OF_ANOTHER),
        ("rejected", "rejected after review: spam"),
        ("rejected", "the predictions file could not be scored"),
        ("failed", "scoring took longer than 300 seconds"),
        ("failed", safe_error(ValueError("gold text"))),
        ("failed", "scoring crashed or timed out 3 times; giving up"),
    ]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_held_rejected_and_failed_reasons_read_in_the_pages_language(lang: str) -> None:
    """Issue 28.9: the submission page's status line and its Error field printed the record's reason in
    English on a Chinese page."""
    from space.ui.i18n import t
    from space.ui.safe import md
    from space.ui.submission import header_markdown, status_line

    written = set(history())
    for status, error in reasons():
        assert error in written  # a sentence worker/ really writes
        sub = {"status": status, "error": error, "submission_id": "a" * 16, "track": "cold", "metadata": {}}
        line = status_line(sub, lang)
        header = header_markdown(sub, "", lang).split("\n\n")
        field = next(x for x in header if x.startswith(f"**{t('error', lang)}**"))
        for shown in (line, field):
            if lang == "en":
                assert md(error, 500) in shown, shown
            else:
                assert english_left(shown.replace("\\", "")) == [], shown
                assert md(say(error, "zh"), 500) in shown, shown
