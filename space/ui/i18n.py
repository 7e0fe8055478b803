"""Interface text in Chinese and English.

The page shows one language. A layout writes a label as `both(key)` ("中文 · English") or binds a property to
a key with `Localised`; the app shell adopts every `both(key)` text into its `Localised`, so the language
toggle relabels it, and renderers take a `lang` for what they build from data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

C = TypeVar("C")
LANGS = ("zh", "en")

# key -> (Chinese, English)
TEXT: dict[str, tuple[str, str]] = {
    "title": ("中文辱骂言论可验证审核排行榜", "Verifiable Chinese Abusive-Speech Moderation Leaderboard"),
    "tagline": (
        "高标签分数可能掩盖错误的对象、立场和类别：JREM 要求整条记录全对。",
        "A high label score can hide wrong targets, stances and categories: "
        "JREM needs the whole record right.",
    ),
    "tab_board": ("排行榜", "Leaderboard"),
    "tab_analysis": ("分析", "Analysis"),
    "tab_submit": ("提交", "Submit"),
    "tab_submission": ("提交详情", "Submission"),
    "tab_explorer": ("开发集浏览", "Dev explorer"),
    "tab_compare": ("对比", "Compare"),
    "tab_about": ("说明与下载", "About & downloads"),
    "tab_maint": ("维护", "Maintainers"),
    "track": ("赛道", "Track"),
    "search": ("搜索模型 / 机构", "Search model / organisation"),
    "model_type": ("模型类型", "Model type"),
    "setting": ("设置", "Setting"),
    "baselines": ("显示基线", "Show baselines"),
    "sort": ("排序", "Sort by"),
    "columns": ("显示列", "Columns"),
    "page": ("页码", "Page"),
    "link": ("当前视图链接", "Link to this view"),
    "rows_shown": ("显示第 {a}–{b} 行，共 {n} 行（筛选后）", "Rows {a}–{b} of {n} (after filters)"),
    "no_rows": ("没有符合条件的结果。", "No results match."),
    "empty_board": ("该赛道尚无公开结果。", "No published results on this track yet."),
    "demo_banner": (
        "合成演示数据：本赛道的测试集是项目自带的合成演示集，不是真实基准，分数不代表真实表现。",
        "Synthetic demo data: this track's test set is the project's synthetic demo, not the real benchmark; "
        "its scores say nothing about real performance.",
    ),
    "no_reference_set": (
        "本赛道尚未安装参考集，暂不接受提交。",
        "No reference set is installed for this track yet: it takes no submissions.",
    ),
    "systems": ("选择系统（默认：前 5 名 + 基线）", "Systems (default: top 5 + baselines)"),
    "upload": ("预测文件（JSONL）", "Predictions file (JSONL)"),
    "model_name": ("模型名称（必填）", "Model name (required)"),
    "organisation": ("机构", "Organisation"),
    "paper_url": ("论文链接", "Paper URL"),
    "code_url": ("代码链接", "Code URL"),
    "description": ("简介", "Description"),
    "token": ("提交令牌", "Submission token"),
    "validate_btn": ("仅验证", "Validate only"),
    "submit_btn": ("提交", "Submit"),
    "need_model": ("请填写模型名称。", "Please give a model name."),
    "need_file": ("请先上传预测文件。", "Please upload a predictions file first."),
    "bad_url": ("{field} 不是有效的 http(s) 链接。", "{field} is not a valid http(s) URL."),
    "valid_ok": ("文件有效：{rows} 行。", "The file is valid: {rows} rows."),
    "valid_bad": ("文件无效：{n} 个问题（见下表）。", "The file is not valid: {n} problem(s), listed below."),
    "not_signed_in": ("请先登录或填写提交令牌。", "Please sign in or enter your submission token."),
    "bad_token": ("令牌无效。", "This token is not valid."),
    "need_token": ("请输入提交令牌。", "Please enter your submission token."),
    "need_oauth": ("请使用 Hugging Face 登录。", "Please sign in with Hugging Face."),
    "quota": (
        "今日剩余提交次数：{remaining}/{limit}。{next}",
        "Submissions left today: {remaining}/{limit}. {next}",
    ),
    "next_slot": ("下一个可用时段：{at}", "Next free slot: {at}"),
    "quota_exceeded": (
        "已达到今日提交上限，下一个可用时段：{at}",
        "Daily quota reached; next free slot: {at}",
    ),
    "submitted": (
        "已提交，编号 {id}。状态会自动刷新。",
        "Submitted as {id}. The status below updates by itself.",
    ),
    "duplicate": ("相同文件已提交过，编号 {id}。", "This exact file was already submitted as {id}."),
    "status": ("状态", "Status"),
    "open_submission": ("打开提交详情页", "Open the submission page"),
    "submission_id": ("提交编号", "Submission id"),
    "not_found": ("未找到该提交。", "No such submission."),
    "explorer_help": (
        "开发集的参考答案是公开的：上传你在开发集上的预测，逐条查看金标记录与解析记录的差异。"
        "计算只使用公开开发集，不接触隐藏测试集。",
        "Dev references are public: upload your dev predictions and browse every item, gold record vs "
        "parsed record. Computed on the public dev split only; the hidden test is never touched.",
    ),
    "compare_help": (
        "两两对比：配对自助法给出每个主要指标的差值及 95% 置信区间（在服务端用金标计算，只公开汇总值）。"
        "绿色：A 显著更好；橙色：B 显著更好；灰色：不显著（↑ 越高越好，↓ 越低越好，如 HER-C）。",
        "Two systems side by side: paired-bootstrap difference with a 95% CI for each headline metric "
        "(computed server-side with the gold; only aggregates are shown). Green: A significantly better; "
        "orange: B significantly better; grey: not significant (↑ higher is better, ↓ lower is better, "
        "e.g. HER-C).",
    ),
    "test_file_hint": (
        "这看起来是测试集文件：上传文件中的编号属于公开测试集，而不是开发集。开发集浏览只能比对开发集预测；"
        "测试集预测请在“提交”页提交。",
        "This looks like a test file: its ids are the public test split's, not the dev split's. The dev "
        "explorer compares dev predictions only; submit test predictions on the Submit tab.",
    ),
    # Table headers (space/ui/tables.py `header`): rank, model and the text columns by row key.
    "col_rank": ("排名", "Rank"),
    "col_model": ("模型", "Model"),
    "col_organisation": ("机构", "Organisation"),
    "col_model_type": ("类型", "Type"),
    "col_setting": ("设置", "Setting"),
    "col_mark": ("标记", "Mark"),
    "col_links": ("链接", "Links"),
    "col_date": ("日期", "Date"),
    "col_scorer_version": ("评分器", "Scorer"),
    "col_submission_id": ("ID", "ID"),
    "mark_baseline": ("◆ 基线", "◆ baseline"),
    "mark_verified": ("✓ 已验证", "✓ verified"),
    "link_paper": ("论文", "paper"),
    "link_code": ("代码", "code"),
    "higher_better": ("↑ 越高越好", "↑ better"),
    "lower_better": ("↓ 越低越好", "↓ better"),
    # The submission page (space/ui/submission.py).
    "h_metric": ("指标", "Metric"),
    "h_value": ("数值", "Value"),
    "h_ci": ("95% CI", "95% CI"),
    "h_direction": ("方向", "Direction"),
    "not_on_board": ("未上公开榜", "not on the public board"),
    "rank_of": ("第 {label} 名，共 {n} 个", "{label} of {n}"),
    "tied_with": (
        "与第 {label} 名统计上并列（基于 {primary} 的配对自助法）",
        "statistically tied with positions {label} (paired bootstrap on {primary})",
    ),
    "h_subset": ("子集", "Subset"),
    "h_rows": ("条目数", "Rows"),
    "h_jrem_harmful": ("JREM（有害）", "JREM harmful"),
    "h_jrem_non_harmful": ("JREM（无害）", "JREM non-harmful"),
    "h_gap": ("差距", "Gap"),
    "h_parse_success": ("解析成功率", "Parse success"),
    "h_note": ("说明", "Note"),
    "h_breakdown": ("分项", "Field"),
    "h_breakdown_value": ("取值", "Value"),
    "none": ("无", "none"),
    "all_formats_ok": ("所有输出格式正确", "every output follows the format"),
    "line_n": ("第 {n} 行", "line {n}"),
    "file": ("文件", "file"),
    "h_where": ("位置", "Where"),
    "h_issue": ("问题 / 字段", "Issue / field"),
    "h_count_message": ("数量 / 说明", "Count / message"),
    "h_line": ("行号", "Line"),
    "h_issues": ("问题", "Issues"),
    "output_format": ("输出格式", "Output format"),
    "outputs_all_valid": ("所有输出均符合格式", "every output is schema-valid"),
    "outputs_invalid": (
        "{n} 条输出不符合格式，记为错误",
        "{n} output(s) are not schema-valid and count as wrong",
    ),
    "first_listed": ("（列出前 {n} 条）", " (first {n} listed)"),
    "advice": ("建议", "Advice"),
    "h_version": ("结果版本", "Result version"),
    "h_scored_at": ("评分时间", "Scored at"),
    "h_at": ("时间", "At"),
    "h_history_note": ("备注", "Note"),
    "badge_private": ("🔒 私有", "🔒 private"),
    "badge_hidden": ("已隐藏", "hidden"),
    "unnamed": ("（未命名）", "(unnamed)"),
    "submitter": ("提交者", "Submitter"),
    "error": ("错误", "Error"),
    "provenance": ("来源", "Provenance"),
    "scorer_version": ("评分器版本", "Scorer version"),
    "references_sha": ("参考答案 sha256", "References sha256"),
    "predictions_sha": ("预测文件 sha256", "Predictions sha256"),
    "bootstrap": ("自助法：{n} 次重采样，种子 {seed}", "Bootstrap: {n} resamples, seed {seed}"),
    "st_received": ("已接收", "received"),
    "st_queued": ("排队中", "queued"),
    "st_scoring": ("评分中", "scoring"),
    "st_scored": ("已评分", "scored"),
    "st_published": ("已发布", "published"),
    "st_rejected": ("已拒绝", "rejected"),
    "st_failed": ("失败", "failed"),
    "st_held": ("待审", "held"),
    # Board, submit page and My submissions (space/ui/pages/, app.py).
    "board_notes": (
        "生成于 {at} · 评分器 {scorer} · 数值为百分比 · ↑ 越高越好 · ↓ 越低越好 · ◆ = 基线 · "
        "名次范围如 1–3 表示统计上并列（配对自助法）",
        "generated {at} · scorer {scorer} · values in % · ↑ higher is better · ↓ lower is better · "
        "◆ = baseline · rank ranges like 1–3 = statistically tied (paired bootstrap)",
    ),
    "search_hint": ("例如 qwen / lexicon", "e.g. qwen / lexicon"),
    "prev": ("‹ 上一页", "‹ Prev"),
    "next": ("下一页 ›", "Next ›"),
    "downloads": ("下载", "Downloads"),
    "type_open": ("开源", "open"),
    "type_closed": ("闭源", "closed"),
    "set_zero-shot": ("零样本", "zero-shot"),
    "set_taxonomy": ("分类体系提示", "taxonomy"),
    "set_fine-tuned": ("微调", "fine-tuned"),
    "token_hint": ("启动时打印 / $DATA_DIR/tokens.json", "printed at start-up / $DATA_DIR/tokens.json"),
    "check_sign_in": ("检查登录", "Check sign-in"),
    "signed_in": ("已登录", "Signed in"),
    "maintainer": ("维护者", "maintainer"),
    "quota_unavailable": ("配额暂不可用", "quota unavailable"),
    "h_field": ("字段", "Field"),
    "h_message": ("说明", "Message"),
    "validation_report": ("验证报告", "Validation report"),
    "showing_first": ("（仅显示前 {shown} 个，共 {n} 个）", "(showing the first {shown} of {n})"),
    "will_count_wrong": (
        "{n} 条输出不符合格式，所有字段将记为错误。",
        "{n} output(s) are not schema-valid and will count as wrong.",
    ),
    "private": ("私有提交", "Private submission"),
    "private_info": (
        "照常评分、计入配额并接受近似副本检查，但不上公开榜、仅你自己可见；之后可在“我的提交”中公开。",
        "Scored, counted in your quota and checked for near-copies like any other, but off the public "
        "board and visible to you only; make it public later under My submissions.",
    ),
    "submitted_private": (
        "（私有：不上公开榜，仅你可见）",
        "(private: off the public board, visible to you only)",
    ),
    "my_submissions": ("我的提交", "My submissions"),
    "refresh_mine": ("刷新我的提交", "Refresh my submissions"),
    "h_primary": ("主要指标", "Primary metric"),
    "h_format_issues": ("格式问题", "Format issues"),
    "h_submitted_at": ("提交时间", "Submitted"),
    "h_page": ("详情页", "Page"),
    "private_pick": ("我的私有提交", "My private submissions"),
    "make_public": ("公开到排行榜", "Make public"),
    "pick_private": ("请先选择一个私有提交。", "Pick one of your private submissions first."),
    "made_public": (
        "{id} 已公开，将在下次发布时上榜。",
        "{id} is public now: it joins the board at the next publish.",
    ),
    "open": ("打开", "Open"),
    "metrics_pct": ("指标 (%)", "Metrics (%)"),
    "metrics_ci": ("指标（95% CI）", "Metrics (95% CI)"),
    "subsets_label": ("线索子集 / 分项", "Cue subsets / breakdowns"),
    "format_report": ("格式报告", "Format report"),
    "output_format_report": ("输出格式报告（行号、id、问题）", "Output format report (line, id, issues)"),
    "versions": ("结果版本", "Result versions"),
    "history": ("历史", "History"),
    "dev_upload": ("开发集预测（JSONL）", "Dev predictions (JSONL)"),
    "explore_btn": ("浏览", "Explore"),
    "update_charts": ("更新图表", "Update charts"),
    "get_files": ("获取公开文件（测试输入、开发集）", "Get public files (test inputs, dev split)"),
    "files": ("文件", "Files"),
    "maint_only": ("仅维护者可见。", "Maintainers only."),
    "lang": ("语言", "Language"),
}


def t(key: str, lang: str = "zh", **kwargs: object) -> str:
    """Text for `key` in `lang` ("zh" or "en"), formatted with `kwargs`; unknown keys return the key."""
    pair = TEXT.get(key)
    if pair is None:
        return key
    text = pair[1] if lang == "en" else pair[0]
    return text.format(**kwargs) if kwargs else text


class Localised:
    """Component texts that follow the language toggle.

    `L(component, label="search", value=...)` binds properties of a component to texts: a string is a
    `TEXT` key, a callable maps a language to the value (for choices, or composed texts). The properties
    are set in the initial language at once; `updates(lang)` gives every bound component's update for
    another language (wired to the toggle by the app shell).
    """

    def __init__(self, lang: str = "zh") -> None:
        self.lang = lang if lang in LANGS else "zh"
        # id(component) -> (component, {prop: text}); one entry per component, its props merged.
        self._bound: dict[int, tuple[object, dict[str, str | Callable[[str], object]]]] = {}

    def __call__(self, component: C, **props: str | Callable[[str], object]) -> C:
        for prop, text in props.items():
            setattr(component, prop, _resolve(text, self.lang))
        self._bound.setdefault(id(component), (component, {}))[1].update(props)
        return component

    def adopt(self, blocks: object) -> None:
        """Bind every component of `blocks` whose label, value or placeholder is a bilingual `both(key)`
        text, so a layout can write `label=both("search")` and still follow the toggle."""
        keys = {both(key): key for key in TEXT}
        for block in getattr(blocks, "blocks", {}).values():
            props = {prop: keys[value] for prop in ("label", "value", "placeholder", "info")
                     if isinstance(value := getattr(block, prop, None), str) and value in keys}
            if props:
                self(block, **props)

    @property
    def components(self) -> list:
        return [component for component, _ in self._bound.values()]

    def updates(self, lang: str) -> dict:
        """{component: gr.update(...)} for every bound component, in `lang`."""
        import gradio as gr

        lang = lang if lang in LANGS else "zh"
        return {
            component: gr.update(**{prop: _resolve(text, lang) for prop, text in props.items()})
            for component, props in self._bound.values()
        }


def _resolve(text: str | Callable[[str], object], lang: str) -> object:
    return text(lang) if callable(text) else t(text, lang)


def both(key: str) -> str:
    """Bilingual label "中文 · English" for static component labels."""
    zh, en = TEXT.get(key, (key, key))
    return f"{zh} · {en}"


ABOUT_ZH = """
### 评测协议（简述）
**VARM-Bench**：模型对每条文本输出一段"分析："开头的中文推理，内嵌六个锚点
`[T:对象][TY:对象类型][TT:显隐性][S:立场][L:标签][C:类别]`。严格解析器决定输出是否有效；
无效输出的所有字段都记为错误。

