"""tt-triage's output, every era of it, read into typed rows. Pure and tolerant: text in, a
:class:`TriageOutput` out; nothing raises on any input.

What the text holds, read from tenstorrent/tt-metal's sources (file and commit named where used):

* **One script** (``scripts/debugging_scripts/tt-triage.py`` at 90b63baa50e2): ``= <title>``
  lines (``= Checking device N``, then one per check), ``ERROR: <msg>``, ``DONE: OK`` at the end;
  with ``-vv`` the running-ops table ``Loc | Proc | RD PTR | Base | Offset | Kernel ID:Name | PC
  | Kernel Callstack | Kernel Path`` (Loc logical ``x,y``, Proc upper case, ``164:writer_x`` or
  ``0:``), its frames in extra rows; with ``-v`` only ``Loc | BRISC | … | Kernel ID:Name``.
* **The script framework** (``tools/triage/triage.py``): a blank line, ``<script>.py:`` (or
  ``<script>.py [1.23s]:``), then ``  pass``, ``  fail`` and failure lines, ``  No results
  found.``, ``  Data provider script failed: …``, ``  Cannot run script due to failed
  dependencies.``, or a table. The tables were tabulate's (its first version: dump_callstacks'
  own ``Dev | Loc | Proc | RD PTR | Base | Offset | Kernel ID:Name | PC | Kernel Callstack |
  Kernel Path``), then rich's (b81970a02302, 02c321d69d06).
* ``dump_callstacks.py`` (d0f77e915dc3; fields from ``run_checks.py`` e97fe7b4a3d8,
  ``dispatcher_data.py`` 5acfb5ff23cb, ``callstack_provider.py`` 91083879c6c4): ``Dev | Loc |
  RiscV | Kernel ID | Kernel Name | Subdevice | Go Message | Preload | Waypoint | [-v fields] | PC
  | Kernel Callstack``; Loc ``<noc0x>-<noc0y> (<logical>)``, eth ``(e0,13)``; a callstack cell is
  an empty line or a red notice, then ``  #<n> [0x<PC> in ]<function> () at <file> <line>:<col>``.
* ``dump_circular_buffers.py`` (b98e5c66547e): ``Dev | Loc | RISC | CB | Kind | State | fifo_addr
  | fifo_size | page_size | pages | rd_ptr | wr_ptr | recv | acked | occ``.
* ``dump_lightweight_asserts.py`` (ef733df7d8a0): ``Dev | Loc | RiscV | Kernel Name | Assert line
  with callstack | Arguments and Locals``.
* ``dump_running_operations.py`` (c482fe32d0e6: ``Host Assigned ID | Operations | …``;
  0602ee8a5830: ``Op Id | Op Name | …``).
* ``check_noc_status.py`` (42bfdec046d2): failure lines ``Device <id>: <block> [<loc>]:
  Mismatched state:``, ``<risc> NOC<n>:``, ``<REGISTER> <variable> <reg value> <var value>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum

from lnrepro.hang.model import CbState, Frame, HangSource
from lnrepro.hang.triage.said import KNOWN_SCRIPTS, SaidCheck
from lnrepro.hang.triage.tables import (
    CLIPPED,
    Table,
    find_tables,
    restore_first_box,
    risc_cell,
    strip_ansi,
    unnumber,
    unwrap,
)

MAX_LINES = 400_000


class TriageEra(str, Enum):
    """Which tt-triage printed the text."""

    ONE_SCRIPT = "one-script"  # scripts/debugging_scripts/tt-triage.py
    FRAMEWORK_TABULATE = "framework/tabulate"  # tools/triage, tabulate rounded tables
    FRAMEWORK_RICH = "framework/rich"  # tools/triage, rich heavy-head tables
    FRAMEWORK = "framework"  # tools/triage, no table border seen to tell which
    SUMMARY = "summary"  # a user's condensed summary, no tool's layout


FORMAT_WORDS: dict[TriageEra, str] = {
    TriageEra.ONE_SCRIPT: "the one-script era (scripts/debugging_scripts/tt-triage.py at "
    "90b63baa50e2, '= ' titles, tabulate tables with -v/-vv)",
    TriageEra.FRAMEWORK_TABULATE: "the script framework with tabulate rounded tables "
    "(tools/triage/triage.py, utils.py at bc021b21811)",
    TriageEra.FRAMEWORK_RICH: "the script framework with rich heavy-head tables "
    "(tools/triage/triage.py at b81970a02302 / 02c321d69d06)",
    TriageEra.FRAMEWORK: "the script framework (tools/triage/triage.py; no table border in the "
    "paste to tell tabulate from rich)",
    TriageEra.SUMMARY: "a condensed summary in the user's words (no tool's layout)",
}

TENSIX = ("BRISC", "NCRISC", "TRISC0", "TRISC1", "TRISC2")


@dataclass(frozen=True, slots=True)
class Place:
    """A core as tt-triage names it: device, logical and/or noc0 coordinates, block type."""

    device: int | None
    x: int | None  # logical
    y: int | None
    noc0: tuple[int, int] | None = None
    core_type: str = "worker"  # worker, eth (tt-exalens prefixes e: "(e0,13)")

    def key(self) -> tuple[object, ...]:
        return (self.device, self.core_type, self.x, self.y, self.noc0)


@dataclass(frozen=True, slots=True)
class RiscRow:
    """One RISC of one core as a table (or a summary) shows it."""

    place: Place
    risc: str  # upper case: BRISC, NCRISC, TRISC0..2, ERISC…
    script: str
    line_no: int
    kernel_id: int | None = None
    kernel_name: str | None = None
    kernel_path: str | None = None  # the kernel ELF or source path the text prints
    go_message: str | None = None
    waypoint: str | None = None
    pc: int | None = None
    frames: tuple[Frame, ...] = ()
    message: str | None = None  # the callstack cell's notice: "Core is in reset"…
    cut: tuple[str, ...] = ()  # columns this row lost to a cut at the right edge
    said_idle: bool = False  # a summary's own words: idle / in firmware
    shortened: tuple[str, ...] = ()  # cells rich cut to fit ("RiscV 'tri…'"), shown as cut
    cut_name: str | None = None  # what is left of a kernel name cut short, never used as one
    rd_ptr: int | None = None  # RD PTR: the launch message it runs (launch_msg_rd_ptr, -vv)


@dataclass(frozen=True, slots=True)
class AssertRow:
    """A RISC stopped at a lightweight assert (dump_lightweight_asserts)."""

    place: Place
    risc: str
    kernel_name: str | None
    code: str  # the assert's source line, e.g. LLK_ASSERT(...)
    frames: tuple[Frame, ...]


@dataclass(frozen=True, slots=True)
class CbRow:
    place: Place
    state: CbState


@dataclass
class TriageOutput:
    """Everything read from one tt-triage paste (or a summary of one)."""

    era: TriageEra
    format: HangSource = HangSource.TT_TRIAGE
    scripts: list[str] = field(default_factory=list)
    rows: list[RiscRow] = field(default_factory=list)
    cbs: list[CbRow] = field(default_factory=list)
    asserts: list[AssertRow] = field(default_factory=list)
    ops: list[str] = field(default_factory=list)  # running operations, as printed
    events: list[str] = field(default_factory=list)  # failures, NOC counter mismatches, errors
    noise: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    unknowns: list[str] = field(default_factory=list)
    failed_scripts: list[str] = field(default_factory=list)
    empty: list[str] = field(default_factory=list)  # the scripts whose table has no row
    said: list[SaidCheck] = field(default_factory=list)  # a summary's quotes of checks, asserts


# ---------------------------------------------------------------------------------- patterns
_SECTION = re.compile(r"^\s*([A-Za-z_][\w-]{0,80}\.py)(?:\s*\[\s*[\d.]+\s*s\])?\s*:\s*$")
_TITLE = re.compile(r"^=\s+(\S.*)$")
_CHECKING = re.compile(r"Checking device\s+(\d{1,6})")
_FAILURE = re.compile(
    r"Device\s+(\S+?):\s+(\w+)\s+\[([^\]]*)\]:\s+(?:(brisc|ncrisc|trisc[0-2]|erisc[0-9]?)\s*:\s+)?(.*)$",
    re.I,
)
_NOC_RISC = re.compile(r"\b(brisc|ncrisc|erisc[0-9]?)\s+NOC(\d)\s*:", re.I)
_NOC_MISMATCH = re.compile(r"\b(NIU_MST_\w+)\s+(noc_\w+)\s+(\d{1,20})\s+(\d{1,20})")
_FRAME = re.compile(
    r"#(\d{1,4})\s+(?:(0x[0-9A-Fa-f]{1,16}|0x[0-9A-Fa-f]{0,15}…)\s+in\s+)?(\S.*?)\s*\(\)(?:\s+at(?:\s+(\S+?)"
    r"(?:\s+(\d{1,7})(?::(\d{1,5}))?|:(\d{1,7})(?::(\d{1,5}))?)?)?)?\s*$"
)
_LOC_FRAMEWORK = re.compile(r"(\d{1,3})-(\d{1,3})(?:\s*\((e?)(\d{1,3}),\s*(\d{1,3})\)?)?")
_LOC_LOGICAL = re.compile(r"^\(?\s*(e?)(\d{1,3})\s*,\s*(\d{1,3})\s*\)?$")
_KERNEL_ID_NAME = re.compile(r"^\s*(-?\d{1,9})\s*:\s*(.*)$")
_WAYPOINT = re.compile(r"^[A-Za-z0-9_?]{1,4}$")
_DEBUG_WAYPOINT = re.compile(r"write_debug_waypoint<(\d{1,10})u?>")


def _int(text: str | None, base: int = 10) -> int | None:
    """A number cell, hex with ``0x`` (``Dev`` is the exalens id, or the hex unique_id when
    metal's and exalens' ids differ); None when absent, cut or not a number."""
    if text is None or text.endswith(CLIPPED):
        return None
    t = text.strip()
    try:
        return int(t, 16) if t.lower().startswith("0x") else int(t, base)
    except ValueError:
        return None


def parse_place(loc: str | None, device: int | None) -> Place | None:
    """A ``Loc`` cell: ``1-1 (0,0)`` (framework), ``0,0`` (one-script, logical), ``(e0,13)``."""
    if not loc:
        return None
    text = loc.replace("\n", " ").strip()
    if m := _LOC_LOGICAL.match(text):
        kind = "eth" if m.group(1) else "worker"
        return Place(device, int(m.group(2)), int(m.group(3)), None, kind)
    if m := _LOC_FRAMEWORK.search(text):
        noc = (int(m.group(1)), int(m.group(2)))
        if m.group(4) is not None:
            kind = "eth" if m.group(3) else "worker"
            return Place(device, int(m.group(4)), int(m.group(5)), noc, kind)
        return Place(device, None, None, noc)
    return None


def parse_frames(text: str) -> tuple[tuple[Frame, ...], str | None]:
    """The frames of a callstack cell (wrapped lines joined again) and its notice, if any."""
    frames: list[Frame] = []
    notice: list[str] = []
    pending = ""
    for raw in [*text.splitlines(), "#end"]:
        ln = raw.strip()
        if not ln:
            continue
        starts = re.match(r"#\d", ln) is not None
        if starts or ln == "#end":
            if pending:
                f = frame(pending)
                if f is not None:
                    frames.append(f)
            pending = "" if ln == "#end" else ln
        elif pending:
            pending += ("" if pending.endswith(("/", "_")) else " ") + ln
        elif not frames:
            notice.append(ln)
    msg = " ".join(notice).strip() or None
    return tuple(frames), msg


def frame(text: str) -> Frame | None:
    """One ``#n [0x… in ]fn () at file line:col`` frame; None when the text is not one."""
    t = text.strip()
    if t.endswith(CLIPPED):  # cut at the right edge: keep the function only if "()" survived
        t = t.rstrip(CLIPPED).rstrip()
        end = t.find("()")
        if end < 0:
            return None
        t = t[: end + 2]
    m = _FRAME.search(t)
    if m is None:
        return None
    line = m.group(5) or m.group(7)
    col = m.group(6) or m.group(8)
    file = m.group(4)
    if file and file.endswith("…"):
        file, line, col = None, None, None  # cut by the table: never guess the rest
    fn = m.group(3).strip()
    if fn.endswith("…"):
        return None
    return Frame(
        index=int(m.group(1)),
        function=fn,
        file=file,
        line=_int(line),
        column=_int(col),
        pc=_int(m.group(2)),
    )


