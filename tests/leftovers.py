"""The containers a test's own lnrepro left behind, on an engine whose other containers belong to
tests running at the same time in other xdist workers.

lnrepro labels every container it starts with its owner (``lnrepro.doors.container.OWNER``:
host, boot, pid namespace, pid and start time of the lnrepro process), so a test asks about the
processes it started and no others: "nothing lnrepro started outlives it" for that command.
"""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Any

from lnrepro.doors import container


class Ran(subprocess.CompletedProcess[str]):
    """A finished lnrepro, with the owner label its containers carried."""

    owner: str


def owner(proc: subprocess.Popen[Any]) -> str:
    """The owner label of a process just started (it is alive, so its start time is readable)."""
    return container.owner_label(proc.pid)


def run(argv: list[str], *, timeout: float, input: str | None = None, **kw: Any) -> Ran:
    """subprocess.run for lnrepro, except that a test which fails or times out while it runs
    stops it as a user would (SIGTERM, then a wait): its containers go with it rather than
    outliving a SIGKILL into the next test."""
    stdin = subprocess.PIPE if input is not None else kw.pop("stdin", None)
    with subprocess.Popen(
        argv, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw
    ) as p:
        label = owner(p)
        try:
            out, err = p.communicate(input, timeout=timeout)
        except BaseException:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
            raise
    done = Ran(argv, p.returncode, out, err)
    done.owner = label
    return done


def left(*owners: str, host: str | None = None) -> set[str]:
    """The containers (running or stopped) on that engine whose owner is one of ``owners``."""
    ids: set[str] = set()
    for o in owners:
        argv = [
            "docker",
            *(["-H", host] if host else []),
            "ps",
            "-aq",
            "--filter",
            f"label={container.OWNER}={o}",
        ]
        ids |= set(subprocess.run(argv, capture_output=True, text=True, check=True).stdout.split())
    return ids


def running_in(tree: Path, pattern: str) -> list[str]:
    """The processes on this machine (in containers too) whose command line has ``pattern`` and
    whose working directory is ``tree`` or below it (a container sees a bind-mounted tree at its
    path): a test's own, where another worker's test runs the same command in its own tree."""
    pids = subprocess.run(["pgrep", "-f", pattern], capture_output=True, text=True).stdout.split()
    mine = []
    for pid in pids:
        try:
            cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
        except OSError:  # gone already
            continue
        if cwd == tree or tree in cwd.parents:
            mine.append(pid)
    return mine
