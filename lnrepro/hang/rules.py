"""The meaning of a hang on one core: which waiting processor is the cause and which only wait
on it. One rule for every reader (the watcher log's and tt-triage's), so that the same hang gets
the same primary group and key whichever text shows it. Pure.

The rule is the maintainers' method (tt-metal's CONTRIBUTING.md and watcher.rst at commit
6cbc3065ab387d1c0a6c0a2af278da42c983aa11): a waiting processor is explained by the processors
that feed it or drain it on the same core, upstream first (reader, then compute, then writer):

1. a processor stopped at an assert is the cause (tt-triage's dump_lightweight_asserts);
2. a processor with a kernel that the go message started but that never left init is the cause
   (BRISC first: it starts the others);
3. a consumer waiting for pages (``cb_wait_front``, the LLK's ``llk_wait_tiles``) whose
   producers on the core are all done is starved: the cause; with no producer on the core its
   pages come from elsewhere; with a producer itself blocked on space, the producer is the cause
   (each waits for the other); with a producer still busy, look further upstream;
4. a producer waiting for space (``cb_reserve_back``) whose consumers are done or waiting is the
   cause; with no consumer on the core, the consumer is elsewhere;
5. a NOC wait, or a wait no rule here knows, is the cause where it stands;
6. every other waiting processor on the core (the writer waiting for what compute never
   produced) waits *because of* the cause: a consequence, set aside as the cause's peer.

Each reader turns its evidence into :class:`Proc` views (status, what it waits in, role) and
reads the :class:`Verdict`; the words stay the reader's own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from lnrepro.hang.model import HangPattern
from lnrepro.hang.waypoints import is_noc_wait

ROLE_ORDER = {"reader": 0, "compute": 1, "writer": 2}

# The order of groups in a diagnosis: what stopped the device, then the waits whose cause is
# known, then what cannot be told. Shared by every reader.
RANK = {
    HangPattern.WATCHER_ERROR: 0,
    HangPattern.KERNEL_ASSERT: 0,
    HangPattern.PAUSED: 1,
    HangPattern.CONSUMER_STARVED: 2,
    HangPattern.PRODUCER_BLOCKED: 3,
    HangPattern.NOC_WAIT: 4,
    HangPattern.NEVER_STARTED: 5,
    HangPattern.OTHER_WAIT: 6,
    HangPattern.UNKNOWN: 7,
}

# statuses a Proc can have
DONE, WAITING, RUNNING, NEVER, UNKNOWN, ASSERTED = (
    "done",
    "waiting",
    "running",
    "never started",
    "unknown",
    "asserted",
)


# tt-metal's own dispatch and fabric kernels wait forever by design: by file name or directory,
# or by the kernel name tt-triage prints
DISPATCH_FILE = re.compile(
    r"(^|/)(cq_[a-z_]+|packet_[a-z_]+|[a-z_]*fabric[a-z_]*)\.cpp$|/impl/dispatch/kernels/"
)
DISPATCH_NAME = re.compile(
    r"^(?:cq_(?:prefetch|dispatch)\w*|packet_(?:mux|demux|queue)\w*|\w*fabric\w*)$"
)


def is_dispatch(name: str | None, file: str | None) -> bool:
    """Whether a kernel (by the name tt-triage prints, or its source file) is tt-metal's own
    dispatch or fabric kernel, which waits by design."""
    return bool(name and DISPATCH_NAME.match(name)) or bool(file and DISPATCH_FILE.search(file))


_DISPATCH_STEMS = ("cq_prefetch", "cq_dispatch", "packet_mux", "packet_demux", "packet_queue")


def may_be_dispatch(cut: str) -> bool:
    """Whether a kernel name cut short (``cq_disp``, what rich left of ``cq_dispatch``) can
    only be one of tt-metal's dispatch kernels: it is never read as the name, only kept from
    being blamed as a worker."""
    return (len(cut) >= 4 and any(s.startswith(cut) for s in _DISPATCH_STEMS)) or bool(
        DISPATCH_NAME.match(cut)
    )


def role(risc: str, *names: str | None) -> str:
    """reader, compute or writer: from the kernel's name or file (``reader`` / ``writer`` in the
    file name, a ``/compute/`` directory), else tt-metal's usual placement (reader on NCRISC,
    compute on the TRISCs, writer on BRISC)."""
    text = " ".join(PurePosixPath(n).name.lower() for n in names if n)
    paths = " ".join(n.lower() for n in names if n)
    if "reader" in text:
        return "reader"
    if "writer" in text:
        return "writer"
    if "/compute/" in paths or "compute" in text or risc.upper().startswith("TRISC"):
        return "compute"
    return {"NCRISC": "reader", "BRISC": "writer"}.get(risc.upper(), risc.lower())


def wait_of(waypoint: str | None) -> HangPattern | None:
    """What a waiting waypoint means for the rule: CWFW a consumer's wait, CRBW a producer's,
    a NOC code a NOC wait, another code ending in W another wait."""
    if waypoint == "CWFW":
        return HangPattern.CONSUMER_STARVED
    if waypoint == "CRBW":
        return HangPattern.PRODUCER_BLOCKED
    if is_noc_wait(waypoint):
        return HangPattern.NOC_WAIT
    if waypoint and len(waypoint) > 1 and waypoint.endswith("W"):
        return HangPattern.OTHER_WAIT
    return None


@dataclass(frozen=True, slots=True)
class Proc:
    """One processor with a kernel on one core, as the rule sees it (idle ones are left out)."""

    risc: str
    status: str  # done, waiting, running, never started, unknown, asserted
    wait: HangPattern | None  # for a waiting one: CONSUMER_STARVED, PRODUCER_BLOCKED, NOC_WAIT…
    role: str
    own: bool = False  # stopped past a waypoint of the user's own (not tt-metal's, not a wait)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The cause on one core: the pattern, which proc (an index into the procs given), the rule
    that decided (``starved``, ``starved-remote``, ``cycle``, ``blocked-done``,
    ``blocked-remote``, ``own-waypoint``, ``noc``, ``other``, ``never``, ``asserted``, ``chain``,
    ``no-waypoints``, ``running``), and the waiting procs set aside as consequences."""

    pattern: HangPattern
    culprit: int
    why: str
    consequences: tuple[int, ...] = ()


