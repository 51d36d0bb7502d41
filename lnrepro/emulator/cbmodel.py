"""A reader/compute/writer kernel trio over circular buffers, on a grid of cores, behind
googletest's command line: ``python -m lnrepro.emulator.cbmodel``.

The model (our own, not tt-metal code): per core a reader (NCRISC) reserves and pushes
``reader_pages_per_block`` pages into ``cb_in`` per block; compute (the TRISCs) waits for
``compute_pages_per_block`` pages of ``cb_in``, reserves ``compute_out_pages_per_block`` in
``cb_out``, pops and pushes; a writer (BRISC) waits for and pops ``writer_pages_per_block`` pages
of ``cb_out``. Every core is stepped in turn, deterministically, until all are done or none can
move. When producer and consumer disagree on a page count, or a call asks for more pages than
its buffer holds, the cores deadlock as the real kernels would, and the program behaves like a
hung tt-metal test: it prints ``[ RUN      ]`` and never returns, so the caller's timeout must
kill it. Meanwhile, with ``TT_METAL_WATCHER`` set, it writes watcher.log as tt-metal's watcher
does, one dump per interval, and with ``TT_METAL_DPRINT_CORES`` it prints DPRINT lines for the
CB calls of the chosen cores.

Facts followed, from tenstorrent/tt-metal:

* ``TT_METAL_WATCHER=<n>``: a poll every ``n`` seconds, or ``n`` milliseconds when the value
  contains ``ms`` (``sscanf("%d")``; tt_metal/llrt/rtoptions.cpp, commit
  00a21394d924f374ef1dfe49a64fcf50fcc24810 ``ParseWatcherEnv``, and the newer ``HandleEnvVar``).
* The log is ``<logs dir>/generated/watcher/watcher.log`` (tt_metal/impl/debug/watcher_server.cpp,
  commit 007cf7fd108d9c7468c16b3baa239a7065a45357: ``get_logs_dir() + "generated/watcher/" +
  "watcher.log"``), the logs dir being ``$TT_METAL_LOGS_PATH`` (normalized, with a trailing
  slash) or else the current working directory (tt_metal/llrt/rtoptions.hpp, commit
  1f8d16c7b0a0b574cd3d21fdef2b9237226e98ac: ``logs_dir_ = current_path() / ""``). Opened with
  ``"a"`` when ``TT_METAL_WATCHER_APPEND`` is set, else ``"w"``; ``kernel_names.txt`` beside it.
* The log's header, dump sections and the newest core line form: see lnrepro.watcher.log.
* DPRINT lines: ``<device>:<core>:<risc>: text`` (see lnrepro.watcher.dprint);
  ``TT_METAL_DPRINT_CORES`` takes ``x,y``, ``(x1,y1),(x2,y2)``, ``(x1,y1)-(x2,y2)`` or
  ``all``/``worker`` (rtoptions.cpp ``ParseFeatureCoreRange``), ``TT_METAL_DPRINT_FILE`` a file.

Two simplifications, said here: compute's wait shows as ``CWFW`` on TRISC0 and its reserve as
``CRBW`` on TRISC2 (on Wormhole a compute ``cb_wait_front`` sets no waypoint); and a poll
interval under 100 ms is raised to 100 ms so a hung run cannot fill the disk.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from pathlib import Path
from typing import Any, NoReturn, TextIO
from xml.sax.saxutils import escape, quoteattr

SUITE = "CbModelTest"
TEST_FILE = "tests/ttnn/unit_tests/gtests/test_cb_model.cpp"
ENV_CONFIG = "LNREPRO_CB_CONFIG"
GREEN, RED, RESET = "\x1b[0;32m", "\x1b[0;31m", "\x1b[m"
_START = time.monotonic()
_OP_DIR = "ttnn/cpp/ttnn/operations/normalization/layernorm_fused_rm/device/kernels"
# Wormhole's NOC0 coordinates of the worker columns and rows (the watcher's "virtual" column).
_NOC_X = (1, 2, 3, 4, 6, 7, 8, 9)
_NOC_Y = (1, 2, 3, 4, 5, 7, 8, 9, 10, 11)
PREFETCH_KERNEL = "tt_metal/impl/dispatch/kernels/cq_prefetch.cpp"
DISPATCH_KERNEL = "tt_metal/impl/dispatch/kernels/cq_dispatch.cpp"

USAGE = f"""\
lnrepro's circular-buffer model of a reader/compute/writer op, as a googletest binary.

