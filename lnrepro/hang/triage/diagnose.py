"""Which kernel hangs, waiting for what: a :class:`~lnrepro.hang.model.Diagnosis` from tt-triage's
rows (or a summary's). Pure.

The rules, from tt-triage's sources (tenstorrent/tt-metal ``tools/triage``) and how its authors
read it:

1. A RISC with no kernel (Kernel ID 0 or none, name N/A), waypoint ``W``/``GW`` and frame 0 in
   firmware ``main ()`` (``brisc.cc``, ``ncrisc.cc``, ``trisc.cc``; ``notify_brisc_and_wait``) is
   idle in firmware, waiting for a go: not to blame. ``Core is in reset`` is not running at all.
   A ``DONE`` go message is a finished core (dump_callstacks hides those without ``--all-cores``,
   ``dump_callstacks.py`` at d0f77e915dc3).
2. A RISC with a kernel waits where frame 0 and the waypoint say: ``cb_wait_front``/``CWFW`` or
   an LLK ``llk_wait_tiles`` (consumer starved), ``cb_reserve_back``/``CRBW`` (producer blocked),
   ``noc_semaphore_wait``/barriers/``NSW``… (a NOC wait), ``write_debug_waypoint<N>`` (N the
   waypoint's four ASCII bytes, little-endian), anything else ending in ``W`` (another wait).
   A RISC in ``dump_lightweight_asserts`` stopped at an ``ebreak``: that is the cause.
3. The kernel's file is the file of its ``kernel_main`` frame; its name is ``Kernel Name`` (from
   Inspector). Neither is ever made up: absent, the diagnosis says it cannot tell.
4. RISCs in the same state, with the same kernel and place, are one group; the circular buffers
   ``dump_circular_buffers`` (b98e5c66547e) shows on those cores go with it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import PurePosixPath

from lnrepro.hang import rules
from lnrepro.hang.model import (
    CbState,
    CoreGroup,
    CoreRef,
    Diagnosis,
    HangPattern,
    IdleRisc,
    PeerState,
    Progress,
    RiscStatus,
    Source,
)
from lnrepro.hang.triage.headlines import (
    SUBORDINATE_WAITS,
    blind_summary,
    launch_messages,
    polling_summary,
)
from lnrepro.hang.triage.output import (
    FORMAT_WORDS,
    Place,
    RiscRow,
    TriageEra,
    TriageOutput,
)
from lnrepro.hang.triage.said import SaidKind, said_summary
from lnrepro.hang.triage.states import State, blind, classify, core_ref
from lnrepro.hang.waypoints import WAYPOINT_MEANING, waypoint_meaning

ROLE_ORDER = rules.ROLE_ORDER


@dataclass(frozen=True, slots=True)
class _Cause:
    """The RISC the shared rule names as a core's cause, and those that only wait on it."""

    state: State
    pattern: HangPattern
    why: str
    consequences: tuple[State, ...]


_RULE_STATUS = {
    "done": rules.DONE,
    "waiting": rules.WAITING,
    "running": rules.RUNNING,
    "asserted": rules.ASSERTED,
    "never started": rules.NEVER,
}


def _own_waypoint(wp: str | None) -> bool:
    """A waypoint of the user's own (``AST1``): not one of tt-metal's, and not a wait code."""
    return bool(wp) and wp not in WAYPOINT_MEANING and not (wp or "").endswith("W")


def _cause(states: list[State]) -> _Cause | None:
    """One core's cause by the rule the watcher's reader uses (lnrepro.hang.rules): idle, reset
    and dispatch RISCs left out, a waiting RISC's wait from its frame 0 or waypoint."""
    if any(s.status == "dispatch" for s in states):
        return None
    mine = [s for s in states if s.status in _RULE_STATUS]
    procs = [
        rules.Proc(
            s.row.risc,
            _RULE_STATUS[s.status],
            s.pattern if s.status == "waiting" else None,
            rules.role(s.row.risc, s.row.kernel_name, s.kernel_file),
            s.status == "running" and _own_waypoint(s.waypoint),
        )
        for s in mine
    ]
    verdict = rules.explain(procs)
    if verdict is None:
        return None
    if verdict.why in ("running", "no-waypoints") and len(blind(mine)) > 1:
        return None  # several RISCs run where the text does not show: any pick is a guess
    return _Cause(
        mine[verdict.culprit],
        verdict.pattern,
        verdict.why,
        tuple(mine[i] for i in verdict.consequences),
    )