- **JREM**（联合记录精确匹配）：对象（字符 F1 ≥ 0.5）与五个离散字段全部正确的比例——主要指标。
- **HER-C / HER-L**：类别（或标签）正确但整条记录错误的比例——"高标签分掩盖的错误"。
- **Label / Category Macro-F1**、**T-F1**（对象字符 F1 均值）、**解析成功率**。
- **线索子集**：在含身份、地位、身心、一般辱骂线索的子集上分别计算，并比较有害与无害条目的 JREM 差距。
- 置信区间：按行的百分位自助法（1000 次，种子 0）。
- 并列名次：与组首系统的配对自助差异不显著即同组，显示为"1–3"。

**ToxiTrace（COLD / ToxiCN / CNTP）**：二分类（1 = 有毒），主要指标 F1；CNTP 另有毒性片段抽取（重叠 F1）。
"""

ABOUT_EN = """
### The protocol in short
**VARM-Bench**: for each text the model writes one Chinese paragraph starting with `分析：` that embeds six
anchors `[T:target][TY:type][TT:explicitness][S:stance][L:label][C:category]`. A strict parser decides
whether an output is valid; every field of an invalid output counts as wrong.

- **JREM** (joint record exact match): share of items whose target (character F1 ≥ 0.5) and all five
  discrete fields are right — the primary metric.