googletest flags:
  --gtest_list_tests            list the tests instead of running them
  --gtest_filter=POS[-NEG]      ':'-separated wildcard patterns (* and ?)
  --gtest_output=json:PATH|xml:PATH   write a report
  --gtest_color=yes|no|auto     colour the markers
  --gtest_brief=1               print only failures

model:
  --cb_config=FILE              the model's numbers, JSON or TOML (or env {ENV_CONFIG})

environment, as tt-metal reads it:
  TT_METAL_WATCHER=<s>|<n>ms    on a deadlock, write watcher.log every interval
  TT_METAL_LOGS_PATH=DIR        where generated/watcher/watcher.log goes (default: cwd)
  TT_METAL_WATCHER_APPEND=1     append to watcher.log instead of rewriting it
  TT_METAL_DPRINT_CORES=...     print DPRINT lines of these cores' CB calls
  TT_METAL_DPRINT_FILE=PATH     ... into this file instead of stdout
  TT_METAL_OPERATION_TIMEOUT_SECONDS=<s>   on a deadlock, give up after s seconds: run
                                the timeout command, then abort with tt-metal's TIMEOUT error
  TT_METAL_DISPATCH_TIMEOUT_COMMAND_TO_EXECUTE=<cmd>   the command (tt-triage, as a rule)
"""


class ConfigError(Exception):
    """The configuration file cannot be used (the message says why)."""


@dataclass(frozen=True)
class CbConfig:
    """The model's numbers. A look-alike history changes one of them to introduce a hang."""

    op: str = "layernorm_fused_rm"
    test_name: str = "LayerNormFusedRm"
    grid: tuple[int, int] = (8, 8)  # cores running the op: columns, rows
    device_grid: tuple[int, int] = (8, 9)  # the device's worker grid; its last row holds dispatch
    blocks_per_core: int = 4  # tile-row blocks each core processes
    reader_pages_per_block: int = 32  # pages the reader pushes into cb_in per block
    compute_pages_per_block: int = 32  # pages compute waits for (and pops) from cb_in per block
    compute_out_pages_per_block: int = 32  # pages compute pushes into cb_out per block
    writer_pages_per_block: int = 32  # pages the writer waits for (and pops) from cb_out per block
    cb_in_capacity: int = 64  # pages cb_in holds (double-buffered)
    cb_out_capacity: int = 64
    cb_in_id: int = 0
    cb_out_id: int = 16
    reader_kernel: str = f"{_OP_DIR}/dataflow/reader_layernorm_fused_rm.cpp"
    compute_kernel: str = f"{_OP_DIR}/compute/layernorm_fused_rm.cpp"
    writer_kernel: str = f"{_OP_DIR}/dataflow/writer_layernorm_fused_rm.cpp"

    @property
    def cores(self) -> list[tuple[int, int]]:
        """The op's cores in the watcher's order: row by row."""
        return [(x, y) for y in range(self.grid[1]) for x in range(self.grid[0])]


_INT_KEYS = {f.name for f in fields(CbConfig) if f.type in ("int", int)}
_STR_KEYS = {f.name for f in fields(CbConfig) if f.type in ("str", str)}
_PAIR_KEYS = {"grid", "device_grid"}
_KERNEL_KEYS = {"reader": "reader_kernel", "compute": "compute_kernel", "writer": "writer_kernel"}


