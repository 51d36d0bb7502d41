"""Watcher logs as users paste them: one hang (a writer starved on its CB, the rest done) printed
in the core-line format of each era, then spoiled the way real pastes are (no ``Dump #`` header,
``...`` elisions, editor line numbers, a dropped first character, the kernel map apart).

The formats are those ``../shared/formats/watcher.md`` reads from tt-metal's
``watcher_device_reader.cpp`` (0000823065da for the newest; 6631b32e5820 for the ``phys`` era)
and from the eras' documented line shapes; the cores, ids, paths and times are our own.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

OPS = "ttnn/cpp/ttnn/operations/paste_demo/device/kernels"
READER = f"{OPS}/dataflow/reader_paste_demo.cpp"
WRITER = f"{OPS}/dataflow/writer_paste_demo.cpp"
COMPUTE = f"{OPS}/compute/paste_demo_compute.cpp"
IDS = {"writer": 301, "reader": 300, "compute": 302}

# (waypoints BRISC..TRISC2, rmsg, smsg): the writer waits in cb_wait_front, the rest are done
STARVED = (("CWFW", "W", "W", "W", "W"), "D0G|BNT", "DDDD")
IDLE = (("GW", "W", "W", "W", "W"), "D0D|bnt", "DDDD")


def _kids(era: str, idle: bool) -> list[int]:
    w, r, c = (0, 0, 0) if idle else (IDS["writer"], IDS["reader"], IDS["compute"])
    return [w, r, c, c, c] if era == "newest" else [w, r, c]


def core_line(
    era: str, x: int, y: int, state: tuple[tuple[str, ...], str, str], idle: bool = False
) -> str:
    """One core's line in ``era``'s format."""
    wps, rmsg, smsg = state
    kids = _kids(era, idle)
    if era == "2023":
        return f"Core (x={x + 1},y={y + 1}):    {','.join(wps)} rmsg:{rmsg} smsg:{smsg} k_ids:{'|'.join(map(str, kids))}"
    if era == "2024-03":
        return f"Device 0, Core (x={x + 1},y={y + 1}):    {','.join(wps)}  rmsg:{rmsg} smsg:{smsg} k_ids:{'|'.join(map(str, kids))}"
    padded = ",".join(f"{w:>4}" for w in wps)
    if era == "2024-phys":
        return (
            f"Device 0 worker core(x={x:2d},y={y:2d}) phys(x={x + 1:2d},y={y + 2:2d}): {padded}  "
            f"rmsg:{rmsg} smsg:{smsg} k_ids:{'|'.join(map(str, kids))}"
        )
    if era == "2025-virtual":
        return (
            f"Device 0 worker core(x={x:2d},y={y:2d}) virtual(x={x + 1:2d},y={y + 2:2d}): {padded}  "
            f"rmsg:{rmsg} h_id:18 smsg:{smsg} k_ids:{'|'.join(map(str, kids))}"
        )
    return (
        f"Device 0 worker core(x={x:2d},y={y:2d}) virtual(x={x + 1:2d},y={y + 2:2d}): {padded}  "
        f"rmsg:{rmsg} h_id:{18:3d} smsg:{smsg} k_ids:{'|'.join(f'{k:3d}' for k in kids)}"
    )


def kernel_map(era: str) -> list[str]:
    fmt = (
        (lambda k: f"k_id[{k}]")
        if era in ("2023", "2024-03", "2024-phys")
        else (lambda k: f"k_id[{k:3d}]")
    )
    return [
        f"{fmt(IDS['reader'])}: {READER}",
        f"{fmt(IDS['writer'])}: {WRITER}",
        f"{fmt(IDS['compute'])}: {COMPUTE}",
    ]


def full_log(era: str, dumps: int = 2) -> str:
    """A whole log: for the newest era its header and ``-----``/``completed`` lines."""
    out: list[str] = []
    newest = era in ("2025-virtual", "newest")
    if newest:
        out += [
            "At 0.112s starting",
            "Legend:",
            "\tComma separated list specifies waypoint for BRISC, NCRISC, TRISC0, TRISC1, TRISC2",
            "",
            "At 1.004s attach device 0",
            "",
        ]
    for n in range(1, dumps + 1):
        if newest:
            out.append("-----")
        out.append(f"Dump #{n} at {2.0 * n:.3f}s")
        out += [
            core_line(era, 0, 0, STARVED),
            core_line(era, 1, 0, STARVED),
            core_line(era, 2, 0, IDLE, True),
        ]
        out += kernel_map(era)
        if newest:
            out.append(f"Dump #{n} completed at {2.0 * n + 0.004:.3f}s")
    return "\n".join(out) + "\n"


def excerpt(era: str) -> str:
    """Two hung cores with '...' between and after them, no Dump header, then the kernel map
    apart, after a line of the reporter's own."""
    lines = [
        core_line(era, 0, 0, STARVED),
        "...",
        core_line(era, 1, 0, STARVED),
        "...",
        "",
        "and the kernel ids map to:",
        *kernel_map(era),
    ]
    return "\n".join(lines) + "\n"


