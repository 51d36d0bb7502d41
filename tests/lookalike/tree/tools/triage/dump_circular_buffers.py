#@if triage-framework
# SPDX-License-Identifier: Apache-2.0
"""
Usage:
    dump_circular_buffers [--cb-bytes=<n>] [--cb-offset=<n>]

Options:
    --cb-bytes=<n>    Bytes of CB fifo L1 data to show per CB at -vv [default: 64].
    --cb-offset=<n>   Byte offset from the fifo start to read the -vv data from [default: 0].

Description:
    Dumps the live circular-buffer state of every active tensix core (tenstorrent/tt-metal
    tools/triage/dump_circular_buffers.py at b98e5c66547e): per core, for brisc, trisc0 and
    trisc2 (ncrisc is skipped, trisc1 has no cb_interface), every configured CB's geometry and
    that RISC's fifo pointers, and the page counts of the CB's stream registers (recv, acked;
    occ = recv - acked). State: empty (occ 0: the producer never filled it), full (occ >= the
    capacity: the consumer is stuck), partial, or ? (unreadable).

Owner:
    lookalike
"""

from dataclasses import dataclass

from dispatcher_data import run as get_dispatcher_data
from run_checks import run as get_run_checks
from triage import ScriptConfig, hex_serializer, set_verbose_level, triage_field

script_config = ScriptConfig(depends=["run_checks", "dispatcher_data"])
CB_RISCS = ("brisc", "trisc0", "trisc2")


@dataclass
class CircularBufferRow:
    risc: str = triage_field("RISC")
    cb: int = triage_field("CB")
    kind: str = triage_field("Kind")
    state: str = triage_field("State")
    fifo_addr: int = triage_field("fifo_addr", hex_serializer)
    fifo_size: int = triage_field("fifo_size")
    page_size: int = triage_field("page_size")
    num_pages: int = triage_field("pages")
    rd_ptr: int = triage_field("rd_ptr", hex_serializer)
    wr_ptr: int = triage_field("wr_ptr", hex_serializer)
    tiles_received: int = triage_field("recv")
    tiles_acked: int = triage_field("acked")
    occupancy: int = triage_field("occ")


def _classify(occ, capacity: int) -> str:
    if occ is None:
        return "?"
    if occ == 0:
        return "empty"
    if capacity and occ >= capacity:
        return "full"
    return "partial"


def read_core(location, dispatcher_data, context):
    core = next(c for c in context.state["cores"] if (c["x"], c["y"]) == (location.x, location.y))
    rows = []
    for risc in CB_RISCS:
        if dispatcher_data.get_cached_core_data(location, risc).kernel_path is None:
            continue  # no kernel loaded on this RISC
        for cb in (c for c in core["cbs"] if c["risc"] == risc):
            capacity = cb["fifo_size"] // cb["page_size"] if cb["page_size"] else 0
            occ = (cb["received"] - cb["acked"]) & 0xFFFF
            rows.append(CircularBufferRow(
                risc=risc, cb=cb["cb"], kind="local", state=_classify(occ, capacity),
                fifo_addr=cb["fifo_addr"], fifo_size=cb["fifo_size"], page_size=cb["page_size"],
                num_pages=cb["num_pages"], rd_ptr=cb["rd_ptr"], wr_ptr=cb["wr_ptr"],
                tiles_received=cb["received"], tiles_acked=cb["acked"], occupancy=occ))
    return rows or None


def run(args, context):
    set_verbose_level(args["-v"] or 0)
    checks = get_run_checks(args, context)
    dispatcher_data = get_dispatcher_data(args, context)
    return checks.run_per_block_check(
        lambda location: read_core(location, dispatcher_data, context), block_filter=["tensix"]
    )
#@end