def config_from(doc: dict[str, Any], source: str = "config") -> CbConfig:
    """A config from a parsed JSON/TOML document (unknown keys are an error, to catch typos)."""
    values: dict[str, Any] = {}
    for key, v in doc.items():
        if key == "kernels" and isinstance(v, dict):
            for role, path in v.items():
                if role not in _KERNEL_KEYS or not isinstance(path, str):
                    raise ConfigError(
                        f"{source}: kernels.{role} should be reader/compute/writer = path"
                    )
                values[_KERNEL_KEYS[role]] = path
        elif key in _INT_KEYS:
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ConfigError(f"{source}: {key} should be a whole number >= 0, not {v!r}")
            values[key] = v
        elif key in _STR_KEYS:
            if not isinstance(v, str) or not v:
                raise ConfigError(f"{source}: {key} should be a non-empty string")
            values[key] = v
        elif key in _PAIR_KEYS:
            if not (
                isinstance(v, list)
                and len(v) == 2
                and all(type(i) is int and 0 < i <= 64 for i in v)
            ):
                raise ConfigError(f"{source}: {key} should be [columns, rows], each 1..64")
            values[key] = (v[0], v[1])
        else:
            raise ConfigError(f"{source}: unknown key {key!r}")
    cfg = replace(CbConfig(), **values)
    if cfg.device_grid[0] < cfg.grid[0] or cfg.device_grid[1] < cfg.grid[1]:
        cfg = replace(
            cfg,
            device_grid=(
                max(cfg.grid[0], cfg.device_grid[0]),
                max(cfg.grid[1], cfg.device_grid[1]),
            ),
        )
    if cfg.device_grid[0] > len(_NOC_X) or cfg.device_grid[1] > len(_NOC_Y):
        raise ConfigError(f"{source}: the grid is larger than a Wormhole's 8x10 workers")
    return cfg


def load_config(path: Path) -> CbConfig:
    """A config file: TOML when it ends in .toml, else JSON."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    try:
        if path.suffix == ".toml":
            if sys.version_info >= (3, 11):
                import tomllib
            else:  # pragma: no cover - 3.10
                import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]
            doc: Any = tomllib.loads(text)
        else:
            doc = json.loads(text)
    except ValueError as exc:
        raise ConfigError(
            f"{path} is not valid {'TOML' if path.suffix == '.toml' else 'JSON'}: {exc}"
        ) from None
    if not isinstance(doc, dict):
        raise ConfigError(f"{path} should hold a table/object of settings")
    return config_from(doc, str(path))


# ----------------------------------------------------------------------------------- model
@dataclass
class CoreSim:
    """One core's three kernels and two circular buffers."""

    x: int
    y: int
    blocks: int
    in_avail: int = 0  # pages pushed into cb_in and not yet popped
    out_avail: int = 0
    reader_block: int = 0
    compute_block: int = 0
    compute_phase: str = "wait"  # wait: cb_wait_front(cb_in); reserve: cb_reserve_back(cb_out)
    writer_block: int = 0
    written: int = 0  # pages the writer popped (wrote out)
    said: set[str] = field(default_factory=set)  # DPRINT lines already printed (one per wait)

    @property
    def done(self) -> bool:
        return self.reader_done and self.compute_done and self.writer_done

    @property
    def reader_done(self) -> bool:
        return self.reader_block >= self.blocks

    @property
    def compute_done(self) -> bool:
        return self.compute_block >= self.blocks

    @property
    def writer_done(self) -> bool:
        return self.writer_block >= self.blocks


Say = Callable[[CoreSim, str, str], None]


