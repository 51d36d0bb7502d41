"""Text is data: one function per output format turns text from logs, paths and test names into
something that format shows exactly as it is, and nothing else does.

=================  ==========================================================================
``visible``        every control character (NUL, ESC, BEL, backspace, DEL, C1) as a visible
                   symbol (U+2400 control pictures, ``\\x85``); tab and newline kept
``terminal``       a rich ``Text`` (never markup) of the visible text
``markdown``       inline Markdown that renders as the text: Markdown's and HTML's active
                   characters as character references (``&#42;``), which work the same in
                   paragraphs, table cells and raw-HTML blocks such as ``<summary>``
                   (backslash escapes do not work in HTML blocks; code spans do not in tables)
``markdown_code``  the same inside ``<code>``: code look, same safety
``fence``          a fenced block no line of the text can close
``xml``            text XML 1.0 may hold (ElementTree escapes ``&<>"`` itself)
=================  ==========================================================================

JSON needs no function here: :func:`lnrepro.model.jsonio.dumps` escapes control characters and
encodes non-finite numbers for every document.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ufffe\uffff\ud800-\udfff]")


def _picture(m: re.Match[str]) -> str:
    c = ord(m.group())
    if c < 0x20:
        return chr(0x2400 + c)  # ␀ ␁ … ␛ …
    if c == 0x7F:
        return "\u2421"  # ␡
    if 0xD800 <= c <= 0xDFFF:
        return "\ufffd"  # a byte that was not UTF-8 (a surrogate escape)
    return f"\\x{c:02x}" if c <= 0xFF else f"\\u{c:04x}"


def visible(text: object) -> str:
    """``text`` with every control character shown as a symbol; tabs and newlines kept."""
    s = str(text)
    return _CONTROL.sub(_picture, s) if _CONTROL.search(s) else s


def terminal(text: object) -> Text:
    """Text for rich: always a ``Text`` (``rich.markup.escape`` misses ``\\[``), never markup."""
    from rich.text import Text

    return Text(visible(text))


# Markdown-active characters (CommonMark + GFM: emphasis, strikethrough, code, links, images,
# tables, HTML, entities, escapes, math) and what replaces each.
_MD = {c: f"&#{ord(c)};" for c in "\\`*_[]|~$"}
_MD.update({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
_MD_RE = re.compile("[" + re.escape("".join(_MD)) + "]")


def _md_char(m: re.Match[str]) -> str:
    c, s, i = m.group(), m.string, m.start()
    # "max_diff": an underscore inside a word never starts emphasis (GFM); keep it readable
    if c == "_" and 0 < i < len(s) - 1 and s[i - 1].isalnum() and s[i + 1].isalnum():
        return c
    return _MD[c]


def markdown(text: object, *, limit: int | None = None) -> str:
    """One line of Markdown that renders as ``text`` (newlines become spaces).

    ``limit`` cuts the text (before escaping) to that many characters, with an ellipsis.
    """
    s = visible(str(text).replace("\r\n", " ").replace("\n", " ").replace("\r", " "))
    if limit is not None and len(s) > limit:
        s = s[: max(0, limit - 1)] + "…"
    return _MD_RE.sub(_md_char, s)


def markdown_code(text: object, *, limit: int | None = None) -> str:
    """``text`` in code type, safe in any Markdown context (a table cell included)."""
    return f"<code>{markdown(text, limit=limit)}</code>"


def fence(text: str, lang: str = "") -> str:
    """A fenced code block holding ``text`` (control characters made visible)."""
    body = visible(text).rstrip()
    longest = max((len(m) for m in re.findall(r"^\s*(`{3,}|~{3,})", body, re.M)), default=0)
    f = "`" * max(3, longest + 1)
    return f"{f}{lang}\n{body}\n{f}"


def xml(text: object) -> str:
    """Text XML 1.0 can hold: control characters shown as symbols (tab, CR, LF kept)."""
    return visible(text)
