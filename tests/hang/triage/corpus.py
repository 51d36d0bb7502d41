"""A corpus of tt-triage output, rendered for these tests the way each era's source prints it.

Nothing here is copied from a sample: the device states are made up (our kernels, ids, PCs and
paths), and each renderer re-does what the named tt-metal source does, with the real
``tabulate`` and ``rich`` libraries in the sources' settings (tenstorrent/tt-metal):

* ``one_script`` — ``scripts/debugging_scripts/tt-triage.py`` at 90b63baa50e2 run with ``-V``
  (-vv): ``= `` titles, the PC tables of ``check_riscV``, a dot per RISC, then the running-ops
  table ``Loc | Proc | RD PTR | Base | Offset | Kernel ID:Name | PC | Kernel Callstack | Kernel
  Path`` with one extra row per frame, through ``tabulate(..., headers="firstrow",
  tablefmt=DEFAULT_TABLE_FORMAT)`` (the rounded ``TableFormat`` of that file), ``DONE: OK``.
* ``first_framework`` — the first ``tools/triage/dump_callstacks.py`` of the script framework
  (it printed its own tabulate table: ``Dev | Loc | Proc | RD PTR | Base | Offset | Kernel
  ID:Name | PC | Kernel Callstack | Kernel Path``, frames in extra rows).
* ``tabulate_framework`` — ``tools/triage/triage.py``'s tabulate-era ``serialize_result``: one
  ``<script>.py:`` line, failures, then the header from the fields' serialized names and every
  multi-line row split into one table row per line, through the same rounded format.
* ``rich_framework`` — ``serialize_result`` at b81970a02302 / 02c321d69d06: ``rich.table.Table()``
  (its default heavy head), a column per field, printed by a ``Console(width=...)`` with colours
  off; ``width`` 10000 as 02c321d pipes it, or a terminal's.

The fields are those of ``dispatcher_data.py`` (5acfb5ff23cb), ``run_checks.py``
(e97fe7b4a3d8), ``callstack_provider.py`` (91083879c6c4: ``_format_callstack`` and the empty
first line of the cell), ``dump_circular_buffers.py`` (b98e5c66547e), ``dump_lightweight_asserts.py``
(ef733df7d8a0), ``dump_running_operations.py`` (c482fe32d0e6) and ``check_noc_status.py``
(42bfdec046d2).
"""

from __future__ import annotations

import functools
import io
from dataclasses import dataclass, field, replace

FW = "./tt_metal/hw/firmware/src/tt-1xx"
DATAFLOW = "./tt_metal/hw/inc/api/dataflow/dataflow_api.h"
LLK_IO = "./tt_metal/hw/ckernels/wormhole_b0/metal/llk_io/llk_io_unpack.h"
OPS = "./tt-train/sources/ttml/metal/ops/layernorm_bw/device/kernels"
LLK_API = "./tt_metal/hw/ckernels/wormhole_b0/metal/llk_api"
ABS = "/home/dev/tt-metal"  # the one-script era printed absolute paths

Frame = tuple[int | None, str, str | None, int | None, int | None]  # pc, function, file, line, col


@dataclass(frozen=True)
class Risc:
    name: str  # brisc, ncrisc, trisc0..2
    kernel_id: int
    kernel: str | None  # Inspector's name; None prints N/A
    go: str
    waypoint: str
    pc: int
    frames: tuple[Frame, ...]
    rd_ptr: int = 1  # the launch message it runs (RD PTR, launch_msg_rd_ptr)


@dataclass(frozen=True)
class Core:
    device: int
    logical: tuple[int, int]
    riscs: tuple[Risc, ...]

    @property
    def noc0(self) -> tuple[int, int]:  # Wormhole: logical (x,y) is noc0 (x+1, y+1) here
        return (self.logical[0] + 1, self.logical[1] + 1)

    def loc(self) -> str:
        return f"{self.noc0[0]}-{self.noc0[1]} ({self.logical[0]},{self.logical[1]})"


@dataclass(frozen=True)
class Cb:
    core: Core
    risc: str
    cb: int
    state: str
    pages: int
    recv: int
    acked: int


@dataclass(frozen=True)
class Assert:
    core: Core
    risc: str
    kernel: str
    code: str
    frames: tuple[Frame, ...]


@dataclass(frozen=True)
class NocFail:
    core: Core
    risc: str
    noc: int
    pairs: tuple[tuple[str, str, int, int], ...]


@dataclass(frozen=True)
class Scenario:
    name: str
    cores: tuple[Core, ...]
    cbs: tuple[Cb, ...] = ()
    asserts: tuple[Assert, ...] = ()
    noc_fails: tuple[NocFail, ...] = ()


@dataclass(frozen=True)
class Expect:
    """What a right diagnosis names, and what it must not invent."""

    pattern: str
    risc: str
    device: int
    cores: int  # how many cores the leading group names
    name: str | None  # the kernel's name, when the text prints it
    file: str | None  # the kernel's file name, when the text prints it whole
    where: str  # the waypoint, or frame 0's function when the text has no waypoint
    idle: tuple[str, ...] = ()  # RISCs that must be listed idle (not to blame)
    cb: str | None = None  # a CB state the group must carry, e.g. "CB 16 on BRISC: empty"
    cannot_tell: tuple[str, ...] = ()  # words the unknowns must hold
    absent: tuple[str, ...] = ()  # strings the diagnosis must not hold anywhere
    loose: bool = False  # a wrapped terminal paste: name and file may be unreadable (None)


@dataclass(frozen=True)
class Case:
    name: str
    text: str
    format: str  # watcher-log, tt-triage, summary
    era: str
    expect: Expect
    notes: tuple[str, ...] = field(default_factory=tuple)


# ------------------------------------------------------------------------------ scenarios
def _fw(risc: str, pc: int) -> tuple[Frame, ...]:
    return ((pc, "main", f"{FW}/{risc if not risc.startswith('trisc') else 'trisc'}.cc", 120, 9),)


def _idle(risc: str, pc: int, wp: str = "W") -> Risc:
    return Risc(risc, 0, None, "GO", wp, pc, _fw(risc, pc))


def idle_core(device: int, x: int, y: int) -> Core:
    return Core(
        device,
        (x, y),
        (
            _idle("brisc", 0x4A10, "GW"),
            _idle("ncrisc", 0x5B20),
            _idle("trisc0", 0x6C30),
            _idle("trisc1", 0x6D40),
            _idle("trisc2", 0x6E50),
        ),
    )