def step(c: CoreSim, cfg: CbConfig, say: Say) -> bool:
    """One turn of each kernel on a core; True when any of them moved."""
    moved = False
    if not c.reader_done:
        n = cfg.reader_pages_per_block
        if cfg.cb_in_capacity - c.in_avail >= n:
            c.in_avail += n
            say(c, "NC", f"block {c.reader_block}: cb_push_back(c_{cfg.cb_in_id}, {n})")
            c.reader_block += 1
            moved = True
        else:
            say(c, "NC", f"block {c.reader_block}: cb_reserve_back(c_{cfg.cb_in_id}, {n}) waits")
    if not c.compute_done:
        if c.compute_phase == "wait":
            n = cfg.compute_pages_per_block
            if c.in_avail >= n:
                c.compute_phase = "reserve"
                moved = True
            else:
                say(
                    c, "TR0", f"block {c.compute_block}: cb_wait_front(c_{cfg.cb_in_id}, {n}) waits"
                )
        if c.compute_phase == "reserve":
            n = cfg.compute_out_pages_per_block
            if cfg.cb_out_capacity - c.out_avail >= n:
                c.in_avail -= cfg.compute_pages_per_block
                say(
                    c,
                    "TR0",
                    f"block {c.compute_block}: cb_pop_front(c_{cfg.cb_in_id}, {cfg.compute_pages_per_block})",
                )
                c.out_avail += n
                say(c, "TR2", f"block {c.compute_block}: cb_push_back(c_{cfg.cb_out_id}, {n})")
                c.compute_block += 1
                c.compute_phase = "wait"
                moved = True
            else:
                say(
                    c,
                    "TR2",
                    f"block {c.compute_block}: cb_reserve_back(c_{cfg.cb_out_id}, {n}) waits",
                )
    if not c.writer_done:
        n = cfg.writer_pages_per_block
        if c.out_avail >= n:
            c.out_avail -= n
            c.written += n
            say(c, "BR", f"block {c.writer_block}: cb_pop_front(c_{cfg.cb_out_id}, {n})")
            c.writer_block += 1
            moved = True
        else:
            say(c, "BR", f"block {c.writer_block}: cb_wait_front(c_{cfg.cb_out_id}, {n}) waits")
    return moved


@dataclass
class Outcome:
    cores: list[CoreSim]
    deadlocked: bool
    steps: int

    @property
    def hung_cores(self) -> list[CoreSim]:
        return [c for c in self.cores if not c.done]


def simulate(cfg: CbConfig, cores: Sequence[tuple[int, int]], say: Say | None = None) -> Outcome:
    """Step every core in turn until all are done or a whole round moves nothing."""
    sims = [CoreSim(x, y, cfg.blocks_per_core) for x, y in cores]
    quiet: Say = say or (lambda c, r, t: None)
    rounds = 0
    while True:
        rounds += 1
        moved = False
        for c in sims:
            if not c.done:
                moved = step(c, cfg, quiet) or moved
        if all(c.done for c in sims):
            return Outcome(sims, False, rounds)
        if not moved:
            return Outcome(sims, True, rounds)


# ----------------------------------------------------------------------------------- watcher
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
    if c.writer_done:
        brisc = "NTW"
    else:
        brisc = "CWFW"
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
            head = f"Device 0 worker core(x={x:2d},y={y:2d}) virtual(x={_NOC_X[x]:2d},y={_NOC_Y[y]:2d}): "
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
        _log(out, f"Watcher log file: {self.path}")
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
        _log(out, "Watcher attached device 0")

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


def _log(out: TextIO, text: str) -> None:
    stamp = datetime.now().strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    out.write(f"{stamp} | info     |       LLRuntime | {text} (cbmodel.py:0)\n")


# ----------------------------------------------------------------------------------- the device
# What tt-triage reads from a hung device through tt-exalens (mailboxes, waypoints, PCs, the
# stream registers that count a CB's pages), written by the hung process to a file under the
# logs dir, where the look-alike's tools/tt-triage.py reads it as the real one reads the card:
# <logs dir>/generated/lookalike-device/device.json. The numbers are registers, not text: the
# look-alike's triage formats them as the real scripts do (see docs/lookalike.md).
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
        firmware = (
            None
            if wait is not None
            else ("brisc" if risc == "brisc" else "ncrisc" if risc == "ncrisc" else "trisc")
        )
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
    cores = []
    for y in range(cfg.device_grid[1]):
        for x in range(cfg.device_grid[0]):
            cores.append(
                {
                    "x": x,
                    "y": y,
                    "noc0": [_NOC_X[x], _NOC_Y[y]],
                    "riscs": _risc_rows(p, x, y),
                    "cbs": _cb_rows(p, x, y),
                }
            )
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


