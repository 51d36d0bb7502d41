"""The one door for running processes: argument lists only, timeouts, no shell.

Every child runs in its own session so that a timeout, Ctrl-C or SIGTERM kills the whole
process group (a gtest binary's helpers included), never just the parent. When the child
itself exits, whatever it left running in its group is killed too, and output stops being
awaited once nothing of the group is left (a leftover holding the pipe open cannot make a
finished attempt look hung). A process that escaped the group with ``setsid`` is caught by
:func:`become_subreaper`: orphans re-parent to lnrepro, which kills them after the attempt.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lnrepro.errors import EnvironmentProblem, Stopped

KILL_GRACE_S = 5.0
POLL_S = 0.2  # how often a quiet child's exit is noticed
DRAIN_S = 1.0  # after the group is gone, how long to read what is left in the pipe
_PR_SET_CHILD_SUBREAPER = 36
_subreaper = False
_live: dict[int, subprocess.Popen[bytes]] = {}  # children being streamed now (any thread)
_live_lock = threading.Lock()
_closed = threading.Event()  # set by kill_all(close=True): no new child may start


@dataclass(frozen=True)
class ProcResult:
    argv: tuple[str, ...]
    exit_code: int  # shell convention: 128+N for a signal (timeout(1) style 124 on our timeout)
    timed_out: bool
    seconds: float
    leftovers: int = 0  # processes of the child's group still running when it exited: killed
    escaped: int = 0  # processes that left the group (setsid) and outlived the child: killed


class _Held:
    """Signals held back in the main thread (where Python runs their handlers)."""

    depth = 0
    pending: BaseException | None = None


def signals_held() -> contextlib.AbstractContextManager[None]:
    """A stretch of the main thread that a signal must not cut: lnrepro's handlers
    (:func:`raise_or_hold`) keep what a signal raises until it ends, then raise it there. For a
    request whose effect the caller must learn to undo it — the engine creating a container,
    which a cut-off request leaves to finish unseen. Elsewhere than the main thread, nothing."""
    return (
        _signals_held()
        if threading.current_thread() is threading.main_thread()
        else contextlib.nullcontext()
    )


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    _Held.depth += 1
    try:
        yield
    finally:  # also when the stretch failed: the signal wins, the failure is its context
        _Held.depth -= 1
        if _Held.depth == 0 and _Held.pending is not None:
            exc, _Held.pending = _Held.pending, None
            raise exc


def raise_or_hold(exc: BaseException) -> None:
    """What a signal handler raises: now, or at the end of a :func:`signals_held` stretch. A
    second signal during the stretch is raised at once (an engine that never answers is left
    with a second Ctrl-C)."""
    if _Held.depth and _Held.pending is None:
        _Held.pending = exc
        return
    _Held.pending = None
    raise exc


def become_subreaper() -> bool:
    """Make orphaned descendants re-parent to this process (Linux), so none can outlive it."""
    global _subreaper
    if _subreaper:
        return True
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        _subreaper = libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        _subreaper = False
    return _subreaper


def stat_fields(pid: int | str) -> list[str] | None:
    """The fields of /proc/PID/stat from the state on (field 3), or None if the process is gone.
    The name before them may hold spaces and parentheses: it ends at the last ")"."""
    try:
        stat = Path("/proc", str(pid), "stat").read_text()
    except OSError:
        return None
    return stat[stat.rfind(")") + 2 :].split()


def _pids(
    match: Callable[[int, int], bool], zombies: bool = False, among: Sequence[str] | None = None
) -> list[int]:
    """Processes whose (ppid, pgrp) match; zombies (dead, awaiting a wait) only if asked.
    ``among``: only these pids, instead of every process in /proc."""
    names = among if among is not None else [e.name for e in os.scandir("/proc")]
    stats = ((int(name), stat_fields(name)) for name in names if name.isdigit())
    return [
        pid
        for pid, st in stats
        if st is not None and (zombies or st[0] != "Z") and match(int(st[1]), int(st[2]))
    ]


def _group_exists(pgid: int) -> bool:
    """Whether any process, a zombie included, is still in the group: one ``kill(-pgid, 0)``
    instead of reading every process's /proc/PID/stat (each child's exit asks this)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # there is one, of another user
    return True


def _children() -> list[str] | None:
    """This process's children, from every thread's /proc/self/task/TID/children (orphans
    re-parented to a subreaper are listed there too); None where the kernel does not list them
    (CONFIG_PROC_CHILDREN off)."""
    out: list[str] = []
    try:
        for task in Path("/proc/self/task").iterdir():
            out += (task / "children").read_text().split()
    except OSError:
        return None
    return out


def _kill_group(pgid: int, proc: subprocess.Popen[bytes] | None) -> None:
    """SIGTERM to the group, then SIGKILL after the grace period; return once it is gone."""
    for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, 2.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if (proc is None or proc.poll() is not None) and (
                not _group_exists(pgid) or not _pids(lambda _pp, pg: pg == pgid)
            ):
                return
            time.sleep(0.02)


def _kill_leftovers(pgid: int) -> int:
    """Kill what the exited child left in its group; return how many there were.

    SIGKILL is delivered asynchronously: wait (briefly) until the group is really gone, so that
    "the attempt is over" means nothing of it still runs.
    """
    if not _group_exists(pgid):
        return 0
    members = _pids(lambda _pp, pg: pg == pgid)
    if members:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        deadline = time.monotonic() + 2.0
        while _pids(lambda _pp, pg: pg == pgid) and time.monotonic() < deadline:
            time.sleep(0.01)
    return len(members)


