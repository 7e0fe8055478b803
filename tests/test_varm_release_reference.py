"""The VARM importer and the gold-cot check against the independent reference (tests/spec_reference_varm.py,
spec §1 "Release formats" as changed 2026-12) on generated cases, in the quick loop: the audit key that
decides duplicate and leak warnings (and what `check-references` refuses), and which gold cots are
accepted."""

from __future__ import annotations

import json
import random
from pathlib import Path

from scoring.references import _cot_problems, check_reference_bundle
from scoring.varm_import import audit_key, import_varm
from tests import spec_reference_varm as ref
from tests.test_varm_conformance import GOOD, NONE_ROW, rationale

CASES = 240
PUNCT = ["", "。", "！", "，", " ", "\u3000", "?", "Ａ", "a", "A", "之"]
STANCES = ["攻击或认同", "反对攻击", "引用或转述", "中性提及"]


def _variant(rng: random.Random, text: str) -> str:
    out = text
    for _ in range(rng.randint(0, 2)):
        out = out + rng.choice(PUNCT) if rng.random() < 0.7 else rng.choice(PUNCT) + out
    return out


def test_cot_acceptance_equals_the_reference_on_generated_rows() -> None:
    rng = random.Random(251)
    accepted = refused = unprefixed = 0
    for _ in range(CASES):
        base = dict(rng.choice([GOOD, NONE_ROW]))
        row = {"text": "外地人都滚出去", **base, "cot": rationale(base)}
        if rng.random() < 0.5:
            row["cot"] = row["cot"].removeprefix("分析：")
        if rng.random() < 0.3 and row["stance"] in row["cot"]:
            row["cot"] = row["cot"].replace(row["stance"], rng.choice(STANCES), 1)
        if rng.random() < 0.1:
            row["cot"] = row["cot"][: rng.randint(0, len(row["cot"]))]
        ours = not _cot_problems(row, 1)
        assert ours == ref.gold_cot_accepted(row), row
        accepted, refused = accepted + ours, refused + (not ours)
        unprefixed += ours and not row["cot"].startswith("分析：")
    assert accepted and refused and unprefixed  # the generator reaches every outcome


def test_duplicate_and_leak_warnings_follow_the_reference_audit_key(tmp_path: Path) -> None:
    rng = random.Random(252)
    texts = ["外地人都滚出去，这里不欢迎你们", "今天天气不错，大家出去走走吧", "ABC 外地人"]
    seen = {True: 0, False: 0}
    for case in range(CASES):
        a = _variant(rng, rng.choice(texts))
        b = _variant(rng, rng.choice(texts))
        assert audit_key(a) == ref.audit_key(a)
        same = ref.audit_key(a) == ref.audit_key(b)
        release = tmp_path / f"r{case}"
        release.mkdir()
        rows = [{"text": t, **GOOD, "cot": rationale(GOOD)} for t in (a, b)]
        (release / "test.jsonl").write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
        )
        warnings = import_varm(release, tmp_path / f"b{case}")["warnings"]
        warned = any("duplicate text" in w and "lines 1 and 2" in w for w in warnings)
        assert warned == same, (a, b, warnings)
        # check-references then refuses exactly those (a plain copy is refused as the same text anyway)
        bundle = tmp_path / f"c{case}"
        bundle.mkdir()
        (bundle / "test.jsonl").write_text(
            "".join(json.dumps({"id": f"r{k}", **r}, ensure_ascii=False) + "\n" for k, r in enumerate(rows)),
            encoding="utf-8",
        )
        refused = [p for p in check_reference_bundle(bundle) if p.field == "text" and p.line == 2]
        assert bool(refused) == same, (a, b, [str(p) for p in refused])
        seen[same] += 1
    assert seen[True] and seen[False]  # both outcomes generated
