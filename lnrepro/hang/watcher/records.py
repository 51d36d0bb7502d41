"""A parsed watcher.log as typed records: its runs, dumps, core lines, processors and events.

Each record is defined once (issue 39): its JSON both ways (an ``lnrepro.hang.watcher-log/1``
document) is derived from these types by :mod:`lnrepro.model.codec`. What each era of the log
looks like is in :mod:`lnrepro.hang.watcher.formats`; :mod:`lnrepro.hang.watcher.log` reads text into these.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Literal

from lnrepro.hang.model import Coords

SCHEMA: Literal["lnrepro.hang.watcher-log/1"] = "lnrepro.hang.watcher-log/1"

TENSIX_RISCS = ("BRISC", "NCRISC", "TRISC0", "TRISC1", "TRISC2")
ETH_RISCS = ("ERISC", "ERISC1", "ERISC2", "ERISC3", "ERISC4")
DRAM_RISCS = ("DRISC",)


class LineFormat(str, Enum):
    """Which format a core line has, by the era of tt-metal that printed it (see
    :mod:`lnrepro.hang.watcher.formats`)."""

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


@dataclass(frozen=True, kw_only=True, slots=True)
class RiscState:
    """One processor of a core in one dump."""

    risc: str  # BRISC, NCRISC, TRISC0..2; ERISC, ERISC1…; DRISC
    waypoint: str | None  # None: no waypoint column (firmware without watcher) or unreadable
    run: str | None = None  # BRISC: the go message's state; subordinates: their smsg character
    kernel_id: int | None = None
    enabled: bool | None = None  # its enable letter, where the line has one


@dataclass(frozen=True, kw_only=True, slots=True)
class CbSync:
    """``cb[n](rcv a!=ack b)``: a circular buffer whose received and acked counters differ
    (only with ``TT_METAL_WATCHER_DUMP_ALL``)."""

    cb: int
    received: int
    acked: int


@dataclass(frozen=True, kw_only=True, slots=True)
class CoreLine:
    """One core's line in a dump: every field its era prints (None where it prints none)."""

    line_no: int
    era: LineFormat
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
        old = self.era in (LineFormat.CORE_2023, LineFormat.DEVICE_CORE_2024)
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


@dataclass(frozen=True, kw_only=True, slots=True)
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


@dataclass(frozen=True, kw_only=True, slots=True)
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


@dataclass(frozen=True, kw_only=True, slots=True)
class Run:
    """One ``At …s starting`` header (a file written with TT_METAL_WATCHER_APPEND has several)."""

    index: int
    line_no: int
    started_at: float | None = None
    processors: tuple[str, ...] = ()  # the legend's waypoint order, e.g. BRISC … TRISC2
    attached: tuple[int, ...] = ()
    detached: tuple[int, ...] = ()
    legend: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True, slots=True)
class Unparsed:
    """A line no rule read, kept as it was."""

    line_no: int
    text: str


@dataclass(frozen=True, kw_only=True, slots=True)
class WatcherLog:
    """A parsed watcher.log (as JSON: an ``lnrepro.hang.watcher-log/1`` document)."""

    schema: Literal["lnrepro.hang.watcher-log/1"] = SCHEMA
    runs: tuple[Run, ...] = ()
    dumps: tuple[Dump, ...] = ()
    kernel_names: dict[int, str] | None = None  # every k_id line and ``N: path`` line seen
    events: tuple[Event, ...] = ()  # every event, in or out of a dump
    unparsed: tuple[Unparsed, ...] = ()
    warnings: tuple[str, ...] = ()

    def kernel(self, kernel_id: int | None, dump: Dump | None = None) -> str | None:
        """The path of a kernel id: the dump's own map first, then any the log printed."""
        if kernel_id is None:
            return None
        if dump is not None and dump.kernel(kernel_id):
            return dump.kernel(kernel_id)
        return (self.kernel_names or {}).get(kernel_id)

    @property
    def eras(self) -> tuple[LineFormat, ...]:
        return tuple(dict.fromkeys(c.era for d in self.dumps for c in d.cores))

    def last_run_dumps(self) -> tuple[Dump, ...]:
        last = max((d.run for d in self.dumps), default=0)
        return tuple(d for d in self.dumps if d.run == last)