def numbered(text: str, start: int = 41, style: str = "  {n}  ") -> str:
    return (
        "\n".join(style.format(n=start + i) + ln for i, ln in enumerate(text.splitlines())) + "\n"
    )


def drop_first_char(text: str) -> str:
    """The paste began one character late (its first line) and a map line lost its k."""
    lines = text.splitlines()
    lines[0] = lines[0][1:]
    for i, ln in enumerate(lines):
        if ln.startswith("k_id["):
            lines[i] = ln[1:]
            break
    return "\n".join(lines) + "\n"


def map_first(text: str) -> str:
    """The kernel map pasted before the core lines."""
    lines = text.splitlines()
    kmap = [ln for ln in lines if re.search(r"k_id\[", ln)]
    rest = [ln for ln in lines if ln not in kmap]
    return "\n".join([*kmap, "", *rest]) + "\n"


@dataclass(frozen=True)
class Paste:
    name: str
    text: str
    era: str
    cores: int  # cores the starved group names
    noise: tuple[str, ...]  # words the source's noise list must hold
    kernel_known: bool = True


ERAS = ("2023", "2024-03", "2024-phys", "2025-virtual", "newest")
STYLES: dict[str, tuple[Callable[[str], str], tuple[str, ...]]] = {
    "full": (full_log, ()),
    "excerpt": (excerpt, ("no 'Dump #' header", "elision", "kernel map")),
    "excerpt+numbers": (lambda e: numbered(excerpt(e)), ("line numbers", "no 'Dump #' header")),
    "excerpt+bar-numbers": (lambda e: numbered(excerpt(e), 7, "{n:>4} | "), ("line numbers",)),
    "excerpt+dropped": (lambda e: drop_first_char(excerpt(e)), ("dropped first character",)),
    "full+numbers+dropped": (lambda e: drop_first_char(numbered(full_log(e))), ("line numbers",)),
    "map-first": (lambda e: map_first(excerpt(e)), ("no 'Dump #' header",)),
}


def pastes() -> list[Paste]:
    out = []
    for era in ERAS:
        for style, (make, noise) in STYLES.items():
            out.append(Paste(f"{era}/{style}", make(era), era, 2, noise))
    # the map lost: the paste cannot tell the writer's file, and says so
    text = "\n".join(
        ln for ln in excerpt("2023").splitlines() if not ln.startswith(("k_id[", "and the"))
    )
    out.append(Paste("2023/no-map", text + "\n", "2023", 2, (), kernel_known=False))
    return out


def folded(text: str, width: int = 80) -> str:
    """``fold -w width`` (GNU coreutils): each line broken where its next character would pass
    ``width`` columns, a tab advancing to the next multiple of 8."""
    out: list[str] = []
    for ln in text.splitlines():
        col, cur = 0, ""
        for ch in ln:
            step = 8 - col % 8 if ch == "\t" else 1
            if col + step > width:
                out.append(cur)
                col, cur = 0, ""
                step = 8 if ch == "\t" else 1
            cur += ch
            col += step
        out.append(cur)
    return "\n".join(out) + "\n"