def _merge(rows: list[RiscRow]) -> list[RiscRow]:
    """One row per (core, RISC): dump_callstacks' first, a later script's only where it adds."""
    seen: dict[tuple[object, ...], RiscRow] = {}
    for r in rows:
        k = (r.place.key(), r.risc, r.line_no if r.risc.endswith("?") else 0)  # TRISC?: each
        if k not in seen or (not seen[k].frames and r.frames):
            seen[k] = r
    return list(seen.values())


def diagnose_triage(out: TriageOutput) -> Diagnosis:
    """Name the hang a tt-triage paste (or summary) shows."""
    rows = _merge(out.rows)
    asserts = {(a.place.key(), a.risc): a for a in out.asserts}
    for a in out.asserts:  # an assert whose RISC no callstack table showed
        if not any((r.place.key(), r.risc) == (a.place.key(), a.risc) for r in rows):
            rows.append(
                RiscRow(
                    a.place,
                    a.risc,
                    "dump_lightweight_asserts",
                    0,
                    None,
                    a.kernel_name,
                    frames=a.frames,
                )
            )
    states = [classify(r, asserts) for r in rows]
    by_core: dict[tuple[object, ...], list[State]] = defaultdict(list)
    for s in states:
        by_core[s.row.place.key()].append(s)

    # on each core the shared rule picks the cause; the RISCs that only wait on it are its peers
    causes: dict[tuple[object, ...], list[_Cause]] = {}
    for ss in by_core.values():
        cause = _cause(ss)
        if cause is not None:
            k = (
                cause.pattern,
                cause.why,
                cause.state.row.risc,
                cause.state.row.kernel_name,
                cause.state.kernel_file,
                cause.state.waypoint,
                cause.state.call,
            )
            causes.setdefault(k, []).append(cause)
    pairs = sorted(
        ((_group(m, by_core, out), m[0]) for m in causes.values()),
        key=lambda p: (rules.RANK.get(p[0].pattern, 9), -p[0].count),
    )
    built = [g for g, _ in pairs]

    idle = _idle(states)
    places = {s.row.place.key() for s in states}
    dispatch_places = {k for k, ss in by_core.items() if any(x.status == "dispatch" for x in ss)}
    idle_places = {
        k for k, ss in by_core.items() if all(x.pattern is None for x in ss)
    } - dispatch_places
    unknowns = _unknowns(out, built, states, pairs[0][1] if pairs else None)
    if built and (blind_cores := [ss for ss in by_core.values() if len(blind(ss)) > 1]):
        where = ", ".join(core_ref(ss[0].row.place).label() for ss in blind_cores[:4])
        unknowns += (
            f"which RISC hangs on {where}: several run kernels at places the text does not "
            "show (paste whole lines)",
        )
    events = list(out.events[:20])
    if states:  # else the headline says them
        events += [  # an assert with its core is the assert row's event already
            f"the summary quotes: {c.text}"
            for c in out.said[:10]
            if not (c.kind is SaidKind.ASSERT and out.asserts)
        ]
    for a in out.asserts:
        events.append(f"lightweight assert on {core_ref(a.place).label()} {a.risc}: {a.code}")
    if out.ops:
        events += [f"running operation: {op}" for op in out.ops[:5]]
    source = Source(
        format=out.format,
        era=out.era.value,
        described=FORMAT_WORDS[out.era],
        scripts=tuple(out.scripts),
        noise=tuple(out.noise),
    )
    if built:
        pattern, summary = built[0].pattern, built[0].sentence
    elif dispatching := [s for s in states if s.status == "dispatch"]:
        pattern = HangPattern.IDLE
        shown = ", ".join(
            dict.fromkeys(
                f"{_shown_name(s)} on {s.row.risc} of {core_ref(s.row.place).label()}"
                for s in dispatching
            )
        )
        summary = (
            f"only tt-metal's dispatch kernels run in what is shown ({shown}): they wait for "
            "commands by design, and no worker kernel shown is running, so it cannot tell which "
            "one hangs (paste dump_callstacks' whole table)"
        )
    elif hidden := [s for ss in by_core.values() if len(b := blind(ss)) > 1 for s in b]:
        pattern = HangPattern.UNKNOWN
        summary = blind_summary(
            [core_ref(s.row.place).label() for s in hidden],
            [f"{_shown_name(s)} ({s.row.risc})" for s in hidden],
        )
    elif polling := [s for s in states if s.call in SUBORDINATE_WAITS]:
        pattern = HangPattern.UNKNOWN
        summary = polling_summary(
            [f"{s.row.risc} on {core_ref(s.row.place).label()}" for s in polling], polling[0].call
        )
    elif states:
        pattern = HangPattern.IDLE
        summary = (
            "every RISC shown is idle in firmware, in reset or done: the hang is not in a "
            "worker kernel it shows (look at dispatch, ethernet cores, or the host)"
        )
    elif out.ops:
        pattern = HangPattern.UNKNOWN
        summary = (
            f"dump_running_operations shows what ran: {'; '.join(out.ops[:3])}; the text has no "
            "callstacks, so it cannot tell which kernel on those cores hangs (paste "
            "dump_callstacks' table)"
        )
    else:
        pattern = HangPattern.UNKNOWN
        summary = "the text shows no core: it cannot tell which kernel hangs"
        if out.empty:
            summary = (
                f"nothing to diagnose: the table of {', '.join(out.empty)} has its header and "
                "no row, so tt-triage showed no core there (no kernel was found running, or the paste "
                "lost the rows: paste the whole table)"
            )
        if out.failed_scripts:
            summary += f" (failed: {', '.join(dict.fromkeys(out.failed_scripts))})"
        elif out.events and not out.empty:  # only checks' failures: what they report
            summary = (
                f"the text shows no core, only what triage's checks report: "
                f"{'; '.join(out.events[:3])}; it cannot tell which kernel hangs from that "
                "(paste dump_callstacks' table)"
            )
        if out.said:
            pattern, summary = said_summary(out.said)
    summary += launch_messages(
        [(r.rd_ptr, core_ref(r.place).label()) for r in rows if r.rd_ptr is not None]
    )
    return Diagnosis(
        pattern=pattern,
        progress=Progress.SNAPSHOT,
        summary=summary,
        groups=tuple(built),
        cores_total=len(places),
        cores_idle=len(idle_places),
        cores_dispatch=len(dispatch_places),
        events=tuple(events),
        warnings=tuple(out.warnings[:20]),
        source=source,
        idle=idle,
        unknowns=unknowns,
    )