# ----------------------------------------------------------------------------------- dispatch timeout
# tt-metal's own hang detection, as tenstorrent/tt-metal does it:
# * TT_METAL_OPERATION_TIMEOUT_SECONDS (a float; 0 or unset: off) and
#   TT_METAL_DISPATCH_TIMEOUT_COMMAND_TO_EXECUTE are read in tt_metal/llrt/rtoptions.cpp;
# * the host's wait for the completion queue gives up after that long without progress and calls
#   MetalContext::on_dispatch_timeout_detected(), then throws
#   "TIMEOUT: device timeout, potential hang detected, the device is unrecoverable"
#   (tt_metal/impl/dispatch/system_memory_manager.cpp, completion_queue_wait_front);
# * on_dispatch_timeout_detected() (tt_metal/impl/context/metal_context.cpp at 790b74b58a87), the
#   first time only: log_error "Timeout detected"; unless
#   TT_METAL_INSPECTOR_SERIALIZE_ON_DISPATCH_TIMEOUT=0, log_info "Serializing Inspector RPC
#   data"; with a command, log_info "Executing command: <cmd>", std::system(cmd), and on a
#   non-zero status log_warning "Timeout command '<cmd>' returned non-zero exit code: <N>".
TIMEOUT_ERROR = "TIMEOUT: device timeout, potential hang detected, the device is unrecoverable"


def operation_timeout(env: dict[str, str]) -> float:
    """Seconds of TT_METAL_OPERATION_TIMEOUT_SECONDS (0: off, as for a value that is no number)."""
    try:
        value = float(env.get("TT_METAL_OPERATION_TIMEOUT_SECONDS", "0") or "0")
    except ValueError:
        return 0.0
    return value if value > 0 else 0.0


def _metal_log(out: TextIO, level: str, text: str, line: int) -> None:
    stamp = datetime.now().strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    out.write(f"{stamp} | {level:<8} |           Metal | {text} (metal_context.cpp:{line})\n")
    out.flush()


def on_dispatch_timeout_detected(env: dict[str, str], out: TextIO) -> None:
    _metal_log(out, "error", "Timeout detected", 1441)
    if env.get("TT_METAL_INSPECTOR_SERIALIZE_ON_DISPATCH_TIMEOUT", "1") != "0":
        _metal_log(out, "info", "Serializing Inspector RPC data", 1444)
    command = env.get("TT_METAL_DISPATCH_TIMEOUT_COMMAND_TO_EXECUTE", "")
    if command:
        _metal_log(out, "info", f"Executing command: {command}", 1451)
        import subprocess

        # std::system: /bin/sh -c, the same stdout and stderr, waited for
        status = subprocess.run(["/bin/sh", "-c", command], check=False).returncode  # noqa: S603
        if status != 0:
            _metal_log(
                out,
                "warning",
                f"Timeout command '{command}' returned non-zero exit code: {status & 0xFF}",
                1456,
            )


def dispatch_timeout(
    watcher: Watcher | None, program: Program, env: dict[str, str], out: TextIO
) -> str | None:
    """With TT_METAL_OPERATION_TIMEOUT_SECONDS set, wait that long on the hung device (the watcher
    polling), run tt-metal's timeout handling, and return the error the host throws; without it,
    hang forever."""
    seconds = operation_timeout(env)
    if not seconds:
        hang_forever(watcher, program)
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        if watcher is not None:
            watcher.dump(program)
        time.sleep(min(left, watcher.interval if watcher is not None else left))
    on_dispatch_timeout_detected(env, out)
    return (
        "TT_THROW @ tt_metal/impl/dispatch/system_memory_manager.cpp:627: tt::exception\n"
        f"info:\n{TIMEOUT_ERROR}"
    )


# ----------------------------------------------------------------------------------- DPRINT
def dprint_cores(value: str | None, cfg: CbConfig) -> set[tuple[int, int]]:
    """The cores TT_METAL_DPRINT_CORES names (rtoptions' forms); empty when unset or bad."""
    if not value:
        return set()
    v = value.strip()
    if v in ("all", "worker"):
        return set(cfg.cores)
    pairs = [(int(a), int(b)) for a, b in re.findall(r"(\d+)\s*,\s*(\d+)", v)]
    if v[0].isdigit():
        return set(pairs[:1])
    if "-" in v and len(pairs) >= 2:
        (x0, y0), (x1, y1) = pairs[0], pairs[1]
        return {(x, y) for x in range(x0, x1 + 1) for y in range(y0, y1 + 1)}
    return set(pairs)