def waypoint_of(function: str) -> str | None:
    """``write_debug_waypoint<N>``: N is the waypoint's four ASCII bytes, little-endian."""
    m = _DEBUG_WAYPOINT.search(function)
    if m is None:
        return None
    raw = int(m.group(1)).to_bytes(4, "little", signed=False) if int(m.group(1)) < 1 << 32 else b""
    text = raw.rstrip(b"\x00").decode("ascii", errors="replace")
    return text if _WAYPOINT.match(text) else None


# ---------------------------------------------------------------------------------- pastes
_DROPPED_TITLE = re.compile(r"^ ?Checking device\s+\d")
_DROPPED_DEVICE = re.compile(r"^evice\s+\d")


def clean_lines(text: str) -> tuple[list[str], list[str]]:
    """The text's lines as the tool printed them, and what a paste added, in words: colour codes
    dropped, an editor's line numbers taken off, a first character the paste lost put back (a
    script's name, a title, a table's corner or first bar, a summary's 'Device')."""
    lines = strip_ansi(text).replace("\r", "").splitlines()[:MAX_LINES]
    noise: list[str] = []
    lines, numbered = unnumber(lines)
    if numbered:
        noise.append(f"editor line numbers on {numbered} line(s)")
    lines, wrapped = unwrap(lines)
    if wrapped:
        noise.append(f"table lines hard-wrapped at column {wrapped} (joined again)")
    lines, restored = _restore_first(lines)
    if restored:
        noise.append("a dropped first character (put back)")
    return lines, noise