def _shown_name(s: State) -> str:
    """A kernel's name for the words: its name, else its file's stem, else what a cut left of
    the name, shown as cut (``cq_disp…``)."""
    if s.row.kernel_name or s.kernel_file:
        return s.row.kernel_name or PurePosixPath(s.kernel_file or "?").stem
    return f"{s.row.cut_name}…" if s.row.cut_name else "?"


def _peer(s: State) -> PeerState:
    state = {"reset": RiscStatus.IN_RESET, "asserted": RiscStatus.ASSERTED}.get(s.status)
    return PeerState(
        risc=s.row.risc,
        state=state or RiscStatus(s.status),
        waypoint=s.waypoint if s.status in ("waiting", "running") else None,
        kernel=s.kernel_file or s.row.kernel_name,
        role=rules.role(s.row.risc, s.row.kernel_name, s.kernel_file),
    )


def _cbs(members: list[State], out: TriageOutput, pattern: HangPattern) -> tuple[CbState, ...]:
    """The circular buffers shown for the waiting RISC on these cores: its own rows (else the
    core's), for a consumer the partly filled ones first (pages came, fewer than it waits for),
    else the empty ones; for a producer the full ones."""
    keys = {m.row.place.key() for m in members}
    mine = [c.state for c in out.cbs if c.place.key() in keys or _same_core(c.place, keys)]
    risc = members[0].row.risc
    pool = [c for c in mine if c.risc == risc] or mine
    prefer = {"CONSUMER_STARVED": ("partial", "empty"), "PRODUCER_BLOCKED": ("full", "partial")}
    for state in prefer.get(pattern.value, ("partial",)):
        chosen = [c for c in pool if c.state == state]
        if chosen:
            if pool is not mine:  # the same buffers as the other RISCs of the core see them
                ids = {c.cb for c in chosen}
                chosen += [c for c in mine if c.cb in ids and c not in chosen]
            return tuple(dict.fromkeys(chosen))[:8]
    return tuple(dict.fromkeys(pool))[:8]


def _same_core(p: Place, keys: set[tuple[object, ...]]) -> bool:
    """A CB row's place against the callstack rows' (the same core written with or without its
    noc0 coordinates)."""
    for k in keys:
        dev, kind, x, y, noc = k
        if (
            dev == p.device
            and kind == p.core_type
            and ((x is not None and (x, y) == (p.x, p.y)) or (noc is not None and noc == p.noc0))
        ):
            return True
    return False


