"""Who owns a container. A container outlives an lnrepro that was killed (SIGKILL, a lost
terminal, a crashed machine's engine coming back): nothing in-process can remove it then. Each
container names its owner, and the next lnrepro to use that engine removes those whose owner is
gone."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from lnrepro.doors.container.spec import OWNER
from lnrepro.doors.proc import stat_fields


def _start_ticks(pid: int) -> str | None:
    """A process's start time (clock ticks since boot, /proc/PID/stat field 22): with the pid, it
    names the process even after the pid is reused."""
    fields = stat_fields(pid) or []
    return fields[19] if len(fields) > 19 else None


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "-"


def _pid_namespace() -> str:
    """This process's pid namespace (an lnrepro in a container with ``--network host`` has the
    host's name and boot id, but not its pids)."""
    try:
        return str(Path("/proc/self/ns/pid").readlink()).removeprefix("pid:[").removesuffix("]")
    except OSError:
        return "-"


def owner_label(pid: int | None = None) -> str:
    """``host/boot id/pid namespace/pid/start``: this process (or ``pid``, of this namespace), as
    a container's owner label."""
    import socket

    pid = os.getpid() if pid is None else pid
    return (
        f"{socket.gethostname()}/{_boot_id()}/{_pid_namespace()}/{pid}/{_start_ticks(pid) or '-'}"
    )


def owner_gone(label: str) -> bool:
    """True when the owner named by ``label`` is a process that no longer runs (or ran before
    this boot) on this machine and in this pid namespace. Any other owner is never judged."""
    import socket

    parts = label.split("/")
    if len(parts) != 5 or parts[0] != socket.gethostname():
        return False
    _, boot, pidns, pid, start = parts
    if boot != _boot_id():
        return True
    if pidns != _pid_namespace():
        return False
    return not pid.isdigit() or _start_ticks(int(pid)) != start


_swept: set[str | None] = set()


def sweep(c: Any, host: str | None) -> int:
    """Remove the containers on that engine whose lnrepro is gone (once per engine and process);
    how many."""
    from docker.errors import APIError
    from requests.exceptions import RequestException

    if host in _swept:
        return 0
    _swept.add(host)
    gone = 0
    with contextlib.suppress(APIError, RequestException):
        for ct in c.containers.list(all=True, filters={"label": OWNER}):
            if owner_gone(str(ct.labels.get(OWNER, ""))):
                with contextlib.suppress(APIError, RequestException):
                    ct.remove(force=True, v=True)
                    gone += 1
    return gone