def _restore_first(lines: list[str]) -> tuple[list[str], bool]:
    at = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if at is None:
        return lines, False
    first = lines[at]
    fixed: str | None = None
    if m := _SECTION.match(first):
        name = m.group(1)[:-3]
        whole = [k for k in KNOWN_SCRIPTS if k[1:] == name] if name not in KNOWN_SCRIPTS else []
        if len(whole) == 1:
            fixed = whole[0][0] + first.lstrip()
    elif _DROPPED_TITLE.match(first):
        fixed = "=" + (first if first.startswith(" ") else " " + first)
    elif _DROPPED_DEVICE.match(first):
        fixed = "D" + first
    if fixed is not None:
        return [*lines[:at], fixed, *lines[at + 1 :]], True
    return restore_first_box(lines)


# ---------------------------------------------------------------------------------- sniffing
def triage_evidence(text: str) -> int:
    """How much of a text reads as tt-triage output (0: none): script section lines, one-script
    titles, and tables whose header holds its columns."""
    score = 0
    lines, _ = clean_lines(text)
    for ln in lines:
        if (_SECTION.match(ln) and ln.strip().split(".py")[0] in KNOWN_SCRIPTS) or (
            ln.startswith("= ") and ("Checking" in ln or "running operations" in ln)
        ):
            score += 3
        elif ln.strip() == "DONE: OK":
            score += 1
    for t in find_tables(lines):
        if (
            t.column("Kernel Callstack", "Kernel ID:Name", "Go Message", "RiscV", "RISC Names")
            is not None
        ):
            score += 5 if not t.guessed else 3
        elif t.column("CB") is not None and t.column("State") is not None:
            score += 3
    return score