def _group(
    causes: list[_Cause], by_core: dict[tuple[object, ...], list[State]], out: TriageOutput
) -> CoreGroup:
    cause = causes[0]
    members = [c.state for c in causes]
    first = cause.state
    row = first.row
    refs = tuple(dict.fromkeys(core_ref(m.row.place) for m in members))
    pattern = cause.pattern
    role = rules.role(row.risc, row.kernel_name, first.kernel_file)
    peers = tuple(_peer(s) for s in by_core[row.place.key()] if s is not first)
    cbs = _cbs(members, out, pattern)
    sentence = _sentence(first, pattern, role, len(refs), peers, cbs)
    rest = list(cause.consequences)
    if cause.why == "cycle":  # the consumer it blocks waits for its pages: each on the other
        mutual = [c for c in rest if c.pattern is HangPattern.CONSUMER_STARVED]
        rest = [c for c in rest if c not in mutual]
        for c in mutual:
            sentence += (
                f"; and {_who(c, rules.role(c.row.risc, c.row.kernel_name, c.kernel_file))} waits "
                f"{_where(c)} for pages: the two wait on each other (a deadlock), so both are "
                "named; check the order of their cb_reserve_back/cb_push_back and "
                "cb_wait_front/cb_pop_front"
            )
    sentence += rules.consequence_words(
        [
            rules.Proc(
                c.row.risc,
                rules.WAITING,
                c.pattern,
                rules.role(c.row.risc, c.row.kernel_name, c.kernel_file),
            )
            for c in rest
        ],
        role,
    )
    detail = ""
    if first.status == "asserted":
        detail = f"assert: {first.call}"
    elif row.message:
        detail = row.message
    return CoreGroup(
        pattern=pattern,
        cores=refs,
        risc=row.risc,
        waypoint=first.waypoint,
        kernel_id=row.kernel_id or None,
        kernel=first.kernel_file,
        role=role,
        peers=peers,
        sentence=sentence,
        detail=detail,
        name=row.kernel_name,
        frames=first.frames[:6],
        cbs=cbs,
        go_message=row.go_message,
    )


def _who(s: State, role: str) -> str:
    name = s.row.kernel_name
    file = PurePosixPath(s.kernel_file).name if s.kernel_file else None
    if name and file and PurePosixPath(file).stem != name:
        label = f"{role} kernel {name} ({file}, {s.row.risc})"
    elif name or file:
        label = f"{role} kernel {name or file} ({s.row.risc})"
    else:
        label = f"the {role} kernel (name not shown, {s.row.risc})"
    return label


def _where(s: State) -> str:
    f0 = s.frames[0] if s.frames and s.frames[0].index == 0 else None
    wp = f" (waypoint {s.waypoint})" if s.waypoint else ""
    if f0 is None:
        cut = " (its frame #0 is cut off)" if s.frames else ""
        return (
            f"at waypoint {s.waypoint}{cut}"
            if s.waypoint
            else f"at a place the text does not show{cut}"
        )
    at = f" at {PurePosixPath(f0.file).name} {f0.line}" if f0.file and f0.line is not None else ""
    return f"in {f0.function}{at}{wp}"


def _sentence(
    s: State,
    pattern: HangPattern,
    role: str,
    n: int,
    peers: tuple[PeerState, ...],
    cbs: tuple[CbState, ...],
) -> str:
    on = f"on {n} core{'s' if n != 1 else ''}"
    who = _who(s, role)
    own = [c for c in cbs if c.risc == s.row.risc] or list(cbs)  # as the waiting RISC sees them
    cb_text = "; ".join(c.text() for c in own[:3])
    cb_part = f"; {cb_text}" if cb_text else ""
    asserted = [p for p in peers if p.state == "stopped at an assert"]
    if pattern is HangPattern.KERNEL_ASSERT:
        return (
            f"{on} {who} stopped at a lightweight assert ({s.call}): the kernel hit ebreak and "
            "everything that waits on it hangs; read the assert's condition and its arguments"
        )
    if pattern is HangPattern.CONSUMER_STARVED:
        upstream = [p for p in peers if ROLE_ORDER.get(p.role or "", 9) < ROLE_ORDER.get(role, 0)]
        done = [p for p in upstream if p.state == "done"]
        if asserted:
            why = f"its producer on the same core ({asserted[-1].risc}) stopped at an assert"
        elif done:
            why = (
                f"while the {done[-1].role} ({done[-1].risc}) is done: it pushed fewer pages "
                "than this waits for"
            )
        else:
            why = "its producer is on another core, or waits itself"
        return (
            f"{on} {who} waits {_where(s)} for pages{cb_part}: {why}; compare the producer's "
            "cb_push_back counts with this cb_wait_front"
        )
    if pattern is HangPattern.PRODUCER_BLOCKED:
        return (
            f"{on} {who} waits {_where(s)} for free space{cb_part}: its consumer pops fewer "
            "pages than it pushes, or waits itself; compare cb_pop_front with cb_push_back"
        )
    if pattern is HangPattern.NEVER_STARTED:
        return (
            f"{on} {who} has a kernel and its go message says GO, but it is still at "
            f"{s.waypoint} ({waypoint_meaning(s.waypoint)}): the kernel never started; check "
            "that dispatch reached these cores and that no older program still runs there"
        )
    if pattern is HangPattern.NOC_WAIT:
        return (
            f"{on} {who} waits {_where(s)}: a NOC transfer or semaphore that never completes; "
            "check the addresses, the core coordinates and which core should signal it"
        )
    if pattern is HangPattern.OTHER_WAIT:
        meaning = waypoint_meaning(s.waypoint)
        return f"{on} {who} waits {_where(s)}: {meaning}"
    return (
        f"{on} {who} runs {_where(s)} and the text shows no wait: one reading cannot tell a "
        "loop from progress; run tt-triage again and compare the PCs"
    )


