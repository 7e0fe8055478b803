"""Names that look alike are the same name (issue 23, item 5).

NFKC and case-folding (`worker.quotas.normalise_identity`) make `ＭＡＬＬＯＲＹ` and `Mallory` one user,
but not `baseIine` (capital I), `bаseline` (Cyrillic а) or `base\ufe0fline` (a variation selector, a
default-ignorable code point outside category Cf). Here a name is compared on its confusable skeleton
(Unicode TR39, the data of `confusable-homoglyphs`, generated from Unicode's confusables.txt) after every
default-ignorable code point is removed:

- `skeletons(name)`: the forms two names are compared on. Every character is mapped to one member of its
  confusable class (the classes are the connected components of confusables.txt's single-character
  mappings, so `l`, `I`, `1` and `|` are one class). Case matters to the data (`I` looks like `l`, `i` does
  not), so a name gets two skeletons: case-folded then mapped, and mapped, case-folded, mapped again; two
  names are look-alikes when any of their skeletons agree;
- `mixed_script(name)`: letters of scripts that are not used together (Latin with Cyrillic or Greek); the
  combinations TR39's "highly restrictive" level allows pass (Latin with Han, Hiragana and Katakana; with
  Han and Bopomofo; with Han and Hangul), so `张三zhang` is a name;
- `reserved_identity(name)`: looks like one of RESERVED_IDENTITIES (the seeded baselines' owner): no
  sign-in may produce it.
"""

from __future__ import annotations

import unicodedata
from functools import cache

# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): render as nothing; category Cf is
# stripped as well (worker.records.strip_format_characters), these are the rest and the overlap.
DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
RESERVED_IDENTITIES = ("baseline",)
# Scripts that may share a name (TR39 "highly restrictive"); COMMON and INHERITED go with any.
ALLOWED_SCRIPT_SETS = (
    frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
    frozenset({"LATIN", "HAN", "BOPOMOFO"}),
    frozenset({"LATIN", "HAN", "HANGUL"}),
)


def is_default_ignorable(char: str) -> bool:
    code = ord(char)
    return unicodedata.category(char) == "Cf" or any(lo <= code <= hi for lo, hi in DEFAULT_IGNORABLE)


def without_ignorables(text: str) -> str:
    """`text` without default-ignorable code points (and format characters), which render as nothing."""
    return "".join(c for c in text if not is_default_ignorable(c))


@cache
def _classes() -> dict[str, str]:
    """Each confusable character -> the smallest code point of its class (union-find over the data)."""
    from confusable_homoglyphs import confusables

    parent: dict[str, str] = {}

    def find(c: str) -> str:
        while parent.get(c, c) != c:
            parent[c] = parent.get(parent[c], parent[c])
            c = parent[c]
        return c

    for char, glyphs in confusables.confusables_data.items():
        for glyph in glyphs:
            other = glyph["c"]
            if len(char) == 1 and len(other) == 1:  # multi-character prototypes ("rn" for "m") are left out
                a, b = find(char), find(other)
                if a != b:
                    parent[max(a, b)] = min(a, b)
    return {c: find(c) for c in parent}


def _mapped(text: str) -> str:
    classes = _classes()
    return "".join(classes.get(c, c) for c in text)


def skeletons(name: str) -> frozenset[str]:
    """The confusable skeletons of `name` (see the module docstring)."""
    text = unicodedata.normalize("NFKC", without_ignorables(unicodedata.normalize("NFKC", str(name)))).strip()
    folded_first = _mapped(text.casefold())
    mapped_first = _mapped(_mapped(text).casefold())
    return frozenset({folded_first, mapped_first})


def look_alike(a: str, b: str) -> bool:
    return bool(skeletons(a) & skeletons(b))


def _starts_like(name: str, prefix: str) -> bool:
    return any(s.startswith(p) for s in skeletons(name) for p in skeletons(prefix))


def reserved_identity(name: str) -> bool:
    """Does `name` look like a reserved identity (the baselines' owner), whatever it appends?"""
    return any(_starts_like(name, reserved) for reserved in RESERVED_IDENTITIES)


def looks_like_prefix(name: str, prefix: str) -> bool:
    """Does `name` start with something that looks like `prefix` (a reserved model-name prefix)?"""
    return _starts_like(name, prefix)


def scripts(name: str) -> frozenset[str]:
    """The scripts of `name`'s letters (COMMON and INHERITED left out)."""
    from confusable_homoglyphs import categories

    found = categories.unique_aliases(without_ignorables(unicodedata.normalize("NFKC", name)))
    return frozenset(found) - {"COMMON", "INHERITED"}


def mixed_script(name: str) -> bool:
    """Letters of scripts that are not used together (`аlice`: Cyrillic and Latin)."""
    found = scripts(name)
    return len(found) > 1 and not any(found <= allowed for allowed in ALLOWED_SCRIPT_SETS)


def identity_problem(name: str) -> str | None:
    """Why `name` cannot be a user name (one line), or None."""
    if reserved_identity(name):
        return f"{name!r} looks like a reserved name ({', '.join(RESERVED_IDENTITIES)})"
    if mixed_script(name):
        mixed = ", ".join(sorted(scripts(name)))
        return f"{name!r} mixes scripts ({mixed}), so it can look like another name"
    return None