def _starved_core(x: int) -> Core:
    writer = Risc(
        "brisc",
        12,
        "writer_ln_bw",
        "GO",
        "CWFW",
        0xA1B4,
        (
            (0xA1B4, "cb_wait_front", DATAFLOW, 418, 5),
            (None, "kernel_main", f"{OPS}/dataflow/writer_layernorm_bw.cpp", 57, 13),
        ),
    )
    reader = Risc("ncrisc", 11, "reader_ln_bw", "GO", "W", 0x5B20, _fw("ncrisc", 0x5B20))
    comp = [
        Risc(t, 13, "layernorm_bw_kernel", "GO", "W", 0x6C30 + i, _fw(t, 0x6C30 + i))
        for i, t in enumerate(("trisc0", "trisc1", "trisc2"))
    ]
    return Core(0, (x, 0), (writer, reader, *comp))


STARVED = Scenario(
    "starved",
    (_starved_core(0), _starved_core(1), idle_core(0, 2, 0)),
    cbs=(
        *tuple(
            Cb(c, r, 16, "empty", 4, 40, 40)
            for c in (_starved_core(0), _starved_core(1))
            for r in ("brisc", "trisc2")
        ),
        Cb(_starved_core(0), "trisc0", 0, "empty", 8, 64, 64),
    ),
)

_CYCLE_CORE = Core(
    0,
    (0, 0),
    (
        Risc(
            "brisc",
            22,
            "writer_ln_bw",
            "GO",
            "CWFW",
            0xA1B4,
            (
                (0xA1B4, "cb_wait_front", DATAFLOW, 418, 5),
                (None, "kernel_main", f"{OPS}/dataflow/writer_layernorm_bw.cpp", 57, 13),
            ),
        ),
        Risc(
            "ncrisc",
            21,
            "reader_ln_bw",
            "GO",
            "CRBW",
            0xFFC0_1A2C,
            (
                (0xFFC0_1A2C, "cb_reserve_back", DATAFLOW, 375, 9),
                (None, "kernel_main", f"{OPS}/dataflow/reader_layernorm_bw.cpp", 88, 17),
            ),
        ),
        Risc(
            "trisc0",
            23,
            "layernorm_bw_kernel",
            "GO",
            "UPAD",
            0x7A80,
            (
                (0x7A80, "llk_wait_tiles", LLK_IO, 45, 5),
                (None, "cb_wait_front", "./tt_metal/include/compute_kernel_api/cb_api.h", 29, 5),
                (None, "kernel_main", f"{OPS}/compute/layernorm_bw_kernel.cpp", 140, 21),
            ),
        ),
        Risc(
            "trisc1",
            23,
            "layernorm_bw_kernel",
            "GO",
            "MWDD",
            0x7B90,
            ((0x7B90, "kernel_main", f"{OPS}/compute/layernorm_bw_kernel.cpp", 141, 3),),
        ),
        Risc(
            "trisc2",
            23,
            "layernorm_bw_kernel",
            "GO",
            "K",
            0x7CA0,
            ((0x7CA0, "kernel_main", f"{OPS}/compute/layernorm_bw_kernel.cpp", 142, 3),),
        ),
    ),
)
CYCLE = Scenario(
    "cycle",
    (_CYCLE_CORE, idle_core(0, 1, 0)),
    cbs=(
        Cb(_CYCLE_CORE, "trisc0", 0, "full", 2, 130, 128),
        Cb(_CYCLE_CORE, "brisc", 16, "empty", 2, 64, 64),
        Cb(_CYCLE_CORE, "trisc2", 16, "empty", 2, 64, 64),
    ),
)

_ADD = "./tt_metal/programming_examples/add_tiles_stall/kernels"
_ASSERT_CORE = Core(
    0,
    (0, 0),
    (
        Risc(
            "brisc",
            32,
            "writer_one_tile",
            "GO",
            "CWFW",
            0xA1B4,
            (
                (0xA1B4, "cb_wait_front", DATAFLOW, 418, 5),
                (None, "kernel_main", f"{_ADD}/dataflow/writer_one_tile.cpp", 22, 9),
            ),
        ),
        Risc("ncrisc", 31, "reader_two_tiles", "GO", "W", 0x5B20, _fw("ncrisc", 0x5B20)),
        Risc("trisc0", 33, "add_tiles_stall", "GO", "W", 0x6C30, _fw("trisc0", 0x6C30)),
        Risc("trisc1", 33, "add_tiles_stall", "GO", "W", 0x6D40, _fw("trisc1", 0x6D40)),
        Risc(
            "trisc2",
            33,
            "add_tiles_stall",
            "GO",
            "K",
            0x7D08,
            ((0x7D08, "kernel_main", f"{_ADD}/compute/add_tiles_stall.cpp", 31, 5),),
        ),
    ),
)
ASSERTED = Scenario(
    "assert",
    (_ASSERT_CORE, idle_core(0, 1, 0)),
    cbs=(
        Cb(_ASSERT_CORE, "brisc", 16, "empty", 1, 0, 0),
        Cb(_ASSERT_CORE, "trisc2", 16, "empty", 1, 0, 0),
    ),
    asserts=(
        Assert(
            _ASSERT_CORE,
            "trisc2",
            "add_tiles_stall",
            'LLK_ASSERT(false, "stall after commit")',
            ((0x7D04, "kernel_main", f"{_ADD}/compute/add_tiles_stall.cpp", 31, 5),),
        ),
    ),
)


def _noc_core(device: int, x: int) -> Core:
    return Core(
        device,
        (x, 0),
        (
            Risc(
                "brisc",
                41,
                "sender_sem",
                "GO",
                "NSW",
                0xB2C8,
                (
                    (0xB2C8, "noc_semaphore_wait", DATAFLOW, 1093, 12),
                    (
                        None,
                        "kernel_main",
                        "./ttnn/cpp/ttnn/operations/ccl/kernels/sender_sem.cpp",
                        64,
                        5,
                    ),
                ),
            ),
            _idle("ncrisc", 0x5B20),
            _idle("trisc0", 0x6C30),
            _idle("trisc1", 0x6D40),
            _idle("trisc2", 0x6E50),
        ),
    )


NOC = Scenario(
    "noc",
    (idle_core(0, 0, 0), _noc_core(1, 1), _noc_core(1, 2)),
    noc_fails=(
        NocFail(
            _noc_core(1, 1),
            "brisc",
            0,
            (("NIU_MST_RD_RESP_RECEIVED", "noc_reads_num_issued", 120, 118),),
        ),
    ),
)

# The root cause and a downstream waiter on the same cores: compute's unpacker (TRISC0) waits in
# llk_wait_tiles under cb_wait_front on CB 0, which holds 28 pages (partial), while the reader is
# done; the writer (BRISC) waits in cb_wait_front on CB 16 (empty), only because compute never
# produced. The unpacker is the cause, the writer a consequence (the watcher reader's rule).
_FW_OPS = "./ttnn/cpp/ttnn/operations/normalization/ln_fw/device/kernels"


