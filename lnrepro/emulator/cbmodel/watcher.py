"""``watcher.log`` and ``kernel_names.txt``, written the way tt-metal's watcher server writes
them, from what the hung cores are doing."""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from .config import DISPATCH_KERNEL, NOC_X, NOC_Y, PREFETCH_KERNEL, CbConfig
from .cores import CoreSim
from .gtest_front import metal_log

_START = time.monotonic()


def watcher_interval(value: str | None) -> float | None:
    """Seconds between dumps as tt-metal reads TT_METAL_WATCHER (None: watcher off)."""
    if value is None:
        return None
    m = re.match(r"\s*([+-]?\d+)", value)
    n = int(m.group(1)) if m else 0
    seconds = n / 1000 if "ms" in value else float(n)
    return max(seconds, 0.1)


def logs_dir(env: dict[str, str]) -> Path:
    """``$TT_METAL_LOGS_PATH``, or the current directory (rtoptions' rule)."""
    given = env.get("TT_METAL_LOGS_PATH")
    return Path(os.path.normpath(given)) if given else Path.cwd()


def watcher_log_path(env: dict[str, str]) -> Path:
    return logs_dir(env) / "generated" / "watcher" / "watcher.log"


def _elapsed() -> float:
    return time.monotonic() - _START


@dataclass
class Program:
    """What the watcher sees on the device while one test runs."""

    cfg: CbConfig
    h_id: int
    sims: dict[tuple[int, int], CoreSim]
    ids: dict[str, int]  # kernel path -> watcher kernel id


KERNEL_IDS = ("blank", PREFETCH_KERNEL, DISPATCH_KERNEL)


def kernel_ids(cfg: CbConfig) -> dict[str, int]:
    names = [*KERNEL_IDS, cfg.reader_kernel, cfg.writer_kernel, cfg.compute_kernel]
    out: dict[str, int] = {}
    for n in names:
        out.setdefault(n, len(out))
    return out


def core_state(
    p: Program, x: int, y: int
) -> tuple[tuple[str, ...], str, str, str, tuple[int, ...], int]:
    """(waypoints, rmsg, enables, smsg, k_ids, h_id) of one core."""
    cfg, c = p.cfg, p.sims.get((x, y))
    idle = (("GW", "W", "W", "W", "W"), "D0D", "bnt", "DDDD", (0, 0, 0, 0, 0), 0)
    last_row = cfg.device_grid[1] - 1
    if c is None:
        if y == last_row and y >= cfg.grid[1] and x in (0, 1):  # the dispatch cores
            kid = p.ids[PREFETCH_KERNEL if x == 0 else DISPATCH_KERNEL]
            wp = "HQW" if x == 0 else "NSW"
            return ((wp, "W", "W", "W", "W"), "H0G", "Bnt", "DDDD", (kid, 0, 0, 0, 0), 0)
        return idle
    r, w, k = p.ids[cfg.reader_kernel], p.ids[cfg.writer_kernel], p.ids[cfg.compute_kernel]
    kids = (w, r, k, k, k)
    if c.done:
        return (("GW", "W", "W", "W", "W"), "D0D", "BNT", "DDDD", kids, p.h_id)
    reader = ("W", "D") if c.reader_done else ("CRBW", "G")
    if c.compute_done:
        trisc = (("W", "D"),) * 3
    elif c.compute_phase == "wait":
        trisc = (("CWFW", "G"), ("K", "G"), ("K", "G"))
    else:
        trisc = (("K", "G"), ("K", "G"), ("CRBW", "G"))
    brisc = "NTW" if c.writer_done else "CWFW"
    wps = (brisc, reader[0], *(t[0] for t in trisc))
    smsg = reader[1] + "".join(t[1] for t in trisc)
    return (wps, "D0G", "BNT", smsg, kids, p.h_id)


def dump_text(p: Program, number: int) -> str:
    cfg = p.cfg
    lines = ["-----", f"Dump #{number} at {_elapsed():.3f}s"]
    used: set[int] = set()
    for y in range(cfg.device_grid[1]):
        for x in range(cfg.device_grid[0]):
            wps, rmsg, enables, smsg, kids, h_id = core_state(p, x, y)
            used.update(kids)
            head = f"Device 0 worker core(x={x:2d},y={y:2d}) virtual(x={NOC_X[x]:2d},y={NOC_Y[y]:2d}): "
            way = ",".join(f"{w:>4}" for w in wps) + "  "
            ids = "|".join(f"{k:3d}" for k in kids)
            lines.append(f"{head}{way}rmsg:{rmsg}|{enables} h_id:{h_id:3d} smsg:{smsg} k_ids:{ids}")
    names = {v: k for k, v in p.ids.items()}
    lines += [f"k_id[{k:3d}]: {names[k]}" for k in sorted(used) if k in names]
    lines.append(f"Dump #{number} completed at {_elapsed():.3f}s")
    return "\n".join(lines) + "\n"


class Watcher:
    """watcher.log and kernel_names.txt, written the way tt-metal's watcher server writes them."""

    def __init__(self, env: dict[str, str], interval: float, out: TextIO) -> None:
        self.interval = interval
        self.path = watcher_log_path(env)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        mode = "a" if "TT_METAL_WATCHER_APPEND" in env else "w"
        self.fh = self.path.open(mode, encoding="utf-8")
        self.dumps = 0
        metal_log(out, "info", "LLRuntime", f"Watcher log file: {self.path}", "cbmodel.py:0")
        self.fh.write(
            f"At {_elapsed():.3f}s starting\nLegend:\n"
            "\tComma separated list specifies waypoint for BRISC, NCRISC, TRISC0, TRISC1, TRISC2\n"
            "\tBRISC is main processor, others are subordinates\n"
            "\tI=firmware init  W=top of a wait loop  R=entering the kernel  D=done\n"
            "\tX=host-written value before the firmware ran\n\n"
            "\trmsg: dispatch D/H, NOC id, go state I/G/D, |, enables (upper case: has a kernel)\n"
            "\tsmsg: the subordinates' run states; k_ids: kernel ids per processor\n\n"
        )
        self.fh.write(f"At {_elapsed():.3f}s attach device 0\n\n")
        self.fh.flush()
        metal_log(out, "info", "LLRuntime", "Watcher attached device 0", "cbmodel.py:0")

    def names(self, ids: dict[str, int]) -> None:
        path = self.path.parent / "kernel_names.txt"
        path.write_text(
            "".join(f"{v}: {k}\n" for k, v in sorted(ids.items(), key=lambda kv: kv[1])),
            encoding="utf-8",
        )

    def dump(self, p: Program) -> None:
        self.dumps += 1
        self.fh.write(dump_text(p, self.dumps))
        self.fh.flush()

    def detach(self) -> None:
        self.fh.write(f"At {_elapsed():.3f}s detach device 0\n")
        self.fh.close()
