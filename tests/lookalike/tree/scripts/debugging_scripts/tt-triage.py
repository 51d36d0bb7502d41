#@if triage-one-script
#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""
Script Name: tt-triage.py

Usage:
    tt-triage [--halt-on-error] [--inspector-log-path=<inspector_log_path>] [-v | --verbose] [-V | --vverbose] [--dev=<device_id>]...

Options:
    -h --help                                  Show this screen.
    --dev=<device_id>                          Specify the device id. 'all' is also an option  [default: in_use]
    -v --verbose                               Print verbose output.                           [default: False]
    -V --vverbose                              Print more verbose output.                      [default: False]
    --inspector-log-path=<inspector_log_path>  Path to the inspector log directory.
    --halt-on-error                            Halt on first error.                            [default: False]

Description:
    The look-alike's tt-triage of the one-script era (tenstorrent/tt-metal
    scripts/debugging_scripts/tt-triage.py at 90b63baa50e2): per device a title line per check
    (`= Checking device N`, ARC heartbeat, NOC reachability, L1 firmware word, RISC-V reset state
    and PCs, running ops), `ERROR: <msg>` for errors, `DONE: OK` at the end. Tables only with -v
    (the PCs, and the running ops as `Loc | BRISC | ... | Kernel ID:Name`, each core's row once
    per RISC with a kernel, as the real one appends the same row) or -vv (the running ops per
    core and RISC: `Loc | Proc | RD PTR | Base | Offset | Kernel ID:Name | PC | Kernel Callstack |
    Kernel Path`, the frames in extra rows under the callstack column, absolute paths), drawn as
    tabulate draws its rounded format (tabulate is not in the look-alike's image). The device is
    the hung look-alike's state (generated/lookalike-device/device.json under TT_METAL_LOGS_PATH,
    else the working directory). Idle ethernet cores are not modelled: their table is left out.
