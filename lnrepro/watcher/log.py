"""tt-metal's watcher.log, every era of it, read into typed records. Pure and tolerant: text in,
a :class:`WatcherLog` out; a line that cannot be read is kept in ``unparsed`` and malformed input
gives warnings, never an exception.

What the file holds (facts from tenstorrent/tt-metal; the file and commit are named where used):

* ``At <s>s starting`` and a legend (``watcher_server.cpp`` ``create_log_file``, commit
  007cf7fd108d9c7468c16b3baa239a7065a45357); the legend's first line names the Tensix processors
  in waypoint order. With ``TT_METAL_WATCHER_APPEND`` one file holds several runs, each with its
  own header. ``At <s>s attach device <n>`` / ``detach device``.
* Per poll (``poll_watcher_data``, same commit): ``-----``, ``Dump #<n> at <s>s``, one line per
  core (workers row by row, then ethernet, then DRAM cores), ``k_id[<id>]: <path>`` for every
  kernel id the dump used, the stack-usage summary and paused cores, then
  ``Dump #<n> completed at <s>s``. A dump the watcher aborted (an assert, a NOC error) has no
  ``completed`` line and may end in a cut core line. Old logs have neither ``-----`` nor
  ``completed``.
* The core line (``watcher_device_reader.cpp``: commit 6631b32e58205e00b93122874ed625942d322044
  for the ``phys`` era, where ethernet cores are ``ethnet`` and print ``rmsg:<state> k_id:<n>``;
  the newer ``virtual`` form as tt-metal's watcher tests expect it), in the eras this parser
  knows (:class:`Era`):

  ====================  =====================================================================
  ``Core (x=,y=):``      2023: physical coordinates, no device, waypoints unpadded
  ``Device 0, Core``     2024-03: the same with a device
  ``phys(x=,y=)``        2024-04..06: ``Device 0 worker core(x=,y=) phys(x=,y=):`` logical first
  ``virtual(x=,y=)``     2025: ``h_id``; three kernel ids brisc|ncrisc|trisc
  newest                 ``%3d`` padding and one kernel id per processor (five on Tensix)
  ====================  =====================================================================

  then the waypoints (one per processor, each right-aligned to four characters, absent when the
  firmware was built without watcher), ``rmsg:`` (dispatch D/H, BRISC's NOC, the go state
  I/G/D/R/L/W/S, ``|``, one enable letter per processor class, upper case when it has a kernel),
  ``h_id:``, ``smsg:`` (one run state per subordinate), ``cb[n](rcv a!=ack b)`` with
  ``TT_METAL_WATCHER_DUMP_ALL``, ``k_ids:`` and optional ``text_start:``; a ring buffer follows
  on its own lines. An assert or a NOC sanitizer error is written with the same core prefix.

Pasted logs add editor line numbers, drop a first character (``evice 0 …``) or elide with
``...``: every pattern is searched for inside the line, never anchored at its start.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from enum import Enum
from pathlib import Path
from typing import Any

from lnrepro.model.hang import Coords
from lnrepro.model.jsonio import Reader

TENSIX_RISCS = ("BRISC", "NCRISC", "TRISC0", "TRISC1", "TRISC2")
ETH_RISCS = ("ERISC", "ERISC1", "ERISC2", "ERISC3", "ERISC4")
DRAM_RISCS = ("DRISC",)
MAX_LINES = 2_000_000  # past this the rest of a file is not read (a warning says so)


class Era(str, Enum):
    """Which form a core line has (see the module docstring)."""

    CORE_2023 = "2023"
    DEVICE_CORE_2024 = "2024-03"
    PHYS_2024 = "2024-phys"
    VIRTUAL_2025 = "2025-virtual"
    NEWEST = "newest"


class CoreKind(str, Enum):
    """The kind of core a line names."""

    WORKER = "worker"
    ACTIVE_ETH = "acteth"
    IDLE_ETH = "idleth"
    ETH = "ethnet"  # the 2024 name, active or idle not told apart
    DRAM = "dram"


class EventKind(str, Enum):
    """A line that reports something rather than a core's state."""

    ASSERT = "ASSERT"  # a kernel tripped an ASSERT (or an assert-type NOC check)
    NOC_ERROR = "NOC_ERROR"  # the NOC sanitizer stopped a bad transaction
    ERROR = "ERROR"  # any other watcher error (DRAM core read failure, corrupt data)
    PAUSE = "PAUSE"  # cores waiting in PAUSE() for ENTER
    STACK = "STACK"  # a stack-usage report line
    STACK_OVERFLOW = "STACK_OVERFLOW"  # a stack-usage line that says OVERFLOW
    NO_DEVICES = "NO_DEVICES"  # "No active devices"


