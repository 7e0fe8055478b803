"""The Space's front matter (README.md) and the one docs/deploy.md tells operators to use are the same, and
carry the Hub's Leaderboard Finder tags the results dataset's card carries (worker/leaderboard.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from worker import hub_cards
from worker.leaderboard import HUB_TAGS, finder_test_tag

ROOT = Path(__file__).resolve().parents[1]


def front_matter(text: str) -> dict:
    match = re.match(r"---\n(.*?)\n---\n", text, re.S)
    assert match, "no front matter"
    return yaml.safe_load(match.group(1))


def test_readme_and_deploy_doc_are_rendered_from_one_source_with_the_finder_tags(
    monkeypatch, tmp_path
) -> None:
    assert hub_cards.stale() == [], "run python -m worker.hub_cards"
    readme = front_matter((ROOT / "README.md").read_text(encoding="utf-8"))
    block = re.search(r"```yaml\n(---\n.*?\n---\n)```", (ROOT / "docs" / "deploy.md").read_text(), re.S)
    assert block, "docs/deploy.md has no front matter block"
    assert front_matter(block.group(1)) == readme
    assert readme["sdk"] == "docker" and readme["app_port"] == 7860 and readme["hf_oauth"] is True
    # VARM-Bench's test is private, COLD's and ToxiCN's public (disclosure §1): a mix
    assert set(readme["tags"]) == {*HUB_TAGS, finder_test_tag({"varm": "private", "cold": "public"})}
    assert finder_test_tag({"varm": "private"}) == "test:private"  # the card's rule, both ways
    # Positive control: a hand edit of the deploy doc's copy is caught, and the command puts it back.
    copy, readme_copy = tmp_path / "deploy.md", tmp_path / "README.md"
    copy.write_text(hub_cards.DEPLOY_DOC.read_text(encoding="utf-8").replace("- test:mix", "- test:public"))
    readme_copy.write_text(hub_cards.README.read_text(encoding="utf-8"))
    monkeypatch.setattr(hub_cards, "DEPLOY_DOC", copy)
    monkeypatch.setattr(hub_cards, "README", readme_copy)
    monkeypatch.setattr(hub_cards, "ROOT", tmp_path.parent)
    assert hub_cards.stale() == [copy] and hub_cards.main(["--check"]) == 1
    assert hub_cards.main([]) == 0 and hub_cards.stale() == [] and "- test:public" not in copy.read_text()


def _parsed_quietly(card_class, text: str, caplog):
    """Parse with huggingface_hub's card class; any warning it emits (Python or its logger) fails."""
    import logging
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with caplog.at_level(logging.WARNING, logger="huggingface_hub"):
            card = card_class(text)
    assert not [r for r in caplog.records if r.name.startswith("huggingface_hub")], caplog.text
    return card


def test_the_hubs_card_parser_reads_both_cards_without_warnings(caplog) -> None:
    from huggingface_hub import DatasetCard, SpaceCard

    from worker.leaderboard import dataset_card

    space = _parsed_quietly(SpaceCard, (ROOT / "README.md").read_text(encoding="utf-8"), caplog)
    assert space.data.sdk == "docker" and "leaderboard" in space.data.tags
    text = dataset_card({"varm": "VARM-Bench", "cold": "COLD"}, {"cold": "public"}, rows=1234).decode()
    data = _parsed_quietly(DatasetCard, text, caplog).data
    assert data.language == ["zh"] and data.task_categories == ["text-classification"]
    assert data.size_categories == ["1K<n<10K"]
    assert "test:mix" in data.tags and [c["config_name"] for c in data.configs] == ["cold", "varm"]
    with pytest.raises((AssertionError, UserWarning)):  # positive control: the check sees a warning
        _parsed_quietly(DatasetCard, text.split("---", 2)[2], caplog)
