"""The Space's front matter, from one source: README.md's front matter (the Space's configuration) and the
block docs/deploy.md shows are rendered here, with the same Leaderboard Finder tags the results dataset's
card gets (`worker.leaderboard.dataset_card`).

    python -m worker.hub_cards          # rewrite both files from this source
    python -m worker.hub_cards --check  # exit 1, naming the files, when either differs (tests run it)
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from worker.leaderboard import HUB_TAGS, finder_test_tag

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DEPLOY_DOC = ROOT / "docs" / "deploy.md"

# The test status of each real benchmark (../shared/spec/disclosure.md §1): VARM-Bench's labels are held
# by the maintainers; the COLD and ToxiCN releases publish theirs.
REAL_TEST_STATUS = {"varm": "private", "cold": "public", "toxicn": "public"}

FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
DEPLOY_BLOCK = re.compile(r"(```yaml\n)---\n.*?\n---\n(```)", re.S)


def space_front_matter() -> str:
    """The Space's YAML front matter, `---` lines included (huggingface_hub's SpaceCardData writes it)."""
    from huggingface_hub import SpaceCardData

    data = SpaceCardData(
        title="VARM-Bench & ToxiTrace Leaderboard",
        emoji="🛡️",
        colorFrom="indigo",
        colorTo="red",
        sdk="docker",
        app_port=7860,
        hf_oauth=True,
        hf_oauth_expiration_minutes=480,
        pinned=False,
        license="apache-2.0",
        short_description="Verifiable Chinese abusive-speech moderation leaderboard",
        tags=[*HUB_TAGS, finder_test_tag(REAL_TEST_STATUS)],
    )
    return f"---\n{data.to_yaml()}\n---\n"


def rendered() -> dict[Path, str]:
    """README.md and docs/deploy.md as they should read, front matter from `space_front_matter`."""
    block = space_front_matter()
    readme = README.read_text(encoding="utf-8")
    deploy = DEPLOY_DOC.read_text(encoding="utf-8")
    if not FRONT_MATTER.match(readme) or not DEPLOY_BLOCK.search(deploy):
        raise ValueError(
            "README.md must start with front matter and docs/deploy.md hold a ```yaml block of it"
        )
    return {
        README: FRONT_MATTER.sub(lambda _: block, readme, count=1),
        DEPLOY_DOC: DEPLOY_BLOCK.sub(lambda m: f"{m.group(1)}{block}{m.group(2)}", deploy, count=1),
    }


def stale() -> list[Path]:
    return [path for path, text in rendered().items() if path.read_text(encoding="utf-8") != text]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m worker.hub_cards", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only say whether the files are up to date")
    check = parser.parse_args(argv).check
    if check:
        behind = stale()
        for path in behind:
            print(
                f"{path.relative_to(ROOT)}: front matter differs; run python -m worker.hub_cards",
                file=sys.stderr,
            )
        return 1 if behind else 0
    for path, text in rendered().items():
        path.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