def _root_core(x: int) -> Core:
    return Core(
        0,
        (x, 1),
        (
            Risc(
                "brisc",
                52,
                "writer_ln_fw",
                "GO",
                "CWFW",
                0xA1B4,
                (
                    (0xA1B4, "cb_wait_front", DATAFLOW, 418, 5),
                    (None, "kernel_main", f"{_FW_OPS}/dataflow/writer_ln_fw.cpp", 31, 9),
                ),
            ),
            Risc("ncrisc", 51, "reader_ln_fw", "GO", "W", 0x5B20, _fw("ncrisc", 0x5B20)),
            Risc(
                "trisc0",
                53,
                "ln_fw_compute",
                "GO",
                "K",
                0x7A80,
                (
                    (0x7A80, "llk_wait_tiles", LLK_IO, 45, 5),
                    (
                        None,
                        "cb_wait_front",
                        "./tt_metal/include/compute_kernel_api/cb_api.h",
                        29,
                        5,
                    ),
                    (None, "kernel_main", f"{_FW_OPS}/compute/ln_fw_compute.cpp", 77, 9),
                ),
            ),
            Risc(
                "trisc1",
                53,
                "ln_fw_compute",
                "GO",
                "K",
                0x7B90,
                ((0x7B90, "kernel_main", f"{_FW_OPS}/compute/ln_fw_compute.cpp", 78, 3),),
            ),
            Risc(
                "trisc2",
                53,
                "ln_fw_compute",
                "GO",
                "K",
                0x7CA0,
                ((0x7CA0, "kernel_main", f"{_FW_OPS}/compute/ln_fw_compute.cpp", 79, 3),),
            ),
        ),
    )


ROOT = Scenario(
    "root",
    (_root_core(0), _root_core(1), idle_core(0, 2, 1)),
    cbs=tuple(
        cb
        for c in (_root_core(0), _root_core(1))
        for cb in (
            Cb(c, "brisc", 16, "empty", 0, 96, 96),
            Cb(c, "trisc0", 0, "partial", 0, 124, 96),
            Cb(c, "trisc0", 16, "empty", 0, 96, 96),
            Cb(c, "trisc2", 16, "empty", 64, 96, 96),
        )
    ),
)

SCENARIOS = (STARVED, CYCLE, ASSERTED, NOC, ROOT)

EXPECT: dict[str, Expect] = {
    "starved": Expect(
        "CONSUMER_STARVED",
        "BRISC",
        0,
        2,
        "writer_ln_bw",
        "writer_layernorm_bw.cpp",
        "CWFW",
        idle=("NCRISC", "TRISC0", "TRISC1", "TRISC2", "BRISC"),
        cb="CB 16 on BRISC: empty",
    ),
    "cycle": Expect(
        "PRODUCER_BLOCKED",
        "NCRISC",
        0,
        1,
        "reader_ln_bw",
        "reader_layernorm_bw.cpp",
        "CRBW",
        idle=("BRISC",),
        cb="CB 0 on TRISC0: full",
    ),
    "assert": Expect(
        "KERNEL_ASSERT",
        "TRISC2",
        0,
        1,
        "add_tiles_stall",
        "add_tiles_stall.cpp",
        "kernel_main",
        idle=("NCRISC",),
    ),
    "noc": Expect(
        "NOC_WAIT", "BRISC", 1, 2, "sender_sem", "sender_sem.cpp", "NSW", idle=("BRISC", "NCRISC")
    ),
    "root": Expect(
        "CONSUMER_STARVED",
        "TRISC0",
        0,
        2,
        "ln_fw_compute",
        "ln_fw_compute.cpp",
        "CWFW",
        idle=("NCRISC",),
        cb="CB 0 on TRISC0: partial",
    ),
}


# ------------------------------------------------------------------------------ printing
def callstack_lines(frames: tuple[Frame, ...], absolute: bool = False) -> list[str]:
    """``_format_callstack`` (callstack_provider.py 91083879c6c4; the one-script era's
    ``format_callstack``, absolute paths): ``  #<n> [0x<PC> in ]<fn> () [at <file> <line>:<col>]``."""
    width = len(str(len(frames) - 1))
    out = []
    for i, (pc, fn, file, line, col) in enumerate(frames):
        s = f"  #{i:<{width}} "
        if pc is not None:
            s += f"0x{pc:08X} in "
        s += f"{fn} () "
        if file is not None:
            path = ABS + file[1:] if absolute and file.startswith("./") else file
            s += f"at {path} {line}:{col}"
        out.append(s)
    return out


def _rounded() -> object:
    from tabulate import DataRow, Line, TableFormat

    return TableFormat(
        lineabove=Line("╭", "─", "┬", "╮"),
        linebelowheader=Line("├", "─", "┼", "┤"),
        linebetweenrows=None,
        linebelow=Line("╰", "─", "┴", "╯"),
        headerrow=DataRow("│", "│", "│"),
        datarow=DataRow("│", "│", "│"),
        padding=1,
        with_header_hide=None,
    )


def _tab(table: list[list[str]]) -> str:
    from tabulate import tabulate

    return str(tabulate(table, headers="firstrow", tablefmt=_rounded()))


def _elf(c: Core, r: Risc) -> str:
    return (
        f"{ABS}/built/0/kernels/{r.kernel}/1{r.kernel_id:04d}/{r.name}/{r.name}.elf"
        if r.kernel
        else ""
    )


