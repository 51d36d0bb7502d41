"""What a hung test does: hang forever, or, with tt-metal's dispatch timeout set, give up after
it as tt-metal does (its timeout command run first)."""

from __future__ import annotations

import time
from typing import NoReturn, TextIO

from .gtest_front import metal_log
from .watcher import Program, Watcher

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
    metal_log(out, level, "Metal", text, f"metal_context.cpp:{line}")


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


def hang_forever(watcher: Watcher | None, program: Program) -> NoReturn:
    """What a hung test does: nothing, forever (the watcher keeps polling)."""
    while True:
        if watcher is not None:
            watcher.dump(program)
            time.sleep(watcher.interval)
        else:
            time.sleep(3600)
