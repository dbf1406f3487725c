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
