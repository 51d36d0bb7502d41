"""Which kernel hangs, waiting for what: a :class:`~lnrepro.hang.model.Diagnosis` from a parsed
watcher.log. Pure.

How a dump is read (the maintainers' method, tt-metal's CONTRIBUTING.md and watcher.rst at commit
6cbc3065ab387d1c0a6c0a2af278da42c983aa11, turned into rules):

1. The last *complete* dump of the last run is the state to explain; the dumps before it say
   whether anything still moves (:class:`~lnrepro.hang.model.Progress`).
2. Idle cores (``GW`` and ``W`` everywhere, a finished go message, kernel ids all 0) and
   dispatch cores (they wait forever by design) are counted and set aside.
3. On each remaining core every processor with a kernel is *done*, *waiting* (a waypoint ending
   in ``W``), *running* (past its last waypoint) or *never started* (the go message says go, the
   processor is still at init or its go wait). A waiting processor is explained by the state of
   the processors that feed it or drain it on the same core, upstream first: reader, then
   compute, then writer (the roles come from the kernel file names, else tt-metal's usual
   placement: reader on NCRISC, compute on the TRISCs, writer on BRISC).
4. Cores whose explanation is the same are one :class:`~lnrepro.hang.model.CoreGroup`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from lnrepro.hang import rules
from lnrepro.hang.model import (
    CoreGroup,
    CoreRef,
    Diagnosis,
    DprintLine,
    HangPattern,
    HangSource,
    PeerState,
    Progress,
    RiscStatus,
    Source,
)
from lnrepro.hang.watcher.dprint import attach
from lnrepro.hang.watcher.formats import FORMAT_WORDS
from lnrepro.hang.watcher.records import (
    CoreKind,
    CoreLine,
    Dump,
    Event,
    EventKind,
    LineFormat,
    RiscState,
    WatcherLog,
)
from lnrepro.hang.waypoints import WAYPOINT_CALL, waypoint_meaning

BRISC_DONE = frozenset({"KD", "D", "NTW", "NTD"})
SUB_DONE = frozenset({"KD", "D"})
NOT_STARTED = frozenset({"I", "X"})
ROLE_ORDER = rules.ROLE_ORDER
DISPATCH_WAYPOINTS = frozenset({"HQW", "UAPW"})
RANK = rules.RANK
COMPARE_DUMPS = 3  # how many complete dumps (the last one included) say stuck or slow


@dataclass(frozen=True, slots=True)
class _Risc:
    """A processor with a kernel, as the rules see it."""

    risc: str
    status: str  # done, waiting, running, never started, idle, unknown
    waypoint: str | None
    kernel_id: int | None
    kernel: str | None
    role: str

    def peer(self) -> PeerState:
        wp = self.waypoint if self.status in ("waiting", "running", "never started") else None
        return PeerState(
            risc=self.risc,
            state=RiscStatus(self.status),
            waypoint=wp,
            kernel=self.kernel,
            role=self.role,
        )


@dataclass(frozen=True, slots=True)
class _Finding:
    pattern: HangPattern
    culprit: _Risc | None
    peers: tuple[PeerState, ...]
    sentence_key: str  # which sentence, with what it depends on
    detail: str = ""
    after: str = ""  # the consequences, in words (lnrepro.hang.rules)


def diagnose(
    log: WatcherLog, dprint: Sequence[DprintLine] = (), *, max_dprint: int = 8
) -> Diagnosis:
    """Name the hang the log shows. ``dprint``: DPRINT lines of the same run (see
    :func:`lnrepro.hang.watcher.dprint.parse_dprint`), attached to the groups of the cores that
    printed them, at most ``max_dprint`` per group."""
    warnings = list(log.warnings[:20])
    dumps = log.last_run_dumps()
    complete = [d for d in dumps if d.complete and d.cores]
    chosen = complete[-1] if complete else (dumps[-1] if dumps else None)
    if chosen is not None and not chosen.complete:
        warnings.append(f"no complete dump: Dump #{chosen.number} was read as it is")
    last_events = _events(log, dumps)
    error_groups = _error_groups(last_events)
    if chosen is None:
        pattern = HangPattern.WATCHER_ERROR if error_groups else HangPattern.UNKNOWN
        summary = (
            error_groups[0].sentence
            if error_groups
            else "the log has no dump: the watcher never polled (set TT_METAL_WATCHER=<seconds>)"
        )
        return _finish(
            Diagnosis(
                pattern=pattern,
                progress=Progress.NO_DUMP,
                summary=summary,
                groups=tuple(error_groups),
                events=_event_texts(last_events),
                warnings=tuple(warnings),
            ),
            dprint,
            max_dprint,
            log,
        )

    progress, compared = _progress(complete, chosen)
    findings: dict[tuple[object, ...], tuple[_Finding, list[CoreRef]]] = {}
    idle = dispatch = 0
    h_ids: dict[CoreRef, int] = {}
    for core in chosen.cores:
        if core.error is not None:
            continue  # reported as an event
        if _is_dispatch(log, chosen, core):
            dispatch += 1
            continue
        found = _explain(log, chosen, core)
        if found is None:
            idle += 1
            continue
        ref = CoreRef(
            device=core.device,
            x=core.x,
            y=core.y,
            core_type=core.kind.value,
            coords=core.coords,
        )
        key = (
            found.pattern,
            found.culprit,
            found.peers,
            found.sentence_key,
            found.detail,
            found.after,
        )
        findings.setdefault(key, (found, []))[1].append(ref)
        if core.h_id is not None:
            h_ids[ref] = core.h_id

    groups = [*error_groups, *_pause_groups(last_events)]
    for found, refs in findings.values():
        groups.append(_group(found, tuple(refs)))
    behind = _left_behind(h_ids)
    groups.sort(key=lambda g: (not _all_in(g, behind), RANK.get(g.pattern, 9), -g.count))
    if groups and _all_in(groups[0], behind):
        g, newest = groups[0], max(h_ids.values())
        older = sorted({h_ids[c] for c in g.cores})
        note = (
            f"left behind on an older program (h_id {', '.join(map(str, older))}, while "
            f"{len(h_ids) - len(behind)} other core(s) are at h_id {newest}): this core is the "
            "hang, the others wait on it; "
        )
        groups[0] = replace(g, sentence=note + g.sentence)
    if not chosen.cores:
        warnings.append(f"Dump #{chosen.number} lists no core")
    if groups:
        pattern = groups[0].pattern
        summary = groups[0].sentence
    elif chosen.cores:
        pattern = HangPattern.IDLE
        summary = (
            "every worker core is idle or finished: the hang is not in a worker kernel (look at "
            "dispatch, the host side, or ethernet cores)"
        )
    else:
        pattern, summary = HangPattern.UNKNOWN, "the log alone cannot tell: its dump lists no core"
    if progress is Progress.SLOW and pattern is not HangPattern.WATCHER_ERROR:
        summary = "not hung yet, the state still changes between dumps; at the last one " + summary
    diag = Diagnosis(
        pattern=pattern,
        progress=progress,
        summary=summary,
        groups=tuple(groups),
        dump=chosen.number,
        dumps_compared=compared,
        cores_total=len(chosen.cores),
        cores_idle=idle,
        cores_dispatch=dispatch,
        events=_event_texts(last_events),
        warnings=tuple(warnings),
    )
    return _finish(diag, dprint, max_dprint, log)


def _left_behind(h_ids: dict[CoreRef, int]) -> set[CoreRef]:
    """The cores still on an older program than most (a lower h_id, the host's program id; PR
    tenstorrent/tt-metal#15717 added it to the core line to tell stale launch messages apart,
    issue #19423): fewer than half of the cores with an id, all below the newest id."""
    if len(set(h_ids.values())) < 2:
        return set()
    newest = max(h_ids.values())
    older = {c for c, h in h_ids.items() if h < newest}
    return older if len(older) * 2 < len(h_ids) else set()


def _all_in(g: CoreGroup, cores: set[CoreRef]) -> bool:
    return bool(cores) and all(c in cores for c in g.cores)


def _finish(diag: Diagnosis, dprint: Sequence[DprintLine], cap: int, log: WatcherLog) -> Diagnosis:
    diag = replace(diag, source=source(log), unknowns=_unknowns(diag, log))
    return attach(diag, dprint, cap=cap) if dprint else diag


def source(log: WatcherLog) -> Source:
    """The format and eras of a parsed log, in words."""
    eras = log.eras
    era = ", ".join(e.value for e in eras) or "no core line"
    words = "; ".join(FORMAT_WORDS[e] for e in eras) or "no core line of any era"
    return Source(format=HangSource.WATCHER_LOG, era=era, described=words)


def _unknowns(diag: Diagnosis, log: WatcherLog) -> tuple[str, ...]:
    """What the log cannot tell about the groups it names."""
    out = [
        f"which file kernel id {g.kernel_id} is: the text has no k_id[{g.kernel_id}] "
        "line (paste the dump's k_id lines or kernel_names.txt)"
        for g in diag.groups
        if g.kernel_id and not g.kernel
    ]
    if diag.progress is Progress.SINGLE_DUMP:
        out.append("whether it still moves: one dump only (paste two or more dumps in a row)")
    if any(
        c.era in (LineFormat.CORE_2023, LineFormat.DEVICE_CORE_2024)
        for d in log.dumps
        for c in d.cores
    ):
        out.append("logical core coordinates: lines of this era print physical ones")
    return tuple(dict.fromkeys(out))


# ------------------------------------------------------------------------------- over time
def _progress(complete: list[Dump], chosen: Dump) -> tuple[Progress, tuple[int, ...]]:
    upto = [d for d in complete if d.line_no <= chosen.line_no][-COMPARE_DUMPS:]
    if len(upto) < 2:
        return Progress.SINGLE_DUMP, tuple(d.number for d in upto) or (chosen.number,)
    states = [{c.key: c.state_key() for c in d.cores if c.error is None} for d in upto]
    stuck = all(s == states[-1] for s in states)
    return (Progress.STUCK if stuck else Progress.SLOW), tuple(d.number for d in upto)


# ------------------------------------------------------------------------------- events
def _events(log: WatcherLog, dumps: tuple[Dump, ...]) -> list[Event]:
    """The events of the last run: those inside its dumps and those after its first line."""
    if not dumps:
        return list(log.events)
    first = log.runs[-1].line_no if log.runs else 0
    return [e for e in log.events if e.line_no >= first]


def _event_texts(events: list[Event]) -> tuple[str, ...]:
    keep = [e for e in events if e.kind is not EventKind.STACK]
    out = [
        f"{e.kind.value}{'' if e.x is None else f' on core ({e.x},{e.y})'}: {e.text}"
        for e in keep[:10]
    ]
    if len(keep) > 10:
        out.append(f"... and {len(keep) - 10} more")
    return tuple(out)


def _error_groups(events: list[Event]) -> list[CoreGroup]:
    kinds = (EventKind.ASSERT, EventKind.NOC_ERROR, EventKind.ERROR, EventKind.STACK_OVERFLOW)
    by: dict[tuple[str | None, str], list[CoreRef]] = {}
    for e in events:
        if e.kind not in kinds:
            continue
        refs = by.setdefault((e.risc, e.text), [])
        if e.x is not None and e.y is not None:
            ref = CoreRef(device=e.device, x=e.x, y=e.y)
            if ref not in refs:
                refs.append(ref)
    out = []
    for (risc, text), refs in by.items():
        where = f"on {_cores(len(refs))} " if refs else ""
        out.append(
            CoreGroup(
                pattern=HangPattern.WATCHER_ERROR,
                cores=tuple(refs),
                risc=risc,
                detail=text,
                sentence=f"the watcher stopped the device {where}: {text}".replace(" :", ":"),
            )
        )
    return out


def _pause_groups(events: list[Event]) -> list[CoreGroup]:
    refs = tuple(
        dict.fromkeys(
            CoreRef(device=e.device, x=e.x, y=e.y)
            for e in events
            if e.kind is EventKind.PAUSE and e.x is not None and e.y is not None
        )
    )
    if not refs:
        return []
    risc = next((e.risc for e in events if e.kind is EventKind.PAUSE and e.risc), None)
    sentence = (
        f"{_cores(len(refs))} wait in PAUSE() for ENTER on the test's console: press "
        "it, or rebuild without the PAUSE"
    )
    return [CoreGroup(pattern=HangPattern.PAUSED, cores=refs, risc=risc, sentence=sentence)]


# ------------------------------------------------------------------------------- one core
def _enabled(r: RiscState) -> bool | None:
    if r.enabled is not None:
        return r.enabled
    if r.kernel_id is not None:
        return r.kernel_id != 0
    return None


def _status(core: CoreLine, r: RiscState, enabled: bool | None) -> str:
    wp, go = r.waypoint, core.run == "G"
    main = r is core.riscs[0]
    if wp is None:
        state = core.run if main else r.run
        return {"D": "done", "G": "running"}.get(state or "", "unknown")
    if main:
        if wp in BRISC_DONE:
            return "done"
        if wp == "GW" or wp in NOT_STARTED:
            return "never started" if go and enabled else "idle"
    else:
        if wp in SUB_DONE:
            return "done"
        if wp == "W":
            if r.run == "D":
                return "done" if enabled and go else "idle"
            if r.run == "G" and enabled:
                return "never started"
            return "idle" if not go else "unknown"
        if wp in NOT_STARTED:
            return "never started" if go and enabled else "idle"
    if len(wp) > 1 and wp.endswith("W"):
        return "waiting"
    return "running"


def _is_dispatch(log: WatcherLog, dump: Dump, core: CoreLine) -> bool:
    return any(
        r.waypoint in DISPATCH_WAYPOINTS
        or rules.is_dispatch(None, log.kernel(r.kernel_id, dump) if r.kernel_id else None)
        for r in core.riscs
    )


def _explain(log: WatcherLog, dump: Dump, core: CoreLine) -> _Finding | None:
    """Why this core does not finish; None when it is idle."""
    if core.kind in (CoreKind.IDLE_ETH, CoreKind.DRAM) and not core.has_waypoints:
        return None
    if core.k_ids and not any(core.k_ids):
        return None  # no kernel anywhere on the core
    riscs: list[_Risc] = []
    for r in core.riscs:
        enabled = _enabled(r)
        if enabled is False:
            continue
        status = _status(core, r, enabled)
        if status == "idle" or (enabled is None and status not in ("waiting", "running")):
            continue
        path = log.kernel(r.kernel_id, dump)
        riscs.append(_Risc(r.risc, status, r.waypoint, r.kernel_id, path, rules.role(r.risc, path)))
    if not riscs:
        return None
    if all(r.status == "done" for r in riscs):
        return None  # finished
    procs = [
        rules.Proc(
            r.risc, r.status, rules.wait_of(r.waypoint) if r.status == "waiting" else None, r.role
        )
        for r in riscs
    ]
    verdict = rules.explain(procs, has_waypoints=core.has_waypoints)
    if verdict is None:
        return None
    culprit = riscs[verdict.culprit]
    order = sorted(riscs, key=lambda r: (ROLE_ORDER.get(r.role, 3), r.risc))
    peers = tuple(p.peer() for p in order if p is not culprit)
    after = rules.consequence_words([procs[i] for i in verdict.consequences], culprit.role)
    return _Finding(verdict.pattern, culprit, peers, verdict.why, after=after)


# ------------------------------------------------------------------------------- words
def _cores(n: int) -> str:
    return f"{n} core" if n == 1 else f"{n} cores"


def _who(r: _Risc) -> str:
    name = PurePosixPath(r.kernel).name if r.kernel else None
    kernel = f"{r.role} kernel {name}" if name else f"the {r.role} kernel"
    return f"{kernel} ({r.risc})"


def _peer_words(
    peers: tuple[PeerState, ...], roles: tuple[str, ...], state: str | None, *, upstream: bool
) -> str:
    """The nearest peer in ``roles`` as "the compute (TRISC2, kernel.cpp)": upstream the last
    (a writer is fed by the packer, TRISC2), downstream the first (a reader by the unpacker)."""
    chosen = [p for p in peers if p.role in roles and (state is None or p.state == state)]
    if not chosen:
        return "its peer"
    ordered = sorted(chosen, key=lambda p: (ROLE_ORDER.get(p.role or "", 3), p.risc))
    p = ordered[-1] if upstream else ordered[0]
    name = PurePosixPath(p.kernel).name if p.kernel else None
    return f"the {p.role} ({p.risc}{', ' + name if name else ''})"


def _group(found: _Finding, refs: tuple[CoreRef, ...]) -> CoreGroup:
    r = found.culprit
    n = _cores(len(refs))
    key = found.sentence_key
    if r is None:
        return CoreGroup(
            pattern=found.pattern,
            cores=refs,
            peers=found.peers,
            sentence=f"on {n} the log alone cannot tell",
        )
    upstream = tuple(k for k, v in ROLE_ORDER.items() if v < ROLE_ORDER.get(r.role, 0))
    downstream = tuple(k for k, v in ROLE_ORDER.items() if v > ROLE_ORDER.get(r.role, 3))
    wp = r.waypoint or "?"
    call = WAYPOINT_CALL.get(wp, wp)
    if key == "starved":
        producer = _peer_words(found.peers, upstream, "done", upstream=True)
        s = (
            f"on {n} {_who(r)} waits in cb_wait_front (CWFW) while {producer} is done: the "
            "producer pushed fewer pages than the consumer waits for; compare the page counts "
            "of its cb_push_back calls with this cb_wait_front, per block and in total"
        )
    elif key == "starved-remote":
        s = (
            f"on {n} {_who(r)} waits in cb_wait_front (CWFW) and nothing on these cores "
            "produces for it: the pages come from another core or the host; check that sender's "
            "pushes and the semaphores that signal them"
        )
    elif key == "cycle":
        consumer = _peer_words(found.peers, downstream, "waiting", upstream=False)
        s = (
            f"on {n} {_who(r)} waits in cb_reserve_back (CRBW) for space while {consumer} "
            "waits for pages: each waits for the other, so one call asks for more pages than "
            "the circular buffer holds; check the CB's capacity in pages against the "
            "cb_reserve_back and cb_wait_front counts"
        )
    elif key == "blocked-done":
        consumer = _peer_words(found.peers, downstream, "done", upstream=False)
        s = (
            f"on {n} {_who(r)} waits in cb_reserve_back (CRBW) for space in a full circular "
            f"buffer while {consumer} is done: the consumer pops fewer pages than the producer "
            "pushes; compare its cb_pop_front counts with the cb_push_back counts"
        )
    elif key == "blocked-remote":
        s = (
            f"on {n} {_who(r)} waits in cb_reserve_back (CRBW) for space and nothing on these "
            "cores drains that buffer: its consumer is on another core; check that consumer "
            "and the signal that frees the pages"
        )
    elif key == "noc":
        s = (
            f"on {n} {_who(r)} waits in {call} ({wp}): a NOC transfer or semaphore that never "
            "completes; check the addresses and core coordinates it uses (the watcher's NOC "
            "sanitizer stops bad ones) and which core is meant to signal it"
        )
    elif key == "never":
        s = (
            f"on {n} {r.risc} has {_who(r).split(' (')[0]} and the go message says go, but it "
            f"is still at {wp} ({waypoint_meaning(wp)}): the kernel never started; compare the "
            "cores' h_id (an older program still running) and check that dispatch reached them"
        )
    elif key == "chain":
        s = (
            f"on {n} {_who(r)} waits at {wp} ({waypoint_meaning(wp)}) and so does every peer "
            "it depends on: follow the chain to the buffer whose counts disagree"
        )
    elif key == "other":
        s = (
            f"on {n} {_who(r)} is blocked at waypoint {wp}: a wait with no rule here; grep the "
            f'kernel and firmware sources for WAYPOINT("{wp}")'
        )
    elif key == "no-waypoints":
        s = (
            f"on {n} the log has no waypoints (firmware built without watcher) and {r.risc} "
            f"({r.role}) is {r.status}: the log alone cannot tell where it waits; rerun with "
            "TT_METAL_WATCHER set"
        )
    else:
        hint = ""
        if r.role == "compute" and any(
            p.role == "reader" and p.state == "done" for p in found.peers
        ):
            hint = (
                " (on Wormhole a compute cb_wait_front sets no waypoint, so a starved compute "
                "kernel looks like this; put DPRINTs around its CB calls)"
            )
        s = (
            f"on {n} {_who(r)} runs past its last waypoint {wp}: the log "
            f"alone cannot tell what it waits for{hint}"
        )
    return CoreGroup(
        pattern=found.pattern,
        cores=refs,
        risc=r.risc,
        waypoint=r.waypoint,
        kernel_id=r.kernel_id,
        kernel=r.kernel,
        role=r.role,
        peers=found.peers,
        sentence=s + found.after,
        detail=found.detail,
    )


def counts(diag: Diagnosis) -> Counter[HangPattern]:
    """Cores per pattern (a group's cores counted once)."""
    c: Counter[HangPattern] = Counter()
    for g in diag.groups:
        c[g.pattern] += g.count
    return c