- **HER-C / HER-L**: of the items with the right category (label), the share whose record is still wrong —
  the error a high label score hides.
- **Label / Category Macro-F1**, **T-F1** (mean target character F1), **parse success**.
- **Cue subsets**: every metric on the identity / status / body-health / general-abuse subsets, and the
  gap between harmful and non-harmful JREM.
- Confidence intervals: percentile bootstrap over items (1000 resamples, seed 0). Tied ranks: a system
  joins the current group unless the paired bootstrap says it is significantly below the group's first
  system; the rank shows as a range like "1–3".

**ToxiTrace (COLD / ToxiCN / CNTP)**: binary classification (1 = toxic), primary metric F1; CNTP adds
toxic-span extraction (overlap F1).
"""

FORMATS_MD = """
### 文件格式 · File formats
**VARM 预测 · predictions** (`{"id", "output"}`，`text` 可代替 `id` · `text` may replace `id`):
```json
{"id": "varm-test-0001",
 "output": "分析：……针对[T:外地人]这一[TY:群体对象]，[TT:明示]……[S:攻击或认同]……[L:有害]……[C:地域族群攻击]。"}
```
**ToxiTrace 预测 · predictions** (`{"id", "label"}`，CNTP 可加 `spans` · CNTP may add `spans`):
```json
{"id": "cold-test-0001", "label": 1}
{"id": "cntp-test-0001", "label": 1, "spans": [[3, 7]]}
```
**公开测试输入 · public test inputs**: `{"id", "text"}` per line.

### 结果格式 · Result schema
`scorer_version, track, rows, metrics{…}, ci{path: [low, high]}, bootstrap{resamples, seed, level},
provenance{scorer_version, references_sha256, predictions_sha256}`; VARM adds `format_issues` and
`subsets`, ToxiTrace adds `breakdowns`. The leaderboard rows flatten `metrics` by dotted path.

### 引用 · Citation
```bibtex
@misc{varm-leaderboard,
  title  = {Verifiable Chinese Abusive-Speech Moderation Leaderboard (VARM-Bench, ToxiTrace)},
  note   = {Public leaderboard},
  year   = {2026}
}
```
"""


def about(lang: str) -> str:
    """The About tab's protocol text in `lang` (file formats are bilingual)."""
    return (ABOUT_EN if lang == "en" else ABOUT_ZH) + FORMATS_MD
