"""What a GitHub-flavoured Markdown renderer makes of lnrepro's Markdown.

cmark-gfm (``cmarkgfm``, GitHub's own parser) with its GFM extensions (tables, strikethrough,
autolink, tagfilter, task lists). Raw HTML is let through (``CMARK_OPT_UNSAFE``), as github.com
does for its allowlisted tags such as ``details`` and ``summary``; tagfilter still disables the
nine tags GFM filters. Tests read the *rendered* document: headings, table cells, code blocks and
text, exactly as a person would see them.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

OURS = {
    "p",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "code",
    "pre",
    "h3",
    "ul",
    "li",
    "strong",
    "details",
    "summary",
    "br",
    "em",
    "a",
    "blockquote",
}


def render(md: str) -> str:
    import cmarkgfm
    from cmarkgfm.cmark import Options

    return cmarkgfm.github_flavored_markdown_to_html(md, options=Options.CMARK_OPT_UNSAFE)


@dataclass
class Section:
    title: str
    tables: list[list[list[str]]] = field(default_factory=list)  # tables -> rows -> cells (text)
    fences: list[tuple[str, str]] = field(default_factory=list)  # (language, text)
    text: list[str] = field(default_factory=list)


class _Doc(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: list[Section] = [Section("")]
        self.tags: list[str] = []
        self._heading: list[str] | None = None
        self._cell: list[str] | None = None
        self._pre: list[str] | None = None
        self._lang = ""

    @property
    def cur(self) -> Section:
        return self.sections[-1]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "h3":
            self._heading = []
        elif tag == "table":
            self.cur.tables.append([])
        elif tag == "tr" and self.cur.tables:
            self.cur.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "pre":
            self._pre, self._lang = [], dict(attrs).get("lang") or ""
        elif tag == "code" and self._pre is not None:
            cls = dict(attrs).get("class") or ""
            self._lang = self._lang or cls.removeprefix("language-")

    def handle_endtag(self, tag: str) -> None:
        if tag == "h3" and self._heading is not None:
            self.sections.append(Section("".join(self._heading)))
            self._heading = None
        elif tag in ("td", "th") and self._cell is not None and self.cur.tables:
            self.cur.tables[-1][-1].append("".join(self._cell))
            self._cell = None
        elif tag == "pre" and self._pre is not None:
            self.cur.fences.append((self._lang, "".join(self._pre)))
            self._pre = None
        elif tag in ("p", "li", "summary", "tr"):
            self.cur.text.append("\n")

    def handle_data(self, data: str) -> None:
        for sink in (self._heading, self._cell, self._pre):
            if sink is not None:
                sink.append(data)
        if self._heading is None:
            self.cur.text.append(data)


@dataclass
class Rendered:
    md: str

    def __post_init__(self) -> None:
        self.html = render(self.md)
        p = _Doc()
        p.feed(self.html)
        self._doc = p

    def headings(self) -> list[str]:
        return [s.title for s in self._doc.sections[1:]]

    def section(self, title: str) -> Section:
        return next(s for s in self._doc.sections if s.title == title)

    def tables(self, title: str) -> list[list[list[str]]]:
        return self.section(title).tables

    def fences(self, title: str) -> list[tuple[str, str]]:
        return self.section(title).fences

    def text(self, title: str | None = None) -> str:
        secs = [self.section(title)] if title is not None else self._doc.sections
        return "".join("".join(s.text) for s in secs)

    def foreign_tags(self) -> list[str]:
        """HTML tags in the rendered document that lnrepro did not write itself."""
        return [t for t in self._doc.tags if t.lower() not in OURS]


def rendered_text(md: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", render(md)))
