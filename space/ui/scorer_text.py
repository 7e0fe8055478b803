"""The scorer's and the pipeline's English sentences in the page's language (issue 28.9): validation
problems and advice, "n/a" reasons, withheld-cell notes and a submission's history notes.

`scoring/` is a pure library whose messages are English (the CLI, the REST API's `detail`, the logs and the
files keep them); a Chinese page says them in Chinese. Each rule is one sentence shape of the scorer (or of
`worker/`), matched whole: its `{name}` slots are values (lines, counts, ids, field names) copied as they
are, its `{t_name}` slots are sentence parts said again by the rules below (what was found, hints, the JSON
reader's own words). A sentence no rule knows stays English: `tests/test_scorer_text.py` makes every
message a bad file can produce go through a rule, and fails on a new one.
"""

# ruff: noqa: E501 - a table of whole sentences: one per line, so each can be found by grepping its words

from __future__ import annotations

import re
from functools import cache

# Sentence parts (the values of `t_` slots), said whole.
PARTS = {
    "": "",
    "predictions": "预测",
    "inputs": "输入",
    "test": "测试",
    "dev": "开发",
    "a string": "字符串",
    "a number": "数字",
    "a decimal number": "小数",
    "a list": "列表",
    "an object": "对象",
    "null": "null",
    "true/false": "true/false",
    "bool": "布尔值",
    " (the model's raw response)": "（模型的原始输出）",
    "the masked probabilities ('prob', 'prob_removed_10', ...)": "遮盖后的概率（'prob'、'prob_removed_10' 等）",
    "'char_scores'": "'char_scores'",
    "'spans'": "'spans'",
    "a number too large to represent": "一个大到无法表示的数",
    # The JSON reader's words (json.JSONDecodeError.msg; ours for NaN/Infinity).
    "Expecting value": "此处应为一个值",
    "Expecting property name enclosed in double quotes": "此处应为双引号括起的键名",
    "Expecting ',' delimiter": "此处应为逗号 ','",
    "Expecting ':' delimiter": "此处应为冒号 ':'",
    "Unterminated string starting": "未结束的字符串",
    "Invalid control character": "无效的控制字符",
    "Invalid \\escape": "无效的转义 \\",
    "Invalid \\uXXXX escape": "无效的 \\uXXXX 转义",
    "Extra data": "多余的内容",
    "NaN is not allowed in JSON": "JSON 中不允许 NaN",
    "Infinity is not allowed in JSON": "JSON 中不允许 Infinity",
    "-Infinity is not allowed in JSON": "JSON 中不允许 -Infinity",
    "0 by the protocol's zero-division rule": "按协议的除零规则记为 0",
    "harmful": "有害",
    "non-harmful": "无害",
    "harmful and non-harmful": "有害与无害",
    "received": "接收",
    "queued": "排队",
    "scoring": "在评分",
    # What a forced re-score found different (worker/gold/rescore.py `differences`).
    "result": "结果",
    "rows": "逐行结果",
    "sealed": "密封结果",
    # The reasons the service itself gives a visibility change (worker/service/moderation.py, worker/own.py).
    "made public by its submitter": "提交者将其公开",
    "private: visible to its submitter only, until they make it public": "私有：仅提交者可见，直到其公开",
}