def _pair(r: Reader, key: str) -> tuple[int, int] | None:
    if not r.has(key):
        return None
    v = r.get(key).value
    if not (isinstance(v, list) and len(v) == 2 and all(type(i) is int for i in v)):
        r.fail("should be [x, y]", key)
    return (int(v[0]), int(v[1]))


def _pair_json(p: tuple[int, int] | None) -> list[int] | None:
    return None if p is None else [p[0], p[1]]


def _int_map(r: Reader, key: str) -> dict[int, str]:
    out: dict[int, str] = {}
    for k, v in r.str_map(key).items():
        if not k.isdigit():
            r.fail(f"has the key {k!r}, which is not a kernel id", key)
        out[int(k)] = v
    return out


@dataclass(frozen=True, slots=True)
class RiscState:
    """One processor of a core in one dump."""

    risc: str  # BRISC, NCRISC, TRISC0..2; ERISC, ERISC1…; DRISC
    waypoint: str | None  # None: no waypoint column (firmware without watcher) or unreadable
    run: str | None = None  # BRISC: the go message's state; subordinates: their smsg character
    kernel_id: int | None = None
    enabled: bool | None = None  # its enable letter, where the line has one

    def to_json(self) -> dict[str, Any]:
        return {
            "risc": self.risc,
            "waypoint": self.waypoint,
            "run": self.run,
            "kernel_id": self.kernel_id,
            "enabled": self.enabled,
        }

    @classmethod
    def from_json(cls, r: Reader) -> RiscState:
        return cls(
            r.str("risc"),
            r.opt_str("waypoint"),
            r.opt_str("run"),
            r.opt_int("kernel_id"),
            r.opt_bool("enabled"),
        )


@dataclass(frozen=True, slots=True)
class CbSync:
    """``cb[n](rcv a!=ack b)``: a circular buffer whose received and acked counters differ
    (only with ``TT_METAL_WATCHER_DUMP_ALL``)."""

    cb: int
    received: int
    acked: int

    def to_json(self) -> dict[str, Any]:
        return {"cb": self.cb, "received": self.received, "acked": self.acked}

    @classmethod
    def from_json(cls, r: Reader) -> CbSync:
        return cls(r.int("cb", 0), r.int("received", 0), r.int("acked", 0))


@dataclass(frozen=True, slots=True)
class CoreLine:
    """One core's line in a dump: every field its era prints (None where it prints none)."""

    line_no: int
    era: Era
    device: int | None
    kind: CoreKind
    x: int  # logical from the 2024 ``core(x=,y=)`` form on; physical in the two older forms
    y: int
    virtual: tuple[int, int] | None = None
    phys: tuple[int, int] | None = None
    riscs: tuple[RiscState, ...] = ()
    dispatch: str | None = None  # D device / H host dispatch
    noc: int | None = None  # BRISC's NOC
    run: str | None = None  # the go message: I, G, D (R, L, W, S in newer firmware)
    enables: str | None = None
    h_id: int | None = None
    smsg: str | None = None
    k_ids: tuple[int, ...] = ()
    cb_sync: tuple[CbSync, ...] = ()
    ring_buffer: tuple[int, ...] = ()
    error: str | None = None  # an assert or NOC error the line reports
    partial: bool = False  # only the prefix (a dump cut off mid-line) or fields unreadable
    extra: str = ""  # what followed that no field matched (text_start, a reporter's note)

    @property
    def coords(self) -> Coords:
        old = self.era in (Era.CORE_2023, Era.DEVICE_CORE_2024)
        return Coords.PHYSICAL if old else Coords.LOGICAL

    @property
    def has_waypoints(self) -> bool:
        return any(r.waypoint is not None for r in self.riscs)

    @property
    def key(self) -> tuple[int, str, int, int]:
        """The core across dumps."""
        return (self.device or 0, self.kind.value, self.x, self.y)

    def risc(self, name: str) -> RiscState | None:
        return next((r for r in self.riscs if r.risc == name), None)

    def state_key(self) -> tuple[object, ...]:
        """What changes while the core makes progress."""
        return (
            tuple((r.risc, r.waypoint, r.run) for r in self.riscs),
            self.run,
            self.smsg,
            self.h_id,
            self.k_ids,
            self.error,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "line_no": self.line_no,
            "era": self.era.value,
            "device": self.device,
            "kind": self.kind.value,
            "x": self.x,
            "y": self.y,
            "virtual": _pair_json(self.virtual),
            "phys": _pair_json(self.phys),
            "riscs": [r.to_json() for r in self.riscs],
            "dispatch": self.dispatch,
            "noc": self.noc,
            "run": self.run,
            "enables": self.enables,
            "h_id": self.h_id,
            "smsg": self.smsg,
            "k_ids": list(self.k_ids),
            "cb_sync": [c.to_json() for c in self.cb_sync],
            "ring_buffer": list(self.ring_buffer),
            "error": self.error,
            "partial": self.partial,
            "extra": self.extra,
        }

    @classmethod
    def from_json(cls, r: Reader) -> CoreLine:
        return cls(
            r.int("line_no", 0),
            r.enum("era", Era),
            r.opt_int("device"),
            r.enum("kind", CoreKind, CoreKind.WORKER),
            r.int("x", 0),
            r.int("y", 0),
            _pair(r, "virtual"),
            _pair(r, "phys"),
            tuple(RiscState.from_json(x) for x in r.list("riscs", default=[])),
            r.opt_str("dispatch"),
            r.opt_int("noc"),
            r.opt_str("run"),
            r.opt_str("enables"),
            r.opt_int("h_id"),
            r.opt_str("smsg"),
            r.ints("k_ids"),
            tuple(CbSync.from_json(c) for c in r.list("cb_sync", default=[])),
            r.ints("ring_buffer"),
            r.opt_str("error"),
            r.bool("partial", False),
            r.str("extra", ""),
        )