# ---------------------------------------------------------------------------------- parsing
def parse_triage(text: str) -> TriageOutput:
    """Read tt-triage output of any era. Never raises."""
    lines, pasted = clean_lines(text)
    out = TriageOutput(TriageEra.FRAMEWORK)
    out.noise += pasted
    sections = _sections(lines)
    one_script = any(_TITLE.match(ln) for ln in lines) or any(
        ln.strip() == "DONE: OK" for ln in lines
    )
    tables = find_tables(lines)
    styles = {t.style for t in tables}
    if one_script and not any(name for name, _, _ in sections if name):
        out.era = TriageEra.ONE_SCRIPT
    elif "heavy" in styles:
        out.era = TriageEra.FRAMEWORK_RICH
    elif "rounded" in styles:
        out.era = TriageEra.FRAMEWORK_TABULATE
    out.scripts = [name for name, _, _ in sections if name]
    device_at: list[tuple[int, int]] = [
        (i, int(m.group(1)))
        for i, ln in enumerate(lines)
        if (m := _CHECKING.search(ln)) and ln.startswith("=")
    ]
    for t in tables:
        script = _script_at(sections, t.line_no - 1) or _guess_script(t)
        if script and script not in out.scripts:
            out.scripts.append(script)
        dev = next((d for i, d in reversed(device_at) if i < t.line_no), None)
        _table(out, t, script or "?", dev)
        if not t.rows and t.header:
            out.empty.append(script or "?")
    if any(t.guessed for t in tables):
        out.noise.append("rows pasted without their table's header (columns told by their cells)")
    _failures(out, lines, sections)
    if any(t.cut_at for t in tables):
        widths = sorted({t.cut_at for t in tables if t.cut_at})
        out.noise.append(f"tables cut at the right edge (at column {', '.join(map(str, widths))})")
    if any(
        t.style == "bars" or (t.line_no and lines[t.line_no - 1].lstrip()[:1] not in "╭┏┌")
        for t in tables
    ):
        out.noise.append("a table pasted without its top border")
    if out.era is TriageEra.ONE_SCRIPT:
        out.events += [ln.strip() for ln in lines if ln.startswith("ERROR: ")]
    return out


