"""Issue 16 item 3: the Analysis and Compare charts stay readable with 10 systems, at 1440 x 900 and on a
390 x 844 phone, in both languages.

Headless Debian chromium against `build_demo` over the real Service and store, with a real Celery worker
(Compare's paired bootstrap runs there); each track's board holds the 3 demo baselines and 7 systems with
long, Chinese, duplicate-looking and hostile names, scored and published by the pipeline's own code. All 10
are selected in the Analysis tab through the dropdown, as a reader would; Compare compares two systems with
long names (its title holds both). Then the box of every chart text (titles, axis titles, tick labels,
legend entries, annotations, text on points) and of each toolbar is read from the page and checked: no two
overlap, no title, legend or toolbar sits on a plot area, nothing sticks out of its figure. A deliberately
broken figure drawn in the same page must fail the same check (positive control).
Screenshots: test-output/screenshots/charts-*.png.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import plotly.graph_objects as go
import pytest
from playwright.sync_api import Page, expect

from space.ui.figures import MAX_SYSTEMS
from space.ui.tables import metric_header
from tests.conftest_pipeline import WorkerProcess, worker_env
from tests.conftest_ui import BASELINES as BASELINE_NAMES
from tests.conftest_ui import (
    SCREENSHOTS,
    TOKENS,
    VIEWPORTS,
    free_port,
    open_tab,
    publish_demo_board,
    redis_or_none,
    screen_page,
    shot,
    web_service,
)

pytestmark = pytest.mark.browser

TIMEOUT = 60_000
CJK = re.compile(r"[\u3400-\u9fff]")
NAMES = (  # 7 systems + 3 baselines = 10 per track
    "Qwen2.5-72B-Instruct + taxonomy prompt (v3, self-consistency)",
    "超长的中文模型名称：基于大规模预训练的辱骂检测系统第二版",
    "超长的中文模型名称：基于大规模预训练的辱骂检测系统第三版",  # the same cut label as the one above
    "GPT-4o-mini zero-shot",
    "DeepSeek-V3 fine-tuned LoRA r=64",
    "ChatGLM3-6B-32k-finetuned-on-COLD-and-ToxiCN",
)

# Every text of a chart a reader must read, by kind, and the shapes it must stay clear of.
CHART_BOXES = """(root) => {
  const pick = [
    ['title', '.g-gtitle text'],
    ['axis-title', '.g-xtitle text, .g-ytitle text, [class*="title"] > text.ytitle, ' +
                   '[class*="title"] > text.xtitle'],
    ['tick', '.xtick text, .ytick text'], ['legend', '.legend .traces .legendtext'],
    ['annotation', '.annotation-text-g text'],
    ['point-text', '.textpoint text, .bartext, .heatmaplayer text'],
    ['modebar', '.modebar'],
  ];
  const out = [];
  const page = (r, plot, kind, text) => out.push(
      {plot, kind, text, x: r.left + scrollX, y: r.top + scrollY, w: r.width, h: r.height});
  document.querySelectorAll(root + ' .js-plotly-plot').forEach((plot, p) => {
    const owner = plot.closest('[id]') ? plot.closest('[id]').id : String(p);
    const seen = new Set();
    for (const [kind, sel] of pick) {
      plot.querySelectorAll(sel).forEach(el => {
        if (seen.has(el)) return;
        seen.add(el);
        const r = el.getBoundingClientRect();
        const text = kind === 'modebar' ? 'toolbar' : (el.textContent || '').trim();
        if (r.width >= 0.5 && r.height >= 0.5 && text) page(r, owner, kind, text);
      });
    }
    plot.querySelectorAll('.draglayer .nsewdrag').forEach(
        a => page(a.getBoundingClientRect(), owner, 'plot-area', 'plot area'));
    page(plot.querySelector('.main-svg').getBoundingClientRect(), owner, 'figure', 'figure');
  });
  return out;
}"""
TEXT = {"title", "axis-title", "tick", "legend", "annotation", "point-text", "modebar"}
OFF_PLOT_AREA = {"title", "axis-title", "legend", "modebar"}


def _hit(a: dict, b: dict, tol: float = 1.0) -> bool:
    """The two boxes share more than `tol` px both ways (touching glyph boxes are fine)."""
    w = min(a["x"] + a["w"], b["x"] + b["w"]) - max(a["x"], b["x"])
    h = min(a["y"] + a["h"], b["y"] + b["h"]) - max(a["y"], b["y"])
    return w > tol and h > tol


def overlaps(boxes: list[dict]) -> list[tuple]:
    """What a reader cannot read: texts on texts, titles/legends/toolbars on a plot area, text outside its
    figure (clipped)."""
    bad: list[tuple] = []
    texts = [b for b in boxes if b["kind"] in TEXT]
    for i, a in enumerate(texts):
        bad += [
            ("overlap", a["plot"], a["kind"], a["text"][:40], b["kind"], b["text"][:40])
            for b in texts[i + 1 :]
            if _hit(a, b)
        ]
    areas = [b for b in boxes if b["kind"] == "plot-area"]
    bad += [
        ("on the plot area", t["plot"], t["kind"], t["text"][:40])
        for t in texts
        if t["kind"] in OFF_PLOT_AREA and any(a["plot"] == t["plot"] and _hit(t, a) for a in areas)
    ]
    figure = {b["plot"]: b for b in boxes if b["kind"] == "figure"}
    for t in texts:
        f = figure[t["plot"]]
        if (
            t["x"] < f["x"] - 1
            or t["y"] < f["y"] - 1
            or t["x"] + t["w"] > f["x"] + f["w"] + 1
            or t["y"] + t["h"] > f["y"] + f["h"] + 1
        ):
            bad.append(("cut off", t["plot"], t["kind"], t["text"][:40]))
    return bad


# Every legend entry of the charts under a root: its text lines (plotly draws a line a tspan), the box of
# its text, and the legend's visible area (a legend taller than its room scrolls, and the entries past its
# edge are clipped).
LEGENDS = """(root) => [...document.querySelectorAll(root + ' .js-plotly-plot')].flatMap(plot => {
  const owner = plot.closest('[id]').id;
  return [...plot.querySelectorAll('.legend')].flatMap(legend => {
    const area = legend.querySelector('.bg').getBoundingClientRect();
    const bar = legend.querySelector('.scrollbar');
    const scrolls = !!bar && bar.getBoundingClientRect().height > 0;
    return [...legend.querySelectorAll('.traces')].map(entry => {
      const text = entry.querySelector('.legendtext'), box = text.getBoundingClientRect();
      const lines = [...text.querySelectorAll('tspan.line')].map(t => t.textContent);
      const edges = r => ({left: r.left, right: r.right, top: r.top, bottom: r.bottom});
      return {plot: owner, lines: lines.length ? lines : [text.textContent], scrolls, text: edges(box),
              area: edges(area)};
    });
  });
})"""
# The charts whose legends name the systems (one entry a system).
SYSTEM_LEGENDS = {"varm": ("plot-1", "plot-2"), "cold": ("plot-2", "plot-3")}
SHORT_ID = re.compile(r"\([0-9a-f]{6}\)")  # what told two cut names apart before (issue 28.1)


def legend_problems(entries: list[dict], system_plots: tuple[str, ...] = ()) -> list[tuple]:
    """What keeps a reader from a legend: a scrolled legend, an entry clipped at its edge; in a systems
    legend, an entry of more than two lines, names that read alike or need an id to differ. (Plotly lines
    entries up in columns by itself; they overlap when a name is wider than its column: `overlaps`.)"""
    bad: list[tuple] = [("scrolls", e["plot"]) for e in entries if e["scrolls"]]
    for e in entries:
        t, a = e["text"], e["area"]
        if t["left"] < a["left"] - 1 or t["right"] > a["right"] + 1 or t["bottom"] > a["bottom"] + 1:
            bad.append(("clipped", e["plot"], "".join(e["lines"])))
    for plot in system_plots:
        mine = [e for e in entries if e["plot"] == plot]
        names = ["".join(e["lines"]) for e in mine]
        bad += [("lines", plot, n) for e, n in zip(mine, names, strict=True) if len(e["lines"]) > 2]
        bad += [("alike", plot, n) for n in names if names.count(n) > 1]
        bad += [("id", plot, n) for n in names if SHORT_ID.search(n)]
    return bad


TABS = {"en": ("Leaderboard", "Analysis", "Compare"), "zh": ("排行榜", "分析", "对比")}


# Each track's baselines (demo files): COLD's two char-ngram ones share a name's start (issue 28.1).
BASELINES = {"varm": ("majority", "lexicon", "char-ngram"), "cold": (*BASELINE_NAMES, "char-ngram-random")}
SHARED_START = ("char-ngram ◆", "char-ngram-random ◆")  # how a chart names them, the baselines' mark after


@dataclass
class Charts:
    url: str
    ids: dict[str, list[str]]  # track -> submission ids, the baselines first, then the systems of NAMES


@pytest.fixture(scope="module")
def ten_systems(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Charts]:
    """`build_demo` over the web process's Service and a worker; varm and cold boards with exactly 10
    systems each."""
    from space.ui import build_demo
    from worker.config import Config
    from worker.store.local import LocalStore

    data_dir = tmp_path_factory.mktemp("charts-data")
    (data_dir / "tokens.json").write_text(json.dumps(TOKENS))
    broker = redis_or_none()
    prefix = f"charts-{uuid.uuid4().hex[:10]}:" if broker else ""
    config = Config(data_dir=data_dir, celery_broker_url=broker, celery_key_prefix=prefix)
    store = LocalStore(data_dir)
    worker = WorkerProcess(
        worker_env(config, {"CELERY_KEY_PREFIX": prefix} if prefix else None), data_dir / "worker.log"
    )
    demo = None
    try:
        with ThreadPoolExecutor(1) as pool:
            started = pool.submit(worker.start, 60)  # boots while the boards are filled
            try:
                ids = {
                    track: publish_demo_board(
                        store, track, MAX_SYSTEMS - len(base), xss=True, names=NAMES, baselines=base
                    )
                    for track, base in BASELINES.items()
                }
            finally:
                started.result()
        demo = build_demo(web_service(config), auth_mode="token", refresh_seconds=60.0, status_seconds=60.0)
        _, url, _ = demo.launch(
            prevent_thread_lock=True, server_name="127.0.0.1", server_port=free_port(), quiet=True
        )
        yield Charts(url, ids)
    finally:
        if demo is not None:
            demo.close()
        worker.stop()
        if prefix:
            import redis

            client = redis.Redis.from_url(broker)
            if keys := list(client.scan_iter(f"{prefix}*")):
                client.delete(*keys)


def select_all_systems(page: Page) -> None:
    """Add every system the dropdown still offers (the default is the top 5 + the 3 baselines)."""
    tokens = page.locator("#systems .token")
    expect(tokens).not_to_have_count(0, timeout=TIMEOUT)
    for _ in range(MAX_SYSTEMS):
        have = tokens.count()
        if have >= MAX_SYSTEMS:
            break
        box = page.locator("#systems input")
        box.click()
        # Typed, not clicked: on a phone the open list reaches past the viewport. The short id in the
        # option's label leaves it the only match; ArrowDown makes it active, Enter takes it.
        option = page.locator('#systems [role=option][aria-selected="false"]').first
        short_id = re.search(r"\(([0-9a-f]{8})\)$", option.get_attribute("aria-label") or "")
        assert short_id, option.get_attribute("aria-label")
        box.press_sequentially(short_id.group(1))
        box.press("ArrowDown")
        box.press("Enter")
        box.blur()  # a focused box does not reopen its list on the next click
        expect(tokens).to_have_count(have + 1, timeout=TIMEOUT)
    expect(tokens).to_have_count(MAX_SYSTEMS, timeout=TIMEOUT)
    expect(tokens.filter(has_text=re.compile(r"^[0-9a-f]{8}$"))).to_have_count(0)  # options, not typed text


def chart_boxes(page: Page, root: str, settle_s: float = 15.0) -> list[dict]:
    """The chart text boxes under `root` once plotly has stopped moving them: automargin redraws a chart a
    time or two after it is drawn, later on a loaded machine, so two reads 0.5 s apart must agree."""
    deadline = time.monotonic() + settle_s
    boxes = page.evaluate(CHART_BOXES, root)
    while time.monotonic() < deadline:
        page.wait_for_timeout(500)
        again = page.evaluate(CHART_BOXES, root)
        if again == boxes:
            break
        boxes = again
    return boxes


def open_page(page: Page, url: str, track: str, lang: str) -> None:
    page.goto(f"{url}?track={track}&lang={lang}")
    expect(page.get_by_role("tab").first).to_have_text(TABS[lang][0], timeout=TIMEOUT)  # relabelled


def open_charts(page: Page, url: str, track: str, lang: str = "en") -> None:
    open_page(page, url, track, lang)
    open_tab(page, TABS[lang][1])
    expect(page.locator("#plot-1 .js-plotly-plot")).to_be_visible(timeout=TIMEOUT)
    select_all_systems(page)
    page.locator("#analyse").click()
    # The charts redrawn for 10: a chart with one legend entry per system has them all.
    legend = page.locator(f"{'#plot-1' if track == 'varm' else '#plot-2'} .legend .traces")
    expect(legend).to_have_count(MAX_SYSTEMS, timeout=TIMEOUT)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("width", list(VIEWPORTS))
@pytest.mark.parametrize("track", ["varm", "cold"])
def test_no_chart_text_overlaps_with_ten_systems(
    ten_systems, chromium, track: str, width: str, lang: str
) -> None:
    context, page, errors = screen_page(chromium, width)
    try:
        open_charts(page, ten_systems.url, track, lang)
        boxes = chart_boxes(page, "#tab-analysis")
        shot(page, f"charts-{track}-{lang}-{width}")
        (SCREENSHOTS / f"charts-{track}-{lang}-{width}.json").write_text(json.dumps(boxes))
        titles = " ".join(b["text"] for b in boxes if b["kind"] == "title")
        assert bool(CJK.search(titles)) == (lang == "zh"), titles  # the charts are in the page's language
        kinds = {b["kind"] for b in boxes}
        assert {"title", "axis-title", "tick", "legend", "modebar", "plot-area"} <= kinds, kinds
        ticks = [b["text"] for b in boxes if b["kind"] == "tick"]
        # Long names are cut in the middle on the axes (their start, "…", their end)...
        assert any("…" in t and not t.endswith("…") for t in ticks), ticks
        assert overlaps(boxes) == []
        legends = page.evaluate(LEGENDS, "#tab-analysis")
        (SCREENSHOTS / f"charts-{track}-{lang}-{width}-legends.json").write_text(json.dumps(legends))
        assert legend_problems(legends, SYSTEM_LEGENDS[track]) == []
        if track == "cold":  # two baselines that share a name's start read whole and apart
            for plot in ("plot-1", *SYSTEM_LEGENDS[track]):
                shown = [b["text"] for b in boxes if b["plot"] == plot and b["kind"] in ("tick", "legend")]
                assert set(SHARED_START) <= set(shown), (plot, shown)
        # ...and shown whole on hover: a bar of the first system-axis chart names the system in full.
        plot = "#plot-3" if track == "varm" else "#plot-1"
        names = page.locator(f"{plot} .ytick text").all_text_contents()  # systems, top down (by position)
        cut = next(i for i, name in enumerate(names) if "…" in name)
        page.locator(f"{plot} .trace.bars").first.locator(".point").nth(cut).hover(force=True)
        hover = page.locator(f"{plot} .hoverlayer")
        start, end = names[cut].split("…")
        expect(hover).to_contain_text(start, timeout=TIMEOUT)
        assert end in (hover.text_content() or "") and "…" not in (hover.text_content() or "")
        assert not errors, errors
    finally:
        context.close()


def pick(page: Page, box: str, sid: str) -> None:
    """Choose the system `sid` in a Compare picker. The tab fills both pickers with the top systems when the
    board loads: wait for that first, or it can overwrite the choice (seen on a loaded CI machine); then the
    full id, which the picker takes as it is (a typed short id can be left half-chosen)."""
    field = page.locator(f"{box} input")
    expect(field).not_to_have_value("", timeout=TIMEOUT)
    field.fill(sid)
    field.press("Enter")
    field.blur()
    expect(field).to_have_value(re.compile(re.escape(sid[:8])), timeout=TIMEOUT)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("width", list(VIEWPORTS))
def test_the_compare_chart_does_not_overlap(ten_systems, chromium, width: str, lang: str) -> None:
    """Compare: metric names along the x axis, and a title naming two long-named systems."""
    context, page, errors = screen_page(chromium, width)
    try:
        open_page(page, ten_systems.url, "varm", lang)
        open_tab(page, TABS[lang][2])
        ids = ten_systems.ids["varm"]
        # Up to 3 tries: on a loaded machine the tab's own defaults have been seen to land over a choice
        # (the run is then refused); this test is about the chart, not the picker.
        for attempt in range(3):
            pick(page, "#cmp-a", ids[9])  # NAMES[0], long and English
            pick(page, "#cmp-b", ids[4])  # NAMES[1], long and Chinese
            page.locator("#cmp-run").click()
            try:
                expect(page.locator("#cmp-table")).to_contain_text("A (%)", timeout=TIMEOUT)
                break
            except AssertionError:
                if attempt == 2:
                    raise
        expect(page.locator("#cmp-plot .js-plotly-plot .bars")).to_be_attached(timeout=TIMEOUT)
        boxes = chart_boxes(page, "#cmp-plot")
        page.locator("#cmp-plot").scroll_into_view_if_needed()
        shot(page, f"charts-compare-{lang}-{width}")
        (SCREENSHOTS / f"charts-compare-{lang}-{width}.json").write_text(json.dumps(boxes))
        kinds = {b["kind"] for b in boxes}
        assert {"title", "axis-title", "tick", "modebar", "plot-area"} <= kinds, kinds
        title = " ".join(b["text"] for b in boxes if b["kind"] == "title")
        assert "Qwen2.5" in title and "超长的中文模型名称" in title, title
        ticks = [b["text"] for b in boxes if b["kind"] == "tick"]
        # the metric names along the x axis, in the page's language
        assert metric_header("varm", "macro_f1.label", lang) in ticks, ticks
        assert overlaps(boxes) == []
        assert not errors, errors
    finally:
        context.close()


def draw(page: Page, box_id: str, fig: go.Figure) -> None:
    """`fig` drawn by the page's plotly into a new 360 px wide box `box_id` at the end of the page."""
    page.evaluate(
        """([id, fig]) => {
        const box = document.createElement('div'), div = document.createElement('div');
        box.id = id;
        div.style.width = '360px';
        box.appendChild(div);
        document.body.appendChild(box);
        return window.Plotly.newPlot(div, fig.data, fig.layout);
    }""",
        [box_id, json.loads(fig.to_json())],
    )