LISTED = r"(?P<t_listed>(?: \(the first \d+ are listed\))?)"
RULES: tuple[tuple[str, str], ...] = (
    # scoring/jsonl.py
    (r"missing '(?P<key>[^']+)'(?P<t_hint>.*)", "缺少 '{key}'{t_hint}"),
    (
        r"'(?P<key>[^']+)' must be a string(?P<t_hint>.*?), found (?P<t_found>.+)",
        "'{key}' 必须是字符串{t_hint}，实际是{t_found}",
    ),
    (
        r"the (?P<t_what>\w+) file is encoded as UTF-16; save it as UTF-8",
        "{t_what}文件是 UTF-16 编码；请另存为 UTF-8",
    ),
    (
        r"the (?P<t_what>\w+) file is not valid UTF-8 \(first bad byte on line (?P<line>\d+)\); save it as UTF-8",
        "{t_what}文件不是有效的 UTF-8（第一个错误字节在第 {line} 行）；请另存为 UTF-8",
    ),
    (
        r"the (?P<t_what>\w+) file is encoded as GBK/GB18030; save it as UTF-8",
        "{t_what}文件是 GBK/GB18030 编码；请另存为 UTF-8",
    ),
    (
        r"the (?P<t_what>\w+) file is (?P<n>[\d,]+) bytes; the limit is (?P<max>[\d,]+) bytes",
        "{t_what}文件有 {n} 字节；上限是 {max} 字节",
    ),
    (
        r"the (?P<t_what>\w+) file has more than (?P<n>[\d,]+) lines; stopped reading here",
        "{t_what}文件超过 {n} 行；读到这里为止",
    ),
    (
        r"line is (?P<n>[\d,]+) bytes long; the limit is (?P<max>[\d,]+) bytes per line",
        "这一行有 {n} 字节；每行上限 {max} 字节",
    ),
    (r"line contains a NUL byte \(\\0\); remove it", "这一行含有 NUL 字节（\\0）；请删除"),
    (r"JSON is nested too deeply to read", "JSON 嵌套过深，无法读取"),
    (
        r"not valid JSON \((?P<t_error>.+)\); each line must be one JSON object",
        "不是有效的 JSON（{t_error}）；每行必须是一个 JSON 对象",
    ),
    (r"(?P<t_msg>[A-Z-][^()]*?) at column (?P<col>\d+)", "{t_msg}（第 {col} 列）"),
    (r"Exceeds the limit \((?P<n>\d+) digits\) for integer string conversion.*", "整数超过 {n} 位的上限"),
    (r"(?P<t_msg>[A-Z-][^()]*?) column (?P<col>\d+)", "{t_msg}（第 {col} 列）"),
    (
        r"line holds a \\uD800–\\uDFFF escape that is not part of a surrogate pair \(not a character\); remove it",
        "这一行有一个不成对的 \\uD800–\\uDFFF 转义（不是字符）；请删除",
    ),
    (
        r"expected a JSON object \{\.\.\.\}, found (?P<t_found>.+)",
        "应为一个 JSON 对象 {{...}}，实际是{t_found}",
    ),
    (r"the (?P<t_what>\w+) file is empty", "{t_what}文件是空的"),
    (r"(?P<key>(?:id|text) .+) is not in the (?P<t_split>\w+) set", "{key} 不在{t_split}集中"),
    (
        r"(?P<key>(?:id|text) .+) already appeared on line (?P<line>\d+); give one line per row",
        "{key} 已在第 {line} 行出现；每条只写一行",
    ),
    (
        r"(?P<n>[\d,]+) lines repeat an? (?P<field>\w+) in total" + LISTED,
        "共有 {n} 行重复了 {field}{t_listed}",
    ),
    (
        r"(?P<n>[\d,]+) lines name an? (?P<field>\w+) that is not in the (?P<t_split>\w+) set" + LISTED,
        "共有 {n} 行的 {field} 不在{t_split}集中{t_listed}",
    ),
    (
        r"(?P<n>[\d,]+) (?P<t_split>\w+) rows have no prediction" + LISTED + r": (?P<named>.*)",
        "{t_split}集中有 {n} 条没有预测{t_listed}：{named}",
    ),
    (r" \(the first (?P<k>\d+) are listed\)", "（列出前 {k} 条）"),
    # scoring/varm.py
    (
        r"the line has neither 'id' nor 'text'; one of them must say which (?P<t_split>\w+) row the output answers",
        "这一行既没有 'id' 也没有 'text'；需要其中之一说明输出回答的是哪条{t_split}数据",
    ),
    # scoring/protocol.py (the lenient parser's advice)
    (
        r"(?P<t_outputs>1 output uses|[\d,]+ outputs use) full-width brackets around anchors(?P<t_where>.*?); "
        r"the scorer accepts only ASCII \[ \] — (?P<t_count>.+)",
        "{t_outputs}用全角括号包住锚点{t_where}；评分器只接受 ASCII 的 [ ] —— {t_count}",
    ),
    (
        r"(?P<t_outputs>1 output uses|[\d,]+ outputs use) a full-width colon \(：\) inside anchors(?P<t_where>.*?); "
        r"the scorer accepts only an ASCII colon as in \[T:\.\.\.\] — (?P<t_count>.+)",
        "{t_outputs}在锚点中用了全角冒号（：）{t_where}；评分器只接受 [T:...] 中的 ASCII 冒号 —— {t_count}",
    ),
    (
        r"(?P<t_outputs>1 output uses|[\d,]+ outputs use) spaces around anchor names \(like \[ T :\.\.\.\]\)"
        r"(?P<t_where>.*?); the scorer accepts only \[T:\.\.\.\] — (?P<t_count>.+)",
        "{t_outputs}在锚点名两侧加了空格（如 [ T :...]）{t_where}；评分器只接受 [T:...] —— {t_count}",
    ),
    (
        r"(?P<n>[\d,]+) invalid outputs? would be valid if (?:it was|they were) written with ASCII anchors "
        r"\[NAME:value\]; fix the output format to have (?:it|them) scored\.",
        "有 {n} 条无效输出若用 ASCII 锚点 [NAME:value] 书写即为有效；请修正输出格式以便计分。",
    ),
    (r"1 output uses", "有 1 条输出"),
    (r"(?P<n>[\d,]+) outputs use", "有 {n} 条输出"),
    (r"it counts as invalid\.|they count as invalid\.", "按无效计分。"),
    (r" \(lines? (?P<lines>[\d, ]+)(?: and (?P<more>[\d,]+) more)?\)", "（第 {lines} 行{more?}）"),
    # scoring/toxitrace/fields.py, predictions.py, spans.py, explanations_input.py
    (r"missing field '(?P<key>[^']+)'", "缺少字段 '{key}'"),
    (r"missing field 'label' \(the number 0 or 1\)", "缺少字段 'label'（数字 0 或 1）"),
    (
        r"missing field 'spans': this track scores toxic spans; write \[\] when the model marks none",
        "缺少字段 'spans'：本赛道对有毒片段计分；模型没有标出片段时写 []",
    ),
    (r"label must be the number 0 or 1, not true/false", "label 必须是数字 0 或 1，而不是 true/false"),
    (r"label must be 0 or 1; got (?P<value>.+)", "label 必须是 0 或 1；实际是 {value}"),
    (
        r"label must be the number (?P<d>[01]) written without quotes, not the string (?P<shown>.+)",
        "label 必须是不带引号的数字 {d}，而不是字符串 {shown}",
    ),
    (
        r"label must be the whole number 0 or 1, written without a decimal point",
        "label 必须是整数 0 或 1，不带小数点",
    ),
    (r"label is null; it must be the number 0 or 1", "label 是 null；它必须是数字 0 或 1"),
    (r"label must be the number 0 or 1; got (?P<t_found>.+)", "label 必须是数字 0 或 1；实际是{t_found}"),
    (r"id is empty", "id 是空的"),
    (
        r"id must be a string; write it in quotes, e\.g\. (?P<example>.+)",
        "id 必须是字符串；请加引号，例如 {example}",
    ),
    (r"id must be a string; got (?P<t_found>.+)", "id 必须是字符串；实际是{t_found}"),
    (
        r"Some lines give 'spans' and some do not; spans are only scored when every line has them"
        r"(?P<t_tail>.*)",
        "有些行给了 'spans'，有些没有；只有每行都给出时才对片段计分{t_tail}",
    ),
    (r" \(otherwise they are derived from 'char_scores'\)\.", "（否则由 'char_scores' 推出）。"),
    (
        r"must be a list of spans, each \[start, end\] \(whole numbers\) or a string found in the text; \[\] "
        r"for none; got (?P<t_found>.+)",
        "必须是片段列表，每个片段为 [start, end]（整数）或文本中出现的字符串；没有片段写 []；实际是{t_found}",
    ),
    (r"an empty string is not a span", "空字符串不是片段"),
    (r"this span string does not occur in the item's text", "这个片段字符串没有出现在该条文本中"),
    (
        r"a span is \[start, end\], two numbers; got a list of (?P<n>\d+)",
        "片段是 [start, end] 两个数；实际是 {n} 个元素的列表",
    ),
    (
        r"start and end must be whole numbers written without quotes or decimals, got \[(?P<t_a>[^,]+), "
        r"(?P<t_b>[^\]]+)\]",
        "start 和 end 必须是不带引号或小数的整数，实际是 [{t_a}, {t_b}]",
    ),
    (
        r"end must be greater than start; got \[(?P<a>-?\d+), (?P<b>-?\d+)\]",
        "end 必须大于 start；实际是 [{a}, {b}]",
    ),
    (
        r"offsets \[(?P<a>-?\d+), (?P<b>-?\d+)\] fall outside the text, which has (?P<n>\d+) characters "
        r"\(code points; end is exclusive\)",
        "偏移 [{a}, {b}] 超出了文本范围（文本有 {n} 个字符，按码位计；end 不含）",
    ),
    (
        r"each span is \[start, end\] or a string; got (?P<t_found>.+)",
        "每个片段是 [start, end] 或字符串；实际是{t_found}",
    ),
    (
        r"(?P<t_what>.+) is given on (?P<n>[\d,]+) of (?P<rows>[\d,]+) lines \(first on line (?P<first>\d+)\) but not "
        r"on this one; explanations are scored on every row, so give them on every line or on none",
        "{t_what}在 {rows} 行中的 {n} 行给出（首次在第 {first} 行），这一行却没有；解释在每条上计分，请每行都给或都不给",
    ),
    (r"(?P<n>[\d,]+) lines lack (?P<t_what>.+?) in total" + LISTED, "共有 {n} 行缺少{t_what}{t_listed}"),
    (
        r"char_scores must be a list of numbers, one number per character \(code point\) of the item's text; "
        r"got (?P<t_found>.+)",
        "char_scores 必须是数字列表，该条文本每个字符（码位）一个数；实际是{t_found}",
    ),
    (r"must be a number; got (?P<t_found>.+)", "必须是数字；实际是{t_found}"),
    (
        r"must be a finite number; got a number too large to represent",
        "必须是有限的数；实际是一个大到无法表示的数",
    ),
    (
        r"has (?P<n>[\d,]+) numbers but the item's text has (?P<m>[\d,]+) characters \(code points\); give one "
        r"number per character \(code point\) of the item's text",
        "有 {n} 个数，但该条文本有 {m} 个字符（码位）；请按文本的每个字符（码位）给一个数",
    ),
    (
        r"(?P<key>prob\w*) must be a probability, a number from 0 to 1; got (?P<t_found>.+)",
        "{key} 必须是概率，即 0 到 1 之间的数；实际是{t_found}",
    ),
    (
        r"(?P<key>prob\w*) must be a probability from 0 to 1; got a number too large to represent",
        "{key} 必须是 0 到 1 之间的概率；实际是一个大到无法表示的数",
    ),
    (
        r"(?P<key>prob\w*) must be a probability from 0 to 1; got (?P<value>.+)",
        "{key} 必须是 0 到 1 之间的概率；实际是 {value}",
    ),
    (
        r"the masked probabilities come all together or not at all: this line lacks (?P<missing>.+)",
        "遮盖后的概率要么全给，要么都不给：这一行缺少 {missing}",
    ),
    (
        r"the masked probabilities need 'char_scores': the masked texts are defined by them",
        "遮盖后的概率需要 'char_scores'：遮盖文本由它们确定",
    ),
    (
        r"(?P<key>\w+) must be a string of 64 hexadecimal digits; got (?P<t_found>.+)",
        "{key} 必须是 64 位十六进制字符串；实际是{t_found}",
    ),
    (
        r"(?P<key>\w+) needs 'char_scores': the masked text is defined by them",
        "{key} 需要 'char_scores'：遮盖文本由它们确定",
    ),
    (
        r"(?P<key>\w+) does not match the (?P<variant>\w+) text computed from this line's char_scores and label; "
        r"write the masked inputs with `python -m scoring masked-inputs` and run the model on those texts",
        "{key} 与按这一行的 char_scores 和 label 算出的 {variant} 文本不一致；请用 `python -m scoring "
        "masked-inputs` 生成遮盖输入，并在这些文本上运行模型",
    ),
    # "n/a" reasons (scoring/toxitrace/classification.py, spans.py) and withheld cells (scoring/disclosure.py)
    (r"TP \+ FP = 0: no positive predictions; (?P<t_rule>.+)", "TP + FP = 0：没有预测为正类的条目；{t_rule}"),
    (r"TP \+ FN = 0: no positive items; (?P<t_rule>.+)", "TP + FN = 0：没有正类条目；{t_rule}"),
    (
        r"2TP \+ FP \+ FN = 0: no positive items and no positive predictions; (?P<t_rule>.+)",
        "2TP + FP + FN = 0：没有正类条目，也没有正类预测；{t_rule}",
    ),
    (r"no rows; (?P<t_rule>.+)", "没有数据；{t_rule}"),
    (r"no item has predicted spans; (?P<t_rule>.+)", "没有任何条目有预测片段；{t_rule}"),
    (r"no item has gold spans; (?P<t_rule>.+)", "没有任何条目有标注片段；{t_rule}"),
    (r"no item has gold or predicted spans; (?P<t_rule>.+)", "没有任何条目有标注或预测片段；{t_rule}"),
    (
        r"n/a: fewer than (?P<n>\d+) rows \(small groups reveal individual hidden labels\)",
        "n/a：少于 {n} 条（小组会暴露单条隐藏标签）",
    ),
    (
        r"(?P<t_names>harmful|non-harmful|harmful and non-harmful) JREM (?P<t_rest>n/a: .+)",
        "{t_names}条目的 JREM {t_rest}",
    ),
    (
        r"n/a: every row of this group has the same gold label \(only accuracy is published\)",
        "n/a：该组所有条目的标注标签相同（只公布准确率）",
    ),
    (
        r"n/a: the rows outside the published groups would form a derivable group of fewer than (?P<n>\d+) rows "
        r"\(overall minus the other groups\)",
        "n/a：公布的组之外的条目会构成一个可推算的、少于 {n} 条的组（整体减去其他组）",
    ),
    # A submission's history (worker/records.py, worker/gold/, worker/service/, worker/nearcopy.py)
    (r"upload validated", "上传已通过校验"),
    (r"waiting for a worker", "等待评分进程"),
    (r"attempt (?P<n>\d+)", "第 {n} 次尝试"),
    (r"scored", "已评分"),
    (r"already scored by an earlier delivery", "之前的一次投递已完成评分"),
    (r"time limit", "超时"),
    (r"scorer error", "评分出错"),
    (r"too many attempts", "尝试次数过多"),
    (r"invalid at scoring time", "评分时发现文件无效"),
    (r"on the leaderboard as version (?P<v>\d+)", "以第 {v} 版上榜"),
    (r"scored as version (?P<v>\d+)", "已评分（第 {v} 版）"),
    (r"scored as version (?P<v>\d+) \(batch\)", "已评分（第 {v} 版，批量评分）"),
    (
        r"scored as version (?P<v>\d+); not released \(the Ladder\)",
        "已评分（第 {v} 版）；未发布（Ladder 规则）",
    ),
    (r"re-score (?P<run>\S+) published: version (?P<v>\d+) is shown", "重新评分 {run} 已发布：显示第 {v} 版"),
    (
        r"re-scored as version (?P<v>\d+) \(scorer (?P<scorer>\S+), re-score (?P<run>\S+)\)",
        "重新评分为第 {v} 版（评分器 {scorer}，重新评分 {run}）",
    ),
    (
        r"re-sent by the reconciler \(was (?P<t_status>\w+) for (?P<s>\d+) s(?P<t_why>.*)\)",
        "由巡检程序重新发送（已{t_status} {s} 秒{t_why}）",
    ),
    (r"; the worker scoring it stopped", "；评分它的进程已停止"),
    (r"reconciler", "巡检程序"),
    (
        r"(?P<t_note>re-scored as version .+?); forced: differs from version (?P<v>\d+) \((?P<t_parts>[a-z, ]+)\)",
        "{t_note}；强制重新计算：与第 {v} 版不同（{t_parts}）",
    ),
    (r"(?P<t_a>result|rows|sealed), (?P<t_b>.+)", "{t_a}、{t_b}"),
    (
        r"moderated by (?P<actor>[^:]+): (?P<t_reason>made public by its submitter|private: .+)",
        "由 {actor} 审核：{t_reason}",
    ),
    (r"moderated by (?P<actor>[^:]+): (?P<reason>.*)", "由 {actor} 审核：{reason}"),
    # worker/gold/install.py: a demo-set result hidden when a real reference set replaced the demo one
    (
        r"retired: scored on the synthetic demo reference set, which a real set replaced",
        "已下架：它是在合成的演示参考集上评分的，该参考集已被真实参考集取代",
    ),
    # worker/service/moderation.py: a maintainer's review of a held submission (the reason is theirs)
    (r"released by (?P<actor>[^:]+): (?P<reason>.*)", "由 {actor} 放行：{reason}"),
    (r"released by (?P<actor>[^:]+)", "由 {actor} 放行"),
    (r"rejected by (?P<actor>.+?) after review: (?P<reason>.*)", "由 {actor} 审核后拒绝：{reason}"),
    (r"rejected after review: (?P<reason>.*)", "审核后拒绝：{reason}"),
    # worker/gold/: why scoring failed (a record's error)
    (r"the predictions file could not be scored", "预测文件无法评分"),
    (r"scoring took longer than (?P<s>[\d.]+) seconds", "评分用时超过 {s} 秒"),
    (
        r"internal error while scoring \((?P<exc>\w+)\); the maintainers can see the log",
        "评分时发生内部错误（{exc}）；维护者可以查看日志",
    ),
    (r"scoring crashed or timed out (?P<n>\d+) times; giving up", "评分崩溃或超时 {n} 次；已放弃"),
    (
        r"scoring did not finish after (?P<n>\d+) attempts \(the worker crashed or timed out\)",
        "尝试 {n} 次后评分仍未完成（评分进程崩溃或超时）",
    ),
    # worker/gold/references.py GOLD_MATCH_REASON, alone (the error) or after the scoring note (history)
    (
        r"held for review: its labels agree with the published test labels almost everywhere\. This track's test "
        r"labels are public, so such a file is checked by a maintainer before it is published",
        "暂缓待审：它的标签与已公开的测试标签几乎处处一致。本赛道的测试标签是公开的，因此这样的文件要经维护者检查后才会发布",
    ),
    (r"(?P<t_note>[^;]+); (?P<t_held>held for review: .+)", "{t_note}；{t_held}"),
    (
        r"differs from an earlier submission in only a few rows; near-copies reveal hidden labels, so they are "
        r"held for review\. A maintainer will release or reject it; a genuinely new model differs in many more "
        r"rows\.",
        "与一份较早的提交只有少数几行不同；近似副本会暴露隐藏标签，因此暂缓待审。维护者会放行或拒绝；真正的新模型会有多得多的不同行。",
    ),
    (
        r"identical to an earlier submission by another submitter; held for review\. A maintainer will release or "
        r"reject it\.",
        "与另一位提交者的一份较早提交完全相同；暂缓待审。维护者会放行或拒绝。",
    ),
    (
        r"the same predictions as an earlier submission of yours that is held, rejected or not public; held for "
        r"review like it\. A maintainer will release or reject it\.",
        "与你的一份待审、已拒绝或未公开的较早提交预测相同；同样暂缓待审。维护者会放行或拒绝。",
    ),
)


@cache
def _compiled() -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(pattern, re.S), template) for pattern, template in RULES)


def _part(text: str) -> str | None:
    """A sentence part in Chinese, or None when neither PARTS nor a rule knows it."""
    if text in PARTS:
        return PARTS[text]
    return _sentence(text)


def _sentence(text: str) -> str | None:
    for pattern, template in _compiled():
        match = pattern.fullmatch(text)
        if match is None:
            continue
        values: dict[str, str] = {}
        for name, value in match.groupdict(default="").items():
            if name.startswith("t_"):
                said = _part(value)
                if said is None:
                    break
                values[name] = said
            else:
                values[name] = value
        else:
            more = values.pop("more", "")
            return template.replace("{more?}", f"，另有 {more} 行" if more else "").format(**values)
    return None


def say(text: str, lang: str) -> str:
    """`text` (a scorer or pipeline sentence) in `lang`: itself in English; in Chinese when a rule knows its
    shape, else itself (never a half-translated sentence)."""
    if lang == "en" or not text:
        return text
    said = _sentence(text)
    return text if said is None else said
