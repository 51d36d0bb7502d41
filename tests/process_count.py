"""A pytest plugin that counts the processes a test run starts, printed at the end of every run
(registered by tests/conftest.py), to compare the suite's cost before and after a change:

- ``Popen``: ``subprocess.Popen`` calls in pytest's own processes (the controller and each xdist
  worker; not what those processes start in turn), and how many of them are lnrepro itself (a new
  interpreter);
- ``forks``: every process and thread the machine created during the run (``processes`` in
  ``/proc/stat``, Linux's count of forks since boot): lnrepro's children, the compilers, the
  containers' processes, and whatever else runs on the machine meanwhile.

- CPU: each test's CPU seconds (its pytest process's and the children it waited for:
  lnrepro, compilers, git; not a container's processes, which the engine runs), the run's total
  and the ten costliest tests, the ones to make cheaper first.

Each pytest process writes its own counts into the run's folder (``LNREPRO_PROCESS_COUNT``,
set by the controller and inherited by the workers); the controller adds them up.
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ENV = "LNREPRO_PROCESS_COUNT"
REPORT = "LNREPRO_CPU_REPORT"  # a file to write every test's CPU seconds to
_started = [0, 0]  # every process; those that are lnrepro itself (a new interpreter)
_forks_at_start = pytest.StashKey[int]()
_cpu_at_start = pytest.StashKey[tuple[float, float]]()
_cpu: dict[str, float] = {}  # test id -> CPU seconds (setup, call and teardown)


def _cpu_now() -> float:
    own, waited = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + waited.ru_utime + waited.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    before = _cpu_now()
    yield
    _cpu[item.nodeid] = _cpu.get(item.nodeid, 0.0) + _cpu_now() - before


def _is_lnrepro(args: Any) -> bool:
    """A new interpreter running lnrepro: ``python -m lnrepro``, the ``lnrepro`` script, or
    ``python -c`` code that imports it (behind runuser, sh or tmux too)."""
    argv = [str(a) for a in (args if isinstance(args, (list, tuple)) else [args])]
    joined = " ".join(argv) + " "
    return (
        "-m lnrepro " in joined
        or Path(argv[0]).name == "lnrepro"
        or ("-c" in argv and "lnrepro" in joined)
    )


def _stat(key: str) -> list[int]:
    """A line of /proc/stat (``processes``: Linux's count of forks since boot; ``cpu``: the
    machine's jiffies by state); empty where /proc has none."""
    try:
        for line in Path("/proc/stat").read_text().splitlines():
            if line.split(" ", 1)[0] == key:
                return [int(x) for x in line.split()[1:]]
    except OSError:
        pass
    return []


def _forks() -> int:
    return (_stat("processes") or [0])[0]


def _busy_idle() -> tuple[float, float]:
    """The machine's busy and idle core-seconds since boot (idle counts iowait too)."""
    j = _stat("cpu") + [0] * 10
    tick = os.sysconf("SC_CLK_TCK")
    idle = j[3] + j[4]
    return (sum(j[:8]) - idle) / tick, idle / tick


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the controller, or a run without xdist
        where = Path(f"/tmp/lnrepro-processes-{os.getpid()}")
        shutil.rmtree(where, ignore_errors=True)
        where.mkdir()
        os.environ[ENV] = str(where)
        config.stash[_forks_at_start] = _forks()
        config.stash[_cpu_at_start] = _busy_idle()
    init = subprocess.Popen.__init__

    def counted_init(self: subprocess.Popen[Any], *args: Any, **kw: Any) -> None:
        _started[0] += 1
        _started[1] += _is_lnrepro(args[0] if args else kw.get("args"))
        init(self, *args, **kw)

    subprocess.Popen.__init__ = counted_init  # type: ignore[method-assign]


@pytest.hookimpl(trylast=True)  # a worker's counts are on disk before it reports that it finished
def pytest_sessionfinish(session: pytest.Session) -> None:
    where = os.environ.get(ENV)
    if where and Path(where).is_dir():
        Path(where, f"{os.getpid()}.count").write_text(
            f"{_started[0]} {_started[1]}\n"
            + "".join(f"{cpu:.3f} {nodeid}\n" for nodeid, cpu in _cpu.items()),
            encoding="utf-8",
        )


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    if hasattr(config, "workerinput") or _forks_at_start not in config.stash:
        return
    where = Path(os.environ[ENV])
    counts = [(_started[0], _started[1])]  # the controller's own
    cpu = dict(_cpu)
    for f in where.glob("*.count"):  # the workers', written as each one finished
        first, *tests = f.read_text().splitlines()
        a, b = first.split()
        counts.append((int(a), int(b)))
        for line in tests:
            seconds, nodeid = line.split(" ", 1)
            cpu[nodeid] = cpu.get(nodeid, 0.0) + float(seconds)
    forks = _forks() - config.stash[_forks_at_start]
    (busy0, idle0), (busy1, idle1) = config.stash[_cpu_at_start], _busy_idle()
    terminalreporter.write_line(
        f"processes: {sum(a for a, _ in counts)} started with Popen by pytest's processes "
        f"({sum(b for _, b in counts)} of them lnrepro); {forks} forks machine-wide "
        "(/proc/stat, threads included)"
    )
    terminalreporter.write_line(
        f"machine: {busy1 - busy0:.0f} busy and {idle1 - idle0:.0f} idle core-seconds on "
        f"{os.cpu_count()} cores (/proc/stat: everything, the containers and other sessions too)"
    )
    if len(cpu) > 1:
        terminalreporter.write_line(
            f"CPU: {sum(cpu.values()):.0f} s in the tests (their processes and the children "
            "they waited for); the costliest:"
        )
        ranked = sorted(cpu.items(), key=lambda kv: -kv[1])
        for nodeid, seconds in ranked[:10]:
            terminalreporter.write_line(f"  {seconds:6.1f} s  {nodeid}")
        if os.environ.get(REPORT):  # every test's CPU, costliest first, for a closer look
            Path(os.environ[REPORT]).write_text(
                "".join(f"{seconds:.3f} {nodeid}\n" for nodeid, seconds in ranked), encoding="utf-8"
            )
    shutil.rmtree(where, ignore_errors=True)