def one_script(s: Scenario, *, ansi: bool = False) -> str:
    """scripts/debugging_scripts/tt-triage.py (90b63baa50e2) with -V: every RISC of every core."""
    green, rst, blue, orange, vclr = (
        ("\x1b[32m", "\x1b[0m", "\x1b[34m", "\x1b[33m", "\x1b[94m") if ansi else ("",) * 5
    )
    out: list[str] = []
    for dev in sorted({c.device for c in s.cores}):
        cores = [c for c in s.cores if c.device == dev]
        title = lambda m: out.append(f"{green}= {m}{rst}")  # noqa: E731
        title(f"Checking device {dev}")
        title("Checking that ARC heartbeat is running. Estimating ARC uptime (-v).")
        title("Checking that we can reach all NOC endpoints through NOC0 (TODO: NOC1)")
        title("Checking location 0x0 of each core's L1 for the presence of FW")
        title("Checking that the RISC-V cores are running. Dumping PC through debug bus (-v).")
        pcs = [["Loc", *[f"{r.name}_pc" for r in cores[0].riscs]]]
        pcs += [
            [f"{c.logical[0]},{c.logical[1]}", *[f"0x{r.pc:x}" for r in c.riscs]] for c in cores
        ]
        out.append(f"{vclr}{_tab(pcs)}{rst}")
        title("Print the running operations on the device.")
        table = [
            [
                "Loc",
                "Proc",
                "RD PTR",
                "Base",
                "Offset",
                "Kernel ID:Name",
                "PC",
                "Kernel Callstack",
                "Kernel Path",
            ]
        ]
        dots = 0
        for c in cores:
            for r in c.riscs:
                dots += 1
                table.append(
                    [
                        f"{c.logical[0]},{c.logical[1]}",
                        r.name.upper(),
                        str(r.rd_ptr),
                        "0x82b0",
                        "0x1a40" if r.kernel else "0x0",
                        f"{r.kernel_id}:{r.kernel or ''}",
                        f"0x{r.pc:x}",
                        "",
                        _elf(c, r),
                    ]
                )
                for ln in callstack_lines(r.frames, absolute=True):
                    if ansi:
                        ln = ln.replace("0x", f"{blue}0x", 1).replace(
                            " in ", f"{rst} in {orange}", 1
                        )
                    table.append(["", "", "", "", "", "", "", ln])
        out.append("." * dots)
        out.append(_tab(table))
    out.append(f"{green}DONE: OK{rst}")
    return "\n".join(out) + "\n"


def first_framework(s: Scenario) -> str:
    """The first tools/triage/dump_callstacks.py: its own tabulate table, frames in extra rows."""
    table = [
        [
            "Dev",
            "Loc",
            "Proc",
            "RD PTR",
            "Base",
            "Offset",
            "Kernel ID:Name",
            "PC",
            "Kernel Callstack",
            "Kernel Path",
        ]
    ]
    for c in s.cores:
        for r in c.riscs:
            table.append(
                [
                    str(c.device),
                    f"{c.logical[0]},{c.logical[1]}",
                    r.name.upper(),
                    "1",
                    "0x82b0",
                    "0x1a40",
                    f"{r.kernel_id}:{r.kernel or ''}",
                    f"0x{r.pc:x}",
                    "",
                    _elf(c, r) or "N/A",
                ]
            )
            for ln in callstack_lines(r.frames):
                table.append(["", "", "", "", "", "", "", "", ln])
    return "\ndump_callstacks.py:\n" + _tab(table) + "\n"


# the serialized rows of each script, as the framework's serialize_result builds them
CALLSTACK_HEADER = [
    "Dev",
    "Loc",
    "RiscV",
    "Kernel ID",
    "Kernel Name",
    "Subdevice",
    "Go Message",
    "Preload",
    "Waypoint",
    "PC",
    "Kernel Callstack",
]
CB_HEADER = [
    "Dev",
    "Loc",
    "RISC",
    "CB",
    "Kind",
    "State",
    "fifo_addr",
    "fifo_size",
    "page_size",
    "pages",
    "rd_ptr",
    "wr_ptr",
    "recv",
    "acked",
    "occ",
]
ASSERT_HEADER = [
    "Dev",
    "Loc",
    "RiscV",
    "Kernel Name",
    "Assert line with callstack",
    "Arguments and Locals",
]
OPS_HEADER = ["Host Assigned ID", "Operations", "Previous Operations", "Device List", "Core List"]


def callstack_rows(s: Scenario, all_cores: bool = False) -> list[list[str]]:
    rows = []
    for c in s.cores:
        for r in c.riscs:
            if r.go == "DONE" and not all_cores:
                continue
            cell = "\n".join(["", *callstack_lines(r.frames)])
            rows.append(
                [
                    str(c.device),
                    c.loc(),
                    r.name,
                    str(r.kernel_id),
                    r.kernel or "N/A",
                    "0",
                    r.go,
                    "False",
                    r.waypoint,
                    hex(r.pc),
                    cell,
                ]
            )
    return rows


def cb_rows(s: Scenario) -> list[list[str]]:
    return [
        [
            str(b.core.device),
            b.core.loc(),
            b.risc,
            str(b.cb),
            "local",
            b.state,
            hex(0x19000 + 0x800 * b.cb),
            str(2048 * b.pages),
            "2048",
            str(b.pages),
            hex(0x19000),
            hex(0x19800),
            str(b.recv),
            str(b.acked),
            str(b.recv - b.acked),
        ]
        for b in s.cbs
    ]


def assert_rows(s: Scenario) -> list[list[str]]:
    return [
        [
            str(a.core.device),
            a.core.loc(),
            a.risc,
            a.kernel,
            "\n".join(["", a.code, "", *callstack_lines(a.frames)]),
            "",
        ]
        for a in s.asserts
    ]


def ops_rows(s: Scenario) -> list[list[str]]:
    by: dict[str, set[str]] = {}
    for c in s.cores:
        for r in c.riscs:
            if r.kernel:
                by.setdefault(f"Kernel: {r.kernel}", set()).add(
                    f"{c.device}:{c.noc0[0]}-{c.noc0[1]}"
                )
    cores = sorted({x for v in by.values() for x in v})
    shown = cores if len(cores) <= 5 else [*cores[:5], "..."]
    devs = sorted({x.split(":")[0] for x in cores})
    return [["0x2a", "\n".join(sorted(by)), "N/A", ", ".join(devs), "\n".join(shown)]] if by else []


def noc_fail_lines(s: Scenario) -> list[str]:
    out = []
    for f in s.noc_fails:
        msg = f"{f.risc} NOC{f.noc}: " + "".join(
            f"    {reg} {var} {a} {b}\n" for reg, var, a, b in f.pairs
        )
        msg = (
            "Mismatched state: \n"
            + msg
            + "\nEither the device is not idle and is currently processing transactions, the kernel has incorrectly modified the NOC transaction counters, or the NoC is hung."
        )
        out.append(f"    Device {f.core.device}: functional_workers [{f.core.loc()}]: {msg}")
    return out


def _sections(s: Scenario) -> list[tuple[str, list[str], list[list[str]] | None, list[str]]]:
    """(script, header, rows or None for pass/fail, failure lines) in the framework's order."""
    secs: list[tuple[str, list[str], list[list[str]] | None, list[str]]] = []
    secs.append(("check_binary_integrity.py", [], None, []))
    secs.append(("check_noc_status.py", [], None, noc_fail_lines(s)))
    secs.append(("dump_callstacks.py", CALLSTACK_HEADER, callstack_rows(s), []))
    if s.cbs:
        secs.append(("dump_circular_buffers.py", CB_HEADER, cb_rows(s), []))
    secs.append(("dump_lightweight_asserts.py", ASSERT_HEADER, assert_rows(s) or None, []))
    secs.append(("dump_running_operations.py", OPS_HEADER, ops_rows(s) or None, []))
    return secs


