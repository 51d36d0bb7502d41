"""A hang, explained: which kernel waits for what, typed both ways (schema ``lnrepro.hang/2``;
``lnrepro.hang/1`` documents, written before tt-triage was read, are still read).

Pure data, one model for every source a user pastes: :mod:`lnrepro.hang.watcher.diagnose` reads a
parsed watcher.log into a :class:`Diagnosis`, :mod:`lnrepro.hang.triage.diagnose` reads tt-triage
output and users' condensed summaries of it; :class:`Source` says which format and era was read.
:mod:`lnrepro.hang.watcher.dprint` picks the DPRINT lines a diagnosis can carry. The words for the
waypoints are in :mod:`lnrepro.hang.waypoints`, read from tt-metal's sources (see there).

Each record is defined once (issue 39): its JSON both ways and docs/schemas/hang.json are derived
from these types by :mod:`lnrepro.model.codec`. What a document shows that follows from the rest
(``hung``, ``key``; per group ``count``, ``meaning``) is a field computed on construction, written
and never read back.

/2 added (all optional when reading /1): ``source``, ``idle``, ``unknowns``; per group ``name``,
``frames``, ``cbs`` and ``go_message``; per core ``noc0``; the patterns ``KERNEL_ASSERT`` and the
progress ``SNAPSHOT``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from pathlib import PurePosixPath
from typing import Literal

from lnrepro.hang.waypoints import WAIT_WAYPOINT, waypoint_meaning
from lnrepro.model import codec
from lnrepro.model.jsonio import JSON, Reader
from lnrepro.model.requests import Count

SCHEMA: Literal["lnrepro.hang/2"] = "lnrepro.hang/2"
READABLE = ("lnrepro.hang/1", SCHEMA)  # /1: a watcher-only diagnosis, every /2 field absent


class Coords(str, Enum):
    """Which coordinates a :class:`CoreRef` holds."""

    LOGICAL = "logical"  # the watcher from 2024 on, tt-triage's Loc
    PHYSICAL = "physical"  # the older watcher lines (2023, 2024-03)
    NOC0 = "noc0"  # a summary's "1-5"


class HangPattern(str, Enum):
    """What kind of hang the log shows, for one group of cores or the whole log."""

    CONSUMER_STARVED = "CONSUMER_STARVED"  # a consumer waits in cb_wait_front; its producer is done
    PRODUCER_BLOCKED = (
        "PRODUCER_BLOCKED"  # a producer waits in cb_reserve_back for a CB nobody drains
    )
    NOC_WAIT = "NOC_WAIT"  # a NOC barrier, read/write issue or semaphore wait
    NEVER_STARTED = (
        "NEVER_STARTED"  # a processor with a kernel and a go never left init / the go wait
    )
    WATCHER_ERROR = (
        "WATCHER_ERROR"  # the watcher stopped the device: a tripped assert, a bad NOC access
    )
    KERNEL_ASSERT = (
        "KERNEL_ASSERT"  # tt-triage found a RISC stopped at a lightweight assert (ebreak)
    )
    PAUSED = "PAUSED"  # a kernel sits in PAUSE() waiting for ENTER
    OTHER_WAIT = "OTHER_WAIT"  # blocked at a waypoint no rule here knows
    IDLE = "IDLE"  # every worker is idle: whatever hangs, it is not a worker kernel
    UNKNOWN = "UNKNOWN"  # the log alone cannot tell


class Progress(str, Enum):
    """What the last dumps say over time."""

    STUCK = "STUCK"  # no core's state changed across the dumps compared
    SLOW = "SLOW"  # the state still changes: progressing (slowly), not hung yet
    SINGLE_DUMP = "SINGLE_DUMP"  # one complete dump: cannot tell
    NO_DUMP = "NO_DUMP"  # no dump at all
    SNAPSHOT = "SNAPSHOT"  # one reading of the hung device (tt-triage): cannot tell stuck from slow


@dataclass(frozen=True, kw_only=True, slots=True)
class CoreRef:
    """A core as the watcher names it: device, kind, and its coordinates (``coords`` says which:
    logical for 2024 on, physical in the older lines)."""

    device: int | None = None
    x: int
    y: int
    core_type: str = "worker"
    coords: Coords = Coords.LOGICAL
    noc0: tuple[int, int] | None = None  # tt-triage's Loc gives both: "1-1 (0,0)"

    def label(self) -> str:
        dev = "" if self.device is None else f"{self.device}:"
        kind = "" if self.core_type == "worker" else f"{self.core_type} "
        if self.coords is Coords.NOC0:
            return f"{kind}{dev}{self.x}-{self.y}"
        noc = f" {self.noc0[0]}-{self.noc0[1]}" if self.noc0 else ""
        return f"{kind}{dev}({self.x},{self.y}){noc}"


@dataclass(frozen=True, kw_only=True, slots=True)
class DprintLine:
    """One DPRINT line of a test's console output, with the core and processor its prefix names
    (``<device>:<core>:<risc>: text``, the core as ``(x=1,y=2)`` or ``1-2``)."""

    line_no: int  # 1-based, in the console text
    device: int | None
    x: int | None
    y: int | None
    risc: str | None  # BRISC, NCRISC, TRISC0..2, ERISC…, or as printed when unknown
    text: str  # what the kernel printed, without the prefix
    cb_ids: tuple[int, ...] = ()  # circular buffers the text names (c_0, cb 16, cb_id=24…)
    ops: tuple[str, ...] = ()  # CB calls it names: cb_wait_front, cb_push_back, …

    @property
    def about_cb(self) -> bool:
        return bool(self.cb_ids or self.ops)

    def prefix(self) -> str:
        dev = "?" if self.device is None else str(self.device)
        core = "?" if self.x is None or self.y is None else f"(x={self.x},y={self.y})"
        return f"{dev}:{core}:{self.risc or '?'}"


class RiscStatus(str, Enum):
    """What a processor beside the waiting one does (the evidence of a :class:`PeerState`)."""

    DONE = "done"
    WAITING = "waiting"
    RUNNING = "running"
    NEVER_STARTED = "never started"
    IDLE = "idle"
    IN_RESET = "in reset"
    ASSERTED = "stopped at an assert"
    DISPATCH = "dispatch"
    UNKNOWN = "unknown"


@dataclass(frozen=True, kw_only=True, slots=True)
class PeerState:
    """Another processor on the same cores, as evidence (the reader that is done, the writer
    that waits too)."""

    risc: str
    state: RiscStatus
    waypoint: str | None = None
    kernel: str | None = None
    role: str | None = None

    def describe(self) -> str:
        who = f"{self.role} ({self.risc}" if self.role else f"{self.risc} ("
        who += f", {PurePosixPath(self.kernel).name})" if self.kernel else ")"
        where = f" at {self.waypoint}" if self.waypoint else ""
        return f"{who} {self.state.value}{where}".replace("( ", "(").replace("(,", "(")


class HangSource(str, Enum):
    """What kind of text a diagnosis was read from."""

    WATCHER_LOG = "watcher-log"  # tt-metal's generated/watcher/watcher.log, whole or an excerpt
    TT_TRIAGE = "tt-triage"  # tt-triage's output (tools/tt-triage.py), one or several scripts
    SUMMARY = "summary"  # a user's condensed summary: "Device 1, core 1-5 (brisc):" and frames


@dataclass(frozen=True, kw_only=True, slots=True)
class Source:
    """Which format and era a diagnosis was read from, and what the reader had to look past."""

    format: HangSource
    era: str  # e.g. "2023", "one-script", "framework/rich"; several joined by ", "
    described: str = ""  # the era in words, with the tt-metal source and commit it follows
    scripts: tuple[str, ...] = ()  # tt-triage scripts whose output was read
    noise: tuple[str, ...] = ()  # what was tolerated: editor line numbers, a cut at column N…

    def text(self) -> str:
        out = f"read: {self.format.value}, {self.described or self.era}"
        if self.scripts:
            out += f"; scripts: {', '.join(self.scripts)}"
        if self.noise:
            out += f"; looked past: {'; '.join(self.noise)}"
        return out


@dataclass(frozen=True, kw_only=True, slots=True)
class Frame:
    """One callstack frame as tt-triage prints it (``#0 0x… in fn () at file line:col``)."""

    index: int
    function: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    pc: int | None = None

    def text(self) -> str:
        out = f"#{self.index} "
        if self.pc is not None:
            out += f"0x{self.pc:08X} in "
        out += f"{self.function} ()"
        if self.file:
            out += f" at {self.file}"
            if self.line is not None:
                out += f" {self.line}" + (f":{self.column}" if self.column is not None else "")
        return out


@dataclass(frozen=True, kw_only=True, slots=True)
class CbState:
    """A circular buffer as tt-triage's dump_circular_buffers reads it on one core and RISC."""

    cb: int
    risc: str | None
    state: str  # empty, full, partial, ? (as the script prints it)
    kind: str = "local"
    pages: int | None = None  # the script's "pages" column
    received: int | None = None
    acked: int | None = None
    occupancy: int | None = None

    def text(self) -> str:
        counts = ""
        if self.received is not None and self.acked is not None:
            counts = f" (recv {self.received}, acked {self.acked})"
        who = f" on {self.risc}" if self.risc else ""
        return f"CB {self.cb}{who}: {self.state}{counts}"


@dataclass(frozen=True, kw_only=True, slots=True)
class IdleRisc:
    """RISCs idle in firmware (no kernel, waiting for a go): not to blame for the hang."""

    risc: str
    cores: tuple[CoreRef, ...]
    why: str  # the evidence: "kernel id 0, waypoint W, in firmware main () (trisc.cc)"


@dataclass(frozen=True, kw_only=True, slots=True)
class CoreGroup:
    """Cores in the same state: one pattern, one processor at one waypoint, one kernel."""

    pattern: HangPattern
    count: Count = field(init=False, default=0)  # len(cores)
    cores: tuple[CoreRef, ...]
    risc: str | None = None
    waypoint: str | None = None
    meaning: str = field(init=False, default="")  # the waypoint in words
    kernel_id: int | None = None
    kernel: str | None = None  # the path the log maps the kernel id to
    role: str | None = None  # reader, compute, writer, dispatch…
    peers: tuple[PeerState, ...] = ()
    sentence: str = ""  # what happens and what to look at, one actionable sentence
    detail: str = ""  # an error's text, an unknown waypoint's hint
    dprint: tuple[DprintLine, ...] = ()
    name: str | None = None  # the kernel's name as the text prints it (tt-triage's Kernel Name)
    frames: tuple[Frame, ...] = ()  # the top frames of the waiting RISC, frame 0 first
    cbs: tuple[CbState, ...] = ()  # circular buffers of these cores the text shows
    go_message: str | None = None  # tt-triage's Go Message (GO, DONE, INIT…)

    def __post_init__(self) -> None:
        object.__setattr__(self, "count", len(self.cores))
        object.__setattr__(self, "meaning", waypoint_meaning(self.waypoint))

    @property
    def kernel_name(self) -> str | None:
        """The kernel's file name when the text names its file, else its printed name."""
        return PurePosixPath(self.kernel).name if self.kernel else self.name

    @property
    def wait(self) -> str | None:
        """Where it waits, the same whichever text showed it: a frame 0 in a waiting call gives
        that call's waypoint (``cb_wait_front`` and the LLK's ``llk_wait_tiles`` are ``CWFW``
        with or without a Waypoint column), else a waiting waypoint, else frame 0's function (a
        RISC in a call that is no wait shows its last waypoint)."""
        f0 = self.frames[0] if self.frames and self.frames[0].index == 0 else None
        call = f0.function.split("(")[0].split("<")[0].split("::")[-1] if f0 else None
        where = WAIT_WAYPOINT.get(call or "")
        if where is None and self.waypoint and (not call or self.waypoint.endswith("W")):
            where = self.waypoint
        return where or call


@dataclass(frozen=True, kw_only=True, slots=True)
class Diagnosis:
    """Which kernel hangs where, from one watcher log, tt-triage output or summary: the groups of
    cores in each state (the most telling first), whether the state still changes, a headline,
    the RISCs idle in firmware (not to blame) and what the text cannot tell."""

    schema: Literal["lnrepro.hang/2"] = SCHEMA
    pattern: HangPattern
    progress: Progress
    hung: bool = field(init=False, default=False)  # a worker kernel that does not move
    summary: str  # the headline: one sentence a kernel developer can act on
    groups: tuple[CoreGroup, ...] = ()
    dump: int | None = None  # the Dump #N read
    dumps_compared: tuple[int, ...] = ()  # the dump numbers compared for STUCK/SLOW
    cores_total: Count = 0  # cores in the dump read
    cores_idle: Count = 0
    cores_dispatch: Count = 0
    events: tuple[str, ...] = ()  # asserts, NOC errors, pauses the log records
    warnings: tuple[str, ...] = ()  # what could not be read or decided
    source: Source | None = None  # which format and era was read (None: a /1 document)
    idle: tuple[IdleRisc, ...] = ()  # RISCs idle in firmware: not to blame
    unknowns: tuple[str, ...] = ()  # what the text cannot tell, each with how to learn it
    key: str = field(init=False, default="")  # the hang's signature: see _key

    def __post_init__(self) -> None:
        hung = self.pattern not in (HangPattern.IDLE, HangPattern.UNKNOWN) and (
            self.progress is not Progress.SLOW
        )
        object.__setattr__(self, "hung", hung)
        object.__setattr__(self, "key", self._key())

    @property
    def primary(self) -> CoreGroup | None:
        return self.groups[0] if self.groups else None

    def _key(self) -> str:
        """What two hangs must share to be the same hang: the pattern, and the kernel, processor
        and waypoint of the most telling group (a bisect's hang signature). The kernel is its
        file name when the text names the file, else its printed name. The place is
        :attr:`CoreGroup.wait` (``cb_wait_front`` and ``llk_wait_tiles`` are ``CWFW`` with or
        without a Waypoint column)."""
        g = self.primary
        if g is None:
            return self.pattern.value
        return f"{self.pattern.value}:{g.kernel_name or '?'}:{g.risc or '?'}:{g.wait or '?'}"

    def lines(self, *, max_groups: int = 6, max_dprint: int = 4, pattern: bool = True) -> list[str]:
        """The diagnosis as plain text lines (no markup: the caller escapes for its format);
        ``pattern=False`` when the caller has shown the pattern already."""
        out = [f"{self.pattern.value}: {self.summary}" if pattern else self.summary]
        if self.source is not None:
            out.append(f"  {self.source.text()}")
        out.append(f"  {self._progress_text()}")
        if self.cores_total or self.source is None or self.source.format is HangSource.WATCHER_LOG:
            where = "in the dump" if self.dump is not None or self.source is None else "shown"
            counts = f"{self.cores_total} cores {where}, {self.cores_idle} idle"
            if self.cores_dispatch:
                counts += f", {self.cores_dispatch} dispatch"
            out.append(f"  {counts}")
        for g in self.groups[:max_groups]:
            where = f"{g.risc} at {g.waypoint}" if g.risc and g.waypoint else (g.risc or "")
            named = f"{g.name} " if g.name and g.name != g.kernel_name else ""
            kernel = f" in {named}{g.kernel}" if g.kernel else (f" in {g.name}" if g.name else "")
            out.append(
                f"- {g.pattern.value} on {g.count} core(s) {_core_list(g.cores, 8)}: {where}{kernel}"
            )
            if g.waypoint:
                out.append(f"    {g.waypoint} = {g.meaning}")
            for f in g.frames[:4]:
                out.append(f"    {f.text()}")
            if len(g.frames) > 4:
                out.append(f"    ... {len(g.frames) - 4} more frame(s)")
            for c in g.cbs[:6]:
                out.append(f"    {c.text()}")
            for p in g.peers:
                out.append(f"    {p.describe()}")
            if g.detail:
                out.append(f"    {g.detail}")
            if g.sentence and g.sentence != self.summary:
                out.append(f"    -> {g.sentence}")
            for d in g.dprint[:max_dprint]:
                out.append(f"    dprint line {d.line_no}: {d.prefix()}: {d.text}")
            if len(g.dprint) > max_dprint:
                out.append(f"    ... {len(g.dprint) - max_dprint} more DPRINT line(s)")
        if len(self.groups) > max_groups:
            out.append(f"- and {len(self.groups) - max_groups} more group(s)")
        out += [f"  not to blame: {text}" for text in _idle_lines(self.idle)]
        out += [f"  event: {e}" for e in self.events]
        out += [f"  cannot tell: {u}" for u in self.unknowns]
        out += [f"  note: {w}" for w in self.warnings]
        return out

    def _progress_text(self) -> str:
        nums = ", ".join(f"#{n}" for n in self.dumps_compared)
        if self.progress is Progress.STUCK:
            return f"stuck: no core changed across dumps {nums}"
        if self.progress is Progress.SLOW:
            return f"still moving: the state changed across dumps {nums} (slow, not hung yet)"
        if self.progress is Progress.SINGLE_DUMP:
            if self.dump is None or self.dump == 0:
                return "an excerpt of one dump (no Dump # header): cannot tell stuck from slow"
            return f"one complete dump (#{self.dump}): cannot tell stuck from slow"
        if self.progress is Progress.SNAPSHOT:
            return "one reading of the hung device: cannot tell stuck from slow"
        return "no dump in the log"

    def to_json(self) -> JSON:
        """The ``lnrepro.hang/2`` document (a run record's ``hang``, ``explain --json``)."""
        return codec.encode(self)

    @classmethod
    def from_json(cls, r: Reader) -> Diagnosis:
        """A hang document of any readable version, every field checked."""
        return codec.decode(upgrade(r), cls)


def upgrade(r: Reader) -> Reader:
    """A /1 or /2 document in the /2 shape: /1 lacks what /2 added, and every field /2 added
    has a default, so only the version changes (a document of another schema is refused)."""
    schema = r.str("schema", SCHEMA)
    if schema not in READABLE:
        r.fail(f"is {schema!r}; this lnrepro reads {' and '.join(READABLE)}", "schema")
    if not isinstance(r.value, dict):
        r.fail("should be an object")
    return r.rewritten({**r.value, "schema": SCHEMA})


def _core_list(cores: tuple[CoreRef, ...], limit: int) -> str:
    shown = ", ".join(c.label() for c in cores[:limit])
    more = len(cores) - limit
    return shown + (f" and {more} more" if more > 0 else "")


def _idle_lines(idle: tuple[IdleRisc, ...]) -> list[str]:
    """The RISCs not to blame, those with the same cores and reason on one line."""
    by: dict[tuple[tuple[CoreRef, ...], str], list[str]] = {}
    for i in idle:
        by.setdefault((i.cores, i.why), []).append(i.risc)
    return [
        f"{', '.join(riscs)} on {_core_list(cores, 6)}: {why}" for (cores, why), riscs in by.items()
    ]
