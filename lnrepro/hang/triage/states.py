"""Each RISC row of a tt-triage paste (or summary) classified: idle, in reset, done, a dispatch
kernel, never started, waiting (on what), asserted, or running. Pure. The rules are those of
:mod:`lnrepro.hang.triage.diagnose`'s docstring (1 to 3), from tt-triage's sources
(tenstorrent/tt-metal ``tools/triage``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from lnrepro.hang import rules
from lnrepro.hang.model import Coords, CoreRef, Frame, HangPattern
from lnrepro.hang.triage.headlines import polls_subordinates
from lnrepro.hang.triage.output import AssertRow, Place, RiscRow, waypoint_of
from lnrepro.hang.waypoints import is_noc_wait

FIRMWARE_FILES = re.compile(
    r"(?:^|/)(?:brisc|ncrisc|trisc|erisc|idle_erisc|active_erisc|subordinate_\w+)\.cc$"
)
NOT_STARTED = frozenset({"I", "X"})  # firmware init / the host's value before it ran
FIRMWARE_FUNCS = ("main", "notify_brisc_and_wait", "wait_for_go_message")
CONSUMER_CALLS = ("cb_wait_front", "llk_wait_tiles", "wait_tiles")
PRODUCER_CALLS = ("cb_reserve_back", "llk_wait_for_free_tiles", "wait_for_free_tiles")
NOC_CALLS = (
    "noc_semaphore_wait",
    "noc_async_read_barrier",
    "noc_async_write_barrier",
    "noc_async_atomic_barrier",
    "noc_async_full_barrier",
    "ncrisc_noc_",
)
KERNEL_ENTRY = ("kernel_main", "MAIN", "run_kernel", "_Z11kernel_mainv")


@dataclass(frozen=True, slots=True)
class State:
    row: RiscRow
    status: str  # idle, reset, done, waiting, asserted, running
    pattern: HangPattern | None
    waypoint: str | None
    call: str | None  # the wait's function, from frame 0
    kernel_file: str | None
    frames: tuple[Frame, ...]
    why_idle: str = ""


def core_ref(p: Place) -> CoreRef:
    if p.x is not None and p.y is not None:
        return CoreRef(device=p.device, x=p.x, y=p.y, core_type=p.core_type, noc0=p.noc0)
    x, y = p.noc0 or (0, 0)
    return CoreRef(device=p.device, x=x, y=y, core_type=p.core_type, coords=Coords.NOC0)


def kernel_file(frames: tuple[Frame, ...], path: str | None) -> str | None:
    for f in frames:
        if f.function.split("(")[0] in KERNEL_ENTRY and f.file:
            return f.file
    if path and re.search(r"\.(cpp|cc|c|hpp|h)$", path):
        return path
    return None


def is_firmware(f: Frame) -> bool:
    return f.function.split("(")[0] in FIRMWARE_FUNCS and (
        f.file is None or FIRMWARE_FILES.search(f.file) is not None
    )


def classify(row: RiscRow, asserts: dict[tuple[tuple[object, ...], str], AssertRow]) -> State:
    frames = row.frames
    f0 = frames[0] if frames and frames[0].index == 0 else None  # frame #0 cut: not known
    fw_wp = row.waypoint or (waypoint_of(f0.function) if f0 else None)
    kfile = kernel_file(frames, row.kernel_path)
    has_kernel = bool(row.kernel_id) or row.kernel_name is not None or kfile is not None
    key = (row.place.key(), row.risc)

    def aside(status: str, why: str, call: str | None = None) -> State:
        """A RISC that is not waiting: reset, done, a dispatch kernel."""
        return State(row, status, None, fw_wp, call, kfile, frames, why)

    if key in asserts:
        a = asserts[key]
        fr = a.frames or frames
        return State(
            row,
            "asserted",
            HangPattern.KERNEL_ASSERT,
            fw_wp,
            a.code,
            kernel_file(fr, None) or kfile,
            fr,
        )
    if row.message and "reset" in row.message.lower():
        return aside("reset", "in reset")
    if row.go_message == "DONE":
        return aside("done", "its go message is DONE")
    in_fw = f0 is not None and is_firmware(f0)
    if rules.is_dispatch(row.kernel_name, kfile) or (
        row.cut_name is not None and rules.may_be_dispatch(row.cut_name)
    ):
        return aside("dispatch", "a dispatch kernel: it waits for commands by design")
    if (
        has_kernel
        and row.go_message == "GO"
        and (fw_wp in NOT_STARTED or (row.risc == "BRISC" and fw_wp == "GW"))
    ):  # the watcher rules' never started: a kernel and a go, still at init or its go wait
        return State(row, "never started", HangPattern.NEVER_STARTED, fw_wp, None, kfile, frames)
    if f0 is not None and polls_subordinates(f0):
        return aside(
            "done",
            f"its kernel returned: firmware polls in {f0.function} () until NCRISC and the "
            "TRISCs finish",
            f0.function,
        )
    if has_kernel and in_fw and f0 is not None and not row.said_idle:  # back in firmware: returned
        return aside("done", f"its kernel returned: back in firmware {f0.function} ()")
    if has_kernel and f0 is None and fw_wp in ("W", "GW") and not row.said_idle:
        return aside("done", f"its kernel returned: waypoint {fw_wp}, firmware's wait")
    if row.said_idle or (not has_kernel and (in_fw or (f0 is None and fw_wp in (None, "W", "GW")))):
        why = []
        if row.kernel_id == 0:
            why.append("kernel id 0")
        if fw_wp:
            why.append(f"waypoint {fw_wp}")
        if in_fw and f0 is not None:
            why.append(f"in firmware {f0.function} ()")
        if row.said_idle and not why:
            why.append("the summary calls it idle")
        return State(row, "idle", None, fw_wp, None, None, frames, ", ".join(why) or "no kernel")
    fn = f0.function if f0 else ""
    base = fn.split("(")[0].split("<")[0].split("::")[-1]
    pattern: HangPattern | None
    if base in CONSUMER_CALLS or fw_wp == "CWFW":
        pattern = HangPattern.CONSUMER_STARVED
    elif base in PRODUCER_CALLS or fw_wp == "CRBW":
        pattern = HangPattern.PRODUCER_BLOCKED
    elif base.startswith(NOC_CALLS) or is_noc_wait(fw_wp):
        pattern = HangPattern.NOC_WAIT
    elif fw_wp and len(fw_wp) > 1 and fw_wp.endswith("W") and fw_wp not in ("GW", "NTW"):
        pattern = HangPattern.OTHER_WAIT
    else:
        pattern = HangPattern.UNKNOWN
    status = "running" if pattern is HangPattern.UNKNOWN else "waiting"
    return State(row, status, pattern, fw_wp, base or None, kfile, frames)


def blind(states: list[State]) -> list[State]:
    """The RISCs running a kernel at a place the text does not show: no frame #0 (cut, or not
    printed) and no waypoint."""
    return [
        s
        for s in states
        if s.status == "running" and not s.waypoint and not (s.frames and s.frames[0].index == 0)
    ]