def broken_legend() -> go.Figure:
    """A legend of the mistakes legend_problems looks for: three lines, names alike and told apart by ids,
    more entries than the legend's room (it scrolls)."""
    names = ["a<br>three-line<br>name", "same name", "same name", "x (0a1b2c)", "y (3d4e5f)"]
    names += [f"system {'long ' * (i % 3)}{i}" for i in range(14)]
    fig = go.Figure([go.Bar(x=[1], y=[i], name=name, orientation="h") for i, name in enumerate(names)])
    fig.update_layout(height=300, legend={"orientation": "h", "y": -0.2})
    return fig


def test_the_overlap_check_sees_a_broken_chart(ten_systems, chromium) -> None:
    """Positive control: the pre-fix layout mistakes, drawn by the same plotly in the same page, are found."""
    page = chromium.new_page(viewport=VIEWPORTS["390"])
    try:
        open_charts(page, ten_systems.url, "varm")
        names = [f"system number {i} with a long name" for i in range(MAX_SYSTEMS)]
        broken = go.Figure(go.Bar(x=names, y=list(range(MAX_SYSTEMS)), name="a legend on the bars"))
        broken.add_trace(
            go.Scatter(x=names[:3], y=[5, 5, 5], mode="markers+text", text=["pile"] * 3, name="second")
        )
        broken.update_layout(
            title="A title the toolbar covers",
            margin={"t": 10},
            height=400,
            legend={"x": 0.3, "y": 0.6},
            xaxis={"tickangle": 0},
        )
        draw(page, "broken-chart", broken)
        draw(page, "broken-legend", broken_legend())
        found = overlaps(chart_boxes(page, "#broken-chart"))
        shot(page, "charts-positive-control")
        kinds = {(f[0], f[2]) for f in found}
        assert ("overlap", "tick") in kinds, found  # horizontal names run into each other
        assert ("on the plot area", "legend") in kinds, found
        assert any(f[0] == "overlap" and "modebar" in f for f in found), found  # the toolbar on the title
        assert overlaps(chart_boxes(page, "#tab-analysis")) == []  # the real charts stay clean
        legend = {f[0] for f in legend_problems(page.evaluate(LEGENDS, "#broken-legend"), ("broken-legend",))}
        assert legend == {"scrolls", "clipped", "lines", "alike", "id"}, legend
        assert legend_problems(page.evaluate(LEGENDS, "#tab-analysis"), SYSTEM_LEGENDS["varm"]) == []
    finally:
        page.close()