class Dprint:
    def __init__(self, cores: set[tuple[int, int]], out: TextIO) -> None:
        self.cores, self.out = cores, out

    def __call__(self, c: CoreSim, risc: str, text: str) -> None:
        if (c.x, c.y) not in self.cores:
            return
        if text.endswith(" waits"):  # a kernel prints before it blocks, once
            if text in c.said:
                return
            c.said.add(text)
        self.out.write(f"0:{c.x}-{c.y}:{risc}: {text}\n")


# ----------------------------------------------------------------------------------- gtest
@dataclass(frozen=True)
class Case:
    name: str
    line: int
    cores: Callable[[CbConfig], list[tuple[int, int]]]

    def full_name(self) -> str:
        return f"{SUITE}.{self.name}"


def cases(cfg: CbConfig) -> list[Case]:
    return [
        Case(cfg.test_name, 42, lambda c: c.cores),
        Case(f"{cfg.test_name}_SingleCore", 77, lambda c: [(0, 0)]),
    ]


@dataclass
class Options:
    list_tests: bool = False
    gtest_filter: str = "*"
    output: str | None = None
    color: str = "auto"
    brief: bool = False
    config: str | None = None


def parse_args(argv: Sequence[str], env: dict[str, str]) -> Options:
    opts = Options(
        gtest_filter=env.get("GTEST_FILTER", "*"),
        output=env.get("GTEST_OUTPUT"),
        color=env.get("GTEST_COLOR", "auto").lower(),
        config=env.get(ENV_CONFIG),
    )
    for arg in argv:
        name, has, value = arg.lstrip("-").partition("=")
        if arg in ("-h", "--help"):
            raise ConfigError("help")
        if name == "gtest_list_tests":
            opts.list_tests = not has or value not in ("0", "false", "no")
        elif name == "gtest_filter":
            opts.gtest_filter = value
        elif name == "gtest_output":
            opts.output = value
        elif name == "gtest_color":
            opts.color = value.lower()
        elif name == "gtest_brief":
            opts.brief = not has or value not in ("0", "false", "no")
        elif name == "cb_config":
            opts.config = value
    return opts


def selected(all_cases: list[Case], gtest_filter: str) -> list[Case]:
    pos, _, neg = gtest_filter.partition("-")

    def hit(name: str, patterns: str) -> bool:
        return any(fnmatch.fnmatchcase(name, p) for p in patterns.split(":") if p)

    return [
        c
        for c in all_cases
        if hit(c.full_name(), pos or "*") and not (neg and hit(c.full_name(), neg))
    ]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


@dataclass
class Result:
    case: Case
    failures: list[tuple[int, str]]
    ms: int
    started: float


def check(cfg: CbConfig, outcome: Outcome) -> list[tuple[int, str]]:
    """The test's assertions on a run that finished."""
    expected = cfg.blocks_per_core * cfg.compute_out_pages_per_block
    fails = []
    for c in outcome.cores:
        if c.in_avail or c.out_avail:
            fails.append(
                (
                    58,
                    "Expected equality of these values:\n  pages_left_in_cbs\n"
                    f"    Which is: {c.in_avail + c.out_avail}\n  0\n"
                    f"core ({c.x},{c.y}) finished with pages left in its circular buffers",
                )
            )
            break
        if c.written != expected:
            fails.append(
                (
                    61,
                    f"Expected equality of these values:\n  pages_written\n    Which is: {c.written}\n"
                    f"  expected_pages\n    Which is: {expected}",
                )
            )
            break
    return fails


def hang_forever(watcher: Watcher | None, program: Program) -> NoReturn:
    """What a hung test does: nothing, forever (the watcher keeps polling)."""
    while True:
        if watcher is not None:
            watcher.dump(program)
            time.sleep(watcher.interval)
        else:
            time.sleep(3600)