def _idle(states: list[State]) -> tuple[IdleRisc, ...]:
    by: dict[tuple[str, str], list[CoreRef]] = {}
    for s in states:
        if s.status in ("idle", "reset", "done", "dispatch"):
            refs = by.setdefault((s.row.risc, s.why_idle), [])
            where = core_ref(s.row.place)
            if where not in refs:
                refs.append(where)
    return tuple(
        IdleRisc(risc=risc, cores=tuple(refs), why=why) for (risc, why), refs in by.items()
    )


def _unknowns(
    out: TriageOutput, groups: list[CoreGroup], states: list[State], cause: _Cause | None
) -> tuple[str, ...]:
    u: list[str] = []
    g = groups[0] if groups else None
    cut = sorted({c for s in states for c in s.row.cut})
    if cut:
        u.append(
            f"what the cut columns held ({', '.join(cut)}): the table was cut at the right "
            "edge; paste whole lines (tt-triage writes them unwrapped to a file or pipe)"
        )
    first = sorted(states, key=lambda s: not (g is not None and s.row.risc == g.risc))
    short = list(dict.fromkeys(c for s in first for c in s.row.shortened))
    if short:
        more = f" and {len(short) - 4} more" if len(short) > 4 else ""
        u.append(
            f"what rich cut to fit the terminal ({', '.join(short[:4])}{more}): shown as cut, "
            "never read as values; paste tt-triage's output from a wider terminal or a file"
        )
    if g is not None:
        if not g.kernel:
            u.append(
                "the kernel's source file: no kernel_main frame with its file in the text (cut, "
                "or only the top frame shown: --full-callstack walks to kernel_main)"
            )
        if not g.name and not any("Name '" in c for c in short):
            u.append(
                "the kernel's name: the text prints none (Kernel Name is N/A without Inspector data)"
            )
        if not g.frames and g.pattern is not HangPattern.KERNEL_ASSERT:
            vv = out.era is TriageEra.ONE_SCRIPT
            why = " (the one-script era prints callstacks only with -vv)" if vv else ""
            u.append(f"the callstack: no frame for the waiting RISC{why}")
        if cause is not None and cause.why in ("starved-remote", "blocked-remote") and not g.peers:
            u.append(
                f"whether another RISC of these cores feeds {g.risc} or drains it: the text shows "
                f"no other RISC of them, so it cannot tell whether {g.risc} is the cause or "
                "waits on one (paste dump_callstacks' whole table)"
            )
        if g.pattern in (HangPattern.CONSUMER_STARVED, HangPattern.PRODUCER_BLOCKED):
            if not out.cbs:
                some = (
                    "whether its producer pushed some pages or none (a partly filled or an "
                    "empty circular buffer)"
                    if g.pattern is HangPattern.CONSUMER_STARVED
                    else "whether the circular buffer it waits on is full"
                )
                u.append(f"{some}: the text has no dump_circular_buffers table")
            partial = sorted({c.cb for c in g.cbs if c.state == "partial" and c.risc == g.risc})
            hint = (
                f" (CB {', '.join(map(str, partial))} is partly filled on {g.risc})"
                if partial
                else ""
            )
            u.append(f"which circular buffer it waits on: the frames carry no arguments{hint}")
    u.append(
        "whether it still moves: one reading of the device (run tt-triage twice, seconds apart)"
    )
    return tuple(dict.fromkeys(u))
