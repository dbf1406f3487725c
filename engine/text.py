"""Quoting what a user typed in an error message: at most a short prefix of it.

An error names the input that is wrong, but a hostile or mistaken input can be
megabytes long (a whole file pasted as a position); echoing it in full buries the
message. Every parser of the engine quotes its input through `quoted`.
"""

from __future__ import annotations

#: How many characters of an input an error message shows.
QUOTE_LIMIT = 40


def quoted(text: object, limit: int = QUOTE_LIMIT) -> str:
    """`repr(text)`, of the first `limit` characters only when it is longer, with an
    ellipsis and the full length.

    >>> quoted("24/18")
    "'24/18'"
    >>> quoted("A" * 100, limit=5)
    "'AAAAA'… (100 characters)"
    """
    if isinstance(text, str) and len(text) > limit:
        return f"{text[:limit]!r}… ({len(text)} characters)"
    return repr(text)


def _plain(text: object, kind: str) -> str:
    """`text` if it is ASCII without `_` separators; else ValueError, as int() words it."""
    if not isinstance(text, str) or not text.isascii() or "_" in text:
        raise ValueError(f"invalid literal for {kind}: {quoted(text)}")
    return text


def ascii_int(text: str) -> int:
    """`int(text)` for ASCII digits only (a sign and surrounding spaces allowed);
    ValueError for anything else.

    `int()` alone also reads full-width and other Unicode digits and `_` separators
    (`int("３")`, `int("1_0")`), which no parser of the project accepts: every number
    read from text goes through here or `ascii_float` (the command line's `type=int`
    and `type=float` too, through `vrhcaby.cli.common.Parser`).

    >>> ascii_int(" 12 "), ascii_int("-3")
    (12, -3)
    >>> ascii_int("３")
    Traceback (most recent call last):
    ...
    ValueError: invalid literal for int() with base 10: '３'
    """
    return int(_plain(text, "int() with base 10"))


def ascii_float(text: str) -> float:
    """`float(text)` for ASCII text only (`ascii_int`'s twin).

    >>> ascii_float("0.5"), ascii_float("1e-3")
    (0.5, 0.001)
    """
    return float(_plain(text, "float()"))