def _kill_escaped() -> int:
    """As a subreaper: kill and reap the orphans re-parented to us (they escaped their group)."""
    if not _subreaper:
        return 0
    me = os.getpid()
    # under the lock: no other thread can start a child between the scan and the kill, and
    # another thread's child (bisect --jobs) is not an escapee
    with _live_lock:
        ours = set(_live)
        kids = _children()  # none of them: nothing escaped, and no scan of every process
        if kids == []:
            return 0
        alive = _pids(lambda pp, pg: pp == me and pg not in ours, among=kids)
        for pid in alive:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for pid in _pids(
            lambda pp, pg: pp == me and pg not in ours, zombies=True, among=_children()
        ):
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
    return len(alive)


def _start(
    argv: Sequence[str], env: Mapping[str, str] | None, cwd: Path | None
) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(  # noqa: S603 - argv list, never a shell
            list(argv),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=True,
        )
    except FileNotFoundError:
        if cwd is not None and not cwd.is_dir():
            raise EnvironmentProblem(
                f"cannot run {argv[0]!r}: the directory {cwd} does not exist", "check the path"
            ) from None
        raise EnvironmentProblem(
            f"cannot run {argv[0]!r}: no such program", "install it or check PATH"
        ) from None
    except PermissionError:
        raise EnvironmentProblem(
            f"cannot run {argv[0]!r}: permission denied", "check the file's execute bit"
        ) from None
    except OSError as exc:
        if exc.errno == errno.ENOEXEC:
            raise EnvironmentProblem(
                f"cannot run {argv[0]!r}: not an executable this machine can run",
                "pass a compiled binary or a script with a #! line",
            ) from None
        raise EnvironmentProblem(
            f"cannot run {argv[0]!r}: {exc.strerror}", "check the program and its directory"
        ) from None


def stream(
    argv: Sequence[str],
    on_output: Callable[[bytes], None],
    *,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    before_kill: Callable[[], None] | None = None,
) -> ProcResult:
    """Run ``argv`` with stdout+stderr merged, handing output to ``on_output`` as it comes.

    On timeout ``before_kill`` runs first (while the child still hangs: tt-triage reads the hung
    device), then the process group gets SIGTERM, then SIGKILL; the result says ``timed_out`` and
    ``exit_code`` is 124, as with timeout(1). On any exception (Ctrl-C, SIGTERM) the group is
    killed before it propagates. The exit code is always the child's own.
    """
    start = time.monotonic()
    with _live_lock:
        if _closed.is_set():
            raise Stopped()
        proc = _start(argv, env, cwd)
        pgid = proc.pid  # start_new_session: the child leads its own group
        _live[pgid] = proc
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    sel = selectors.DefaultSelector()
    sel.register(fd, selectors.EVENT_READ)
    deadline = None if timeout is None else start + timeout
    timed_out = eof = False
    leftovers = 0
    try:
        while True:
            now = time.monotonic()
            if deadline is not None and now >= deadline:
                timed_out = True
                break
            wait = POLL_S if deadline is None else min(POLL_S, deadline - now)
            if sel.select(timeout=wait):
                data = os.read(fd, 1 << 16)
                if not data:
                    eof = True
                    break
                on_output(data)
            elif proc.poll() is not None:
                break  # the child is done; a leftover may still hold the pipe open
        if timed_out:
            if before_kill is not None:
                before_kill()
            _kill_group(pgid, proc)
        elif not eof or proc.poll() is not None:
            pass
        else:  # the pipe closed but the child runs on: wait for it within the timeout
            try:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                proc.wait(timeout=left)
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill_group(pgid, proc)
        if not timed_out and proc.poll() is not None:
            leftovers = _kill_leftovers(pgid)
        # what the group still wrote, for a moment: never wait on a pipe held by an escapee
        drain_until = time.monotonic() + DRAIN_S
        while not eof and time.monotonic() < drain_until:
            if not sel.select(timeout=max(0.0, drain_until - time.monotonic())):
                break
            data = os.read(fd, 1 << 16)
            if not data:
                break
            on_output(data)
    except BaseException:
        _kill_group(pgid, proc)
        proc.wait()
        with _live_lock:
            _live.pop(pgid, None)
        _kill_escaped()
        raise
    finally:
        sel.close()
        proc.stdout.close()
    rc = proc.wait()
    with _live_lock:
        _live.pop(pgid, None)
    escaped = _kill_escaped()
    code = 124 if timed_out else 128 - rc if rc < 0 else rc  # a signal as a shell says it
    return ProcResult(tuple(argv), code, timed_out, time.monotonic() - start, leftovers, escaped)


def kill_all(close: bool = False) -> int:
    """Kill every process group being streamed, in any thread (a stopped ``bisect --jobs``).

    ``close``: also refuse to start any new one until :func:`reopen` (the threads still running
    would otherwise start their next step after the kill).
    """
    with _live_lock:
        if close:
            _closed.set()
        groups = list(_live.items())
    for pgid, p in groups:
        _kill_group(pgid, p)
    return len(groups)


def reopen() -> None:
    _closed.clear()


def capture(
    argv: Sequence[str],
    *,
    timeout: float = 60.0,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> tuple[int, str]:
    """Run a short command; return (exit code, stdout+stderr as text).

    Bytes that are not UTF-8 are kept as surrogate escapes (``os.fsdecode``'s way), so a path
    git prints comes back as the same path, never as a look-alike with U+FFFD in it.
    """
    chunks: list[bytes] = []
    res = stream(argv, chunks.append, timeout=timeout, cwd=cwd, env=env)
    return res.exit_code, b"".join(chunks).decode("utf-8", "surrogateescape")