def explain(procs: Sequence[Proc], *, has_waypoints: bool = True) -> Verdict | None:
    """The cause of one core's hang; None when every proc is done (or there is none)."""
    if not procs or all(p.status == DONE for p in procs):
        return None
    order = sorted(
        range(len(procs)), key=lambda i: (ROLE_ORDER.get(procs[i].role, 3), procs[i].risc)
    )
    v = _explain(procs, order, has_waypoints)
    waiting = tuple(i for i in order if procs[i].status == WAITING and i != v.culprit)
    return Verdict(v.pattern, v.culprit, v.why, waiting)


def _explain(procs: Sequence[Proc], order: list[int], has_waypoints: bool) -> Verdict:
    asserted = [i for i in order if procs[i].status == ASSERTED]
    if asserted:
        return Verdict(HangPattern.KERNEL_ASSERT, asserted[0], "asserted")
    never = sorted(
        (i for i in order if procs[i].status == NEVER), key=lambda i: procs[i].risc != "BRISC"
    )
    if never:  # BRISC first: it is the one that starts the others
        return Verdict(HangPattern.NEVER_STARTED, never[0], "never")
    waiting = [i for i in order if procs[i].status == WAITING]
    for w in waiting:
        found = _waiting(w, procs, order)
        if found is not None:
            return found
    running = [i for i in order if procs[i].status == RUNNING]
    if waiting and not running:
        w = waiting[0]
        kind = procs[w].wait
        pattern = (
            kind
            if kind in (HangPattern.CONSUMER_STARVED, HangPattern.PRODUCER_BLOCKED)
            else HangPattern.OTHER_WAIT
        )
        return Verdict(pattern, w, "chain")
    unknown = [i for i in order if procs[i].status == UNKNOWN]
    who = (running or unknown or order)[0]
    return Verdict(HangPattern.UNKNOWN, who, "running" if has_waypoints else "no-waypoints")