def _sections(lines: list[str]) -> list[tuple[str | None, int, int]]:
    """(script, first line, end) for each ``<script>.py:`` section; a leading None section."""
    marks = [(i, m.group(1)[:-3]) for i, ln in enumerate(lines) if (m := _SECTION.match(ln))]
    out: list[tuple[str | None, int, int]] = []
    start = 0
    name: str | None = None
    for i, n in marks:
        out.append((name, start, i))
        name, start = n, i + 1
    out.append((name, start, len(lines)))
    return out


def _script_at(sections: list[tuple[str | None, int, int]], index: int) -> str | None:
    return next((name for name, a, b in sections if a <= index < b), None)


def _guess_script(t: Table) -> str | None:
    if t.column("Assert line with callstack") is not None:
        return "dump_lightweight_asserts"
    if t.column("RISC Names") is not None:
        return "dump_aggregated_callstacks"
    if t.column("CB") is not None and t.column("State") is not None:
        return "dump_circular_buffers"
    if t.column("Operations", "Op Name") is not None:
        return "dump_running_operations"
    if t.column("Kernel Callstack") is not None and t.column("Dev") is not None:
        return "dump_callstacks"
    if t.column("Kernel ID:Name") is not None:
        return "running ops (-v/-vv table)"
    return None


def _table(out: TriageOutput, t: Table, script: str, dev: int | None) -> None:
    if (
        t.column("Locations (device:core)", "Locations") is not None
        and t.column("RISC Names") is not None
    ):
        _aggregated_table(out, t, script)
    elif t.column("CB") is not None and t.column("State") is not None:
        _cb_table(out, t)
    elif t.column("Assert line with callstack") is not None:
        _assert_table(out, t)
    elif t.column("Operations", "Op Name") is not None:
        _ops_table(out, t)
    elif t.column("Loc") is not None and (
        t.column("RiscV", "Proc", "RISC", "Kernel ID:Name", *TENSIX) is not None
    ):
        _risc_table(out, t, script, dev)


def _risc_table(out: TriageOutput, t: Table, script: str, dev: int | None) -> None:
    per_risc_columns = [r for r in TENSIX if t.column(r) is not None]
    for row, no in zip(t.rows, t.row_lines, strict=True):
        device = _int(t.cell(row, "Dev")) if t.column("Dev") is not None else dev
        place = parse_place(t.cell(row, "Loc"), device)
        if place is None:
            continue
        if per_risc_columns and t.column("Proc", "RiscV") is None:
            # the one-script era's -v table: a "Kernel ID:Name" column per RISC
            for risc in per_risc_columns:
                rid, rname = _id_name(t.cell(row, risc))
                out.rows.append(RiscRow(place, risc, script, no, rid, rname))
            continue
        raw_risc = t.cell(row, "RiscV", "Proc", "RISC")
        read, risc_cut = risc_cell(raw_risc)
        if read is None:  # nothing of the name left (or no RISC cell): not a RISC's row
            continue
        risc = read
        if t.column("Kernel ID:Name") is not None:
            kid, name = _id_name(t.cell(row, "Kernel ID:Name"))
        else:
            kid = _int(t.cell(row, "Kernel ID"))
            name = _name(t.cell(row, "Kernel Name"))
        frames, message = parse_frames(t.cell(row, "Kernel Callstack") or "")
        path = _name(t.cell(row, "Kernel Path"))
        wp = _name(t.cell(row, "Waypoint"))
        if wp and not _WAYPOINT.match(wp):
            wp = None
        cut = tuple(f"{h.rstrip(CLIPPED)} and those right of it" for h in t.cut_columns)
        shortened = _shortened(t, row, cut)
        if risc_cut and not cut:
            shortened = (f"RiscV '{' '.join((raw_risc or '').split())}'", *shortened)
        out.rows.append(
            RiscRow(
                place,
                risc,
                script,
                no,
                kid,
                name,
                path,
                _name(t.cell(row, "Go Message")),
                wp,
                _int(t.cell(row, "PC")),
                frames,
                message,
                cut,
                shortened=shortened,
                cut_name=_cut_stem(t.cell(row, "Kernel Name")),
                rd_ptr=_int(t.cell(row, "RD PTR")),
            )
        )


