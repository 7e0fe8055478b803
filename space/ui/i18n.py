"""Interface text in Chinese and English.

The page shows one language. A layout writes a label as `both(key)` ("中文 · English") or binds a property to
a key with `Localised`; the app shell adopts every `both(key)` text into its `Localised`, so the language
toggle relabels it, and renderers take a `lang` for what they build from data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

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
    # The tagline of the other tracks (issue 28.15b: "tagline" speaks of VARM's JREM only).
    "tagline_cold": (
        "COLD：中文文本是否冒犯（1 = 有毒），按 F1 排名；给出逐字分数（解释）时另行计分。",
        "COLD: is a Chinese text offensive (1 = toxic)? Ranked by F1; per-character scores (explanations), "
        "when given, are scored too.",
    ),
    "tagline_toxicn": (
        "ToxiCN：中文文本是否有毒（1 = 有毒），按 F1 排名；给出逐字分数（解释）时另行计分。",
        "ToxiCN: is a Chinese text toxic (1 = toxic)? Ranked by F1; per-character scores (explanations), "
        "when given, are scored too.",
    ),
    "tagline_cntp": (
        "CNTP：中文文本是否有毒（1 = 有毒），按 F1 排名；还要标出有毒片段，按重叠 F1 计分。",
        "CNTP: is a Chinese text toxic (1 = toxic)? Ranked by F1; the toxic spans it marks are scored by "
        "overlap F1.",
    ),
    "tab_board": ("排行榜", "Leaderboard"),
    "tab_analysis": ("分析", "Analysis"),
    "tab_submit": ("提交", "Submit"),
    "tab_submission": ("提交详情", "Submission"),
    "tab_explorer": ("开发集浏览", "Dev explorer"),
    "tab_compare": ("对比", "Compare"),
    "tab_releases": ("正式发布", "Releases"),
    "tab_about": ("说明与下载", "About & downloads"),
    "tab_maint": ("维护", "Maintainers"),
    "track": ("赛道", "Track"),
    "footer_nav": ("页脚链接", "Footer links"),
    "footer_api": ("通过 API 使用", "Use via API"),
    "footer_rest": ("REST API 文档", "REST API docs"),
    "footer_settings": ("显示设置", "Display settings"),
    "footer_gradio": ("基于 Gradio 构建", "Built with Gradio"),
    "search": ("搜索模型 / 机构", "Search model / organisation"),
    "model_type": ("模型类型", "Model type"),
    "setting": ("设置", "Setting"),
    "baselines": ("显示基线", "Show baselines"),
    "sort": ("排序", "Sort by"),
    "columns": ("显示列", "Columns"),
    "filters": ("筛选与列", "Filters and columns"),
    "page": ("页码", "Page"),
    "link": ("当前视图链接", "Link to this view"),
    "rows_shown": ("显示第 {a}–{b} 行，共 {n} 行（筛选后）", "Rows {a}–{b} of {n} (after filters)"),
    "no_rows": ("没有符合条件的结果。", "No results match."),
    "empty_board": ("该赛道尚无公开结果。", "No published results on this track yet."),
    "demo_banner": (
        "合成演示数据，不是真实基准：分数不代表真实表现。",
        "Synthetic demo data, not the real benchmark: its scores say nothing about real performance.",
    ),
    "public_test_banner": (
        "{track} 的测试标签已公开：这些是自报的预测，不是留出集上的评测。",
        "The test labels of {track} are public: these are self-reported predictions, not a held-out "
        "evaluation.",
    ),
    "live_board_rule": (
        "实时榜单：测试集**公开部分**（30% 的条目）上的成绩，保留一位小数；"
        "新提交须比提交者已发布的最佳成绩高出超过一个标准误才会上榜（阶梯规则），否则为“已评分，未发布”。"
        "正式排名见带日期的**版本发布**（私有部分 70%，附完整测试集分数）。",
        "Live board: scores on the test's **public slice** (30 % of the items), rounded to 0.1 point; a new "
        "submission shows only if it beats its submitter's released best by more than one standard error "
        '(the Ladder), else it is "scored — not released". The official ranking: dated **releases** (the '
        "private 70 %, with full-test scores beside them).",
    ),
    "badge_not_released": ("未发布", "not released"),
    "not_released_line": (
        "已评分，未发布：不比你已发布的最佳成绩高出超过一个标准误（阶梯规则），因此不显示分数，也不上榜。",
        "scored — not released: not better than your released best by more than one standard error "
        "(the Ladder), so no number is shown and it is on no public page.",
    ),
    "no_reference_set": (
        "本赛道尚未安装参考集，暂不接受提交。",
        "No reference set is installed for this track yet: it takes no submissions.",
    ),
    "systems": ("选择系统（默认：前 5 名 + 基线）", "Systems (default: top 5 + baselines)"),
    "upload": ("预测文件（JSONL）", "Predictions file (JSONL)"),
    "upload_prompt": ("将文件拖放到此处，或点击上传", "Drop the file here, or click to upload"),
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
    "latest_release": (
        "最新发布：[{name}]({url})（{date}），其中为冻结的官方成绩；此后提交的行为暂定成绩。",
        "Latest release: [{name}]({url}) ({date}), the frozen official numbers; rows submitted after it are "
        "provisional.",
    ),
    "refused_identity": (
        "这个用户名不能登录：它看起来像保留名称或另一个用户名。",
        "This user name cannot sign in: it looks like a reserved name or another user's.",
    ),
    "quota": (
        "今日剩余提交次数：{remaining}/{limit}。{next}",
        "Submissions left today: {remaining}/{limit}. {next}",
    ),
    "next_slot": ("下一个可用时段：{at}", "Next free slot: {at}"),
    # Issue 28.14: the quota counts accepted uploads, a held one too (README, QUOTA_PER_DAY).
    "held_slot": (
        "这次上传已用掉今天的一个提交名额，即使被拒绝也不退还：待审的上传同样是一次尝试，试探测试标签必须与一次"
        "提交付出相同的代价。",
        "This upload used one of today's submission slots, and keeps it even if it is rejected: a held "
        "upload is an attempt like any other, and probing the test labels must cost what a submission costs.",
    ),
    # The service's answers (worker/errors.py keys, space/ui/answers.py): "err_" + key.
    "err_service_error": ("请求未能完成。", "The request could not be completed."),
    "err_bad_request": ("请求有误。", "The request is not valid."),
    "err_unknown_submission": (
        "没有这条提交（或你无权查看）。",
        "No such submission (or not one you may see).",
    ),
    "err_not_allowed": ("你不能对这条提交这样做。", "You cannot do this to this submission."),
    "err_not_held": (
        "提交 {id} 当前状态为“{status}”，不在待审中。",
        "Submission {id} is {status}, not held.",
    ),
    "err_exists": (
        "{track} 的发布 {name} 已存在；发布一经生成便不再改变。",
        "Release {name} of {track} exists; a release never changes.",
    ),
    "err_not_ready": (
        "赛道 {track} 尚未安装参考集，暂不能接收提交。",
        "Track {track} has no reference set installed yet, so it cannot take submissions.",
    ),
    "err_disk_full": (
        "服务器磁盘已满，上传未保存；请稍后再试。",
        "The server's disk is full, so the upload was not stored; please try again later.",
    ),
    "err_busy": (
        "服务器正忙于校验其他上传；请在 {seconds} 秒后重试。",
        "The server is busy validating other uploads; retry in {seconds} s.",
    ),
    "err_identity_required": ("需要登录身份。", "A signed-in identity is required."),
    "err_release_name": (
        "发布名称形如 2027-03（勘误：2027-03.1）。",
        "A release is named like 2027-03 (an erratum: 2027-03.1).",
    ),
    "err_compare_tracks": ("两条提交不在同一赛道。", "The two submissions are on different tracks."),
    "err_compare_on_board": (
        "两条提交都须在排行榜上（已发布且可见）。",
        "Both submissions must be on the board (published and visible).",
    ),
    "err_hidden_by_maintainer": (
        "这条提交已被维护者隐藏，不能公开。",
        "A maintainer hid this submission; it cannot be made public.",
    ),
    "err_not_submitter": ("只有提交者本人可以这样做。", "Only its submitter can do this."),
    "err_too_many_finals": ("每个赛道最多选择 2 个最终提交。", "Choose at most 2 finals per track."),
    "err_not_yours": (
        "{id} 不是你在这个赛道上的提交。",
        "{id} is not one of your submissions on this track.",
    ),
    "err_final_not_on_board": (
        "{id}：只有已发布且在榜上的提交才能作为最终提交。",
        "{id}: only a released submission on the board can be a final.",
    ),
    "err_reason_required": (
        "拒绝待审提交需要填写理由。",
        "A reason is required to reject a held submission.",
    ),
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
    "mark_provisional": ("暂定", "provisional"),
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
    "badge_private": ("◆ 私有", "◆ private"),
    "badge_hidden": ("已隐藏", "hidden"),
    "hidden_reason": ("维护者给出的隐藏理由", "The maintainers' reason for hiding it"),
    "badge_hidden_by_maintainer": ("已被维护者隐藏（不在榜上）", "hidden by a maintainer (off the board)"),
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
    "type_baseline": ("基线", "baseline"),
    "unit_spans": ("个片段", "spans"),
    # ToxiTrace's breakdown fields and their values (scoring/toxitrace/references.py BREAKDOWN_FIELDS, the
    # names scoring/toxitrace/fields.py gives the published codes); the English is the stored name.
    "bd_topic": ("话题", "topic"),
    "bd_gender": ("性别", "gender"),
    "bd_race": ("种族", "race"),
    "bd_region": ("地域", "region"),
    "bd_fine_label": ("细粒度标签", "fine_label"),
    "bd_other_non_offensive": ("其他（非冒犯）", "other_non_offensive"),
    "bd_attack_individual": ("攻击个人", "attack_individual"),
    "bd_attack_group": ("攻击群体", "attack_group"),
    "bd_anti_bias": ("反偏见", "anti_bias"),
    "bd_toxic_type": ("毒性类型", "toxic_type"),
    "bd_non_toxic": ("无毒", "non_toxic"),
    "bd_offensive": ("冒犯", "offensive"),
    "bd_hate": ("仇恨", "hate"),
    "bd_expression": ("表达方式", "expression"),
    "bd_non_hate": ("非仇恨", "non_hate"),
    "bd_explicit": ("显性", "explicit"),
    "bd_implicit": ("隐性", "implicit"),
    "bd_reporting": ("转述", "reporting"),
    "bd_target_groups": ("目标群体", "target_groups"),
    "bd_Region": ("地域", "Region"),
    "bd_Sexism": ("性别歧视", "Sexism"),
    "bd_Racism": ("种族歧视", "Racism"),
    "bd_others": ("其他", "others"),
    "bd_non-hate": ("非仇恨", "non-hate"),
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
        "{n} 条输出不符合格式，所有字段将记为错误：{where}。",
        "{n} output(s) are not schema-valid and will count as wrong: {where}.",
    ),
    "line_id": ("第 {line} 行（{id}）", "line {line} ({id})"),
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
    "public_pick": ("我的公开提交", "My public submissions"),
    "withdraw": ("撤回（转为私有）", "Withdraw (make private)"),
    "pick_public": ("请先选择一个公开的提交。", "Pick one of your public submissions first."),
    "withdrawn": (
        "{id} 已撤回，转为私有：将在下次发布时离开排行榜（可再公开）。",
        "{id} is withdrawn and private now: it leaves the board at the next publish (make it public to "
        "put it back).",
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
    # Charts (space/ui/figures.py): one language per chart, axis titles with the metric's direction.
    "no_data": ("暂无数据", "No data"),
    "fig_system": ("系统", "System"),
    "fig_field": ("字段", "Field"),
    "fig_field_errors": ("各字段错误率（1 − 准确率）", "Per-field error rate (1 − accuracy)"),
    "fig_error_rate": ("错误率", "Error rate"),
    "fig_wrong": ("错误", "wrong"),
    "fig_label_vs_jrem": ("标签 Macro-F1 与 JREM", "Label Macro-F1 vs JREM"),
    "fig_diagonal": ("对角线（y = x）", "diagonal (y = x)"),
    "fig_diagonal_note": (
        "对角线以下 = 标签分数掩盖的记录错误",
        "below the diagonal = record errors a label score hides",
    ),
    "fig_gap": ("差距", "gap"),
    "fig_her": ("隐藏错误率 HER-C / HER-L", "Hidden error rates HER-C / HER-L"),
    "fig_her_c": ("类别对、记录错", "category right, record wrong"),
    "fig_her_l": ("标签对、记录错", "label right, record wrong"),
    "fig_rate": ("比例", "Rate"),
    "fig_cue": ("线索子集：有害与无害 JREM 及差距", "Cue subsets: harmful vs non-harmful JREM and gap"),
    "fig_no_subsets": ("暂无子集结果", "No subset results"),
    "fig_subset": ("子集", "Subset"),
    "subset_demographic_identity": ("人口身份", "Demographic identity"),
    "subset_social_status_role": ("社会地位/角色", "Social status/role"),
    "subset_body_health_disability": ("身体/健康/残障", "Body/health/disability"),
    "subset_general_abuse": ("一般辱骂", "General abuse"),
    "fig_format": ("格式问题（每类问题的输出条数）", "Format issues (outputs per issue)"),
    "fig_no_format": ("暂无格式统计", "No format report"),
    "fig_no_format_issues": ("没有格式问题：所有输出均可解析", "No format issues: every output parses"),
    "fig_outputs": ("输出条数", "Outputs"),
    "fig_score": ("分数", "Score"),
    "fig_classification": ("{track}：分类指标（95% CI）", "{track}: classification (95% CI)"),
    "fig_spans": ("{track}：有害片段（95% CI）", "{track}: toxic spans (95% CI)"),
    "fig_breakdown": ("按 {field} 分项：{metric}", "Breakdown by {field}: {metric}"),
    "fig_no_breakdown": ("暂无分项", "No breakdown"),
    "fig_field_accuracy": ("字段准确率", "Field accuracy"),
    "fig_accuracy": ("准确率", "Accuracy"),
    "fig_paired": ("配对自助法，95% CI", "paired bootstrap, 95% CI"),
    "fig_metric": ("指标", "Metric"),
    "fig_difference": ("差值（百分点）", "Difference (points)"),
    "fig_points": ("个百分点", "points"),
    "a_better": ("A 更好", "A better"),
    "b_better": ("B 更好", "B better"),
    "not_significant": ("不显著", "not significant"),
    "fig_expl": ("解释：全面性（自报）与 F1", "Explanations: comprehensiveness (self-reported) vs F1"),
    "fig_no_expl": ("暂无提交解释的系统", "No system with explanations"),
    "fig_prob_points": ("概率百分点", "probability points"),
    "this_submission": ("本提交", "this submission"),
    # The Analysis tab's subtitle, by track (space/ui/pages/analysis.py).
    "intro_varm": (
        "系统究竟错在哪里：高标签分数可能掩盖错误的对象、立场和类别。",
        "Where systems really fail: a high label score can hide wrong targets, stances and categories.",
    ),
    "intro_toxitrace": (
        "系统究竟错在哪里：按测试集分组（话题、目标群体、表达方式）的准确率和 F1 显示检测器漏掉了谁。",
        "Where systems really fail: accuracy and F1 per group of the test set (topic, target group, "
        "expression) show whom a detector misses.",
    ),
    "intro_cntp": (
        "系统究竟错在哪里：标签正确但有害片段错误仍然是错的；片段重合度会显示出来。",
        "Where systems really fail: a right label with the wrong toxic span is still wrong; the span "
        "overlap scores show it.",
    ),
    # Compare (space/ui/pages/compare.py).
    "system_a": ("系统 A", "System A"),
    "system_b": ("系统 B", "System B"),
    "compare_btn": ("对比", "Compare"),
    "paired_bootstrap": ("配对自助法", "Paired bootstrap"),
    "field_deltas": ("各字段差值", "Per-field deltas"),
    "col_a": ("A (%)", "A (%)"),
    "col_b": ("B (%)", "B (%)"),
    "col_diff": ("A − B（百分点）", "A − B (points)"),
    "h_significant": ("显著", "Significant"),
    "h_better": ("更好", "Better"),
    "h_field_metric": ("字段 / 指标", "Field / metric"),
    "yes": ("是", "yes"),
    "no": ("否", "no"),
    "pick_two": ("请选择两个不同的系统。", "Pick two different systems."),
    "both_on_board": (
        "两个系统都必须在该赛道排行榜上。",
        "Both systems must be on this track's leaderboard.",
    ),
    "compare_failed": ("对比失败", "Comparison failed"),
    # Maintainers (space/ui/pages/maintainers.py).
    "finals_pick": (
        "终选提交（本赛道最多 2 个，进入下一次发布）",
        "Finals (at most 2 on this track, for the next release)",
    ),
    "save_finals": ("保存终选", "Save finals"),
    "finals_saved": ("终选已保存：{finals}", "Finals saved: {finals}"),
    "finals_default": (
        "（未选择：发布取你已公开的最佳提交）",
        "(none chosen: a release takes your best released one)",
    ),
    "notices": ("变动通知", "What changed"),
    "details": ("详情", "details"),
    "notice_rescore": (
        "{what}：重新评分，{metric} {old} → {new}，排名 {old_rank} → {new_rank}",
        "{what}: re-scored, {metric} {old} → {new}, rank {old_rank} → {new_rank}",
    ),
    "notice_release": (
        "{what}：进入发布 {release}，排名 {rank}（排名变化 {delta}）",
        "{what}: in release {release}, rank {rank} (Rank Delta {delta})",
    ),
    "releases_intro": (
        "正式成绩来自发布：每位提交者最多 2 个终选提交，在私有切片上排名（公开测试集则为完整测试集），"
        "完整测试集成绩并列，排名变化 = 实时榜排名 − 发布排名。发布一经发布即冻结并签名。",
        "The official numbers come from releases: each submitter's finals (at most 2) ranked on the private "
        "slice (the full test for a public set), the full-test numbers beside them, and the Rank Delta (live "
        "rank − release rank). A release is frozen and signed once cut.",
    ),
    "release": ("发布", "Release"),
    "show_release": ("显示", "Show"),
    "citation": ("引用（BibTeX 格式）", "Citation (BibTeX)"),
    "h_release_metric": ("发布成绩", "release"),
    "h_release_ci": ("95% CI", "95% CI"),
    "h_release_full": ("完整测试集", "full test"),
    "h_live_rank": ("实时榜排名", "live rank"),
    "h_delta": ("排名变化", "Rank Delta"),
    "no_releases": ("这个赛道还没有发布。", "No release of this track yet."),
    "release_counts": (
        "{submitters} 位提交者的 {finals} 个终选提交；{rows_scored} / {rows_full} 条测试数据",
        "{finals} finals of {submitters} submitters; {rows_scored} of {rows_full} test rows",
    ),
    "release_public": (
        "公开测试集：成绩为完整测试集上的自报成绩，不是留出评测。",
        "A public test set: full-test, self-reported scores, not a held-out evaluation.",
    ),
    "erratum_due": (
        "此发布之后有过重新评分：发布本身不会改变，维护者可以在其旁边发布勘误版（如 2027-03.1）。",
        "A re-score came after this release: the release never changes; a maintainer may cut an erratum "
        "release next to it (such as 2027-03.1).",
    ),
    "cut_intro": (
        "**发布**：由评分进程在私有切片上为每位提交者的终选提交评分，"
        "并写入冻结、签名的快照（名称如 2027-03）。",
        "**Cut a release**: a worker scores each submitter's finals on the private slice and writes the "
        "frozen, signed snapshot (named like 2027-03).",
    ),
    "release_name": ("发布名称", "Release name"),
    "cut_release": ("发布", "Cut release"),
    "cut_sent": (
        "已交给评分进程：{task}。几秒后在“正式发布”标签页中可见。",
        "Sent to a worker: {task}. It appears in the Releases tab in a few seconds.",
    ),
    "maint_intro": (
        "所有操作均复核身份并记入审计日志。",
        "Every action re-checks your identity and is audit-logged.",
    ),
    "dry_run": ("试运行", "dry run"),
    "rescore": ("重新评分", "Re-score"),
    "latest_report": ("最新差异报告", "Latest diff report"),
    "rescore_diff": ("重新评分差异", "Re-score diff"),
    "action": ("操作", "Action"),
    "reason_required": ("理由（必填）", "Reason (required)"),
    "apply": ("执行", "Apply"),
    "held_intro": (
        "**待审**：与已有提交几乎相同或完全相同的文件（它们会泄露隐藏标签），以及在测试标签公开的赛道上与"
        "测试标签几乎完全一致的文件（黄金匹配）。“待审原因”列说明每一条为何待审。在上方填写编号和理由："
        "**放行**即照常评分并发布；**驳回**即结束它，永不评分（提交者看到驳回理由）。",
        "**Held for review**: near-copies or identical copies of an earlier submission (they would reveal "
        "hidden labels), and, on a track whose test labels are public, files whose labels agree with them "
        "almost everywhere (gold match). The *Held for* column says why each one is held. Enter its id and a "
        "reason above: **release** scores and publishes it as usual; **reject** ends it, never scored (its "
        "submitter reads the reason).",
    ),
    "held_btn": ("待审提交", "Held submissions"),
    "held": ("待审", "Held"),
    "act_hide": ("隐藏", "hide"),
    "act_unhide": ("取消隐藏", "unhide"),
    "act_flag": ("仅标记（审计）", "flag only (audit)"),
    "act_verify": ("标记已验证", "mark verified"),
    "act_unverify": ("取消已验证", "unmark verified"),
    "act_baseline": ("标记基线", "mark baseline"),
    "act_unbaseline": ("取消基线", "unmark baseline"),
    "act_release": ("放行待审提交（照常评分并发布）", "release a held submission (score and publish it)"),
    "act_reject": ("驳回待审提交（不评分）", "reject a held submission (never scored)"),
    "h_submission": ("提交", "Submission"),
    "h_old": ("旧 (%)", "Old (%)"),
    "h_new": ("新 (%)", "New (%)"),
    "h_change": ("变化（百分点）", "Change (points)"),
    "h_rows_differing": ("差异行数", "Rows differing"),
    "h_near_copy_of": ("相近的提交", "Near copy of"),
    "h_held_for": ("待审原因", "Held for"),
    "held_for_near_copy": ("与较早的一份提交几乎相同（仅少数行不同）", "near-copy of an earlier submission"),
    "held_for_copy_other": ("与另一提交者的文件完全相同", "identical to another submitter's file"),
    "held_for_copy_own": (
        "与同一提交者一份待审、已驳回或未公开的提交完全相同",
        "identical to the same submitter's held, rejected or private submission",
    ),
    "held_for_gold_match": (
        "黄金匹配：标签与公开的测试标签几乎完全一致",
        "gold match: labels agree with the test references",
    ),
    "no_report": ("暂无重新评分报告。", "No re-score report yet."),
    "unreadable_report": ("无法读取的报告", "Unreadable report"),
    "by": ("执行者", "by"),
    "started": ("已开始", "Started"),
    "real_run": ("正式重新评分（完成后发布）", "real run (published when done)"),
    "report_when_done": (
        "工作进程完成后，点击“最新差异报告”查看本次报告。",
        "its report appears under “Latest diff report” when the worker is done.",
    ),
    "sum_submissions": ("共 {n} 个提交", "{n} submissions"),
    "sum_rescored": ("重新评分 {n} 个", "{n} re-scored"),
    "sum_rank_changes": ("名次变化 {n} 个", "{n} rank changes"),
    "sum_skipped": ("跳过 {n} 个", "{n} skipped"),
    "sum_errors": ("出错 {n} 个", "{n} errors"),
    "now_hidden": ("现已隐藏（不在排行榜上）", "now hidden (off the board)"),
    "now_visible": ("现在可见", "now visible"),
    "skipped_current": ("跳过（已是最新）", "skipped (already current)"),
    "force_rescore": (
        "强制：已是最新的结果也重新计算并核对",
        "Force: recompute current results too and compare",
    ),
    "forced": ("强制", "forced"),
    "sum_reproduced": ("完全复现 {n} 个", "{n} reproduced"),
    "sum_differs": ("与存储结果不一致 {n} 个", "{n} differ from the stored result"),
    "row_reproduced": (
        "已复现（与第 {v} 版逐字节相同，未新增版本）",
        "reproduced (byte for byte as version {v}; nothing attached)",
    ),
    "row_differs": (
        "⚠ 与存储的第 {v} 版不一致（{parts}）：同一评分器和参考答案下无法复现",
        "⚠ differs from stored version {v} ({parts}): not reproducible with the same scorer and references",
    ),
    "part_result": ("公开结果", "public result"),
    "part_rows": ("逐行结果", "row outcomes"),
    "part_sealed": ("封存的私有部分", "sealed private part"),
    "need_reason": ("请填写理由（写入审计日志）。", "A reason is required (it goes to the audit log)."),
    "quarantined": (
        "**隔离的记录**（{n} 条；流水线会跳过，见 `python -m worker quarantine`）：",
        "**Quarantined records** ({n}; skipped by the pipeline, `python -m worker quarantine`):",
    ),
    "and_more": ("……另有 {n} 条", "… and {n} more"),
    # The dev explorer (space/ui/explorer.py, space/ui/pages/explorer.py).
    "ex_text": ("文本", "Text"),
    "ex_wrong_fields": ("错误字段", "Wrong fields"),
    "ex_pick": ("选择一条查看详情。", "Pick an item to see its details."),
    "ex_attribution": (
        "归因：颜色越深 = char_scores 越高；加框 = k = 20 时被遮盖的 20 %（预测为有害时得分最高者，"
        "预测为无害时得分最低者）；下划线 = 金标片段",
        "attribution: darker = higher char_scores; outlined = the 20 % removed at k = 20 (the highest scores "
        "on a row predicted toxic, the lowest on one predicted non-toxic); "
        "underline = gold span",
    ),
    "ex_gold_label": ("金标标签", "gold label"),
    "ex_predicted": ("预测", "predicted"),
    "ex_span_legend": (
        "下划线 = 金标片段 · 高亮 = 预测片段",
        "underline = gold span · highlight = predicted span",
    ),
    "ex_valid": ("有效", "valid"),
    "ex_invalid": ("无效：所有字段记为错误", "INVALID: every field counts as wrong"),
    "ex_gold": ("金标", "Gold"),
    "ex_parsed": ("解析", "Parsed"),
    "ex_raw": ("原始输出", "Raw output"),
    "ex_no_items": ("没有与开发集匹配的条目。", "No items matched the dev split."),
    "ex_dev_items": ("开发集条目", "Dev items"),
    "ex_report": ("开发集验证", "Validation vs dev"),
    "ex_field_wrong": ("错误字段", "Field wrong"),
    "ex_gold_stance": ("金标立场", "Gold stance"),
    "ex_gold_category": ("金标类别", "Gold category"),
    "ex_subset": ("子集 / 分项", "Subset / breakdown"),
    "ex_errors_only": ("仅错误", "Errors only"),
    "ex_items": ("条目", "Items"),
    "ex_item_no": ("条目编号", "Item #"),
    "any": ("任意", "any"),
    "need_dev_file": ("请先上传开发集预测。", "Please upload dev predictions first."),
    "no_dev_split": ("{track} 没有公开开发集。", "No public dev split for {track}."),
    "no_public_files": ("该赛道尚无公开文件。", "No public files for this track yet."),
    "lang": ("语言", "Language"),
}


def subset_name(name: str, lang: str = "zh") -> str:
    """A VARM cue subset's display name in `lang` (the four cues the protocol names); another name as it
    is (a release may name its subsets otherwise)."""
    return t(f"subset_{name}", lang) if f"subset_{name}" in TEXT else name


def breakdown_name(name: object, lang: str = "zh") -> str:
    """A ToxiTrace breakdown field or value in `lang`; another (a number, an acronym) as it is."""
    key = f"bd_{name}"
    return t(key, lang) if key in TEXT else str(name)


def tagline(track: str, lang: str = "zh") -> str:
    """The line under the title for `track`: VARM's (JREM) for VARM, each ToxiTrace track its own."""
    key = f"tagline_{track}"
    return t(key if key in TEXT else "tagline", lang)


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
            props = {
                prop: keys[value]
                for prop in ("label", "value", "placeholder", "info")
                if isinstance(value := getattr(block, prop, None), str) and value in keys
            }
            if props:
                self(block, **props)

    @property
    def components(self) -> list:
        return [component for component, _ in self._bound.values()]

    def updates(self, lang: str) -> dict:
        """{component: gr.update(...)} for every bound component, in `lang`."""
        import gradio as gr

        lang = lang if lang in LANGS else "zh"

        def update(props: dict) -> dict:
            values: dict[str, Any] = {prop: _resolve(text, lang) for prop, text in props.items()}
            return gr.update(**values)

        return {component: update(props) for component, props in self._bound.values()}


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
- **标签 / 类别 Macro-F1**、**T-F1**（对象字符 F1 均值）、**解析成功率**。
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

