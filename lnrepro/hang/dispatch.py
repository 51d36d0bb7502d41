"""tt-triage around a hung attempt: the command lnrepro runs against the still-hung device, the
environment that makes tt-metal run it itself, and where its output lies in an attempt's log.

Pure functions; the backend runs the command (:class:`lnrepro.run.runners.base.OnHang`) and the
pipeline reads the output into the attempt's diagnosis. Facts read from tenstorrent/tt-metal:

* ``tools/tt-triage.py`` is the entry point of the framework in ``tools/triage/``; its options are
  the usage line of ``tools/triage/triage.py``'s docstring (read at 02c321d69d06:
  ``--disable-progress``, ``--skip-version-check``, ``--disable-colors`` among them). Older
  versions know fewer, so only the flags the checkout's own usage line names are passed.
* ``TT_METAL_OPERATION_TIMEOUT_SECONDS`` (a float, 0 = off) and
  ``TT_METAL_DISPATCH_TIMEOUT_COMMAND_TO_EXECUTE`` are read in ``tt_metal/llrt/rtoptions.cpp``;
  on a timeout ``MetalContext::on_dispatch_timeout_detected()``
  (``tt_metal/impl/context/metal_context.cpp`` at 790b74b58a87) logs ``Timeout detected``, then
  ``Executing command: <cmd>``, runs it through ``std::system`` (so its output is the test's),
  and the host throws ``TIMEOUT: device timeout, potential hang detected, the device is
  unrecoverable`` (``completion_queue_wait_front``) or ``TIMEOUT: device timeout in fetch queue
  wait, potential hang detected`` (``fetch_queue_reserve_back``), both in
  ``tt_metal/impl/dispatch/system_memory_manager.cpp``.
* tt-metal's own tests of triage (``tools/tests/hang/triage/``) run the timeout command as
  ``tt-triage.py --disable-progress --skip-version-check``.
"""

from __future__ import annotations

import itertools
import re
import shlex
from dataclasses import replace

from lnrepro.model.gtest import CrashInfo, GtestRun, TestResult, TestStatus

TRIAGE_SCRIPT = "tools/tt-triage.py"
FRAMEWORK = "tools/triage/triage.py"  # its docstring's usage line lists the options
TRIAGE_TIMEOUT_S = 300.0  # tt-triage's own limit on a hung device (a real one takes ~30 s)
# the flags lnrepro passes when the checkout's triage knows them: no progress bars or colours in
# a log, and no refusal over a tt-exalens version that differs from requirements.txt
WANTED_FLAGS = ("--disable-progress", "--skip-version-check", "--disable-colors")
TIMEOUT_ENV = "TT_METAL_OPERATION_TIMEOUT_SECONDS"
COMMAND_ENV = "TT_METAL_DISPATCH_TIMEOUT_COMMAND_TO_EXECUTE"
DEVICE_TIMEOUT = "TIMEOUT: device timeout"  # both TT_THROWs of system_memory_manager.cpp begin so
EXECUTING = "Executing command: "
_USAGE = re.compile(r"Usage:\s*\n(.*?)(?:\n\s*\n|\Z)", re.S)


def triage_flags(framework_source: str | None) -> list[str]:
    """The flags of :data:`WANTED_FLAGS` that the checkout's triage usage line names (none when
    its source cannot be read: an unknown option would stop it)."""
    if not framework_source:
        return []
    m = _USAGE.search(framework_source)
    usage = m.group(1) if m else ""
    return [f for f in WANTED_FLAGS if re.search(rf"\[{re.escape(f)}\]", usage)]


def triage_argv(python: str, flags: list[str]) -> list[str]:
    return [python, TRIAGE_SCRIPT, *flags]


def dispatch_env(seconds: float, triage: list[str] | None) -> dict[str, str]:
    """The environment that makes tt-metal detect the hang itself after ``seconds`` and run
    ``triage`` (a shell command line, as ``std::system`` takes it) before it throws."""
    env = {TIMEOUT_ENV: f"{seconds:g}"}
    if triage:
        env[COMMAND_ENV] = shlex.join(triage)
    return env


def device_timeout_seen(text: str) -> bool:
    """tt-metal's own hang detection fired in this output."""
    return DEVICE_TIMEOUT in text and "potential hang detected" in text


_END = re.compile(
    r"^\s*(?:FAILED\b|ERROR\b|PASSED\b|={5,}|Traceback |terminate called|E\s+)|"
    rf"{re.escape(DEVICE_TIMEOUT)}|Timeout command '"
)


def triage_in_log(text: str) -> str | None:
    """What the timeout command printed into the test's output: from the line after tt-metal's
    ``Executing command:`` up to the error tt-metal throws next (or the test runner's verdict);
    None when tt-metal ran no command."""
    at = text.find(EXECUTING)
    if at < 0:
        return None
    start = text.find("\n", at)
    if start < 0:
        return ""
    out = itertools.takewhile(lambda ln: not _END.search(ln), text[start + 1 :].splitlines())
    return "\n".join(out).strip("\n") + "\n"


DEVICE_TIMEOUT_REASON = (
    "tt-metal's dispatch timeout (TT_METAL_OPERATION_TIMEOUT_SECONDS) detected a hang: "
    "TIMEOUT: device timeout, potential hang detected"
)


def as_device_timeout(t: TestResult) -> TestResult:
    """A test that failed with tt-metal's TIMEOUT error, or crashed on it (an uncaught TT_THROW
    aborts a googletest binary), as the hang it is: TIMEOUT, never a failure or a crash. Call it
    only for an attempt whose output :func:`device_timeout_seen`."""
    said = any(DEVICE_TIMEOUT in f.message for f in t.failures)
    if t.status is TestStatus.CRASHED or (t.status is TestStatus.FAILED and said):
        code = t.crash.exit_code if t.crash else None
        sig = t.crash.signal if t.crash else None
        return replace(
            t,
            status=TestStatus.TIMEOUT,
            crash=CrashInfo(exit_code=code, signal=sig, reason=DEVICE_TIMEOUT_REASON),
        )
    return t


DEVICE_TIMEOUT_WARNING = (
    "tt-metal's own dispatch timeout (TT_METAL_OPERATION_TIMEOUT_SECONDS) detected a hang"
)


def mark_device_timeout(run: GtestRun) -> None:
    """The one rule for a console in which tt-metal's dispatch timeout fired (``run``, ``parse``
    and ``explain`` all apply it): each test its TIMEOUT error failed or its abort crashed is a
    hang (TIMEOUT), whatever the exit code (134 is that abort); the run says why."""
    for it in run.iterations:
        it.tests[:] = [as_device_timeout(t) for t in it.tests]
    if DEVICE_TIMEOUT_WARNING not in run.warnings:
        run.warnings.append(DEVICE_TIMEOUT_WARNING)


class DeviceTimeoutScanner:
    """Watches an attempt's output as it streams for tt-metal's TIMEOUT error (a line may come
    in pieces), so a test it ends is shown as a hang while the attempt runs."""

    def __init__(self) -> None:
        self.seen = False
        self._tail = ""

    def feed(self, data: bytes) -> None:
        if self.seen:
            return
        text = self._tail + data.decode("utf-8", "replace")
        self.seen = device_timeout_seen(text)
        self._tail = text[-200:]

    def as_hang(self, t: TestResult) -> TestResult:
        return as_device_timeout(t) if self.seen else t
