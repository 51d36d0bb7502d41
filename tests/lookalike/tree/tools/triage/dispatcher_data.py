#@if triage-framework
# SPDX-License-Identifier: Apache-2.0
"""
Usage:
    dispatcher_data

Description:
    Data provider: what the mailboxes say per RISC (tenstorrent/tt-metal
    tools/triage/dispatcher_data.py at 5acfb5ff23cb, DispatcherCoreData): the watcher kernel id
    of the launch message, the kernel's name from Inspector (N/A when unknown), the go message's
    index and state, preload, and the waypoint; -v and -vv add the paths and offsets.

Owner:
    lookalike
"""

from dataclasses import dataclass
from pathlib import Path

from triage import ScriptConfig, hex_serializer, triage_field, triage_singleton

script_config = ScriptConfig(data_provider=True, depends=["run_checks"])


@dataclass
class DispatcherCoreData:
    watcher_kernel_id: int = triage_field("Kernel ID")
    kernel_name: str = triage_field("Kernel Name")
    subdevice: int = triage_field("Subdevice")
    go_message: str = triage_field("Go Message")
    preload: bool = triage_field("Preload")
    waypoint: str = triage_field("Waypoint")
    host_assigned_id: int = triage_field("Host Assigned ID", hex_serializer, verbose=1)
    watcher_previous_kernel_id: int = triage_field("Previous Kernel ID", verbose=1)
    previous_kernel_name: str = triage_field("Previous Kernel Name", verbose=1)
    kernel_offset: int = triage_field("Kernel Offset", hex_serializer, verbose=1)
    kernel_path: str = triage_field("Kernel Path", verbose=1)
    firmware_path: str = triage_field("Firmware Path", verbose=1)


class DispatcherData:
    def __init__(self, context):
        self.context = context
        self.rows = {}
        for core in context.state["cores"]:
            for r in core["riscs"]:
                self.rows[(core["x"], core["y"], r["risc"])] = r

    def raw(self, location, risc_name):
        return self.rows[(location.x, location.y, risc_name)]

    def get_cached_core_data(self, location, risc_name) -> DispatcherCoreData:
        r = self.raw(location, risc_name)
        kernel = r["kernel"]
        name = Path(kernel).stem if kernel else None
        firmware = f"built/firmware/{risc_name}/{risc_name}.elf"
        return DispatcherCoreData(
            watcher_kernel_id=r["kernel_id"], kernel_name=name, subdevice=0, go_message=r["go"],
            preload=False, waypoint=r["waypoint"], host_assigned_id=None,
            watcher_previous_kernel_id=0, previous_kernel_name=None,
            kernel_offset=0x6A00 + r["kernel_id"] * 0x1000 if kernel else None,
            kernel_path=f"built/kernels/{name}/{risc_name}/{risc_name}.elf" if kernel else None,
            firmware_path=firmware,
        )


@triage_singleton
def run(args, context):
    return DispatcherData(context)
#@end
