"""What tt-triage reads from a hung device through tt-exalens (mailboxes, waypoints, PCs, the
stream registers that count a CB's pages), written by the hung process to a file under the
logs dir, where the look-alike's tools/tt-triage.py reads it as the real one reads the card:
``<logs dir>/generated/lookalike-device/device.json``. The numbers are registers, not text: the
look-alike's triage formats them as the real scripts do (see docs/lookalike.md)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from .config import DISPATCH_KERNEL, NOC_X, NOC_Y, PREFETCH_KERNEL
from .watcher import Program, core_state, logs_dir

RISCS = ("brisc", "ncrisc", "trisc0", "trisc1", "trisc2")
PAGE_SIZE = 2048  # a bf16 tile
CB_BASE = 0x19000  # where the op's first CB starts in L1 (a stand-in address)
_FIRMWARE = "tt_metal/hw/firmware/src/tt-1xx"
# the wait each waypoint stands for: (function of frame 0, its header, the kernel's call)
_DATAFLOW_API = "tt_metal/hw/inc/dataflow_api.h"
_COMPUTE_CB_API = "tt_metal/include/compute_kernel_api/cb_api.h"


def device_state_path(env: dict[str, str]) -> Path:
    return logs_dir(env) / "generated" / "lookalike-device" / "device.json"


def _pc(kernel_id: int, risc: int, wait: int) -> int:
    """A stand-in program counter: the kernel's text at a fixed base, per RISC, per wait."""
    return 0x6A00 + kernel_id * 0x1000 + risc * 0x200 + wait * 0x24


def _risc_rows(p: Program, x: int, y: int) -> list[dict[str, Any]]:
    """Each RISC of a core as the mailboxes and the debug interface show it."""
    cfg, c = p.cfg, p.sims.get((x, y))
    wps, rmsg, _enables, _smsg, kids, _h = core_state(p, x, y)
    go = {"G": "GO", "D": "DONE", "I": "INIT"}.get(rmsg[-1], "GO")
    names = {v: k for k, v in p.ids.items()}
    rows = []
    for i, risc in enumerate(RISCS):
        kid, wp = kids[i], wps[i]
        kernel = names.get(kid) if kid else None
        wait: dict[str, Any] | None = None
        if c is not None and wp in ("CWFW", "CRBW"):
            cb = cfg.cb_out_id if risc in ("brisc", "trisc2") else cfg.cb_in_id
            call = "cb_wait_front" if wp == "CWFW" else "cb_reserve_back"
            wait = {"call": call, "cb": cb}
        elif c is not None and wp == "K":  # math (or a TRISC past its wait): in the kernel body
            wait = {
                "call": "cb_wait_front" if c.compute_phase == "wait" else "cb_reserve_back",
                "cb": cfg.cb_in_id if c.compute_phase == "wait" else cfg.cb_out_id,
                "inside": True,
            }
        elif kernel in (PREFETCH_KERNEL, DISPATCH_KERNEL):
            wait = {"call": "kernel_main", "cb": None}
        firmware = None if wait is not None else risc if risc in ("brisc", "ncrisc") else "trisc"
        rows.append(
            {
                "risc": risc,
                "kernel_id": kid,
                "kernel": kernel,
                "go": go,
                "waypoint": wp,
                "pc": _pc(kid, i, 1 if wait else 0),
                "wait": wait,
                "firmware": f"{_FIRMWARE}/{firmware}.cc" if firmware else None,
            }
        )
    return rows


def _cb_rows(p: Program, x: int, y: int) -> list[dict[str, Any]]:
    """The op's CBs on a core: geometry, each RISC's pointers, the stream registers' counts."""
    cfg, c = p.cfg, p.sims.get((x, y))
    if c is None:
        return []
    in_pushed = c.reader_block * cfg.reader_pages_per_block
    in_popped = c.compute_block * cfg.compute_pages_per_block
    out_pushed = c.compute_block * cfg.compute_out_pages_per_block
    out_popped = c.writer_block * cfg.writer_pages_per_block
    cbs = [
        (cfg.cb_in_id, cfg.cb_in_capacity, in_pushed, in_popped, "ncrisc", "trisc0"),
        (cfg.cb_out_id, cfg.cb_out_capacity, out_pushed, out_popped, "trisc2", "brisc"),
    ]
    out = []
    addr = CB_BASE
    for cb, cap, pushed, popped, producer, consumer in cbs:
        size = cap * PAGE_SIZE
        for risc in ("brisc", "trisc0", "trisc2"):
            wr = pushed if risc == producer else 0
            rd = popped if risc == consumer else 0
            out.append(
                {
                    "risc": risc,
                    "cb": cb,
                    "fifo_addr": addr,
                    "fifo_size": size,
                    "page_size": PAGE_SIZE,
                    "num_pages": cap if risc == producer else 0,
                    "rd_ptr": addr + (rd % cap) * PAGE_SIZE if cap else addr,
                    "wr_ptr": addr + (wr % cap) * PAGE_SIZE if cap else addr,
                    "received": pushed & 0xFFFF,
                    "acked": popped & 0xFFFF,
                }
            )
        addr += size
    return out


def device_state(p: Program) -> dict[str, Any]:
    cfg = p.cfg
    cores = [
        {
            "x": x,
            "y": y,
            "noc0": [NOC_X[x], NOC_Y[y]],
            "riscs": _risc_rows(p, x, y),
            "cbs": _cb_rows(p, x, y),
        }
        for y in range(cfg.device_grid[1])
        for x in range(cfg.device_grid[0])
    ]
    return {
        "device": 0,
        "arch": "wormhole_b0",
        "pid": os.getpid(),
        "hung_at": time.time(),
        "op": cfg.op,
        "cores": cores,
    }


def write_device_state(p: Program, env: dict[str, str]) -> Path:
    """The hung device's state where the look-alike's tt-triage reads it."""
    path = device_state_path(env)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(device_state(p)) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path
