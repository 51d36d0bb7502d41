"""Headlines of a tt-triage diagnosis beyond the callstack rules (issue 48's pastes): the cores
on different launch messages, BRISC polling in firmware for the others, RISCs whose places a cut
hid. Pure: words from what the text shows, never a culprit made up."""

from __future__ import annotations

import re
from collections import defaultdict

from lnrepro.hang.model import Frame

# Firmware's poll for the other RISCs: BRISC's kernel returned and it spins until NCRISC and the
# TRISCs say done (tenstorrent/tt-metal tt_metal/hw/firmware/src/tt-1xx/brisc.cc
# ``wait_ncrisc_trisc``, waypoint NTW; tt-2xx dm.cc ``wait_subordinates``): not its own hang.
SUBORDINATE_WAITS = ("wait_ncrisc_trisc", "wait_subordinates")
SUBORDINATE_WAIT_FILES = re.compile(r"(?:^|/)(?:brisc|dm)\.cc$")


def polls_subordinates(f: Frame) -> bool:
    """Frame 0 in firmware's wait for the other RISCs of the core."""
    return f.function.split("(")[0] in SUBORDINATE_WAITS and (
        f.file is None or SUBORDINATE_WAIT_FILES.search(f.file) is not None
    )


def polling_summary(who: list[str], call: str | None) -> str:
    """BRISC polling for the others, and none of them shown in a kernel."""
    shown = ", ".join(dict.fromkeys(who))
    return (
        f"{shown} polls in firmware's {call} (): its kernel returned and it waits for NCRISC "
        "and the TRISCs of its core to finish, but the text shows none of them in a kernel "
        "(idle, done or cut): it cannot tell which one holds it (paste their rows whole)"
    )


def blind_summary(cores: list[str], kernels: list[str]) -> str:
    """Several RISCs of a core run kernels at places the text does not show: any pick would be
    a guess (the role order would blame the reader)."""
    where = ", ".join(list(dict.fromkeys(cores))[:4])
    shown = ", ".join(list(dict.fromkeys(kernels))[:8])
    return (
        f"on {where} {len(kernels)} RISCs run kernels ({shown}) at places the text does not "
        "show and with no wait shown: it cannot tell which one hangs (paste whole lines: their "
        "callstacks tell)"
    )


def launch_messages(rd_ptrs: list[tuple[int, str]]) -> str:
    """The cores on different launch messages, named with theirs (``(rd_ptr, core)`` pairs):
    the -vv column RD PTR is the launch message a RISC runs (``mailboxes->launch_msg_rd_ptr``:
    the one-script tt-triage.py at 90b63baa50e2, DispatcherCoreData.launch_msg_rd_ptr in
    tools/triage's dispatcher_data.py, tenstorrent/tt-metal). Empty when the text has no such
    column or every core shows one value."""
    by_ptr: dict[int, dict[str, None]] = defaultdict(dict)
    for ptr, core in rd_ptrs:
        by_ptr[ptr][core] = None
    if len(by_ptr) < 2:
        return ""
    said = "; ".join(
        f"RD PTR {ptr} on {', '.join(list(cores)[:4])}"
        + (f" and {len(cores) - 4} more" if len(cores) > 4 else "")
        for ptr, cores in sorted(by_ptr.items(), key=lambda kv: len(kv[1]))
    )
    return (
        f"; the cores are on different launch messages (RD PTR): {said} (the fewest first: "
        "a core on another message runs another program than the rest)"
    )