@functools.cache  # rendering is slow (rich at width 10000: ~1 s); each text is made once
def tabulate_framework(s: Scenario) -> str:
    """tools/triage/triage.py, tabulate era: serialize_result splits multi-line rows."""
    out: list[str] = []
    for name, header, rows, fails in _sections(s):
        out += ["", f"{name}:"]
        if rows is None:
            out += ["  fail", *fails] if fails else ["  pass"]
            continue
        table = [header]
        for row in rows:
            lines = [c.splitlines() or [""] for c in row]
            n = max(len(x) for x in lines)
            if n == 1:
                table.append(row)
            else:
                table += [[x[i] if i < len(x) else "" for x in lines] for i in range(n)]
        out.append(_tab(table))
    return "\n".join(out) + "\n"


@functools.cache
def rich_framework(s: Scenario, width: int = 10000) -> str:
    """tools/triage/triage.py at 02c321d69d06 (b81970a02302: width 500): rich Table() per script."""
    from rich.console import Console
    from rich.table import Table

    buf = io.StringIO()
    console = Console(file=buf, width=width, highlight=False, color_system=None)
    for name, header, rows, fails in _sections(s):
        console.print()
        console.print(f"{name}:")
        if rows is None:
            if fails:
                console.print("  fail")
                for f in fails:
                    console.print(f, markup=False)
            else:
                console.print("  pass")
            continue
        table = Table()
        for h in header:
            table.add_column(h, justify="left")
        for row in rows:
            table.add_row(*row)
        console.print(table)
    return buf.getvalue()


AGGREGATED_HEADER = [
    "Kernel Id",
    "Kernel Name",
    "Op Id",
    "Kernel Callstack",
    "# of Cores",
    "RISC Names",
    "Locations (device:core)",
]


def aggregated(s: Scenario, width: int = 10000) -> str:
    """dump_aggregated_callstacks.py (236c2edf9fcd, on with TT_TRIAGE_ENABLE_AGGREGATED_CALLSTACKS=1):
    RISCs grouped by (kernel id, PC, op id), most cores first, through rich as above."""
    from rich.console import Console
    from rich.table import Table

    buckets: dict[tuple[int, int], tuple[Risc, set[str], set[str]]] = {}
    for c in s.cores:
        for r in c.riscs:
            b = buckets.setdefault((r.kernel_id, r.pc), (r, set(), set()))
            b[1].add(f"{c.device}:{c.noc0[0]}-{c.noc0[1]}")
            b[2].add(r.name)
    table = Table()
    for h in AGGREGATED_HEADER:
        table.add_column(h, justify="left")
    for r, locs, riscs in sorted(buckets.values(), key=lambda b: -len(b[1])):
        table.add_row(
            str(r.kernel_id),
            r.kernel or "N/A",
            "42",
            "\n".join(["", *callstack_lines(r.frames)]),
            str(len(locs)),
            ", ".join(sorted(riscs)),
            "\n".join(sorted(locs)),
        )
    buf = io.StringIO()
    console = Console(file=buf, width=width, highlight=False, color_system=None)
    console.print()
    console.print("dump_aggregated_callstacks.py:")
    console.print(table)
    return buf.getvalue()


def cut(text: str, column: int) -> str:
    """Every line cut at ``column``, as a terminal without wrapping shows it."""
    return "\n".join(ln[:column] for ln in text.splitlines()) + "\n"


def summary(s: Scenario) -> str:
    """A user's condensed summary of a triage run: the waiting RISCs with frames, the rest idle."""
    out = ["Summary of what tt-triage showed on our hang:", ""]
    for c in s.cores:
        busy = [r for r in c.riscs if r.kernel_id and r.frames and r.frames[0][1] != "main"]
        if not busy:
            continue
        for r in busy:
            out.append(f"Device {c.device}, core {c.noc0[0]}-{c.noc0[1]} ({r.name}):")
            out.append(f"  kernel {r.kernel}, waypoint {r.waypoint}")
            out += [ln.strip() for ln in callstack_lines(r.frames)]
        rest = [r.name for r in c.riscs if r not in busy]
        if rest:
            out.append(
                f"Device {c.device}, core {c.noc0[0]}-{c.noc0[1]} ({', '.join(rest)}): idle, in firmware main ()"
            )
        out.append("")
    for a in s.asserts:
        out.append(
            f"Device {a.core.device}, core {a.core.noc0[0]}-{a.core.noc0[1]} ({a.risc}): stopped at {a.code}"
        )
        out += [ln.strip() for ln in callstack_lines(a.frames)]
    return "\n".join(out) + "\n"


def mixed(s: Scenario) -> str:
    """tt-metal's dispatch timeout running triage inside a test's console: log lines, the
    command, then only some scripts (--run=...) of the rich framework."""
    head = (
        "                 Always | WARNING  | Timeout detected\n"
        "                 Always | INFO     | Executing command: ./tools/tt-triage.py --disable-progress --skip-version-check\n"
    )
    body = rich_framework(s, width=10000)
    tail = "TIMEOUT: device timeout, potential hang detected, the device is unrecoverable\n"
    return head + body + tail


# ------------------------------------------------------------------------------ spoiled pastes
def numbered(text: str, start: int = 41, style: str = "  {n}  ") -> str:
    """Each line behind an editor's line number, as the watcher pastes have them
    (tests/hang/watcher/pastes.py), blank lines numbered too."""
    from tests.hang.watcher.pastes import numbered as watcher_numbered

    return watcher_numbered(text, start, style)


def dropped(text: str) -> str:
    """The paste began one character late: its first non-blank line lost its first character."""
    lines = text.lstrip("\n").splitlines()
    return "\n".join([lines[0][1:], *lines[1:]]) + "\n"


def from_line(text: str, starts: str) -> str:
    """The paste begins at the first line that starts with ``starts`` (inside the output)."""
    lines = text.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith(starts))
    return "\n".join(lines[at:]) + "\n"


# the spoiled styles, and the words the source's noise list must hold for each
NOISY = {
    "one-script+numbers": "editor line numbers",
    "one-script+dropped": "dropped first character",
    "tabulate+bar-numbers": "editor line numbers",
    "rich+numbers": "editor line numbers",
    "rich+dropped": "dropped first character",
    "rich-in-table+dropped": "dropped first character",
    "rich+numbers+dropped": "editor line numbers",
    "summary+numbers": "editor line numbers",
    "summary+dropped": "dropped first character",
}


