#@if triage-framework
# SPDX-License-Identifier: Apache-2.0
"""
Usage:
    callstack_provider [--full-callstack] [--gdb-callstack] [--active-eth]

Options:
    --full-callstack   Dump full callstack with all frames. Defaults to dumping only the top frame.
    --gdb-callstack    Dump callstack using GDB client instead of built-in methods.
    --active-eth       Override default behaviour of not dumping callstack for active eth cores if full callstack or gdb callstack is used.

Description:
    Data provider: a RISC's PC and callstack (tenstorrent/tt-metal
    tools/triage/callstack_provider.py at 91083879c6c4). By default the top frame and the frames
    inlined into it; a frame prints as `  #<n> 0x<PC, 8 upper-case hex digits> in <function> ()
    at <file> <line>:<col>`, only the frame with a PC showing `0x... in`, paths under the working
    directory as `./relative`. The cell's first line is empty, or a message such as `Core is in
    reset`. The look-alike's "debug info": the kernel's line is where its source calls the API
    the RISC waits in (read from the kernel source under the runtime root, as DWARF would map
    the PC); the API headers' own lines are stand-ins.

Owner:
    lookalike
"""

from dataclasses import dataclass
from pathlib import Path

from dispatcher_data import DispatcherCoreData, run as get_dispatcher_data
from triage import ScriptConfig, hex_serializer, recurse_field, triage_field, triage_singleton

script_config = ScriptConfig(data_provider=True, depends=["dispatcher_data"])

LLK_IO = "tt_metal/hw/ckernels/wormhole_b0/metal/llk_io"
# (function, file, line, column) of the frames above kernel_main, per RISC kind and API call
API_FRAMES = {
    ("dataflow", "cb_wait_front"): [("cb_wait_front", "tt_metal/hw/inc/dataflow_api.h", 412, 12)],
    ("dataflow", "cb_reserve_back"): [("cb_reserve_back", "tt_metal/hw/inc/dataflow_api.h", 359, 12)],
    ("compute", "cb_wait_front"): [("llk_wait_tiles", f"{LLK_IO}/llk_io_unpack.h", 34, 9),
                                   ("cb_wait_front", "tt_metal/include/compute_kernel_api/cb_api.h", 48, 21)],
    ("compute", "cb_reserve_back"): [("llk_wait_for_free_tiles", f"{LLK_IO}/llk_io_pack.h", 41, 9),
                                     ("cb_reserve_back", "tt_metal/include/compute_kernel_api/cb_api.h", 131, 23)],
}
FIRMWARE_MAIN_LINE = {"brisc": 562, "ncrisc": 139, "trisc": 168}


@dataclass
class CallstackEntry:
    pc: int = None
    function_name: str = None
    file: str = None
    line: int = None
    column: int = None


@dataclass
class KernelCallstackWithMessage:
    callstack: list
    message: str = None


def _format_callstack(callstack: list) -> list:
    width = len(str(len(callstack) - 1))
    cwd = Path.cwd()
    out = []
    for i, frame in enumerate(callstack):
        line = f"  #{i:<{width}} "
        if frame.pc is not None:
            line += f"0x{frame.pc:08X} in "
        if frame.function_name is not None:
            line += f"{frame.function_name} () "
        if frame.file is not None:
            path = Path(frame.file)
            try:
                shown = f"./{path.relative_to(cwd)}" if path.is_absolute() else frame.file
            except ValueError:
                shown = frame.file
            line += f"at {shown}"
            if frame.line is not None:
                line += f" {frame.line}"
                if frame.column is not None:
                    line += f":{frame.column}"
        out.append(line)
    return out


def format_callstack_with_message(cs: KernelCallstackWithMessage) -> str:
    if cs.message is not None:
        return "\n".join([cs.message] + _format_callstack(cs.callstack))
    return "\n".join([""] + _format_callstack(cs.callstack))


@dataclass
class CallstacksData:
    dispatcher_core_data: DispatcherCoreData = recurse_field()
    pc: int = triage_field("PC", hex_serializer)
    kernel_callstack_with_message: KernelCallstackWithMessage = triage_field(
        "Kernel Callstack", format_callstack_with_message
    )


def _source_line(root: Path, kernel: str, call: str):
    """Where the kernel's source calls ``call``: (line, column), or (None, None)."""
    try:
        lines = (root / kernel).read_text(encoding="utf-8").splitlines()
    except OSError:
        return None, None
    for n, text in enumerate(lines, 1):
        at = text.find(f"{call}(")
        if at >= 0 and not text.lstrip().startswith("//"):
            return n, at + 1
    return None, None


class CallstackProvider:
    def __init__(self, dispatcher_data, root: Path, full_callstack: bool):
        self.dispatcher_data = dispatcher_data
        self.root = root
        self.full_callstack = full_callstack

    def frames(self, risc_name: str, r: dict) -> list:
        pc = r["pc"]
        wait = r["wait"]
        if wait is None:
            kind = "brisc" if risc_name == "brisc" else "ncrisc" if risc_name == "ncrisc" else "trisc"
            return [CallstackEntry(pc, "main", str(self.root / r["firmware"]), FIRMWARE_MAIN_LINE[kind], 9)]
        kernel = str(self.root / r["kernel"])
        if wait["call"] == "kernel_main":
            return [CallstackEntry(pc, "kernel_main", kernel)]
        line, col = _source_line(self.root, r["kernel"], wait["call"])
        if wait.get("inside"):
            return [CallstackEntry(pc, "kernel_main", kernel, line, col)]
        kind = "compute" if risc_name.startswith("trisc") else "dataflow"
        api = [CallstackEntry(None, f, str(self.root / path), ln, c)
               for f, path, ln, c in API_FRAMES[(kind, wait["call"])]]
        api[0].pc = pc
        return [*api, CallstackEntry(None, "kernel_main", kernel, line, col)]

    def get_callstacks(self, location, risc_name: str) -> CallstacksData:
        core = self.dispatcher_data.get_cached_core_data(location, risc_name)
        r = self.dispatcher_data.raw(location, risc_name)
        cs = self.frames(risc_name, r)
        return CallstacksData(core, cs[0].pc if cs else r["pc"], KernelCallstackWithMessage(cs))


@triage_singleton
def run(args, context):
    return CallstackProvider(get_dispatcher_data(args, context), context.root,
                             bool(args["--full-callstack"]))
#@end