"""

import json
import os
import sys
from pathlib import Path

RISCS = ("brisc", "ncrisc", "trisc0", "trisc1", "trisc2")
LLK_IO = "tt_metal/hw/ckernels/wormhole_b0/metal/llk_io"
API_FRAMES = {
    ("dataflow", "cb_wait_front"): [("cb_wait_front", "tt_metal/hw/inc/dataflow_api.h", 412, 12)],
    ("dataflow", "cb_reserve_back"): [("cb_reserve_back", "tt_metal/hw/inc/dataflow_api.h", 359, 12)],
    ("compute", "cb_wait_front"): [("llk_wait_tiles", f"{LLK_IO}/llk_io_unpack.h", 34, 9),
                                   ("cb_wait_front", "tt_metal/include/compute_kernel_api/cb_api.h", 48, 21)],
    ("compute", "cb_reserve_back"): [("llk_wait_for_free_tiles", f"{LLK_IO}/llk_io_pack.h", 41, 9),
                                     ("cb_reserve_back", "tt_metal/include/compute_kernel_api/cb_api.h", 131, 23)],
}
FIRMWARE_MAIN_LINE = {"brisc": 562, "ncrisc": 139, "trisc": 168}
VERBOSE = VVERBOSE = False


def title(msg):
    print(f"= {msg}")


def verbose(msg):
    if VERBOSE or VVERBOSE:
        print(msg)


def tabulate(rows):
    """tabulate(rows, headers="firstrow") in tt-triage's DEFAULT_TABLE_FORMAT (rounded corners,
    padding 1): a column of whole numbers is right-aligned, any other left-aligned."""
    header, body = rows[0], rows[1:]
    n = len(header)
    body = [list(r) + [""] * (n - len(r)) for r in body]
    cols = list(zip(header, *body)) if body else [(h,) for h in header]
    num = [all(str(v).isdigit() for v in col[1:] if str(v) != "") and any(str(v) != "" for v in col[1:])
           for col in cols]
    widths = [max(len(str(v)) for v in col) for col in cols]

    def cell(v, i):
        return f" {str(v):>{widths[i]}} " if num[i] else f" {str(v):<{widths[i]}} "

    out = ["╭" + "┬".join("─" * (w + 2) for w in widths) + "╮",
           "│" + "│".join(cell(h, i) for i, h in enumerate(header)) + "│",
           "├" + "┼".join("─" * (w + 2) for w in widths) + "┤"]
    out += ["│" + "│".join(cell(v, i) for i, v in enumerate(r)) + "│" for r in body]
    out.append("╰" + "┴".join("─" * (w + 2) for w in widths) + "╯")
    return "\n".join(out)


def root():
    for name in ("TT_METAL_RUNTIME_ROOT", "TT_METAL_HOME"):
        if os.environ.get(name):
            return Path(os.environ[name])
    return Path.cwd()


def device_state():
    logs = os.environ.get("TT_METAL_LOGS_PATH")
    path = (Path(os.path.normpath(logs)) if logs else Path.cwd()) / "generated" / "lookalike-device" / "device.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        print(f"No chips detected in the cluster (no look-alike device state at {path})")
        sys.exit(1)


def source_line(kernel, call):
    try:
        lines = (root() / kernel).read_text(encoding="utf-8").splitlines()
    except OSError:
        return None, None
    for n, text in enumerate(lines, 1):
        at = text.find(f"{call}(")
        if at >= 0 and not text.lstrip().startswith("//"):
            return n, at + 1
    return None, None


def frames(risc, r):
    """(pc, function, file, line, column) of the top frame and the frames inlined into it."""
    wait, pc = r["wait"], r["pc"]
    if wait is None:
        kind = "brisc" if risc == "brisc" else "ncrisc" if risc == "ncrisc" else "trisc"
        return [(pc, "main", str(root() / r["firmware"]), FIRMWARE_MAIN_LINE[kind], 9)]
    kernel = str(root() / r["kernel"])
    if wait["call"] == "kernel_main":
        return [(pc, "kernel_main", kernel, None, None)]
    line, col = source_line(r["kernel"], wait["call"])
    if wait.get("inside"):
        return [(pc, "kernel_main", kernel, line, col)]
    kind = "compute" if risc.startswith("trisc") else "dataflow"
    api = [(None, f, str(root() / p), ln, c) for f, p, ln, c in API_FRAMES[(kind, wait["call"])]]
    api[0] = (pc, *api[0][1:])
    return [*api, (None, "kernel_main", kernel, line, col)]


def format_callstack(cs):
    width = len(str(len(cs) - 1))
    out = []
    for i, (pc, fn, file, line, col) in enumerate(cs):
        text = f"  #{i:<{width}} "
        if pc is not None:
            text += f"0x{pc:08X} in "
        if fn is not None:
            text += f"{fn} () "
        if file is not None:
            text += f"at {file} {line}:{col}"
        out.append(text)
    return out


def dump_running_ops(state):
    """Print the running operations on the device."""
    title(dump_running_ops.__doc__)
    if VVERBOSE:
        table = [["Loc", "Proc", "RD PTR", "Base", "Offset", "Kernel ID:Name", "PC", "Kernel Callstack", "Kernel Path"]]
    elif VERBOSE:
        table = [["Loc", "BRISC", "NCRISC", "TRISC0", "TRISC1", "TRISC2", "Kernel ID:Name"]]
    else:
        return
    for core in state["cores"]:
        loc = f"{core['x']},{core['y']}"
        row = [loc]
        for r in core["riscs"]:
            name = Path(r["kernel"]).stem if r["kernel"] else ""
            base = 0x5E00 if r["kernel"] else 0
            if VVERBOSE:
                print(".", end="", flush=True)
                path = f"{root()}/built/kernels/{name}/{r['risc']}/{r['risc']}.elf" if name else ""
                row = [loc, r["risc"].upper(), "0", f"0x{base:x}", f"0x{r['pc'] - 0x6A00 if name else 0:x}",
                       f"{r['kernel_id']}:{name}", f"0x{r['pc']:x}", "", path]
            else:
                row.append(f"{r['kernel_id']}:{name}")
            if name or base or VVERBOSE:
                table.append(row)
                if VVERBOSE:
                    for line in format_callstack(frames(r["risc"], r)):
                        table.append(["", "", "", "", "", "", "", line])
    print()
    print(tabulate(table))


def main(argv):
    global VERBOSE, VVERBOSE
    VERBOSE = "-v" in argv or "--verbose" in argv
    VVERBOSE = "-V" in argv or "--vverbose" in argv or "-vv" in argv
    state = device_state()
    title(f"Checking device {state['device']}")
    title("Checking that ARC heartbeat is running. Estimating ARC uptime (-v).")
    verbose("ARC heartbeat: 130562 - 130510 = 520.0hb/s, ARCCLK: 540 MHz")
    title("Checking that we can reach all NOC endpoints through NOC0 (TODO: NOC1)")
    verbose("Checking functional_workers locations")
    verbose("Checking eth locations")
    title("Checking location 0x0 of each core's L1 for the presence of FW")
    title("Checking that the RISC-V cores are running. Dumping PC through debug bus (-v).")
    for i in range(3, 8):
        verbose(f"{i}: 0x00000000")
    if VERBOSE or VVERBOSE:
        pcs = [["Loc", *(f"{r}_pc" for r in RISCS)]]
        for core in state["cores"]:
            pcs.append([f"{core['x']},{core['y']}", *(f"0x{r['pc']:x}" for r in core["riscs"])])
        print(tabulate(pcs))
    dump_running_ops(state)
    print("DONE: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
#@end
