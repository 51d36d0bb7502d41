"""The one door for running processes: argument lists only, timeouts, no shell.

Every child runs in its own session so that a timeout or Ctrl-C kills the whole
process group (a gtest binary's helpers included), never just the parent.
"""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lnrepro.errors import EnvironmentProblem

KILL_GRACE_S = 5.0


@dataclass(frozen=True)
class ProcResult:
    argv: tuple[str, ...]
    exit_code: int  # shell convention: 128+N for a signal (timeout(1) style 124 on our timeout)
    timed_out: bool
    seconds: float


def _shell_code(returncode: int) -> int:
    return 128 - returncode if returncode < 0 else returncode


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def stream(
    argv: Sequence[str],
    on_output: Callable[[bytes], None],
    *,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> ProcResult:
    """Run ``argv`` with stdout+stderr merged, handing output to ``on_output`` as it comes.

    On timeout the process group gets SIGTERM, then SIGKILL; the result says
    ``timed_out`` and ``exit_code`` is 124, as with timeout(1).
    """
    start = time.monotonic()
    try:
        proc = subprocess.Popen(  # noqa: S603 - argv list, never a shell
            list(argv),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise EnvironmentProblem(
            f"cannot run {argv[0]!r}: no such program", "install it or check PATH"
        ) from None
    except PermissionError:
        raise EnvironmentProblem(
            f"cannot run {argv[0]!r}: permission denied", "check the file's execute bit"
        ) from None
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    sel = selectors.DefaultSelector()
    sel.register(fd, selectors.EVENT_READ)
    deadline = None if timeout is None else start + timeout
    timed_out = False
    try:
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                timed_out = True
                break
            if not sel.select(timeout=left):
                continue
            data = os.read(fd, 1 << 16)
            if not data:
                break
            on_output(data)
    except BaseException:
        _kill_group(proc)
        raise
    finally:
        sel.close()
    if timed_out:
        _kill_group(proc)
        # drain what the dying process still wrote
        try:
            while data := os.read(fd, 1 << 16):
                on_output(data)
        except OSError:
            pass
    proc.stdout.close()
    rc = proc.wait()
    code = 124 if timed_out else _shell_code(rc)
    return ProcResult(tuple(argv), code, timed_out, time.monotonic() - start)


def capture(
    argv: Sequence[str],
    *,
    timeout: float = 60.0,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[int, str]:
    """Run a short command; return (exit code, stdout+stderr as text)."""
    chunks: list[bytes] = []
    res = stream(argv, chunks.append, timeout=timeout, cwd=cwd, env=env)
    return res.exit_code, b"".join(chunks).decode("utf-8", "replace")
