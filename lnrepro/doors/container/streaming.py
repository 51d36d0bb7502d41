"""Running a command in a fresh container, its output streamed as it comes.

The SDK is driven as its authors advise: ``detach=True``, then ``wait`` and ``logs``, and the
container removed in every case (timeout and Ctrl-C included); ``containers.run`` without detach
would lose a failing command's stdout.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from lnrepro.doors.container.create import create_held, prepared, refuse_if_closed, remove_made
from lnrepro.doors.container.spec import ContainerSpec
from lnrepro.doors.container.wait import wait_or_kill
from lnrepro.doors.proc import ProcResult
from lnrepro.errors import CommandTimeout, EnvironmentProblem


def _start(container: Any, command: Sequence[str]) -> None:
    """Start the created container; one that cannot is an :class:`EnvironmentProblem` with a fix
    (most often an image without the command)."""
    from docker.errors import APIError

    try:
        container.start()
    except APIError as exc:
        text = str(exc.explanation or exc)
        hint = (
            f"use an image that has {command[0]}"
            if "executable file not found" in text or "no such file" in text
            else "check the image and the Docker engine's log"
        )
        raise EnvironmentProblem(f"the container did not start: {text[:200]}", hint) from None


class _Pump:
    """The container's output followed into ``on_output`` in a thread. What the sink itself
    raises (a full disk) kills the container (nothing would keep what it still prints) and is
    kept for the caller's thread, where it is reported."""

    def __init__(self, container: Any, on_output: Callable[[bytes], None]) -> None:
        self._container, self._on_output = container, on_output
        self._failed: list[Exception] = []
        self._thread = threading.Thread(target=self._follow, daemon=True)
        self._thread.start()

    def _follow(self) -> None:
        import requests
        from docker.errors import APIError

        gone = (APIError, requests.exceptions.RequestException)
        ct = self._container
        try:
            with contextlib.suppress(*gone):
                for chunk in ct.logs(stream=True, follow=True, stdout=True, stderr=True):
                    self._on_output(chunk)
        except Exception as exc:  # noqa: BLE001 - the sink's own (a full disk): the caller's
            self._failed.append(exc)
            with contextlib.suppress(*gone):
                ct.kill()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout=timeout)

    def raise_failure(self) -> None:
        """The sink's error, raised in the caller's thread."""
        if self._failed:
            raise self._failed[0]


def stream(
    spec: ContainerSpec,
    command: Sequence[str],
    on_output: Callable[[bytes], None],
    *,
    timeout: float | None,
    host: str | None = None,
    before_start: Callable[[Any], None] | None = None,
    after_exit: Callable[[Any], None] | None = None,
    before_kill: Callable[[Any], None] | None = None,
) -> ProcResult:
    """Run ``command`` in a fresh container, streaming its output; like :func:`proc.stream`.

    Detached, logs followed in a thread, ``wait`` with the timeout (then killed: exit 124). The
    container is removed in every case — a failed start, a timeout, Ctrl-C and SIGTERM included
    — and its anonymous volumes with it. ``before_start`` gets the created container (files are
    put into it through the API), ``after_exit`` the exited one (files are fetched from it),
    ``before_kill`` the timed-out one while its command still runs (see :func:`exec_in`).
    """
    c = prepared(spec, host)
    begin = time.monotonic()
    refuse_if_closed()
    made: list[Any] = []  # the container, once the engine has made it (then always removed)
    pump: _Pump | None = None
    try:
        container = create_held(c, spec, command, made)
        refuse_if_closed()  # stopped while it was being created: it never starts
        if before_start is not None:
            before_start(container)
        _start(container, command)
        pump = _Pump(container, on_output)
        code, timed_out = wait_or_kill(
            c, container, command, timeout=timeout, host=host, before_kill=before_kill
        )
        pump.join(10)
        pump.raise_failure()
        if after_exit is not None:
            after_exit(container)
        return ProcResult(tuple(command), code, timed_out, time.monotonic() - begin)
    finally:
        remove_made(made)
        if pump is not None:
            pump.join(5)


def run(spec: ContainerSpec, command: Sequence[str], *, timeout: float = 120.0) -> tuple[int, str]:
    """Run ``command`` in a fresh container; return (exit status, stdout+stderr).

    Changes nothing on the host before it is sure it can: a missing bind source is refused
    (Docker would create it, as root). The container is always removed.
    """
    chunks: list[bytes] = []
    res = stream(spec, command, chunks.append, timeout=timeout)
    if res.timed_out:
        raise CommandTimeout(
            f"the container did not finish within {timeout:g} s",
            "check that the image starts quickly and the engine is not overloaded",
        )
    return res.exit_code, b"".join(chunks).decode("utf-8", "replace")
