"""The documentation holds: the README's Python examples run as doctests, every relative
link in the README, in docs/ and in the folders' READMEs leads to a file (and, with a
`#fragment`, to a heading), and every verb and option of the command line is documented.

The examples are the README's ``>>>`` lines; shell examples are plain code blocks, not run.
"""

from __future__ import annotations

import argparse
import doctest
import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: The README, the pages of docs/, and the READMEs of the folders the README links to.
PAGES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *(ROOT / d / "README.md" for d in ("configs", "configs/distill", "checkpoints", "data/labels")),
]
WITH_EXAMPLES = [p for p in PAGES if ">>> " in p.read_text(encoding="utf-8")]

#: `[text](target)` and `![alt](target)`, the target up to the first space or `)`.
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
_CODE = re.compile(r"`[^`\n]*`")


@pytest.mark.parametrize("page", WITH_EXAMPLES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_examples_run(page: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every `>>>` example of the page gives the output written under it."""
    monkeypatch.chdir(ROOT)  # examples name files from the checkout (checkpoints/...)
    result = doctest.testfile(
        str(page),
        module_relative=False,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
        encoding="utf-8",
        raise_on_error=False,
        verbose=False,
    )
    assert result.attempted > 0
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed (above)"


def _prose(text: str) -> str:
    """The page without its code (fenced blocks, indented blocks, inline code)."""
    text = _FENCE.sub("", text)
    text = "\n".join(line for line in text.split("\n") if not line.startswith("    "))
    return _CODE.sub("", text)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to `-`."""
    text = _CODE.sub(lambda m: m.group(0)[1:-1], heading.strip()).lower()
    kept = (c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return "".join(kept).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a Markdown page's headings (repeats get -1, -2, ... as on GitHub)."""
    seen: dict[str, int] = {}
    out = set()
    for line in _FENCE.sub("", page.read_text(encoding="utf-8")).split("\n"):
        if m := re.match(r"#{1,6}\s+(.*)", line):
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def relative_links(page: Path) -> list[str]:
    """The page's link targets that are neither web addresses nor mail."""
    targets = _LINK.findall(_prose(page.read_text(encoding="utf-8")))
    return [t for t in targets if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(page: Path) -> None:
    """Each relative link names a file or folder of the checkout, and its heading if any."""
    broken = []
    for target in relative_links(page):
        path, _, fragment = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target} (no such file)")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            broken.append(f"{target} (no such heading)")
    assert not broken, f"{page.relative_to(ROOT)}: " + ", ".join(broken)


def test_the_check_sees_links() -> None:
    """The link check finds links and headings at all (so that it cannot pass vacuously)."""
    assert "docs/architecture.md" in relative_links(ROOT / "README.md")
    assert slug("The six-dice game (vrhcáby, RULES.md §3)") == "the-six-dice-game-vrhcáby-rulesmd-3"
    assert (
        slug("Cube and match play (`vrhcaby.equity.cube`)")
        == "cube-and-match-play-vrhcabyequitycube"
    )


def _options(parser: argparse.ArgumentParser, verb: str = "") -> list[tuple[str, str]]:
    """(verb, long option) of every verb of the command line, sub-verbs included."""
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out.append((f"{verb} {name}".strip(), ""))
                out.extend(_options(sub, f"{verb} {name}".strip()))
        else:
            out.extend((verb, o) for o in action.option_strings if o.startswith("--"))
    return [(v, o) for v, o in out if o != "--help"]


def test_every_verb_and_option_is_documented() -> None:
    """Each verb of `vrhcaby` (as ``vrhcaby VERB``) and each of its long options is named
    in the README or a page of docs/ that it links to (the parser itself is the list)."""
    from vrhcaby.cli.main import build_parser

    text = "\n".join(p.read_text(encoding="utf-8") for p in PAGES)
    options = _options(build_parser())
    assert len(options) > 100 and ("tournament", "--no-mirror") in options
    undocumented = [
        f"vrhcaby {verb} {option}".strip()
        for verb, option in options
        if not re.search(re.escape(option or f"vrhcaby {verb}") + r"(?![\w-])", text)
    ]
    assert undocumented == []
