"""tt-metal's watcher.log, every era of it, read into typed records. Pure and tolerant: text in,
a :class:`~lnrepro.hang.watcher.records.WatcherLog` out; a line that cannot be read is kept in
``unparsed`` and malformed input gives warnings, never an exception. What each era of the file
looks like, line by line, is in :mod:`lnrepro.hang.watcher.formats` (with the tt-metal sources it follows).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from lnrepro.hang.watcher.formats import (
    ATTACH,
    CB,
    DUMP,
    DUMP_DONE,
    ERROR_WORDS,
    HEX,
    HID,
    KID,
    KIDS,
    LEGEND_PROCS,
    MAX_LINES,
    NAME_LINE,
    PAUSED,
    PAUSED_ITEM,
    PREFIX_CORE,
    PREFIX_DEVICE_CORE,
    PREFIX_NEW,
    RING,
    RISC_WORD,
    RMSG,
    SMSG,
    STACK,
    STARTING,
    TEXT_START,
    WAYPOINT,
)
from lnrepro.hang.watcher.records import (
    DRAM_RISCS,
    ETH_RISCS,
    TENSIX_RISCS,
    CbSync,
    CoreKind,
    CoreLine,
    Dump,
    Event,
    EventKind,
    LineFormat,
    RiscState,
    Run,
    Unparsed,
    WatcherLog,
)


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
            self.runs.append(Run(index=1, line_no=0))
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


def parse(text: str) -> WatcherLog:
    """Read watcher.log text. Never raises on any input."""
    st = _State([], [], [], [], [], {})
    st.uses_completed = DUMP_DONE.search(text) is not None
    lines = text.splitlines()
    if len(lines) > MAX_LINES:
        st.warnings.append(f"only the first {MAX_LINES} of {len(lines)} lines were read")
        lines = lines[:MAX_LINES]
    for no, raw in enumerate(lines, 1):
        _line(st, no, raw.replace("\x00", ""))
    st.close_dump()
    return WatcherLog(
        runs=tuple(st.runs),
        dumps=tuple(st.dumps),
        kernel_names=dict(st.names),
        events=tuple(st.events),
        unparsed=tuple(st.unparsed),
        warnings=tuple(st.warnings),
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
    if m := STARTING.search(line):
        st.close_dump()
        st.run_index += 1
        st.runs.append(Run(index=st.run_index, line_no=no, started_at=_num(m.group(1))))
        st.in_legend = True
        return
    if m := ATTACH.search(line):
        st.in_legend = False
        run = st.run()
        dev = int(m.group(3))
        if m.group(2) == "attach":
            st.runs[-1] = replace(run, attached=(*run.attached, dev))
        else:
            st.close_dump()
            st.runs[-1] = replace(run, detached=(*run.detached, dev))
        return
    if m := DUMP_DONE.search(line):
        if st.dump is not None and st.dump.number == int(m.group(1)):
            st.close_dump(_num(m.group(2)), closed=True)
        else:
            st.warnings.append(f"line {no}: 'completed' for Dump #{m.group(1)}, which was not open")
        return
    if m := DUMP.search(line):
        st.close_dump()
        st.in_legend = False
        st.run()
        st.dump = Dump(
            number=int(m.group(1)),
            line_no=no,
            run=st.run_index or 1,
            seconds=_num(m.group(2)),
        )
        st.dump_cores, st.dump_kernels, st.dump_events = [], {}, []
        return
    if line.strip() == "-----":
        return
    if st.in_legend:
        if PREFIX_NEW.search(line) or PREFIX_CORE.search(line) or KID.search(line):
            st.in_legend = False
        else:
            run = st.run()
            procs = run.processors
            if m := LEGEND_PROCS.search(line):
                procs = tuple(p.strip().upper() for p in m.group(1).split(",") if p.strip())
            st.runs[-1] = replace(run, processors=procs, legend=(*run.legend, line.strip()))
            return
    if m := KID.search(line):
        kid, path = int(m.group(1)), m.group(2)
        st.names[kid] = path
        if st.dump_kernels is not None:
            st.dump_kernels[kid] = path
        return
    if "No active devices" in line:
        st.add_event(Event(kind=EventKind.NO_DEVICES, text=line.strip(), line_no=no))
        return
    if m := PAUSED.search(line):
        _paused(st, no, m.group(1))
        return
    if "Stack usage summary" in line:  # a heading: the lines under it are read one by one
        return
    if STACK.search(line) and not PREFIX_NEW.search(line) and not PREFIX_CORE.search(line):
        kind = EventKind.STACK_OVERFLOW if "OVERFLOW" in line else EventKind.STACK
        rm = RISC_WORD.search(line)
        st.add_event(
            Event(
                kind=kind,
                text=line.strip(),
                line_no=no,
                risc=_risc_name(rm.group(1)) if rm else None,
            )
        )
        return
    if RING.search(line):
        st.in_ring = True
        _ring(st, line)
        return
    if st.in_ring and HEX.search(line) and not PREFIX_CORE.search(line):
        _ring(st, line)
        return
    if _core(st, no, line):
        return
    if m := NAME_LINE.search(line):  # kernel_names.txt pasted in: "N: path"
        st.names[int(m.group(1))] = m.group(2)
        return
    if st.dump is not None and st.dump.number == 0 and line.strip(" .\t0123456789|:"):
        st.close_dump()  # a reporter's own line ends a headerless excerpt (not a '...')
    st.unparsed.append(Unparsed(line_no=no, text=raw))


def _paused(st: _State, no: int, items: str) -> None:
    """A PAUSE event per core the line names, ``(x=1,y=2):brisc`` or ``1-2:brisc``; one with no
    core when it names none."""
    cores: list[tuple[int | None, int | None, str | None]] = [
        (int(m[1] or m[4]), int(m[2] or m[5]), _risc_name(m[3] or m[6]))
        for m in PAUSED_ITEM.finditer(items)
    ]
    for x, y, risc in cores or [(None, None, None)]:
        st.add_event(
            Event(kind=EventKind.PAUSE, text=items.strip(), line_no=no, x=x, y=y, risc=risc)
        )


def _ring(st: _State, line: str) -> None:
    values = tuple(int(h, 16) for h in HEX.findall(line))
    if st.dump_cores:
        last = st.dump_cores[-1]
        st.dump_cores[-1] = replace(last, ring_buffer=last.ring_buffer + values)


def _core(st: _State, no: int, line: str) -> bool:
    """A core line (or an error line with a core prefix); False when the line is neither."""
    virtual: tuple[int, int] | None = None
    phys: tuple[int, int] | None = None
    if m := PREFIX_NEW.search(line):
        device: int | None = int(m.group(1))
        kind = CoreKind(m.group(2))
        x, y = int(m.group(3)), int(m.group(4))
        if m.group(5) is not None:
            virtual = (int(m.group(5)), int(m.group(6)))
        if m.group(7) is not None:
            phys = (int(m.group(7)), int(m.group(8)))
        era = LineFormat.PHYS_2024 if virtual is None else LineFormat.VIRTUAL_2025
    elif m := PREFIX_DEVICE_CORE.search(line):
        device, kind, era = int(m.group(1)), CoreKind.WORKER, LineFormat.DEVICE_CORE_2024
        x, y = int(m.group(2)), int(m.group(3))
    elif m := PREFIX_CORE.search(line):
        device, kind, era = None, CoreKind.WORKER, LineFormat.CORE_2023
        x, y = int(m.group(1)), int(m.group(2))
    else:
        return False
    body = line[m.end() :]
    core = _body(st, no, era, device, kind, x, y, virtual, phys, body)
    if core.error:
        rm = RISC_WORD.search(core.error)
        if re.search(r"assert", core.error, re.I):
            ek = EventKind.ASSERT
        elif re.search(r"noc|access", core.error, re.I):
            ek = EventKind.NOC_ERROR
        else:
            ek = EventKind.ERROR
        st.add_event(
            Event(
                kind=ek,
                text=core.error,
                line_no=no,
                device=device,
                x=x,
                y=y,
                risc=_risc_name(rm.group(1)) if rm else None,
            )
        )
    if st.dump_cores is None and not core.error:
        # an excerpt pasted without its "Dump #N" header: its core lines are one dump (number 0)
        st.dump = Dump(number=0, line_no=no, run=st.run_index or 1)
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
    era: LineFormat,
    device: int | None,
    kind: CoreKind,
    x: int,
    y: int,
    virtual: tuple[int, int] | None,
    phys: tuple[int, int] | None,
    body: str,
) -> CoreLine:
    rm = RMSG.search(body)
    err = ERROR_WORDS.search(body)
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
            if WAYPOINT.match(t):
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
    hm = HID.search(body)
    sm = SMSG.search(body)
    smsg = sm.group(1) if sm and sm.group(1) and set(sm.group(1)) - {"?"} else None
    km = KIDS.search(body)
    k_ids = tuple(int(k) for k in km.group(1).split("|")) if km else ()
    cb_sync = tuple(
        CbSync(cb=int(a), received=int(b), acked=int(c)) for a, b, c in CB.findall(body)
    )
    if error is None:
        rest = body[cut:] if wp_text else body
        for pat in (RMSG, HID, SMSG, KIDS, CB, TEXT_START):
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
        line_no=no,
        era=_era(era, k_ids, hm),
        device=device,
        kind=kind,
        x=x,
        y=y,
        virtual=virtual,
        phys=phys,
        riscs=riscs,
        dispatch=dispatch,
        noc=noc,
        run=run,
        enables=enables,
        h_id=int(hm.group(1)) if hm else None,
        smsg=smsg,
        k_ids=k_ids,
        cb_sync=cb_sync,
        error=error,
        partial=partial,
        extra=extra,
    )


def _error_start(body: str, at: int) -> int:
    """Where an error's text starts: the processor word before it, when there is one."""
    words = list(RISC_WORD.finditer(body[:at]))
    return words[-1].start() if words else at


def _era(era: LineFormat, k_ids: tuple[int, ...], hm: re.Match[str] | None) -> LineFormat:
    if era is LineFormat.VIRTUAL_2025 and (
        len(k_ids) > 3 or (hm and hm.group(0).startswith("h_id: "))
    ):
        return LineFormat.NEWEST
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
            RiscState(
                risc=name,
                waypoint=wp,
                run=r,
                kernel_id=_kernel_id(name, i, k_ids, kind),
                enabled=_enabled(name, enables),
            )
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