def _cut_stem(text: str | None) -> str | None:
    t = " ".join((text or "").split())
    return t.rstrip(CLIPPED) or None if t.endswith(CLIPPED) else None


def _shortened(t: Table, row: list[str], cut: tuple[str, ...]) -> tuple[str, ...]:
    """The cells of a row that rich cut to fit a narrow terminal (each ends in '…' though the
    table's right edge is there), as ``column 'text…'``: shown as cut, never used as values."""
    if cut:  # the right edge is gone: the cut columns say it
        return ()
    risc = t.column("RiscV", "Proc", "RISC")  # said by the caller
    return tuple(
        f"{t.header[k] if k < len(t.header) else '?'} '{words[0]}'"
        for k, v in enumerate(row)
        if k != risc and (words := [w for w in v.split() if w.endswith(CLIPPED)])
    )


_DEV_NOC = re.compile(r"(\S+?):(\d{1,3})-(\d{1,3})")


def _aggregated_table(out: TriageOutput, t: Table, script: str) -> None:
    """dump_aggregated_callstacks (236c2edf9fcd): one row per (kernel, PC, op) with the RISC
    names and ``<dev>:<noc0x>-<noc0y>`` locations it covers. With several RISC names a row
    does not say which RISC is at which location: the RISC is written ``A/B``, never guessed."""
    for row, no in zip(t.rows, t.row_lines, strict=True):
        names = [
            n.strip().upper()
            for n in (t.cell(row, "RISC Names") or "").replace("\n", ",").split(",")
            if n.strip()
        ]
        if not names or any(n.endswith(CLIPPED) for n in names):
            continue
        risc = "/".join(names)
        frames, message = parse_frames(t.cell(row, "Kernel Callstack") or "")
        kid = _int(t.cell(row, "Kernel Id", "Kernel ID"))
        name = _name(t.cell(row, "Kernel Name"))
        for m in _DEV_NOC.finditer(t.cell(row, "Locations (device:core)", "Locations") or ""):
            place = Place(_int(m.group(1)), None, None, (int(m.group(2)), int(m.group(3))))
            out.rows.append(
                RiscRow(place, risc, script, no, kid, name, frames=frames, message=message)
            )


def _name(text: str | None) -> str | None:
    """A cell's text; None when empty, N/A, or cut by the right edge (never half a name)."""
    if text is None:
        return None
    t = " ".join(text.split())
    return None if t in ("", "N/A", "None") or t.endswith(CLIPPED) else t


def _id_name(text: str | None) -> tuple[int | None, str | None]:
    """``164:writer_x`` / ``0:`` (one-script) or a framework ``Kernel ID:Name`` cell."""
    if not text:
        return None, None
    m = _KERNEL_ID_NAME.match(text.replace("\n", " "))
    if m is None:
        return None, _name(text)
    return int(m.group(1)), _name(m.group(2))


