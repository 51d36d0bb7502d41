"""Lines and tables that never cut a token: wrapped at spaces on a terminal, tab-separated
when piped."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lnrepro.present.console.style import styled
from lnrepro.present.escape import terminal as esc
from lnrepro.present.escape import visible

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text


# The rule (issue 37): no id, sha, path, test name, number or flag is ever cut, at any width, in
# a terminal or piped. So nothing here lets rich fold a word: lines are wrapped at spaces by
# :func:`_wrap` (a word longer than the terminal stays whole and the terminal shows it on two
# rows), table columns get widths chosen by :func:`_fit` so that every token cell fits, and a
# table that cannot fit becomes one block per row. Piped, a table is tab-separated plain text,
# one row per line, with no width limit (GitHub CLI's table printer does the same).


Row = list["str | Text"]  # a table row: our own words (str, escaped here) or styled data


@dataclass(frozen=True)
class Col:
    """A table column. ``text`` columns hold free text and wrap at spaces; the others hold
    tokens (ids, names, numbers) that are never wrapped at all."""

    name: str
    text: bool = False
    label: bool = False  # in the narrow layout, a lead cell named (``host OK``): no header there


def _as_text(value: str | Text) -> Text:
    return esc(value) if isinstance(value, str) else value


_WORD = re.compile(r"\S+\s*")


def _wrap(text: Text, first: int, rest: int, keep: int = 0) -> list[Text]:
    """``text`` wrapped at spaces: the first line ``first`` cells wide, the others ``rest``; a
    word longer than any line stays whole (never folded by us) where it stands; no break in
    the first ``keep`` characters (a status and its test's name)."""
    from rich.cells import cell_len

    plain = text.plain
    if "\n" not in plain and cell_len(plain) <= first:  # most lines: nothing to wrap
        return [text]
    out: list[Text] = []
    for para in text.split("\n", allow_blank=True):
        plain = para.plain
        indent = cell_len(plain) - cell_len(plain.lstrip(" "))  # counts toward the first line
        line_start, line_len, width = 0, indent, first if not out else rest
        words = 0  # on the current line
        for m in _WORD.finditer(plain):
            word = m.group().rstrip()
            # a word no line can hold stays where it is: the terminal folds that line anyway
            if (
                words
                and m.start() >= keep
                and line_len + cell_len(word) > width
                and cell_len(word) <= rest
            ):
                out.append(para[line_start : m.start()])
                line_start, line_len, width, words = m.start(), 0, rest, 0
            line_len += cell_len(m.group())
            words += 1
        out.append(para[line_start:])
    for line in out:
        line.rstrip()
    return out


def say(console: Console, text: str | Text, *, indent: int = 0, hang: int = 2) -> None:
    """One line of text: wrapped at spaces on a terminal (continuation lines ``hang`` further
    in), never cut inside a word; piped, one line however long."""
    for line in _said(console, text, indent, hang):
        console.print(line, soft_wrap=True)


def _said(
    console: Console,
    text: str | Text,
    indent: int = 0,
    hang: int = 2,
    width: int | None = None,
    keep: int = 0,
) -> list[Text]:
    """The lines :func:`say` prints (``width``: the terminal's, when the caller knows it)."""
    from rich.text import Text

    t = _as_text(text)
    pad = " " * indent
    if width is None and not console.is_terminal:
        return [Text(pad) + line for line in t.split("\n", allow_blank=True)]
    w = max((width or console.width) - indent, 10)
    return [
        Text(pad + (" " * hang if i else "")) + line
        for i, line in enumerate(_wrap(t, w, max(w - hang, 10), keep))
    ]


def say_command(console: Console, label: str, argv: Sequence[str] | str) -> None:
    """A command line: one line of valid shell (``shlex.join`` of ``argv``; a string is one
    already) however long. rich never wraps it (soft wrap): a terminal folds it only on screen,
    and copying it gives back the one line."""
    from rich.text import Text

    line = argv if isinstance(argv, str) else shlex.join(argv)
    console.print(Text(label) + esc(line), soft_wrap=True, crop=False)


def _longest(text: str, sep: str | None) -> int:
    """The width of the widest part of ``text`` split at ``sep`` (None: its words)."""
    from rich.cells import cell_len

    return max((cell_len(part) for part in text.split(sep)), default=0)


def _fit(cols: Sequence[Col], cells: list[list[Text]], width: int) -> list[int] | None:
    """Column widths for a boxed table ``width`` cells wide in which no token is cut: a token
    column as wide as its widest cell, a text column at least as wide as its longest word; the
    room left goes to the widest columns first. None: no such widths (too narrow)."""
    lo, hi = [], []
    for j, c in enumerate(cols):
        col = [row[j] for row in cells]
        sep = None if c.text else "\n"  # text wraps at spaces; a token never
        lo.append(max([_longest(c.name, None), *(_longest(x.plain, sep) for x in col)]))
        hi.append(max([lo[-1], len(c.name), *(_longest(x.plain, "\n") for x in col)]))
    room = width - (3 * len(cols) + 1)  # a border and a space each side per column, one edge
    if sum(lo) > room:
        return None
    if sum(hi) <= room:
        return hi
    top, bottom = max(hi), 0  # the largest cap every column is cut down to, by bisection
    while top - bottom > 1:
        mid = (top + bottom) // 2
        if sum(min(h, max(lo_, mid)) for lo_, h in zip(lo, hi, strict=True)) <= room:
            bottom = mid
        else:
            top = mid
    return [min(h, max(lo_, bottom)) for lo_, h in zip(lo, hi, strict=True)]


def show_table(
    console: Console,
    title: str | Text | None,
    cols: Sequence[Col],
    rows: Sequence[Sequence[str | Text]],
    *,
    head: int = 1,
    lead: Sequence[int] = (),
    header_piped: bool = True,
    one_line: bool = False,
) -> None:
    """A table that never cuts a token: boxed when it fits the terminal, one block per row when
    it does not (the first ``head`` cells on the block's first line, in the order ``lead`` gives
    if any, then ``name: value``), tab-separated plain lines when piped (with a header line
    unless ``header_piped`` is off). ``one_line``: boxed only if every row fits on one line."""
    cells = [[_as_text(v) for v in row] for row in rows]
    if title is not None:
        say(console, styled((title, "bold")) if isinstance(title, str) else title)
    if not console.is_terminal:
        if header_piped:
            plain_line(console, [c.name for c in cols])
        for row in cells:
            plain_line(console, row)
        return
    keep = [j for j in range(len(cols)) if j < head or any(row[j].plain for row in cells)]
    if len(keep) < len(cols):  # a column with nothing in it takes no room on a terminal
        cols = [cols[j] for j in keep]
        cells = [[row[j] for j in keep] for row in cells]
        lead = [keep.index(i) for i in lead if i in keep]
        head = sum(1 for j in keep if j < head)
    widths = _fit(cols, cells, console.width)
    if one_line and widths is not None and widths != _fit(cols, cells, 1 << 30):
        widths = None
    if widths is None:
        for row in cells:
            for line in _block_lines(console, cols, row, head, lead):
                console.print(line, soft_wrap=True)
        return
    from rich.table import Table

    t = Table(title=None, show_edge=True)
    for c, w in zip(cols, widths, strict=True):
        t.add_column(c.name, width=w, overflow="fold")  # every word fits: fold never fires
    for row in cells:
        t.add_row(*row)
    console.print(t, crop=False)


def plain_line(console: Console, cells: Sequence[str | Text]) -> None:
    """One tab-separated line for logs, ``cut`` and ``awk``: no style, no width limit."""
    parts = (x if isinstance(x, str) else x.plain for x in cells)
    console.file.write("\t".join(visible(p).replace("\t", " ").replace("\n", "; ") for p in parts))
    console.file.write("\n")
    console.file.flush()


def show_rows(
    console: Console,
    cols: Sequence[Col],
    rows: Iterable[Sequence[str | Text]],
    head: int,
    lead: Sequence[int] = (),
) -> None:
    """The rows of a list too long to measure or to draw (``parse --all`` of 200,000 tests),
    one line each, written as they come: tab-separated piped; on a terminal the ``head`` cells
    (in ``lead``'s order) then ``name: value``, unstyled and unwrapped (the terminal folds a
    long line, as pytest's ``-rA`` list does)."""
    order = list(lead or range(head))
    for row in rows:
        if not console.is_terminal:
            plain_line(console, row)
            continue
        cells = [x if isinstance(x, str) else x.plain for x in row]
        parts = [cells[i] for i in order if cells[i]]
        parts += [f"{c.name}: {x}" for c, x in zip(cols[head:], cells[head:], strict=True) if x]
        console.file.write(visible("  ".join(parts).replace("\n", " / ")) + "\n")
    console.file.flush()


def _block_lines(
    console: Console, cols: Sequence[Col], row: list[Text], head: int, lead: Sequence[int]
) -> list[Text]:
    """The narrow layout of a row: its first ``head`` cells on one line (in ``lead``'s order if
    given), then each other cell as ``name: value``, packed onto lines, each wrapped at spaces."""
    from rich.cells import cell_len
    from rich.text import Text

    out: list[Text] = []
    width = console.width  # asked once: rich asks the terminal each time
    room = max(width - 2, 10)
    shown = [
        (Text(f"{cols[i].name} ", style="dim") + row[i]) if cols[i].label else row[i]
        for i in (lead or range(head))
        if row[i].plain
    ]
    heads: list[Text] = []  # its first two cells (a status and its name) on one line, for grep;
    for cell in shown:  # the others after them while they fit, else on a line of their own
        if (
            len(heads) < 1
            or (len(shown) > 1 and cell is shown[1])
            or cell_len(heads[-1].plain) + 2 + cell_len(cell.plain) <= width
        ):
            heads[-1:] = [Text("  ").join([*heads[-1:], cell])]
        else:
            heads.append(cell)
    for k, h in enumerate(heads):  # the first never split; a cell no line holds wraps at spaces
        out += (
            _said(console, h, hang=4, width=width, keep=len(h.plain))
            if k == 0
            else _said(console, h, indent=4, hang=0, width=width)
        )
    line = Text()
    for c, x in zip(cols[head:], row[head:], strict=True):
        if not x.plain:
            continue
        item = Text(f"{c.name}: ", style="dim") + Text(" / ").join(x.split("\n"))
        if line.plain and cell_len(line.plain) + 3 + cell_len(item.plain) <= room:
            line += Text("   ") + item
            continue
        if line.plain:
            out += _said(console, line, indent=2, hang=4, width=width)
        line = item
    if line.plain:
        out += _said(console, line, indent=2, hang=4, width=width)
    return out