@dataclass(frozen=True, slots=True)
class Event:
    """An assert, a NOC error, a pause, a stack report: a line about something that happened."""

    kind: EventKind
    text: str
    line_no: int
    dump: int | None = None
    device: int | None = None
    x: int | None = None
    y: int | None = None
    risc: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "text": self.text,
            "line_no": self.line_no,
            "dump": self.dump,
            "device": self.device,
            "x": self.x,
            "y": self.y,
            "risc": self.risc,
        }

    @classmethod
    def from_json(cls, r: Reader) -> Event:
        return cls(
            r.enum("kind", EventKind),
            r.str("text", ""),
            r.int("line_no", 0),
            r.opt_int("dump"),
            r.opt_int("device"),
            r.opt_int("x"),
            r.opt_int("y"),
            r.opt_str("risc"),
        )


@dataclass(frozen=True, slots=True)
class Dump:
    """One ``Dump #N`` section. Number 0: core lines with no ``Dump #`` header before them (a
    pasted excerpt), read as one dump."""

    number: int
    line_no: int
    run: int = 1  # which run of the file (each ``At …s starting`` begins one)
    seconds: float | None = None
    completed_at: float | None = None  # the ``Dump #N completed`` time, when the log has it
    complete: bool = True  # False: cut short (no completed line where the log has them, a cut line)
    cores: tuple[CoreLine, ...] = ()
    kernels: dict[int, str] | None = None  # k_id -> path, from this dump's k_id lines
    events: tuple[Event, ...] = ()

    def kernel(self, kernel_id: int | None) -> str | None:
        if kernel_id is None or not self.kernels:
            return None
        return self.kernels.get(kernel_id)

    def to_json(self) -> dict[str, Any]:
        kernels = {str(k): v for k, v in sorted((self.kernels or {}).items())}
        return {
            "number": self.number,
            "line_no": self.line_no,
            "run": self.run,
            "seconds": self.seconds,
            "completed_at": self.completed_at,
            "complete": self.complete,
            "cores": [c.to_json() for c in self.cores],
            "kernels": kernels,
            "events": [e.to_json() for e in self.events],
        }

    @classmethod
    def from_json(cls, r: Reader) -> Dump:
        return cls(
            r.int("number"),
            r.int("line_no", 0),
            r.int("run", 1),
            r.opt_float("seconds"),
            r.opt_float("completed_at"),
            r.bool("complete", True),
            tuple(CoreLine.from_json(c) for c in r.list("cores", default=[])),
            _int_map(r, "kernels"),
            tuple(Event.from_json(e) for e in r.list("events", default=[])),
        )


@dataclass(frozen=True, slots=True)
class Run:
    """One ``At …s starting`` header (a file written with TT_METAL_WATCHER_APPEND has several)."""

    index: int
    line_no: int
    started_at: float | None = None
    processors: tuple[str, ...] = ()  # the legend's waypoint order, e.g. BRISC … TRISC2
    attached: tuple[int, ...] = ()
    detached: tuple[int, ...] = ()
    legend: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "line_no": self.line_no,
            "started_at": self.started_at,
            "processors": list(self.processors),
            "attached": list(self.attached),
            "detached": list(self.detached),
            "legend": list(self.legend),
        }

    @classmethod
    def from_json(cls, r: Reader) -> Run:
        return cls(
            r.int("index", 1),
            r.int("line_no", 0),
            r.opt_float("started_at"),
            r.strs("processors"),
            r.ints("attached"),
            r.ints("detached"),
            r.strs("legend"),
        )


@dataclass(frozen=True, slots=True)
class Unparsed:
    """A line no rule read, kept as it was."""

    line_no: int
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"line_no": self.line_no, "text": self.text}

    @classmethod
    def from_json(cls, r: Reader) -> Unparsed:
        return cls(r.int("line_no", 0), r.str("text", ""))


