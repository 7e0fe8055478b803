"""Small builders for VARM test data: gold records, well-formed outputs, JSONL bytes."""

from __future__ import annotations

import json
from pathlib import Path

HARMFUL_GROUP = {
    "target": "外地人",
    "target_type": "群体对象",
    "target_explicitness": "明示",
    "stance": "攻击或认同",
    "label": "有害",
    "category": "地域族群攻击",
}
HARMFUL_SINGLE = {
    "target": "楼主",
    "target_type": "单一对象",
    "target_explicitness": "明示",
    "stance": "攻击或认同",
    "label": "有害",
    "category": "一般辱骂",
}
QUOTED = {
    "target": "女司机",
    "target_type": "群体对象",
    "target_explicitness": "明示",
    "stance": "引用或转述",
    "label": "无害",
    "category": "非攻击",
}
NO_TARGET_ROW = {
    "target": "无明确对象",
    "target_type": "无明确对象",
    "target_explicitness": "无明确对象",
    "stance": "中性提及",
    "label": "无害",
    "category": "非攻击",
}


def output(record: dict, *, filler: str = "评论语境中的用词和指向都比较明确") -> str:
    """A schema-valid output for `record` (80–180 code points, prefix, integrated anchors)."""
    r = record
    return (
        f"分析：这条评论针对的是[T:{r['target']}]，它属于[TY:{r['target_type']}]，"
        f"评论里的指向是[TT:{r['target_explicitness']}]，作者的态度为[S:{r['stance']}]，"
        f"综合判断该内容[L:{r['label']}]，类别归为[C:{r['category']}]，理由是{filler}。"
    )


def gold(row_id: str | None, text: str, record: dict, *, cot: bool = True) -> dict:
    """A gold row; its cot is a valid output of the record (a blank target written as 无明确对象)."""
    row = {"text": text, **record} if row_id is None else {"id": row_id, "text": text, **record}
    if cot:
        row["cot"] = output({**record, "target": record["target"].strip() or "无明确对象"})
    return row


def jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(jsonl(rows))
    return path