def _noisy(s: Scenario, one: Expect, tab: Expect, e: Expect, said: Expect) -> list[Case]:
    rich = rich_framework(s)
    return [
        Case(
            f"{s.name}/one-script+numbers", numbered(one_script(s)), "tt-triage", "one-script", one
        ),
        Case(
            f"{s.name}/one-script+dropped", dropped(one_script(s)), "tt-triage", "one-script", one
        ),
        Case(
            f"{s.name}/tabulate+bar-numbers",
            numbered(tabulate_framework(s), 7, "{n:>4} | "),
            "tt-triage",
            "framework/tabulate",
            tab,
        ),
        Case(f"{s.name}/rich+numbers", numbered(rich), "tt-triage", "framework/rich", e),
        Case(f"{s.name}/rich+dropped", dropped(rich), "tt-triage", "framework/rich", e),
        Case(
            f"{s.name}/rich-in-table+dropped",
            dropped(from_line(rich, "┏")),
            "tt-triage",
            "framework/rich",
            e,
        ),
        Case(
            f"{s.name}/rich+numbers+dropped",
            numbered(dropped(rich), 300),
            "tt-triage",
            "framework/rich",
            e,
        ),
        Case(
            f"{s.name}/summary+numbers",
            numbered(summary(s), 12, "{n}: "),
            "summary",
            "summary",
            said,
        ),
        Case(
            f"{s.name}/summary+dropped",
            dropped(from_line(summary(s), "Device")),
            "summary",
            "summary",
            said,
        ),
    ]


# ------------------------------------------------------------------------------ the corpus
def cases() -> list[Case]:
    """Every scenario in every era and style; each case says what must be named."""
    out: list[Case] = []
    for s in SCENARIOS:
        e = EXPECT[s.name]
        # eras without a Waypoint column: frame 0's call gives the same place (CWFW, CRBW, NSW)
        one = replace(e, cb=None)
        if s.name == "assert":  # no dump_lightweight_asserts before the framework's rich era:
            # the writer waits on compute, whose TRISC2 is in kernel_main with no wait (the
            # watcher reader's rule: it runs past its last waypoint, the text cannot tell why)
            one = replace(one, pattern="UNKNOWN", where="kernel_main", idle=("NCRISC",))
        if s.name == "starved":  # no waypoint: BRISC's own idle GW is not shown either
            one = replace(one, idle=tuple(r for r in e.idle if r != "BRISC"))
        cut126 = replace(one, file=None, cannot_tell=("cut",))
        out += [
            Case(f"{s.name}/one-script", one_script(s), "tt-triage", "one-script", one),
            Case(
                f"{s.name}/one-script-ansi",
                one_script(s, ansi=True),
                "tt-triage",
                "one-script",
                one,
            ),
            Case(
                f"{s.name}/one-script-cut126",
                cut(one_script(s), 126),
                "tt-triage",
                "one-script",
                cut126,
            ),
            Case(
                f"{s.name}/first-framework",
                first_framework(s),
                "tt-triage",
                "framework/tabulate",
                one,
            ),
            Case(
                f"{s.name}/tabulate",
                tabulate_framework(s),
                "tt-triage",
                "framework/tabulate",
                replace(e, cb=None) if not s.cbs else e,
            ),
            Case(f"{s.name}/rich", rich_framework(s), "tt-triage", "framework/rich", e),
            Case(f"{s.name}/rich-500", rich_framework(s, 500), "tt-triage", "framework/rich", e),
            Case(
                f"{s.name}/rich-terminal-150",
                rich_framework(s, 150),
                "tt-triage",
                "framework/rich",
                replace(e, loose=True),
            ),
            Case(
                f"{s.name}/rich-cut130",
                cut(rich_framework(s), 130),
                "tt-triage",
                "framework/rich",
                _cut130(s, replace(e, file=None, cb=None, cannot_tell=("cut",))),
            ),
            Case(f"{s.name}/mixed", mixed(s), "tt-triage", "framework/rich", e),
            Case(
                f"{s.name}/aggregated",
                aggregated(s),
                "tt-triage",
                "framework/rich",
                _aggregated_expect(s, e),
            ),
            Case(
                f"{s.name}/summary",
                summary(s),
                "summary",
                "summary",
                replace(e, cb=None, idle=_said_idle(summary(s))),
            ),
        ]
        tab = replace(e, cb=None) if not s.cbs else e
        out += _noisy(s, one, tab, e, replace(e, cb=None, idle=_said_idle(summary(s))))
    return out


def _cut130(s: Scenario, e: Expect) -> Expect:
    """Cut at column 130 the unpacker's frames are gone: it shows waypoint K and no wait, so the
    cause is still TRISC0 (the writer waits on it) but what it waits in cannot be told."""
    return replace(e, pattern="UNKNOWN", where="K") if s.name == "root" else e


def _said_idle(text: str) -> tuple[str, ...]:
    """The RISCs a summary calls idle."""
    import re

    lines = [ln for ln in text.splitlines() if "idle" in ln]
    return tuple(
        sorted(
            {m.upper() for ln in lines for m in re.findall(r"\b(brisc|ncrisc|trisc[0-2])\b", ln)}
        )
    )


def _aggregated_expect(s: Scenario, e: Expect) -> Expect:
    """The aggregated table has no Waypoint and no CB state; the assert is not in it."""
    if s.name == "assert":  # no assert table: as the one-script era (see cases())
        return replace(e, pattern="UNKNOWN", where="kernel_main", cb=None, idle=("NCRISC",))
    return replace(e, cb=None, idle=tuple(r for r in e.idle if r != "BRISC" or s.name != "starved"))


# ------------------------------------------------------------------------ a real terminal's pastes
# What a person pastes from a terminal, made from the text rich and tabulate print: rich takes the
# terminal's width (tools/triage/triage.py at b81970a02302 reads it; 02c321d69d06 uses 10000 only
# when piped), so a table at 80-120 columns has its cells cut with rich's own '…'; an editor or a
# mail client hard-wraps long lines; a reply quotes them once or twice; a user copies the rows
# without the header, or the header without the rule or without the rows.
TERMINAL_WIDTHS = (80, 100, 120, 200)


def hard_wrapped(text: str, width: int = 160) -> str:
    """Every line longer than ``width`` broken into pieces of ``width`` (an editor's hard wrap;
    the pieces lose their trailing blanks, as a copy from a terminal does)."""
    out: list[str] = []
    for ln in text.splitlines():
        while len(ln) > width:
            out.append(ln[:width].rstrip())
            ln = ln[width:]
        out.append(ln)
    return "\n".join(out) + "\n"


def quoted(text: str, depth: int = 1) -> str:
    """A reply's quoting: '> ' before every line, once or (a reply to a reply) twice."""
    mark = "> " * depth
    return "".join(f"{mark}{ln}".rstrip() + "\n" for ln in text.splitlines())