@dataclass(frozen=True, slots=True)
class WatcherLog:
    """A parsed watcher.log."""

    runs: tuple[Run, ...] = ()
    dumps: tuple[Dump, ...] = ()
    kernel_names: dict[int, str] | None = None  # every k_id line and ``N: path`` line seen
    events: tuple[Event, ...] = ()  # every event, in or out of a dump
    unparsed: tuple[Unparsed, ...] = ()
    warnings: tuple[str, ...] = ()

    SCHEMA = "lnrepro.watcher-log/1"

    def kernel(self, kernel_id: int | None, dump: Dump | None = None) -> str | None:
        """The path of a kernel id: the dump's own map first, then any the log printed."""
        if kernel_id is None:
            return None
        if dump is not None and dump.kernel(kernel_id):
            return dump.kernel(kernel_id)
        return (self.kernel_names or {}).get(kernel_id)

    @property
    def eras(self) -> tuple[Era, ...]:
        return tuple(dict.fromkeys(c.era for d in self.dumps for c in d.cores))

    def last_run_dumps(self) -> tuple[Dump, ...]:
        last = max((d.run for d in self.dumps), default=0)
        return tuple(d for d in self.dumps if d.run == last)

    def to_json(self) -> dict[str, Any]:
        names = {str(k): v for k, v in sorted((self.kernel_names or {}).items())}
        return {
            "schema": self.SCHEMA,
            "runs": [r.to_json() for r in self.runs],
            "dumps": [d.to_json() for d in self.dumps],
            "kernel_names": names,
            "events": [e.to_json() for e in self.events],
            "unparsed": [u.to_json() for u in self.unparsed],
            "warnings": list(self.warnings),
        }

    @classmethod
    def from_json(cls, r: Reader) -> WatcherLog:
        return cls(
            tuple(Run.from_json(x) for x in r.list("runs", default=[])),
            tuple(Dump.from_json(x) for x in r.list("dumps", default=[])),
            _int_map(r, "kernel_names"),
            tuple(Event.from_json(x) for x in r.list("events", default=[])),
            tuple(Unparsed.from_json(x) for x in r.list("unparsed", default=[])),
            r.strs("warnings"),
        )


# ---------------------------------------------------------------------------------- patterns
_N = r"\s*(\d{1,9})"  # a number as %2d/%3d print it (bounded: no giant int from garbage)
_STARTING = re.compile(r"At\s+(\d{1,12}(?:\.\d+)?)s\s+starting")
_ATTACH = re.compile(r"At\s+(\d{1,12}(?:\.\d+)?)s\s+(attach|detach)\s+device\s+(\d{1,9})")
_DUMP = re.compile(r"Dump\s*#\s*(\d{1,12})\s+at\s+(\d{1,12}(?:\.\d+)?)s")
_DUMP_DONE = re.compile(r"Dump\s*#\s*(\d{1,12})\s+completed\s+at\s+(\d{1,12}(?:\.\d+)?)s")
_KID = re.compile(r"(?:k|\b)_id\[" + _N + r"\]:\s*(\S.*?)\s*$")  # "_id[" when pasted without k
_NAME_LINE = re.compile(r"^\s*(\d{1,9}):\s+(blank|\S+\.(?:cpp|cc|c|h|hpp)|\S*/\S+)\s*$")
_LEGEND_PROCS = re.compile(r"waypoint\s+for\s+(.+?)\s*$")
# The newest/2025/2024-phys prefix: "Device 0 worker core(x= 1,y= 2) [virtual(..)] [phys(..)]:"
_PREFIX_NEW = re.compile(
    r"(?:D|\b)evice\s+(\d{1,9})\s+(worker|acteth|idleth|ethnet|dram)\s+core\(x="
    + _N
    + r",\s*y="
    + _N
    + r"\)(?:\s+virtual\(x="
    + _N
    + r",\s*y="
    + _N
    + r"\))?(?:\s+phys\(x="
    + _N
    + r",\s*y="
    + _N
    + r"\))?\s*:"
)
_PREFIX_DEVICE_CORE = re.compile(
    r"(?:D|\b)evice\s+(\d{1,9}),\s*Core\s*\(x=" + _N + r",\s*y=" + _N + r"\)\s*:"
)
_PREFIX_CORE = re.compile(r"(?:C|\b)ore\s*\(x=" + _N + r",\s*y=" + _N + r"\)\s*:")
_RMSG = re.compile(r"rmsg:\s*([^\s|]*)(?:\|([A-Za-z?]*))?")
_HID = re.compile(r"h_id:" + _N)
_SMSG = re.compile(r"smsg:\s*(\S*)")
_KIDS = re.compile(r"k_ids?:((?:\s*\d{1,9}\s*\|)*\s*\d{1,9})")
_CB = re.compile(r"cb\[(\d{1,4})\]\(rcv\s+(\d{1,12})\s*!=\s*ack\s+(\d{1,12})\)")
_TEXT_START = re.compile(r"text_start:\S*")
_HEX = re.compile(r"0x([0-9a-fA-F]{1,8})")
_WAYPOINT = re.compile(r"^[A-Za-z0-9_?]{1,4}$")
_ERROR_WORDS = re.compile(
    r"tripped\s+(?:an\s+)?assert|tried to access|accesses local L1|watcher error|"
    r"detected an? |data race|unexpected|corrupt",
    re.IGNORECASE,
)
_RISC_WORD = re.compile(
    r"\b(brisc|ncrisc|trisc[0-2]|ierisc|erisc[0-9]?|subordinate_erisc|drisc)\b", re.I
)
_PAUSED = re.compile(r"Paused cores:\s*(.*)$")
_PAUSED_ITEM = re.compile(r"\(x=\s*(\d{1,9}),\s*y=\s*(\d{1,9})\):(\w+)|(\d{1,9})-(\d{1,9}):(\w+)")
_STACK = re.compile(r"stack usage", re.IGNORECASE)
_RING = re.compile(r"debug_ring_buffer")