def _dprint_out(env: dict[str, str], out: TextIO) -> TextIO:
    """Where DPRINT lines go: ``TT_METAL_DPRINT_FILE`` (appended to) or the console."""
    path = env.get("TT_METAL_DPRINT_FILE")
    if path and env.get("TT_METAL_DPRINT_CORES"):
        return Path(path).open("a", encoding="utf-8")  # run() closes it
    return out


def run(opts: Options, cfg: CbConfig, env: dict[str, str], out: TextIO) -> int:
    chosen = selected(cases(cfg), opts.gtest_filter)
    if opts.list_tests:
        if chosen:
            out.write(f"{SUITE}.\n" + "".join(f"  {c.name}\n" for c in chosen))
        return 0
    color = opts.color in ("yes", "true", "t", "1") or (
        opts.color == "auto" and out.isatty() and env.get("TERM", "dumb") != "dumb"
    )

    def mark(tag: str, text: str, colour: str = GREEN, always: bool = False) -> None:
        if opts.brief and not always:
            return
        out.write(f"{colour}{tag} {RESET}{text}\n" if color else f"{tag} {text}\n")

    interval = watcher_interval(env.get("TT_METAL_WATCHER"))
    watcher = Watcher(env, interval, out) if interval is not None else None
    ids = kernel_ids(cfg)
    if watcher is not None:
        watcher.names(ids)
    dout = _dprint_out(env, out)
    say = Dprint(dprint_cores(env.get("TT_METAL_DPRINT_CORES"), cfg), dout)
    if opts.gtest_filter != "*" and not opts.brief:
        out.write(f"Note: Google Test filter = {opts.gtest_filter}\n")
    mark(
        "[==========]",
        f"Running {_plural(len(chosen), 'test')} from {_plural(1 if chosen else 0, 'test suite')}.",
    )
    mark("[----------]", "Global test environment set-up.")
    t0, started = time.perf_counter(), time.time()
    results: list[Result] = []
    last: Program | None = None
    if chosen:
        mark("[----------]", f"{_plural(len(chosen), 'test')} from {SUITE}")
    for h_id, case in enumerate(chosen, 1):
        mark("[ RUN      ]", case.full_name())
        out.flush()
        c0, s0 = time.perf_counter(), time.time()
        cores = case.cores(cfg)
        outcome = simulate(cfg, cores, say)
        dout.flush()
        last = Program(cfg, h_id, {(c.x, c.y): c for c in outcome.cores}, ids)
        if outcome.deadlocked:
            out.flush()
            write_device_state(last, env)
            error = dispatch_timeout(watcher, last, env, out)
            out.write(
                f"terminate called after throwing an instance of 'std::runtime_error'\n"
                f"  what():  {error}\n"
            )
            out.flush()
            os.abort()  # an uncaught TT_THROW in a googletest binary
        fails = check(cfg, outcome)
        ms = int((time.perf_counter() - c0) * 1000)
        for line, message in fails:
            out.write(f"{TEST_FILE}:{line}: Failure\n{message}\n")
        results.append(Result(case, fails, ms, s0))
        if fails:
            mark("[  FAILED  ]", f"{case.full_name()} ({ms} ms)", RED, always=True)
        else:
            mark("[       OK ]", f"{case.full_name()} ({ms} ms)")
    total = int((time.perf_counter() - t0) * 1000)
    if chosen:
        mark("[----------]", f"{_plural(len(chosen), 'test')} from {SUITE} ({total} ms total)")
        if not opts.brief:
            out.write("\n")
    if watcher is not None:
        if last is not None:
            watcher.dump(last)
        watcher.detach()
    if dout is not out:
        dout.close()
    mark("[----------]", "Global test environment tear-down")
    mark(
        "[==========]",
        f"{_plural(len(chosen), 'test')} from {_plural(1 if chosen else 0, 'test suite')} ran. ({total} ms total)",
        always=True,
    )
    passed = [r for r in results if not r.failures]
    failed = [r for r in results if r.failures]
    mark("[  PASSED  ]", f"{_plural(len(passed), 'test')}.", always=True)
    if failed:
        mark("[  FAILED  ]", f"{_plural(len(failed), 'test')}, listed below:", RED, always=True)
        for r in failed:
            mark("[  FAILED  ]", r.case.full_name(), RED, always=True)
        out.write(f"\n{len(failed):2d} FAILED {'TEST' if len(failed) == 1 else 'TESTS'}\n")
    if opts.output:
        write_report(opts.output, results, started, total)
    out.flush()
    return 1 if failed else 0


