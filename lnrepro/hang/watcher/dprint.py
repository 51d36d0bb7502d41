"""DPRINT lines about circular buffers, picked out of a test's console output and attached to the
cores they came from. Pure.

tt-metal's DPRINT server prefixes every line with the device, the core and the processor when
``TT_METAL_DPRINT_PREPEND_DEVICE_CORE_RISC`` is on (its default): ``fmt::format("{}:{}:{}: ",
device_id, logical_core.coord.str(), risc_name)`` in tt_metal/impl/debug/dprint_server.cpp, the
processor abbreviated (BR, NC, TR0..2, ER/ER0/ER1). ``CoreCoord::str()`` has printed the core as
``(x=0,y=1)`` (tests/tt_metal/tt_metal/debug_tools/dprint/test_print_prepend_device_core_risc.cpp,
commit 90b63baa50e2602fd8ce5543fe2157d982e3b9e6: ``0:(x=?,y=?):BR: ``) and, in newer versions of
that test, as ``0-1`` (``0:?-?:BR: ``). Both are read. The coordinates are logical, as the
watcher's ``core(x=,y=)`` since 2024.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace

from lnrepro.hang.model import Coords, CoreGroup, CoreRef, Diagnosis, DprintLine

RISC_NAMES = {
    "BR": "BRISC",
    "NC": "NCRISC",
    "TR0": "TRISC0",
    "TR1": "TRISC1",
    "TR2": "TRISC2",
    "ER": "ERISC",
    "ER0": "ERISC",
    "ER1": "ERISC1",
    "DR": "DRISC",
}

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_PREFIX = re.compile(
    r"(?:^|[\s|\]])(\d{1,4}):(?:\(x=\s*(\d{1,4}),\s*y=\s*(\d{1,4})\)|(\d{1,4})-(\d{1,4})):"
    r"(BR|NC|TR[0-2]|ER[01]?|DR|[A-Z]{2,6}\d?):\s?(.*)$"
)
_OPS = re.compile(
    r"\b(cb_wait_front|cb_push_back|cb_reserve_back|cb_pop_front|cb_pages_"
    r"(?:available|reservable)_at_front|cb_pages_reservable_at_back)\b"
)
_CB_ID = re.compile(
    r"\bc_(?:in|out|intermed)?(\d{1,3})\b|\bcb(?:_id|_index)?\s*(?:\[|=|:|#|\s)\s*(\d{1,3})\b|"
    r"\bCBIndex::c_(\d{1,3})\b|\bcb_(\d{1,3})\b",
    re.IGNORECASE,
)
_CB_WORD = re.compile(r"\bcb\b|\bcbs?_|\bcircular buffer", re.IGNORECASE)


def parse_line(line: str, line_no: int = 0) -> DprintLine | None:
    """One console line as a DPRINT line, or None when it has no DPRINT prefix."""
    m = _PREFIX.search(_ANSI.sub("", line.rstrip("\r\n")))
    if m is None:
        return None
    x = m.group(2) if m.group(2) is not None else m.group(4)
    y = m.group(3) if m.group(3) is not None else m.group(5)
    text = m.group(7)
    ops = tuple(dict.fromkeys(_OPS.findall(text)))
    ids = tuple(dict.fromkeys(int(v) for g in _CB_ID.findall(text) for v in g if v))
    return DprintLine(
        line_no=line_no,
        device=int(m.group(1)),
        x=int(x),
        y=int(y),
        risc=RISC_NAMES.get(m.group(6), m.group(6)),
        text=text,
        cb_ids=ids,
        ops=ops,
    )


def parse_dprint(text: str, *, cb_only: bool = True) -> list[DprintLine]:
    """The DPRINT lines of a console log (only those about circular buffers unless ``cb_only``
    is False). Never raises."""
    out = []
    for no, line in enumerate(text.splitlines(), 1):
        d = parse_line(line, no)
        if d is not None and (not cb_only or d.about_cb or _CB_WORD.search(d.text)):
            out.append(d)
    return out


def for_cores(
    lines: Iterable[DprintLine], cores: Sequence[CoreRef], risc: str | None = None, cap: int = 8
) -> tuple[DprintLine, ...]:
    """The last ``cap`` lines printed by these cores (logical coordinates), the lines of ``risc``
    first when it printed any."""
    where = {(c.device or 0, c.x, c.y) for c in cores if c.coords is Coords.LOGICAL}
    mine = [d for d in lines if (d.device or 0, d.x, d.y) in where]
    if cap <= 0 or not mine:
        return ()
    own = [d for d in mine if risc is not None and d.risc == risc][-cap:]
    rest = [d for d in mine if d not in own]
    picked = own + (rest[-(cap - len(own)) :] if len(own) < cap else [])
    return tuple(sorted(picked, key=lambda d: d.line_no))


def attach(diag: Diagnosis, lines: Sequence[DprintLine], *, cap: int = 8) -> Diagnosis:
    """The diagnosis with each group carrying the DPRINT lines its cores printed (at most
    ``cap`` per group)."""
    if cap <= 0 or not lines:
        return diag
    groups: list[CoreGroup] = []
    for g in diag.groups:
        picked = for_cores(lines, g.cores, g.risc, cap)
        groups.append(replace(g, dprint=picked) if picked else g)
    return replace(diag, groups=tuple(groups))
