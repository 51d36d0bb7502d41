"""Box-drawn tables read back from pasted text: tabulate's rounded format and rich's heavy head,
whole or cut at the right edge, with multi-line cells joined again. Pure.

The shapes, as tt-metal prints them (tenstorrent/tt-metal):

* tabulate with the rounded ``DEFAULT_TABLE_FORMAT`` — ``╭─┬╮`` above, ``├─┼┤`` below the
  header, ``│`` between cells, ``╰─┴╯`` below, padding 1, no line between rows
  (``scripts/debugging_scripts/tt-triage.py`` at 90b63baa50e2, ``tools/triage/utils.py`` at
  bc021b21811). A multi-line value is split into one table row per line, the other cells empty
  (``serialize_result`` of the tabulate era); the one-script era adds a row per callstack frame
  with every cell but the callstack empty.
* rich's ``Table()`` with its default ``box.HEAVY_HEAD`` — ``┏━┳┓``, ``┃`` in the header,
  ``┡━╇┩`` under it, ``│`` rows, ``└─┴┘`` below (``tools/triage/triage.py`` at b81970a02302 and
  02c321d69d06). A multi-line cell takes several lines of one row, the other cells blank.

So in both a line whose first cell is blank continues the row above it. Columns are found from
the border lines' junctions, so a line cut at column N loses whole columns on the right and the
last one it reaches is partial; :class:`Table` says where it was cut.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
TOP_LEFT = "╭┏┌"
JUNCTIONS = "┬┳┼╇╋╈┯┿"
TOP_RIGHT = "╮┓┐"
SEP_LEFT = "├┡┣"
BOTTOM_LEFT = "╰└┗"
VERTICAL = "│┃"
HORIZONTAL = "─━"


RISCS = ("BRISC", "NCRISC", "TRISC0", "TRISC1", "TRISC2", "ERISC", "ERISC0", "ERISC1")


def risc_cell(text: str | None) -> tuple[str | None, bool]:
    """A RiscV/Proc cell read as a RISC's name, and whether it was cut. A cut cell is still a
    RISC's row: a prefix only one name begins (``ncri…``) is that name; one several begin
    (``tri…``) is the family with ``?`` (``TRISC?``), never one of them guessed; nothing left
    of it is None."""
    t = " ".join((text or "").split()).upper()
    if not t.endswith(CLIPPED):
        return t or None, False
    stem = t.rstrip(CLIPPED)
    fits = [r for r in RISCS if stem and r.startswith(stem)]
    if len(fits) == 1:
        return fits[0], True
    for family in ("TRISC", "ERISC"):
        if fits and all(f.startswith(family) for f in fits):
            return f"{family}?", True
    return None, True


def strip_ansi(text: str) -> str:
    """The text without terminal colour codes (tt-triage colours cells when stdout is a tty)."""
    return ANSI.sub("", text)


_NUMBER = re.compile(r"^([ \t]*)(\d{1,7})(.*)$")
_WS = re.compile(r"[ \t]+")
_PIPE = re.compile(r"[ \t]*[|:│][ \t]?")


def unnumber(lines: list[str]) -> tuple[list[str], int]:
    """Lines pasted with an editor's line numbers (``  41  text``, ``   7 | text``, ``41: text``)
    without them, and how many lines had one; the lines as they are when they are not numbered
    (most non-blank lines begin with a number, and the numbers mostly count up by one)."""
    found = [(i, m) for i, ln in enumerate(lines) if ln.strip() and (m := _NUMBER.match(ln))]
    filled = sum(1 for ln in lines if ln.strip())
    if len(found) < 3 or len(found) * 5 < filled * 4:
        return lines, 0
    nums = [int(m.group(2)) for _, m in found]
    steps = sum(1 for a, b in itertools.pairwise(nums) if b == a + 1)
    if steps * 5 < (len(nums) - 1) * 4:
        return lines, 0
    # a bar after the number on (nearly) every line is the editor's (' | ', bat's '│'); else
    # its separator is the whitespace most lines begin right after
    rests = [m.group(3) for _, m in found]
    piped = [x.group() for r in rests if (x := _PIPE.match(r)) is not None]
    pool = (
        piped
        if len(piped) * 10 >= len(rests) * 9
        else [x.group() for r in rests if (x := _WS.match(r)) is not None]
    )
    seps: dict[str, int] = {}
    for sep in pool:
        seps[sep] = seps.get(sep, 0) + 1
    if not seps:
        return lines, 0
    sep = max(seps, key=lambda k: (seps[k], len(k)))
    out = list(lines)
    for i, m in found:
        rest = m.group(3)
        if rest.startswith(sep):
            out[i] = rest[len(sep) :]
        elif not rest.strip(" \t|:│"):
            out[i] = ""  # a numbered blank line
        else:
            out[i] = rest.lstrip(" \t|:│") if _PIPE.match(rest) or _WS.match(rest) else rest
    return out, len(found)


def unwrap(lines: list[str]) -> tuple[list[str], int | None]:
    """Box tables hard-wrapped by a terminal or an editor (every line longer than N split into
    pieces of N): each table line joined again, and N (None when nothing was wrapped). A table
    is taken as wrapped when its top border has no right corner and the next lines, all border,
    finish it; its width is then known, and each of its lines is joined to that width."""
    out: list[str] = []
    at: int | None = None
    i = 0
    while i < len(lines):
        ln = lines[i]
        if not (_is_border(ln, TOP_LEFT) and ln.rstrip()[-1:] not in TOP_RIGHT):
            out.append(ln)
            i += 1
            continue
        w, full, j = len(ln), ln, i + 1
        while j < len(lines) and lines[j].strip() and _is_rest_of_border(lines[j]):
            full += lines[j]
            j += 1
            if full.rstrip()[-1:] in TOP_RIGHT:
                break
        if j == i + 1 or full.rstrip()[-1:] not in TOP_RIGHT:
            out.append(ln)
            i += 1
            continue
        at, width, pieces = w, len(full.rstrip()), j - i
        out.append(full.rstrip())
        i = j
        while i < len(lines) and lines[i].strip() and lines[i].lstrip()[:1] in BOXED:
            row, k = lines[i], 1
            while k < pieces and i + k < len(lines) and len(row) < width:
                row = row.ljust(w * k) + lines[i + k]
                k += 1
            out.append(row)
            i += k
    return out, at


BOXED = TOP_LEFT + SEP_LEFT + BOTTOM_LEFT + VERTICAL


def _is_rest_of_border(line: str) -> bool:
    return all(c in HORIZONTAL + JUNCTIONS + TOP_RIGHT for c in line.rstrip())


def restore_first_box(lines: list[str]) -> tuple[list[str], bool]:
    """A paste that begins one character late inside a table: its first line gets the corner or
    bar it lost back (``━━┳…`` is rich's ``┏━━┳…``, ``─┬…`` tabulate's ``╭─┬…``, a row's first bar
    from the line under it). Whether a character was put back."""
    at = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if at is None:
        return lines, False
    first = lines[at]
    nxt = next((ln for ln in lines[at + 1 :] if ln.strip()), "")
    out = list(lines)
    if first[:1] == "━" and ("┳" in first or first.rstrip().endswith("┓")):
        out[at] = "┏" + first
        return out, True
    if first[:1] == "─" and ("┬" in first or first.rstrip().endswith("╮")) and nxt[:1] in VERTICAL:
        out[at] = "╭" + first
        return out, True
    bars = [i + 1 for i, c in enumerate(first) if c in VERTICAL]
    below = {i for i, c in enumerate(nxt) if c in VERTICAL}
    if first[:1] not in VERTICAL and nxt[:1] in VERTICAL and len(bars) >= 2 and set(bars) <= below:
        out[at] = nxt[0] + first
        return out, True
    return lines, False


@dataclass
class Table:
    """One table: its header cells and its logical rows (continuation lines joined with
    newlines per cell). ``cut_at``: the width the widest line was cut to, when the right edge is
    missing; ``cut_columns``: the header names the cut lost entirely or in part."""

    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    row_lines: list[int] = field(default_factory=list)  # 1-based line of each row's first line
    style: str = "rounded"  # rounded (tabulate), heavy (rich), bars (no border line seen)
    line_no: int = 0
    end_line: int = 0
    cut_at: int | None = None
    cut_columns: list[str] = field(default_factory=list)
    guessed: bool = False  # rows pasted without their header: the columns told by their cells

    def column(self, *names: str) -> int | None:
        """The index of the first header matching one of ``names`` (case, spaces and a rich
        ellipsis ignored; a header cut short matches the name it begins)."""
        for name in names:
            want = _norm(name)
            for i, h in enumerate(self.header):
                got = _norm(h.rstrip("…"))
                if got == want or (got and h.endswith("…") and want.startswith(got)):
                    return i
        for name in names:  # rich at a narrow terminal: every word may be cut ("Ker… Call…")
            for i, h in enumerate(self.header):
                if "…" in h and _words_match(h, name):
                    return i
        return None

    def cell(self, row: list[str], *names: str) -> str | None:
        """The cell of ``row`` under the first header named; None when the table has no such
        column or the row was cut before it."""
        i = self.column(*names)
        if i is None or i >= len(row):
            return None
        return row[i]


def _norm(s: str) -> str:
    return re.sub(r"[^a-z0-9]", "", s.lower())


def _words_match(header: str, name: str) -> bool:
    """A header whose words rich cut to fit (``Ker… Call…``, ``Go Mess…``) names ``name`` when
    it has as many words and each is the word of ``name`` or, ending in '…', begins it."""
    got = header.replace(":", " ").split()
    want = name.replace(":", " ").split()
    if len(got) != len(want):
        return False
    for g, w in zip(got, want, strict=True):
        cut = g.endswith("…")
        g, w = _norm(g), _norm(w)
        if not (g == w or (cut and g and w.startswith(g))):
            return False
    return True


def _is_border(line: str, lefts: str) -> bool:
    s = line.lstrip()
    return (
        bool(s)
        and s[0] in lefts
        and all(
            c in HORIZONTAL + JUNCTIONS + TOP_RIGHT + "┤┩┫╯┘┛" + lefts or c == " "
            for c in s.rstrip()
        )
    )


def _bounds(border: str) -> tuple[list[int], bool]:
    """Column edges (absolute positions of the border's corner and junction characters) and
    whether its right end is there."""
    edges = [
        i for i, c in enumerate(border) if c in TOP_LEFT + SEP_LEFT + JUNCTIONS + "┴┻" + BOTTOM_LEFT
    ]
    right = border.rstrip()
    closed = bool(right) and right[-1] in TOP_RIGHT + "┤┩┫╯┘┛"
    if closed:
        edges.append(len(right) - 1)
    return edges, closed


CLIPPED = "…"  # appended to a cell the cut at the right edge went through


def _cells(line: str, edges: list[int], closed: bool, width: int) -> list[str]:
    """The cells of a row line between ``edges``. In a table cut at the right edge (not
    ``closed``), the last cell of a line that reaches the cut with text gets :data:`CLIPPED`."""
    out: list[str] = []
    n = len(edges) if closed else len(edges) + 1
    text = line.rstrip()
    for i in range(n - 1):
        a = edges[i] + 1
        b = edges[i + 1] if i + 1 < len(edges) else None
        if a > len(text):
            break
        cell = (line[a:b] if b is not None else line[a:]).strip(" " + "".join(VERTICAL))
        if not closed and (b is None or b >= len(text)) and len(text) >= width and cell:
            cell += CLIPPED
        out.append(cell)
    return out


_RISC_CELL = re.compile(r"^(?:brisc|ncrisc|trisc[0-2]?|erisc[01]?)(?:…)?$", re.I)
_LOC_CELL = re.compile(r"^\d{1,3}-\d{1,3}\b|^\(e?\d{1,3},\s*\d{1,3}\)$")
_GO_CELL = re.compile(r"^(?:GO|DONE|RESET|RUN|INIT)$")
_WAYPOINT_CELL = re.compile(r"^[A-Z?]{1,4}$")


def guess_header(rows: list[list[str]]) -> list[str] | None:
    """The header of dump_callstacks' rows pasted without it, told by what the cells hold (its
    columns at d0f77e915dc3: Dev, Loc, RiscV, Kernel ID, Kernel Name, Subdevice, Go Message,
    Preload, Waypoint, PC, Kernel Callstack); None unless a column of RISC names and one of
    locations are both there."""
    n = max((len(r) for r in rows), default=0)
    cols = [[(r[k].splitlines() or [""])[0].strip() for r in rows if k < len(r)] for k in range(n)]
    cols = [[c for c in col if c] for col in cols]

    def every(k: int, rx: re.Pattern[str]) -> bool:
        return bool(cols[k]) and all(rx.search(c) for c in cols[k])

    head = [""] * n
    for k in range(n):
        whole = [r[k] for r in rows if k < len(r)]
        if every(k, _RISC_CELL):
            head[k] = "RiscV"
        elif every(k, _LOC_CELL):
            head[k] = "Loc"
        elif any(re.search(r"(?m)^\s*#\d", c) for c in whole):
            head[k] = "Kernel Callstack"
        elif every(k, re.compile(r"^0x[0-9a-fA-F]*…?$")):
            head[k] = "PC"
        elif every(k, _GO_CELL):
            head[k] = "Go Message"
        elif every(k, re.compile(r"^(?:True|False)$")):
            head[k] = "Preload"
    if "RiscV" not in head or "Loc" not in head:
        return None
    loc, risc = head.index("Loc"), head.index("RiscV")
    numbers = re.compile(r"^-?\d{1,9}$")
    for k in range(n):
        if head[k]:
            continue
        if k < loc and every(k, numbers):
            head[k] = "Dev"
        elif k > risc and every(k, numbers):
            head[k] = "Subdevice" if "Kernel ID" in head else "Kernel ID"
        elif k > risc and "Kernel Name" not in head and "Kernel ID" in head and k < n - 1:
            head[k] = "Kernel Name"
        elif k > risc and every(k, _WAYPOINT_CELL):
            head[k] = "Waypoint"
    return head


def find_tables(lines: list[str]) -> list[Table]:
    """Every box table in ``lines`` (ANSI already stripped), in order."""
    tables: list[Table] = []
    i = 0
    while i < len(lines):
        s = lines[i].lstrip()
        if s and s[0] in TOP_LEFT and _is_border(lines[i], TOP_LEFT):
            t, i = _read(lines, i)
            tables.append(t)
        elif s and s[0] in VERTICAL and s.count(s[0]) >= 2:
            t, i = _read(lines, i, borderless=True)
            if t.header:
                tables.append(t)
        else:
            i += 1
    return tables


def _read(lines: list[str], start: int, borderless: bool = False) -> tuple[Table, int]:
    """One table from ``start`` (its top border, or its first bar line when the paste begins
    inside it); returns it and the index after it."""
    if borderless:
        edges = [i for i, c in enumerate(lines[start]) if c in VERTICAL]
        closed = lines[start].rstrip()[-1:] in VERTICAL
        i = start
        style = "heavy" if "┃" in lines[start] else "bars"
    else:
        edges, closed = _bounds(lines[start])
        style = "heavy" if "┏" in lines[start] else "rounded"
        i = start + 1
    guessed = False
    head_raw: list[str] = []
    body_raw: list[tuple[int, str]] = []
    in_head = not borderless or "┃" in lines[start]
    while i < len(lines):
        line = lines[i]
        s = line.lstrip()
        if not s:
            break
        c0 = s[0]
        if c0 in SEP_LEFT and _is_border(line, SEP_LEFT):
            if borderless and not head_raw and body_raw:  # the lines so far were the header
                head_raw, body_raw = [ln for _, ln in body_raw], []
            if not closed:
                e2, c2 = _bounds(line)
                if c2:
                    edges, closed = e2, c2
            in_head = False
            i += 1
            continue
        if c0 in BOTTOM_LEFT:
            i += 1
            break
        if c0 not in VERTICAL:
            break
        if in_head and style == "heavy" and c0 == "│":  # rows under a header with no rule
            in_head = False
        if in_head:
            head_raw.append(line)
        else:
            body_raw.append((i + 1, line))
        i += 1
    if not borderless and style == "rounded" and len(head_raw) > 1 and not body_raw:
        # tabulate's header with its rows but no rule under it: the first line is the header
        body_raw = [(start + 3 + k, ln) for k, ln in enumerate(head_raw[1:])]
        head_raw = head_raw[:1]
    width = max((len(ln.rstrip()) for ln in [*head_raw, *(ln for _, ln in body_raw)]), default=0)
    head_lines = [_cells(ln, edges, closed, width) for ln in head_raw]
    body = [(no, _cells(ln, edges, closed, width)) for no, ln in body_raw]
    cut_any = not closed
    if borderless and not head_lines and body:  # no separator seen: the first line, unless
        head = guess_header([cells for _, cells in body])  # it is a row like the others
        if head is None:
            head_lines, body = [body[0][1]], body[1:]
        else:
            head_lines, guessed = [head], True
    ncols = max([len(h) for h in head_lines] + [len(b) for _, b in body] + [0])
    header = [
        " ".join(h[k] for h in head_lines if k < len(h) and h[k]).strip() for k in range(ncols)
    ]
    t = Table(header, style=style, line_no=start + 1, end_line=i, guessed=guessed)
    for no, cells in body:
        cells = cells + [""] * (ncols - len(cells))
        if t.rows and not cells[0]:
            prev = t.rows[-1]
            for k, v in enumerate(cells):
                if v:
                    prev[k] = f"{prev[k]}\n{v}" if prev[k] else v
            continue
        t.rows.append(list(cells))
        t.row_lines.append(no)
    if cut_any:  # the last column it shows may be partial; those after it are not in `header`
        t.cut_at = width or None
        t.cut_columns = header[-1:]
    return t, i
