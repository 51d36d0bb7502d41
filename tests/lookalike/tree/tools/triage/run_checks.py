#@if triage-framework
# SPDX-License-Identifier: Apache-2.0
"""
Usage:
    run_checks [--dev=<device_id>]...

Options:
    --dev=<device_id>   Specify the device id. 'all' is also an option  [default: in_use]

Description:
    Data provider: the devices, their blocks and RISC cores, and the per-device, per-block and
    per-core checks other scripts run (tenstorrent/tt-metal tools/triage/run_checks.py at
    e97fe7b4a3d8: result rows carry Dev, Loc and RiscV before the check's own columns).

Owner:
    lookalike
"""

from dataclasses import dataclass, fields

from triage import Location, ScriptConfig, recurse_field, triage_field, triage_singleton

script_config = ScriptConfig(data_provider=True)


@dataclass
class PerBlockCheckResult:
    device: int = triage_field("Dev")
    location: Location = triage_field("Loc")
    result: object = recurse_field()


@dataclass
class PerCoreCheckResult:
    device: int = triage_field("Dev")
    location: Location = triage_field("Loc")
    risc_name: str = triage_field("RiscV")
    result: object = recurse_field()


class RunChecks:
    def __init__(self, context):
        self.context = context
        state = context.state
        self.devices = [state["device"]]
        self.cores = [c for c in state["cores"]]

    def location(self, core) -> Location:
        return Location(self.context.state["device"], core["x"], core["y"], tuple(core["noc0"]))

    def run_per_block_check(self, check, block_filter=None):
        result = []
        for core in self.cores:
            loc = self.location(core)
            out = check(loc)
            for item in out if isinstance(out, list) else [out] if out is not None else []:
                result.append(PerBlockCheckResult(loc.device, loc, item))
        return result or None

    def run_per_core_check(self, check, block_filter=None, core_filter=None):
        result = []
        for core in self.cores:
            loc = self.location(core)
            for risc in core["riscs"]:
                out = check(loc, risc["risc"])
                if out is not None:
                    result.append(PerCoreCheckResult(loc.device, loc, risc["risc"], out))
        return result or None


@triage_singleton
def run(args, context):
    return RunChecks(context)
#@end