# ------------------------------------------------------------------ shapes from real reports
# Made from the facts of each era's core line (watcher.rst at 2023-11 for 'Core (x=,y=):', the
# reader's %3d h_id / k_ids at 0000823065da, h_id added by tenstorrent/tt-metal#15717); the
# cores, ids and paths are our own.
DISPATCH = "tt_metal/impl/dispatch/kernels"


def oldest_with_dispatch() -> str:
    """The oldest format as a user pasted it: the dispatch cores first (host-dispatched, their
    own kernels), a reporter's elision line among the cores, the one worker whose BRISC waits in
    cb_wait_front, three kernel ids, and the k_id map."""
    return (
        "\n".join(
            [
                "Dump #4 at 18.250s",
                "Core (x=1,y=11):    NTW,HQW,W,W,W rmsg:H0G|Bnt smsg:GGGG k_ids:1|2|0",
                "Core (x=2,y=11):    NTW,W,W,W,W rmsg:H0G|bNt smsg:GGGG k_ids:3|4|0",
                f"Core (x=1,y=1):    {','.join(STARVED[0])} rmsg:D0G|BNT smsg:DDDD "
                f"k_ids:{IDS['writer']}|{IDS['reader']}|{IDS['compute']}",
                "... (the other 70 worker cores print GW,W,W,W,W) ...",
                "Core (x=2,y=1):    GW,W,W,W,W rmsg:D0D|bnt smsg:DDDD k_ids:0|0|0",
                "k_id[0]: blank",
                f"k_id[1]: {DISPATCH}/cq_prefetch.cpp",
                f"k_id[2]: {DISPATCH}/cq_dispatch.cpp",
                *kernel_map("2023"),
            ]
        )
        + "\n"
    )


def _newest(x: int, wps: str, rmsg: str, h_id: int, kids: tuple[int, int, int]) -> str:
    ids = "|".join(f"{k:3d}" for k in (kids[0], kids[1], kids[2], kids[2], kids[2]))
    return (
        f"Device 0 worker core(x={x:2d},y= 0) virtual(x={x + 1:2d},y= 2): {wps}  "
        f"rmsg:{rmsg} h_id:{h_id:3d} smsg:DDDD k_ids:{ids}"
    )


def odd_one_out() -> str:
    """One core still on the older program (h_id 708, its own kernels) waits on a semaphore;
    every other core has moved on to the next program (709) and waits for its pages."""
    old = (IDS["writer"], IDS["reader"], IDS["compute"])
    new = (311, 310, 312)
    return (
        "\n".join(
            [
                "-----",
                "Dump #7 at 30.000s",
                _newest(0, "  NSW,   W,   W,   W,   W", "D0G|BNT", 708, old),
                *(_newest(x, " CWFW,   W,   W,   W,   W", "D0G|BNT", 709, new) for x in (1, 2, 3)),
                *kernel_map("newest"),
                f"k_id[310]: {OPS}/dataflow/reader_next.cpp",
                f"k_id[311]: {OPS}/dataflow/writer_next.cpp",
                f"k_id[312]: {OPS}/compute/next_compute.cpp",
                "Dump #7 completed at 30.010s",
            ]
        )
        + "\n"
    )


def own_waypoints(compute: str = "WFCW") -> str:
    """Waypoints a user added for the experiment: compute stops at ``compute`` (one of theirs),
    its other TRISCs at MWDD; the reader waits in cb_reserve_back behind it, the writer in
    cb_wait_front after it."""
    kids = (IDS["writer"], IDS["reader"], IDS["compute"])
    wps = f" CWFW,CRBW,{compute:>4},MWDD,MWDD"
    return (
        "\n".join(
            [
                "-----",
                "Dump #3 at 12.000s",
                *(_newest(x, wps, "D0G|BNT", 18, kids) for x in (0, 1)),
                *kernel_map("newest"),
                "Dump #3 completed at 12.010s",
            ]
        )
        + "\n"
    )
