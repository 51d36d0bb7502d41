"""Every outcome of a command mapped to a documented exit code and one line on stderr, never a
traceback (docs/exit-codes.md): lnrepro's errors, click's usage errors, a crash (exit 3, with a
crash log), a full disk, a broken pipe, and the signals (SIGINT, SIGTERM, SIGHUP: 128+N, one
line, the stop re-sent when Python would have swallowed it). :func:`main` is the entry point.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from lnrepro import __version__
from lnrepro.cli.commands import cli
from lnrepro.errors import (
    DiskFull,
    EnvironmentProblem,
    ExitCode,
    Interrupted,
    LnreproError,
    Terminated,
    UsageError,
)

GIT_ABORT = 128  # git bisect run: any code >= 128 stops the bisection


def _crash_log(exc: BaseException) -> Path | None:
    import tempfile  # only on a crash: not by every start (--help)
    import traceback

    try:
        fd, name = tempfile.mkstemp(prefix="lnrepro-crash-", suffix=".log")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(f"lnrepro {__version__}\nargv: {sys.argv!r}\n\n")
            fh.write("".join(traceback.format_exception(exc)))
        return Path(name)
    except OSError:
        return None


@dataclass
class _Signals:
    """The first signal that came (SIGINT, SIGTERM, SIGHUP), kept because its exception can be
    lost on the way up: raised inside a class body it comes out as a RuntimeError
    (``__set_name__``), and a library may swallow it. Whatever the command did after it, lnrepro
    then exits 128+N, with one line."""

    first: int | None = None
    reported: bool = False  # that line is out
    # what the command left that a person can continue (a bisect's saved state), said on that line
    then: Callable[[], str | None] | None = None
    in_hook: bool = False  # the main thread is in the unraisable hook, where a raise is lost too


_signals = _Signals()


def forget_signals() -> None:
    """Forget the signal that came and the stop's hint (for a caller that runs :func:`main` more
    than once in a process: the test suite)."""
    global _signals
    _signals = _Signals()


def _on_signal(signum: int, _frame: object) -> None:
    from lnrepro.doors import proc

    if _signals.first is None:
        _signals.first = signum
    if _signals.in_hook:  # raised here, it would be ignored once more: sent again, a moment later
        _send_later(signum)
        return
    proc.raise_or_hold(Interrupted() if signum == signal.SIGINT else Terminated(signum))


def _send_later(signum: int) -> None:
    """``signum`` sent to this process from another thread, a moment later: by then the main
    thread has left the place that ignores exceptions (or, on a loaded machine, it comes back
    here and is sent again)."""
    import threading

    threading.Timer(0.01, os.kill, (os.getpid(), signum)).start()


def _redeliver(
    hook: Callable[[sys.UnraisableHookArgs], object],
) -> Callable[[sys.UnraisableHookArgs], object]:
    """Python runs a signal's handler wherever the main thread is, also in a callback whose
    exceptions it ignores (an import lock's weakref callback): the stop it raises would be printed
    as a traceback and lost, and the command go on (a bisect step of an hour). Such a stop is sent
    again instead, to be raised where it can propagate."""

    def on_unraisable(u: sys.UnraisableHookArgs) -> object:
        exc = u.exc_value
        _signals.in_hook = True  # a signal that comes while this runs is sent again too
        try:
            if isinstance(exc, (Terminated, Interrupted)):
                _send_later(exc.signum if isinstance(exc, Terminated) else signal.SIGINT)
                return None
            return hook(u)
        finally:
            _signals.in_hook = False

    return on_unraisable


def on_stop(then: Callable[[], str | None]) -> None:
    """What to add to the line a signal's stop prints (called then; None: nothing to add)."""
    _signals.then = then


def _stopped(signum: int) -> int:
    """The one line (once) and the exit code of a command a signal stopped."""
    if not _signals.reported:
        _signals.reported = True
        then = None
        with contextlib.suppress(Exception):  # a hint must never turn a stop into a crash
            then = _signals.then() if _signals.then is not None else None
        with contextlib.suppress(OSError):
            what = (
                "interrupted"
                if signum == signal.SIGINT
                else f"terminated by {signal.Signals(signum).name}"
            )
            click.echo(f"lnrepro: {what}" + (f" — {then}" if then else ""), err=True)
    return 128 + signum


def _safe_streams() -> None:
    """Whatever the terminal's encoding (PYTHONIOENCODING=ascii), output never fails on a
    character: it is written as a backslash escape instead."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(AttributeError, ValueError):
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: maps every outcome to a documented exit code, never a traceback."""
    _safe_streams()
    args = list(argv) if argv is not None else sys.argv[1:]
    git_protocol = "--bisect-exit-code" in args  # errors must not read as "bad" to git bisect run
    # nothing a test binary starts may outlive lnrepro: each command becomes a subreaper as it
    # starts (lnrepro.cli.params.Command.invoke), so that --help loads no process machinery
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _on_signal)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not if started ignoring it
        signal.signal(signal.SIGINT, _on_signal)
    sys.unraisablehook = _redeliver(sys.unraisablehook)
    code = _main(args)
    if _signals.first is not None and not _signals.reported:
        code = _stopped(_signals.first)  # its exception was lost on the way: the signal still wins
    if git_protocol and code not in (0, 1, 125) and code < GIT_ABORT:
        return GIT_ABORT  # nothing can be tested here: git aborts instead of marking a commit
    return code


def _main(args: list[str]) -> int:
    try:
        try:
            Path.cwd()
        except FileNotFoundError:
            raise EnvironmentProblem(
                "the current directory no longer exists", "cd to an existing directory"
            ) from None
        rv: Any = cli.main(args=args, prog_name="lnrepro", standalone_mode=False)
    except click.exceptions.Abort:  # click's wrapping of Ctrl-C
        return _stopped(_signals.first or signal.SIGINT)
    except click.exceptions.NoArgsIsHelpError as exc:  # bare `lnrepro`: the help, as asked for
        if exc.ctx is not None:
            click.echo(exc.ctx.get_help())
        return ExitCode.OK
    except click.UsageError as exc:  # one line, like every other error
        cmd = exc.ctx.command_path if exc.ctx is not None else "lnrepro"
        return _error(UsageError(exc.format_message(), f"see `{cmd} --help`"))
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except LnreproError as exc:
        return _error(exc)
    except KeyboardInterrupt:
        return _stopped(signal.SIGINT)
    except Terminated as exc:
        return _stopped(exc.signum)
    except BrokenPipeError:
        return ExitCode.OK
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            return _error(DiskFull("no space left writing output", "free space where it goes"))
        return _internal(exc)
    except Exception as exc:  # noqa: BLE001 - the last line of defence, with a crash log
        return _internal(exc)
    return int(rv) if isinstance(rv, int) else 0


def _error(exc: LnreproError) -> int:
    if _signals.first is not None:  # the error came of the signal (a child killed, a read cut)
        return _stopped(_signals.first)
    with contextlib.suppress(OSError):
        click.echo(f"lnrepro: error: {exc.one_line()}", err=True)
    return int(exc.exit_code)


def _internal(exc: BaseException) -> int:
    if _signals.first is not None:  # e.g. its exception wrapped in a RuntimeError (class body)
        return _stopped(_signals.first)
    where = _crash_log(exc)
    with contextlib.suppress(OSError):
        click.echo(
            f"lnrepro: internal error: {type(exc).__name__}: {' '.join(str(exc).split())[:300]} — fix: please report it"
            + (f" with {where}" if where else ""),
            err=True,
        )
    return ExitCode.INTERNAL
