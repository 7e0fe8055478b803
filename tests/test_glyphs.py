"""Every character the UI can show has a glyph in the fonts a fresh Debian gets with the runtime: DejaVu Sans
(fonts-dejavu-core, which Debian's chromium and fontconfig bring) and WenQuanYi Micro Hei (fonts-wqy-microhei,
the CJK font README and scripts/test install). A character outside both renders as a box (▯) there, as the
pause sign and the lock emoji did (issue 28.15)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FONTS = (
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
    Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"),
)


def charset(font: Path) -> set[int]:
    """The code points fontconfig says `font` covers (`fc-query`'s hex ranges, `20-7e a0 …`)."""
    out = subprocess.run(
        ["fc-query", "--index=0", "--format=%{charset}", str(font)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    points: set[int] = set()
    for part in out.split():
        low, _, high = part.partition("-")
        points.update(range(int(low, 16), int(high or low, 16) + 1))
    return points


def uncovered(text: str, covered: set[int]) -> set[str]:
    return {ch for ch in text if ord(ch) > 0x7F and ord(ch) not in covered and not ch.isspace()}


@pytest.fixture(scope="module")
def covered() -> set[int]:
    missing = [str(f) for f in FONTS if not f.is_file()]
    assert shutil.which("fc-query") and not missing, f"fontconfig and the fonts are needed: {missing}"
    return set().union(*(charset(f) for f in FONTS))


def test_every_character_of_the_ui_has_a_glyph(covered):
    sources = sorted((ROOT / "space").rglob("*.py")) + sorted((ROOT / "space").rglob("*.css"))
    boxes = {
        f"{path.relative_to(ROOT)}: " + ", ".join(f"{c} U+{ord(c):04X}" for c in sorted(chars))
        for path in sources
        if (chars := uncovered(path.read_text(encoding="utf-8"), covered))
    }
    assert not boxes, "characters no installed font draws (they show as boxes):\n" + "\n".join(sorted(boxes))


def test_the_check_sees_a_character_without_a_glyph(covered):
    """Positive control: the two glyphs the UI used to show as boxes are found."""
    assert uncovered("状态 ⏸ 🔒 ✓", covered) == {"⏸", "🔒"}
