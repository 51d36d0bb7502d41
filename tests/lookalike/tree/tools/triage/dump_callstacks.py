#@if triage-framework
# SPDX-License-Identifier: Apache-2.0
"""
Usage:
    dump_callstacks [--all-cores]

Options:
    --all-cores        Show all cores including ones with Go Message = DONE. By default, DONE cores are filtered out.

Description:
    Dumps callstacks for all devices in the system and for every supported risc processor
    (tenstorrent/tt-metal tools/triage/dump_callstacks.py at d0f77e915dc3): per core and RISC,
    Dev | Loc | RiscV | Kernel ID | Kernel Name | Subdevice | Go Message | Preload | Waypoint |
    PC | Kernel Callstack; cores whose go message is DONE are left out unless --all-cores.

Owner:
    lookalike
"""

from callstack_provider import run as get_callstack_provider
from run_checks import run as get_run_checks
from triage import ScriptConfig, log_check_risc

script_config = ScriptConfig(depends=["run_checks", "callstack_provider"])


def dump_callstacks(location, risc_name, provider, show_all_cores):
    try:
        if not show_all_cores:
            core = provider.dispatcher_data.get_cached_core_data(location, risc_name)
            if core.go_message == "DONE":
                return None
        return provider.get_callstacks(location, risc_name)
    except Exception as e:  # noqa: BLE001 - as the real script
        log_check_risc(risc_name, location, False, f"Failed to dump callstacks: {e}")
        return None


def run(args, context):
    show_all = bool(args["--all-cores"])
    checks = get_run_checks(args, context)
    provider = get_callstack_provider(args, context)
    return checks.run_per_core_check(
        lambda location, risc_name: dump_callstacks(location, risc_name, provider, show_all),
        block_filter=["tensix", "idle_eth", "active_eth"],
    )
#@end