def _waiting(w: int, procs: Sequence[Proc], order: list[int]) -> Verdict | None:
    me = procs[w]
    mine = ROLE_ORDER.get(me.role)
    if me.wait is HangPattern.CONSUMER_STARVED:
        producers = [
            i for i in order if mine is not None and ROLE_ORDER.get(procs[i].role, 9) < mine
        ]
        if not producers:
            return Verdict(HangPattern.CONSUMER_STARVED, w, "starved-remote")
        blocked = [
            i
            for i in producers
            if procs[i].status == WAITING and procs[i].wait is HangPattern.PRODUCER_BLOCKED
        ]
        if blocked:
            # a proc between them stopped at the user's own waypoint (AST1) is what both wait
            # behind: the reader and the writer are its consequences, not a cycle
            first = ROLE_ORDER.get(procs[blocked[0]].role, 9)
            own = [
                i
                for i in producers
                if procs[i].own
                and procs[i].status == RUNNING
                and ROLE_ORDER.get(procs[i].role, 9) > first
            ]
            if own:
                return Verdict(HangPattern.OTHER_WAIT, own[0], "own-waypoint")
            return Verdict(HangPattern.PRODUCER_BLOCKED, blocked[0], "cycle")
        if all(procs[i].status == DONE for i in producers):
            return Verdict(HangPattern.CONSUMER_STARVED, w, "starved")
        return None  # its producer is still busy or itself stuck: look upstream first
    if me.wait is HangPattern.PRODUCER_BLOCKED:
        consumers = [
            i for i in order if mine is not None and ROLE_ORDER.get(procs[i].role, -1) > mine
        ]
        if not consumers:
            return Verdict(HangPattern.PRODUCER_BLOCKED, w, "blocked-remote")
        if all(procs[i].status in (DONE, WAITING) for i in consumers):
            why = "blocked-done" if all(procs[i].status == DONE for i in consumers) else "cycle"
            return Verdict(HangPattern.PRODUCER_BLOCKED, w, why)
        return None
    if me.wait is HangPattern.NOC_WAIT:
        return Verdict(HangPattern.NOC_WAIT, w, "noc")
    return Verdict(HangPattern.OTHER_WAIT, w, "other")


def consequence_words(waiters: Sequence[Proc], cause_role: str | None = None) -> str:
    """The consequences in words, for the end of the cause's sentence ('' for none): "; the
    writer (BRISC) waits too, downstream of it: a consequence, not the cause". A waiter upstream
    of the cause (a reader in ``cb_reserve_back`` behind a compute stopped at a waypoint of the
    user's own) waits behind it, for space the cause never frees."""
    if not waiters:
        return ""
    mine = ROLE_ORDER.get(cause_role or "", 3)
    up = [p for p in waiters if ROLE_ORDER.get(p.role, 3) < mine]
    down = [p for p in waiters if p not in up]
    parts = []
    for side, where in ((down, "downstream of it"), (up, "behind it, for space it never frees")):
        if side:
            who = ", ".join(f"the {p.role} ({p.risc})" for p in side)
            parts.append(f"{who} {'waits' if len(side) == 1 else 'wait'} too, {where}")
    return f"; {'; '.join(parts)}: {'a consequence' if len(waiters) == 1 else 'consequences'}, not the cause"


__all__ = [
    "RANK",
    "ROLE_ORDER",
    "Proc",
    "Verdict",
    "consequence_words",
    "explain",
    "role",
    "wait_of",
]