_VARM_EXAMPLE = """```json
{"id": "varm-test-0001",
 "output": "分析：……针对[T:外地人]这一[TY:群体对象]，[TT:明示]……[S:攻击或认同]……[L:有害]……[C:地域族群攻击]。"}
```"""
_TOXITRACE_EXAMPLE = """```json
{"id": "cold-test-0001", "label": 1}
{"id": "cntp-test-0001", "label": 1, "spans": [[3, 7]]}
```"""
_SCHEMA = """`scorer_version, track, rows, metrics{…}, ci{path: [low, high]},
bootstrap{resamples, seed, level}, provenance{scorer_version, references_sha256, predictions_sha256}`"""
_BIBTEX = """```bibtex
@misc{varm-leaderboard,
  title  = {Verifiable Chinese Abusive-Speech Moderation Leaderboard (VARM-Bench, ToxiTrace)},
  note   = {Public leaderboard},
  year   = {2026}
}
```"""

# The examples in code blocks are the protocol's own (VARM outputs are Chinese in either language).
FORMATS_ZH = f"""
### 文件格式
**VARM 预测**（`{{"id", "output"}}`，`text` 可代替 `id`）：
{_VARM_EXAMPLE}
**ToxiTrace 预测**（`{{"id", "label"}}`，CNTP 可加 `spans`）：
{_TOXITRACE_EXAMPLE}
**公开测试输入**：每行一个 `{{"id", "text"}}`。

### 结果格式
{_SCHEMA}；VARM 另有 `format_issues` 和 `subsets`，ToxiTrace 另有 `breakdowns`。
排行榜的行按点分路径展开 `metrics`。

### 引用
{_BIBTEX}
"""

FORMATS_EN = f"""
### File formats
**VARM predictions** (`{{"id", "output"}}`; `text` may replace `id`):
{_VARM_EXAMPLE}
**ToxiTrace predictions** (`{{"id", "label"}}`; CNTP may add `spans`):
{_TOXITRACE_EXAMPLE}
**Public test inputs**: `{{"id", "text"}}` per line.

### Result schema
{_SCHEMA}; VARM adds `format_issues` and `subsets`, ToxiTrace adds `breakdowns`. The leaderboard rows
flatten `metrics` by dotted path.

### Citation
{_BIBTEX}
"""


def about(lang: str) -> str:
    """The About tab's protocol text and file formats in `lang`."""
    return ABOUT_EN + FORMATS_EN if lang == "en" else ABOUT_ZH + FORMATS_ZH