def _cb_table(out: TriageOutput, t: Table) -> None:
    for row in t.rows:
        place = parse_place(t.cell(row, "Loc"), _int(t.cell(row, "Dev")))
        cb = _int(t.cell(row, "CB"))
        state = _name(t.cell(row, "State"))
        if place is None or cb is None or state is None:
            continue
        risc = _name(t.cell(row, "RISC", "RiscV"))
        out.cbs.append(
            CbRow(
                place,
                CbState(
                    cb=cb,
                    risc=risc.upper() if risc else None,
                    state=state,
                    kind=_name(t.cell(row, "Kind")) or "local",
                    pages=_int(t.cell(row, "pages")),
                    received=_int(t.cell(row, "recv")),
                    acked=_int(t.cell(row, "acked")),
                    occupancy=_int(t.cell(row, "occ")),
                ),
            )
        )


def _assert_table(out: TriageOutput, t: Table) -> None:
    for row in t.rows:
        place = parse_place(t.cell(row, "Loc"), _int(t.cell(row, "Dev")))
        risc = (_name(t.cell(row, "RiscV")) or "?").upper()
        if place is None:
            continue
        cell = t.cell(row, "Assert line with callstack") or ""
        lines = [ln for ln in cell.splitlines() if ln.strip()]
        code = next(
            (ln.strip() for ln in lines if "ASSERT" in ln and not ln.strip().startswith("#")), "?"
        )
        frames, _ = parse_frames("\n".join(ln for ln in lines if ln.strip() != code))
        out.asserts.append(AssertRow(place, risc, _name(t.cell(row, "Kernel Name")), code, frames))


def _ops_table(out: TriageOutput, t: Table) -> None:
    for row in t.rows:
        ops = t.cell(row, "Operations", "Op Name") or ""
        cores = t.cell(row, "Core List", "Cores") or ""
        op_id = (t.cell(row, "Op Id") or "").strip()
        if op_id and " ".join(ops.split()) in ("", "N/A"):  # 0602ee8a5830: one row per Op Id;
            # the name is N/A when Inspector has none: the id and the cores are what it shows
            name = " ".join(ops.split())
            named = f" {name}" if name and name != "N/A" else " (its name not shown: N/A)"
            listed = [c.strip() for c in cores.splitlines() if c.strip() and c.strip() != "..."]
            count = (t.cell(row, "Core Cnt") or "").strip()
            more = (
                f" (and {int(count) - len(listed)} more, cut by tt-triage)"
                if count.isdigit() and int(count) > len(listed)
                else ""
            )
            where = f" on {count or len(listed)} cores: {', '.join(listed)}{more}" if listed else ""
            out.ops.append(f"op id {op_id}{named}{where}")
            continue
        for op in re.sub(r":\n", ": ", ops).splitlines():  # "Kernel:" wrapped from its name
            op = op.strip()
            if op and op != "N/A":
                where = ", ".join(c.strip() for c in cores.splitlines() if c.strip())
                out.ops.append(f"{op}" + (f" on {where}" if where else ""))


def _failures(
    out: TriageOutput, lines: list[str], sections: list[tuple[str | None, int, int]]
) -> None:
    """Failure lines, NOC counter mismatches and failed data providers, as events."""
    last_place = ""
    for name, a, b in sections:
        if name is None:
            continue
        block = lines[a:b]
        for k, ln in enumerate(block):
            s = ln.strip()
            if s.startswith("Data provider script failed") or s.startswith(
                "Cannot run script due to"
            ):
                out.failed_scripts.append(name)
                out.events.append(f"{name}: {s.splitlines()[0][:200]}")
            if s[:1] in "│┃╭┏├┡╰└":
                continue
            if m := _FAILURE.search(s):
                last_place = f"device {m.group(1)} {m.group(2)} [{m.group(3)}]"
                msg = m.group(5).strip()
                if "Mismatched state" in msg:  # its counters follow, on lines of their own
                    continue
                risc = f"{m.group(4)}: " if m.group(4) else ""
                out.events.append(f"{name}: {last_place}: {risc}{msg}"[:300])
                continue
            if m := _NOC_MISMATCH.search(s):
                rm = _NOC_RISC.search(s) or next(
                    (r for j in range(k, max(-1, k - 8), -1) if (r := _NOC_RISC.search(block[j]))),
                    None,
                )
                who = f"{rm.group(1)} NOC{rm.group(2)}" if rm else "NOC"
                out.events.append(
                    f"{name}: {last_place}: {who} counters disagree: {m.group(1)}={m.group(3)} but "
                    f"{m.group(2)}={m.group(4)} (the device is not idle, a kernel changed the "
                    "counters, or the NoC hung)"
                )