def _table_lines(text: str, script: str) -> list[str]:
    lines = text.splitlines()
    at = lines.index(f"{script}.py:") + 1
    end = at
    while end < len(lines) and lines[end].strip():
        end += 1
    return lines[at:end]


def rows_only(text: str, script: str = "dump_callstacks") -> str:
    """The rows of one script's table, copied without its borders, header and rule."""
    lines = _table_lines(text, script)
    rule = next(i for i, ln in enumerate(lines) if ln[:1] in "├┡")
    return "\n".join(ln for ln in lines[rule + 1 :] if ln[:1] in "│┃") + "\n"


def without_rule(text: str) -> str:
    """The whole output with every table's rule under its header left out."""
    return "\n".join(ln for ln in text.splitlines() if ln[:1] not in "├┡") + "\n"


def header_only(text: str) -> str:
    """Every table with its header and no row (rich prints an empty Table so; a paste may too)."""
    return "\n".join(ln for ln in text.splitlines() if ln[:1] != "│") + "\n"


def terminal_variants(s: Scenario) -> list[tuple[str, str]]:
    """(name, text) of every shape a terminal paste takes, for one scenario."""
    rich = rich_framework(s)
    tab = tabulate_framework(s)
    out = [(f"rich-{w}", rich_framework(s, w)) for w in TERMINAL_WIDTHS]
    out += [
        ("rich-wrapped-160", hard_wrapped(rich, 160)),
        ("tabulate-wrapped-160", hard_wrapped(tab, 160)),
        ("rich-100-quoted", quoted(rich_framework(s, 100))),
        ("rich-quoted-twice", quoted(rich, 2)),
        ("tabulate-quoted-twice", quoted(tab, 2)),
        ("rich-rows-only", rows_only(rich)),
        ("rich-120-rows-only-quoted-twice", quoted(rows_only(rich_framework(s, 120)), 2)),
        ("tabulate-rows-only", rows_only(tab)),
        ("rich-no-rule", without_rule(rich)),
        ("tabulate-no-rule", without_rule(tab)),
    ]
    return out


def dispatch_only(width: int = 200) -> str:
    """dump_callstacks with one row, tt-metal's fast-dispatch kernel (cq_dispatch.cpp waits for
    commands by design) on a dispatch core: what a user pastes when the workers scrolled away."""
    from rich.console import Console
    from rich.table import Table

    frames = (
        (0x4B20, "cq_dispatch_wait", "./tt_metal/impl/dispatch/kernels/cq_dispatch.cpp", 210, 9),
        (None, "kernel_main", "./tt_metal/impl/dispatch/kernels/cq_dispatch.cpp", 1190, 5),
    )
    row = ["0", "1-10 (0,9)", "brisc", "3", "cq_dispatch", "0", "GO", "False", "NTW", "0x4b20"]
    table = Table()
    for h in CALLSTACK_HEADER:
        table.add_column(h, justify="left")
    table.add_row(*row, "\n".join(["", *callstack_lines(frames)]))
    buf = io.StringIO()
    console = Console(file=buf, width=width, highlight=False, color_system=None)
    console.print()
    console.print("dump_callstacks.py:")
    console.print(table)
    return buf.getvalue()


# ------------------------------------------------------------------ pastes from tt-metal's issues
def _only(core: Core, keep: tuple[str, ...]) -> Core:
    """The core with the RISCs not in keep idle in firmware (a program without that kernel)."""
    return replace(
        core,
        riscs=tuple(
            r if r.name in keep else _idle(r.name, 0x5000 + i) for i, r in enumerate(core.riscs)
        ),
    )


# A dataflow-only program: the reader waits in cb_reserve_back, the writer in cb_wait_front, no
# compute kernel between them: each waits on the other (tabulate era, dump_callstacks.py).
MUTUAL = Scenario("mutual", (_only(_CYCLE_CORE, ("brisc", "ncrisc")), idle_core(0, 1, 0)))


def _own_core() -> Core:
    """The cycle's core with compute stopped past a waypoint of the user's own (AST1, which
    does not end in W): the reader and the writer wait behind it."""
    riscs = tuple(
        replace(
            r,
            waypoint="AST1",
            pc=0x7A90,
            frames=((0x7A90, "kernel_main", f"{OPS}/compute/layernorm_bw_kernel.cpp", 133, 9),),
        )
        if r.name == "trisc0"
        else r
        for r in _CYCLE_CORE.riscs
    )
    return replace(_CYCLE_CORE, riscs=riscs)


OWN_WAYPOINT = Scenario("own-waypoint", (_own_core(), idle_core(0, 1, 0)))


# dump_running_operations.py at 0602ee8a5830 (tenstorrent/tt-metal): one row per Op Id; names
# are N/A when Inspector has none (trace replay, tt-xla); cores `<dev>:<noc0x>-<noc0y>`, cut at
# five plus "..." unless --full-cores; the Cores cell is one core a line.
OPS_HEADER_0602 = [
    "Op Id",
    "Op Name",
    "Op Params",
    "Prev Op Id",
    "Prev Op Name",
    "Prev Op Params",
    "Device Cnt",
    "Core Cnt",
    "Devices",
    "Cores",
]


def running_ops_only(width: int = 10000, name: str = "N/A") -> str:
    """A paste of dump_running_operations alone (rich era), its op names unknown."""
    from rich.console import Console
    from rich.table import Table

    cores = [f"16:{x}-{y}" for x, y in ((2, 1), (2, 2), (3, 1), (3, 2), (4, 1), (4, 2))]
    shown = [*cores[:5], "..."]
    buf = io.StringIO()
    console = Console(file=buf, width=width, highlight=False, color_system=None)
    console.print()
    console.print("dump_running_operations.py:")
    table = Table()
    for h in OPS_HEADER_0602:
        table.add_column(h, justify="left")
    table.add_row(
        "1042", name, "N/A", "1041", "N/A", "N/A", "1", str(len(cores)), "16", "\n".join(shown)
    )
    console.print(table)
    return buf.getvalue()


def _polling_core() -> Core:
    """The cycle's core with compute stopped in an LLK reconfigure, not a CB wait, and still on
    an older launch message (RD PTR 0) than the rest of the grid (RD PTR 1)."""
    riscs = tuple(
        replace(
            r,
            pc=0x6F10,
            rd_ptr=0,
            frames=(
                (
                    0x6F10,
                    "llk_unpack_reconfig_data_format_srca",
                    f"{LLK_API}/llk_unpack_common_api.h",
                    52,
                    5,
                ),
                (None, "kernel_main", f"{OPS}/compute/layernorm_bw_kernel.cpp", 96, 13),
            ),
        )
        if r.name == "trisc0"
        else replace(_idle(r.name, 0x4000 + r.kernel_id), rd_ptr=0)
        for r in _CYCLE_CORE.riscs
    )
    return replace(_CYCLE_CORE, riscs=riscs)


