"""Waiting for a container's command, killing it at its time limit, and running a command beside
it (``docker exec``) while it still runs: what a ``before_kill`` hook uses to look at a hang."""

from __future__ import annotations

import contextlib
import shlex
import threading
from collections.abc import Callable, Sequence
from typing import Any

from lnrepro.doors.container.engine import answers, engine_lost

TIMED_OUT = 124  # the exit status of a command killed at its time limit, as timeout(1)'s


def wait_or_kill(
    c: Any,
    container: Any,
    command: Sequence[str],
    *,
    timeout: float | None,
    host: str | None,
    before_kill: Callable[[Any], None] | None,
) -> tuple[int, bool]:
    """(exit status, timed out) of the started ``container``'s command, waited for at most
    ``timeout`` seconds; then ``before_kill`` gets it while its command still runs, and it is
    killed (exit 124). An engine that no longer answers the wait is :class:`EngineLost`."""
    import requests
    from docker.errors import APIError

    try:
        status = container.wait(timeout=timeout)
        return int(status.get("StatusCode", -1)), False
    except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError):
        if not answers(c):
            raise engine_lost(host, f"during `{shlex.join(command)[:80]}`") from None
    if before_kill is not None:
        before_kill(container)
    with contextlib.suppress(APIError):
        container.kill()
    return TIMED_OUT, True


def exec_in(
    container: Any,
    command: Sequence[str],
    on_output: Callable[[bytes], None],
    *,
    timeout: float,
    workdir: str | None = None,
) -> tuple[int | None, bool]:
    """Run ``command`` in a running container (``docker exec``: its user, environment and
    namespaces), streaming its output, for at most ``timeout`` seconds; (exit status, timed
    out). A command still running at its time limit is left to the container's kill."""
    import requests
    from docker.errors import APIError

    api = container.client.api
    result: list[int | None] = []

    def pump() -> None:
        with contextlib.suppress(APIError, requests.exceptions.RequestException):
            ex = api.exec_create(
                container.id, list(command), workdir=workdir, stdout=True, stderr=True
            )
            for chunk in api.exec_start(ex["Id"], stream=True):
                on_output(chunk)
            result.append(api.exec_inspect(ex["Id"]).get("ExitCode"))

    t = threading.Thread(target=pump, daemon=True)
    t.start()
    t.join(timeout)
    return (result[0] if result else None), t.is_alive()