def _num(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _risc_names(kind: CoreKind, processors: tuple[str, ...]) -> tuple[str, ...]:
    if kind is CoreKind.WORKER:
        return processors or TENSIX_RISCS
    if kind is CoreKind.DRAM:
        return DRAM_RISCS
    return ETH_RISCS


def _risc_name(word: str) -> str:
    w = word.upper()
    if w == "SUBORDINATE_ERISC":
        return "ERISC1"
    if w in ("IERISC", "ERISC0"):
        return "ERISC"
    return w


@dataclass
class _State:
    """The parser's running state (mutable, private; the records it builds are frozen)."""

    runs: list[Run]
    dumps: list[Dump]
    events: list[Event]
    unparsed: list[Unparsed]
    warnings: list[str]
    names: dict[int, str]
    run_index: int = 0
    in_legend: bool = False
    dump: Dump | None = None
    dump_cores: list[CoreLine] | None = None
    dump_kernels: dict[int, str] | None = None
    dump_events: list[Event] | None = None
    uses_completed: bool = False
    in_ring: bool = False

    @property
    def processors(self) -> tuple[str, ...]:
        return self.runs[-1].processors if self.runs else ()

    def run(self) -> Run:
        if not self.runs:
            self.runs.append(Run(1, 0))
            self.run_index = 1
        return self.runs[-1]

    def add_event(self, ev: Event) -> None:
        if self.dump is not None and self.dump_events is not None:
            ev = replace(ev, dump=self.dump.number)
            self.dump_events.append(ev)
        self.events.append(ev)

    def close_dump(self, completed_at: float | None = None, closed: bool = False) -> None:
        if self.dump is None:
            return
        cores = tuple(self.dump_cores or ())
        cut = bool(cores) and cores[-1].partial
        headerless = self.dump.number == 0
        complete = closed or ((headerless or not self.uses_completed) and not cut)
        self.dumps.append(
            replace(
                self.dump,
                completed_at=completed_at,
                complete=complete and not cut,
                cores=cores,
                kernels=dict(self.dump_kernels or {}),
                events=tuple(self.dump_events or ()),
            )
        )
        if not complete:
            why = "its last core line is cut" if cut else "it has no 'completed' line"
            self.warnings.append(f"Dump #{self.dump.number} is incomplete: {why}")
        self.dump, self.dump_cores, self.dump_kernels, self.dump_events = None, None, None, None


def watcher_evidence(text: str) -> int:
    """How much of a text reads as a watcher log (0: none): core state lines (a core prefix of
    any era with ``rmsg:`` or ``k_ids:``) count 3, ``Dump #N`` lines 2, ``k_id[N]:`` lines 1 once
    there is another sign. Used to sniff what a user pasted."""
    score = kids = 0
    for line in text.splitlines()[:MAX_LINES]:
        if "_id[" in line and _KID.search(line):
            kids += 1
        elif _DUMP.search(line) or _DUMP_DONE.search(line):
            score += 2
        elif ("rmsg:" in line or "k_ids" in line) and (
            _PREFIX_NEW.search(line)
            or _PREFIX_DEVICE_CORE.search(line)
            or _PREFIX_CORE.search(line)
        ):
            score += 3
    return score + kids if score else 0


ERA_WORDS: dict[Era, str] = {
    Era.CORE_2023: "2023 core lines: 'Core (x=,y=):', physical coordinates, no device",
    Era.DEVICE_CORE_2024: "2024-03 core lines: 'Device N, Core (x=,y=):', physical coordinates",
    Era.PHYS_2024: "2024-04..06 core lines: 'worker core(x=,y=) phys(x=,y=)' (watcher_device_reader.cpp "
    "at 6631b32e5820)",
    Era.VIRTUAL_2025: "2025 core lines: 'virtual(x=,y=)', h_id, three kernel ids brisc|ncrisc|trisc",
    Era.NEWEST: "newest core lines: %3d padding, one kernel id per processor (watcher_device_reader.cpp "
    "at 0000823065da)",
}

_LINE_NO = re.compile(r"^\s*\d{1,7}(?:\s*[|:]\s*|\s+)(?=\S)")
_DROPPED = re.compile(r"^(?:\s*\d{1,7}(?:\s*[|:]\s*|\s+))?(?:evice\s+\d|ore\s*\(x=|_id\[)")


def noise(text: str, log: WatcherLog) -> tuple[str, ...]:
    """What a pasted log has that tt-metal never wrote, in words (for the diagnosis's source)."""
    out: list[str] = []
    lines = text.splitlines()[:MAX_LINES]
    cores = {c.line_no for d in log.dumps for c in d.cores}
    numbered = sum(1 for no in cores if _LINE_NO.match(lines[no - 1]) is not None)
    if numbered:
        out.append(f"editor line numbers on {numbered} core line(s)")
    dropped = sum(1 for ln in lines if _DROPPED.match(ln))
    if dropped:
        out.append(f"a dropped first character on {dropped} line(s)")
    elided = sum(
        1 for u in log.unparsed if "..." in u.text and u.text.strip(" .\t0123456789|:") == ""
    )
    elided += sum(
        1 for d in log.dumps for c in d.cores if "..." in c.extra or "..." in lines[c.line_no - 1]
    )
    if elided:
        out.append(f"{elided} '...' elision(s)")
    if any(d.number == 0 for d in log.dumps):
        out.append("no 'Dump #' header: the core lines read as one dump")
    in_dumps = {k for d in log.dumps for k in (d.kernels or {})}
    apart = set(log.kernel_names or {}) - in_dumps
    if apart:
        out.append(f"{len(apart)} kernel map line(s) apart from the dumps")
    other = [u for u in log.unparsed if u.text.strip(" .\t0123456789|:")]
    if other:
        out.append(f"{len(other)} line(s) that are not the watcher's, kept unread")
    return tuple(out)


def parse(text: str) -> WatcherLog:
    """Read watcher.log text. Never raises on any input."""
    st = _State([], [], [], [], [], {})
    st.uses_completed = _DUMP_DONE.search(text) is not None
    lines = text.splitlines()
    if len(lines) > MAX_LINES:
        st.warnings.append(f"only the first {MAX_LINES} of {len(lines)} lines were read")
        lines = lines[:MAX_LINES]
    for no, raw in enumerate(lines, 1):
        _line(st, no, raw.replace("\x00", ""))
    st.close_dump()
    return WatcherLog(
        tuple(st.runs),
        tuple(st.dumps),
        dict(st.names),
        tuple(st.events),
        tuple(st.unparsed),
        tuple(st.warnings),
    )


def parse_file(path: Path) -> WatcherLog:
    """Read a watcher.log file; an unreadable file is a log with one warning."""
    try:
        return parse(path.read_bytes().decode("utf-8", errors="replace"))
    except OSError as exc:
        return WatcherLog(warnings=(f"cannot read {path}: {exc.strerror or exc}",))


def _line(st: _State, no: int, raw: str) -> None:
    line = raw.rstrip()
    if not line.strip():
        st.in_ring = False
        return
    if m := _STARTING.search(line):
        st.close_dump()
        st.run_index += 1
        st.runs.append(Run(st.run_index, no, _num(m.group(1))))
        st.in_legend = True
        return
    if m := _ATTACH.search(line):
        st.in_legend = False
        run = st.run()
        dev = int(m.group(3))
        if m.group(2) == "attach":
            st.runs[-1] = replace(run, attached=(*run.attached, dev))
        else:
            st.close_dump()
            st.runs[-1] = replace(run, detached=(*run.detached, dev))
        return
    if m := _DUMP_DONE.search(line):
        if st.dump is not None and st.dump.number == int(m.group(1)):
            st.close_dump(_num(m.group(2)), closed=True)
        else:
            st.warnings.append(f"line {no}: 'completed' for Dump #{m.group(1)}, which was not open")
        return
    if m := _DUMP.search(line):
        st.close_dump()
        st.in_legend = False
        st.run()
        st.dump = Dump(int(m.group(1)), no, st.run_index or 1, _num(m.group(2)))
        st.dump_cores, st.dump_kernels, st.dump_events = [], {}, []
        return
    if line.strip() == "-----":
        return
    if st.in_legend:
        if _PREFIX_NEW.search(line) or _PREFIX_CORE.search(line) or _KID.search(line):
            st.in_legend = False
        else:
            run = st.run()
            procs = run.processors
            if m := _LEGEND_PROCS.search(line):
                procs = tuple(p.strip().upper() for p in m.group(1).split(",") if p.strip())
            st.runs[-1] = replace(run, processors=procs, legend=(*run.legend, line.strip()))
            return
    if m := _KID.search(line):
        kid, path = int(m.group(1)), m.group(2)
        st.names[kid] = path
        if st.dump_kernels is not None:
            st.dump_kernels[kid] = path
        return
    if "No active devices" in line:
        st.add_event(Event(EventKind.NO_DEVICES, line.strip(), no))
        return
    if m := _PAUSED.search(line):
        _paused(st, no, m.group(1))
        return
    if "Stack usage summary" in line:  # a heading: the lines under it are read one by one
        return
    if _STACK.search(line) and not _PREFIX_NEW.search(line) and not _PREFIX_CORE.search(line):
        kind = EventKind.STACK_OVERFLOW if "OVERFLOW" in line else EventKind.STACK
        rm = _RISC_WORD.search(line)
        st.add_event(Event(kind, line.strip(), no, risc=_risc_name(rm.group(1)) if rm else None))
        return
    if _RING.search(line):
        st.in_ring = True
        _ring(st, line)
        return
    if st.in_ring and _HEX.search(line) and not _PREFIX_CORE.search(line):
        _ring(st, line)
        return
    if _core(st, no, line):
        return
    if m := _NAME_LINE.search(line):  # kernel_names.txt pasted in: "N: path"
        st.names[int(m.group(1))] = m.group(2)
        return
    if st.dump is not None and st.dump.number == 0 and line.strip(" .\t0123456789|:"):
        st.close_dump()  # a reporter's own line ends a headerless excerpt (not a '...')
    st.unparsed.append(Unparsed(no, raw))


def _paused(st: _State, no: int, items: str) -> None:
    found = False
    for m in _PAUSED_ITEM.finditer(items):
        found = True
        if m.group(1) is not None:
            x, y, risc = int(m.group(1)), int(m.group(2)), m.group(3)
        else:
            x, y, risc = int(m.group(4)), int(m.group(5)), m.group(6)
        st.add_event(Event(EventKind.PAUSE, items.strip(), no, x=x, y=y, risc=_risc_name(risc)))
    if not found:
        st.add_event(Event(EventKind.PAUSE, items.strip(), no))


def _ring(st: _State, line: str) -> None:
    values = tuple(int(h, 16) for h in _HEX.findall(line))
    if st.dump_cores:
        last = st.dump_cores[-1]
        st.dump_cores[-1] = replace(last, ring_buffer=last.ring_buffer + values)


def _core(st: _State, no: int, line: str) -> bool:
    """A core line (or an error line with a core prefix); False when the line is neither."""
    virtual: tuple[int, int] | None = None
    phys: tuple[int, int] | None = None
    if m := _PREFIX_NEW.search(line):
        device: int | None = int(m.group(1))
        kind = CoreKind(m.group(2))
        x, y = int(m.group(3)), int(m.group(4))
        if m.group(5) is not None:
            virtual = (int(m.group(5)), int(m.group(6)))
        if m.group(7) is not None:
            phys = (int(m.group(7)), int(m.group(8)))
        era = Era.PHYS_2024 if virtual is None else Era.VIRTUAL_2025
    elif m := _PREFIX_DEVICE_CORE.search(line):
        device, kind, era = int(m.group(1)), CoreKind.WORKER, Era.DEVICE_CORE_2024
        x, y = int(m.group(2)), int(m.group(3))
    elif m := _PREFIX_CORE.search(line):
        device, kind, era = None, CoreKind.WORKER, Era.CORE_2023
        x, y = int(m.group(1)), int(m.group(2))
    else:
        return False
    body = line[m.end() :]
    core = _body(st, no, era, device, kind, x, y, virtual, phys, body)
    if core.error:
        rm = _RISC_WORD.search(core.error)
        ek = (
            EventKind.ASSERT
            if re.search(r"assert", core.error, re.I)
            else (
                EventKind.NOC_ERROR
                if re.search(r"noc|access", core.error, re.I)
                else EventKind.ERROR
            )
        )
        st.add_event(
            Event(
                ek,
                core.error,
                no,
                device=device,
                x=x,
                y=y,
                risc=_risc_name(rm.group(1)) if rm else None,
            )
        )
    if st.dump_cores is None and not core.error:
        # an excerpt pasted without its "Dump #N" header: its core lines are one dump (number 0)
        st.dump = Dump(0, no, st.run_index or 1)
        st.dump_cores, st.dump_kernels, st.dump_events = [], {}, []
    if st.dump_cores is None:
        return True
    if core.error and not core.has_waypoints and core.run is None:
        return True  # an error report about a core, not its state
    st.dump_cores.append(core)
    return True


def _body(
    st: _State,
    no: int,
    era: Era,
    device: int | None,
    kind: CoreKind,
    x: int,
    y: int,
    virtual: tuple[int, int] | None,
    phys: tuple[int, int] | None,
    body: str,
) -> CoreLine:
    rm = _RMSG.search(body)
    err = _ERROR_WORDS.search(body)
    cut = len(body) if rm is None else rm.start()
    if err is not None and (rm is None or err.start() < rm.start()):
        cut = min(cut, _error_start(body, err.start()))
    wp_text = body[:cut].strip()
    error = body[_error_start(body, err.start()) :].strip() if err is not None else None
    names = _risc_names(kind, st.processors)
    waypoints: list[str | None] = []
    if wp_text:
        for tok in wp_text.split(","):
            t = tok.strip()
            if _WAYPOINT.match(t):
                waypoints.append(t)
            else:
                waypoints.append(None)
                if t:
                    st.warnings.append(f"line {no}: {t[:20]!r} is not a waypoint")
    dispatch = noc = run = enables = None
    if rm is not None:
        head, enables = rm.group(1), rm.group(2)
        if len(head) >= 3:
            dispatch = head[0] if head[0] in "DH" else None
            noc = int(head[1]) if head[1] in "01" else None
            run = head[2] if head[2] != "?" else None
        elif len(head) == 1:
            run = head if head != "?" else None
        if enables is not None and set(enables) <= {"?"}:
            enables = None
    hm = _HID.search(body)
    sm = _SMSG.search(body)
    smsg = sm.group(1) if sm and sm.group(1) and set(sm.group(1)) - {"?"} else None
    km = _KIDS.search(body)
    k_ids = tuple(int(k) for k in km.group(1).split("|")) if km else ()
    cb_sync = tuple(CbSync(int(a), int(b), int(c)) for a, b, c in _CB.findall(body))
    if error is None:
        rest = body[cut:] if wp_text else body
        for pat in (_RMSG, _HID, _SMSG, _KIDS, _CB, _TEXT_START):
            rest = pat.sub(" ", rest)
        extra = " ".join(rest.split())
    else:
        extra = ""
    if waypoints:
        count = len(waypoints)
    elif rm is None and km is None:
        count = 0
    else:
        count = len(names) if kind is CoreKind.WORKER else max(1, len(k_ids))
    riscs = _riscs(names, waypoints, count, kind, run, smsg, enables, k_ids)
    partial = rm is None and km is None and error is None
    return CoreLine(
        no,
        _era(era, k_ids, hm),
        device,
        kind,
        x,
        y,
        virtual,
        phys,
        riscs,
        dispatch,
        noc,
        run,
        enables,
        int(hm.group(1)) if hm else None,
        smsg,
        k_ids,
        cb_sync,
        (),
        error,
        partial,
        extra,
    )


def _error_start(body: str, at: int) -> int:
    """Where an error's text starts: the processor word before it, when there is one."""
    before = body[:at]
    words = list(_RISC_WORD.finditer(before))
    return words[-1].start() if words else at


def _era(era: Era, k_ids: tuple[int, ...], hm: re.Match[str] | None) -> Era:
    if era is Era.VIRTUAL_2025 and (len(k_ids) > 3 or (hm and hm.group(0).startswith("h_id: "))):
        return Era.NEWEST
    return era


def _riscs(
    names: tuple[str, ...],
    waypoints: list[str | None],
    count: int,
    kind: CoreKind,
    run: str | None,
    smsg: str | None,
    enables: str | None,
    k_ids: tuple[int, ...],
) -> tuple[RiscState, ...]:
    out: list[RiscState] = []
    for i in range(count):
        name = names[i] if i < len(names) else f"RISC{i}"
        wp = waypoints[i] if i < len(waypoints) else None
        if i == 0:
            r = run
        else:
            r = smsg[i - 1] if smsg and i - 1 < len(smsg) and smsg[i - 1] != "?" else None
        out.append(
            RiscState(name, wp, r, _kernel_id(name, i, k_ids, kind), _enabled(name, enables))
        )
    return tuple(out)


def _kernel_id(name: str, i: int, k_ids: tuple[int, ...], kind: CoreKind) -> int | None:
    if not k_ids:
        return None
    if kind is CoreKind.WORKER and len(k_ids) == 3:  # brisc|ncrisc|trisc: one id for the TRISCs
        return k_ids[min(i, 2)]
    return k_ids[i] if i < len(k_ids) else None


def _enabled(name: str, enables: str | None) -> bool | None:
    if not enables:
        return None
    letter = {"BRISC": "B", "NCRISC": "N", "TRISC0": "T", "TRISC1": "T", "TRISC2": "T"}.get(name)
    if letter is None:
        return None
    if letter in enables:
        return True
    if letter.lower() in enables:
        return False
    return None
