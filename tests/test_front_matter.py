"""The Space's front matter (README.md) and the one docs/deploy.md tells operators to use are the same, and
carry the Hub's Leaderboard Finder tags the results dataset's card carries (worker/leaderboard.py)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from worker.leaderboard import HUB_TAGS, finder_test_tag

ROOT = Path(__file__).resolve().parents[1]


def front_matter(text: str) -> dict:
    match = re.match(r"---\n(.*?)\n---\n", text, re.S)
    assert match, "no front matter"
    return yaml.safe_load(match.group(1))


def test_readme_and_deploy_doc_give_the_same_front_matter_with_the_finder_tags() -> None:
    readme = front_matter((ROOT / "README.md").read_text(encoding="utf-8"))
    block = re.search(r"```yaml\n(---\n.*?\n---\n)```", (ROOT / "docs" / "deploy.md").read_text(), re.S)
    assert block, "docs/deploy.md has no front matter block"
    assert front_matter(block.group(1)) == readme
    assert readme["sdk"] == "docker" and readme["app_port"] == 7860 and readme["hf_oauth"] is True
    # VARM-Bench's test is private, COLD's and ToxiCN's public (disclosure §1): a mix
    assert set(readme["tags"]) == {*HUB_TAGS, finder_test_tag({"varm": "private", "cold": "public"})}
    assert finder_test_tag({"varm": "private"}) == "test:private"  # the card's rule, both ways