# One-script era (tt-triage.py at 90b63baa50e2) -vv: compute stuck in an LLK reconfigure (not a
# CB wait), its core on launch message 0 while core (1,0) is on 1; cut at the right by the user.
RECONFIG = Scenario("reconfig", (_polling_core(), idle_core(0, 1, 0)))


def _firmware_polling_core() -> Core:
    """The cycle's core where the writer's kernel returned and BRISC polls in firmware's
    ``wait_ncrisc_trisc`` (brisc.cc: ``while (...slave_sync.all != RUN_SYNC_MSG_ALL_SLAVES_DONE)``,
    tt-metal's firmware of the one-script era) for the others; the reader and two TRISCs are back
    in firmware, and TRISC2 loops in the kernel's own code (frame 0 ``kernel_main``, no CB wait).
    The core is on launch message 0, the rest of the grid on 1."""
    brisc = f"{FW}/brisc.cc"
    riscs = []
    for r in _CYCLE_CORE.riscs:
        if r.name == "brisc":
            r = replace(
                r,
                pc=0x4B2C,
                frames=(
                    (0x4B2C, "wait_ncrisc_trisc", brisc, 307, 12),
                    (None, "main", brisc, 513, 9),
                ),
            )
        elif r.name == "trisc2":
            r = replace(
                r,
                pc=0x7CB4,
                frames=((0x7CB4, "kernel_main", f"{OPS}/compute/layernorm_bw_kernel.cpp", 171, 9),),
            )
        else:
            r = replace(r, pc=0x4010 + r.kernel_id, frames=_fw(r.name, 0x4010 + r.kernel_id))
        riscs.append(replace(r, rd_ptr=0))
    return replace(_CYCLE_CORE, riscs=tuple(riscs))


# One-script era -vv: BRISC polls in firmware for the others to finish, TRISC2 loops in its kernel;
# cut at the right by the user.
FIRMWARE_POLL = Scenario("firmware-poll", (_firmware_polling_core(), idle_core(0, 1, 0)))


# The same with TRISC2 back in firmware too: BRISC's poll is the only frame off firmware's main.
FIRMWARE_POLL_ALONE = Scenario(
    "firmware-poll-alone",
    (
        replace(
            core := _only(_firmware_polling_core(), ("brisc",)),
            riscs=tuple(replace(r, rd_ptr=0) for r in core.riscs),
        ),
        idle_core(0, 1, 0),
    ),
)


# -------------------------------------------------------------- users' condensed summaries
# What users write in tt-metal's issues instead of pasting triage whole: their own words around
# lines quoted from triage's checks. The quoted lines are as the scripts print them
# (tenstorrent/tt-metal tools/triage): triage.py's serialize_result prints ``  pass``/``  fail``
# under each script; log_check_risc writes ``Device <id>: <block> [<loc>]: <risc>: <message>``;
# check_binary_integrity.py (f3198dc503a9) fails with ``Data mismatch in section .text at address
# 0x<addr:08x> in ELF file <path>.``; check_noc_status.py (05781ebca98d) writes ``Device <id> at
# <loc> on <risc> for NOC <n>`` and per disagreeing counter ``    <register> <variable> <register
# value> <variable value>`` (its VAR_TO_REG_MAP: noc_reads_num_issued/NIU_MST_RD_RESP_RECEIVED,
# noc_nonposted_writes_num_issued/NIU_MST_NONPOSTED_WR_REQ_SENT, ...).
def _noc_said(core: Core, reg: str, var: str, rv: int, vv: int) -> tuple[str, str]:
    return (
        f"Device {core.device} at {core.loc()} on brisc for NOC 0",
        f"    {reg} {var} {rv} {vv}",
    )


def condensed_prose() -> str:
    """A few lines of prose: binary integrity passed, the NOC counters of one core disagree."""
    place, counts = _noc_said(
        _CYCLE_CORE, "NIU_MST_NONPOSTED_WR_REQ_SENT", "noc_nonposted_writes_num_issued", 38, 40
    )
    return (
        "Ran tt-triage on the hung box, short version:\n"
        "- check_binary_integrity: pass, so the binaries on the device are intact\n"
        "- check_noc_status: fail\n"
        f"  {place}\n"
        f"  {counts}\n"
        "Everything else looked normal to me.\n"
    )


def condensed_table() -> str:
    """A Markdown table of the checks' results, one mismatch quoted in its cell; the binary
    check fails too, with its address."""
    place, counts = _noc_said(
        _CYCLE_CORE, "NIU_MST_RD_RESP_RECEIVED", "noc_reads_num_issued", 12, 13
    )
    elf = f"{ABS}/built/0/kernels/layernorm_bw_kernel/10023/trisc0/trisc0.elf.xip.elf"
    return (
        "| triage script | result |\n"
        "|---|---|\n"
        "| check_arc | pass |\n"
        f"| check_binary_integrity | fail: Device 0: tensix [{_CYCLE_CORE.loc()}]: trisc0: Data "
        f"mismatch in section .text at address 0x00006a40 in ELF file {elf}. |\n"
        f"| check_noc_status | fail: {place}: {counts.strip()} |\n"
    )


# An LLK assert as tt-llk writes it (tenstorrent/tt-llk 7ed6ee9e01c5,
# tt_llk_wormhole_b0/llk_lib/llk_math_eltwise_unary_datacopy.h, in
# _llk_math_eltwise_unary_datacopy_init_: LLK_ASSERT(condition, message), common/llk_assert.h),
# which a user quotes with the file and function triage's callstack showed.
LLK_COND = "num_faces == 1 || num_faces == 2 || num_faces == 4"
LLK_FILE = "tt_llk_wormhole_b0/llk_lib/llk_math_eltwise_unary_datacopy.h"
LLK_FUNC = "_llk_math_eltwise_unary_datacopy_init_"


def condensed_llk_assert() -> str:
    return (
        "Device 0 hangs in the datacopy before layernorm; triage's lightweight asserts show "
        "trisc1 stopped at\n"
        f'LLK_ASSERT({LLK_COND}, "num_faces must be 1, 2, or 4");\n'
        f"file: {LLK_FILE}:184\n"
        f"function: {LLK_FUNC}\n"
    )


def checks_only(s: Scenario) -> str:
    """A paste of the first checks of the framework's output alone (tabulate era: each script's
    ``  pass``/``  fail`` and failure lines), before any callstack table."""
    text = tabulate_framework(s)
    return text[: text.index("dump_callstacks.py:")]