def _iso(ts: float) -> str:
    return (
        datetime.fromtimestamp(ts).strftime("%Y-%m-%dT%H:%M:%S.") + f"{int(ts * 1000) % 1000:03d}"
    )


def write_report(spec: str, results: list[Result], started: float, total_ms: int) -> None:
    """googletest's JSON or XML report (``--gtest_output=json:PATH`` / ``xml:PATH``)."""
    kind, _, where = spec.partition(":")
    if kind not in ("json", "xml"):
        raise ConfigError(f"--gtest_output: unknown format {kind!r} (use json:PATH or xml:PATH)")
    path = Path(where or f"test_detail.{kind}")
    if where.endswith("/") or path.is_dir():
        path = path / f"cbmodel.{kind}"
    path.parent.mkdir(parents=True, exist_ok=True)
    failed = sum(1 for r in results if r.failures)
    if kind == "json":
        counts = {
            "tests": len(results),
            "failures": failed,
            "disabled": 0,
            "errors": 0,
            "timestamp": _iso(started) + "Z",
            "time": f"{total_ms / 1000:.3f}s",
        }
        tests = []
        for r in results:
            t: dict[str, Any] = {
                "name": r.case.name,
                "file": TEST_FILE,
                "line": r.case.line,
                "status": "RUN",
                "result": "COMPLETED",
                "timestamp": _iso(r.started) + "Z",
                "time": f"{r.ms / 1000:.3f}s",
                "classname": SUITE,
            }
            if r.failures:
                t["failures"] = [
                    {"failure": f"{TEST_FILE}:{ln}\n{m}", "type": ""} for ln, m in r.failures
                ]
            tests.append(t)
        doc = {
            **counts,
            "name": "AllTests",
            "testsuites": [{"name": SUITE, **counts, "testsuite": tests}] if results else [],
        }
        path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        return
    xml = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<testsuites tests="{len(results)}" failures="{failed}" disabled="0" errors="0" '
        f'time="{total_ms / 1000:.3f}" timestamp="{_iso(started)}" name="AllTests">',
    ]
    if results:
        xml.append(
            f'  <testsuite name="{SUITE}" tests="{len(results)}" failures="{failed}" disabled="0" '
            f'skipped="0" errors="0" time="{total_ms / 1000:.3f}" timestamp="{_iso(started)}">'
        )
        for r in results:
            attrs = (
                f'name="{r.case.name}" file="{TEST_FILE}" line="{r.case.line}" status="run" '
                f'result="completed" time="{r.ms / 1000:.3f}" timestamp="{_iso(r.started)}" '
                f'classname="{SUITE}"'
            )
            if not r.failures:
                xml.append(f"    <testcase {attrs} />")
                continue
            xml.append(f"    <testcase {attrs}>")
            for ln, m in r.failures:
                text = f"{TEST_FILE}:{ln}\n{m}"
                xml.append(
                    f'      <failure message={quoteattr(text)} type=""><![CDATA[{escape(text)}]]></failure>'
                )
            xml.append("    </testcase>")
        xml.append("  </testsuite>")
    xml.append("</testsuites>")
    path.write_text("\n".join(xml) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    env = dict(os.environ)
    try:
        opts = parse_args(args, env)
        cfg = load_config(Path(opts.config)) if opts.config else CbConfig()
        return run(opts, cfg, env, sys.stdout)
    except ConfigError as exc:
        if str(exc) == "help":
            sys.stdout.write(USAGE)
            return 0
        sys.stderr.write(f"lnrepro cbmodel: {exc}\n")
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
