"""The ``lnrepro`` command line: a thin layer over :mod:`lnrepro.api`.

One module per command or family, each parse → request → core → render:
:mod:`.parse`, :mod:`.envcheck`, :mod:`.run`, :mod:`.bisect`, :mod:`.records` (runs, show,
compare, report), :mod:`.studies` (explain, tolerance). :func:`main` maps every outcome to a
documented exit code and one line on stderr: never a traceback.

Only click and lnrepro's light modules are imported at start-up; each command imports what it
needs when it runs, so ``lnrepro --help`` never loads numpy, docker or git.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import re
import signal
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from lnrepro import __version__
from lnrepro.errors import (
    DiskFull,
    EnvironmentProblem,
    ExitCode,
    Interrupted,
    LnreproError,
    Terminated,
    UsageError,
)

EXIT_CODES_HELP = (
    "Exit codes: 0 ok; 1 tests or checks failed; 2 usage error; 3 internal error; "
    "4 bad input file; 5 environment problem (Docker, device, tool, disk) or nothing about the "
    "kernel could be learned; 6 git problem; 7 timeout; 130 interrupted (Ctrl-C); 143/129 "
    "terminated (SIGTERM/SIGHUP). With run --bisect-exit-code: git bisect run's 0 good, 1 bad, "
    "125 skip, 128 abort."
)
GIT_ABORT = 128  # git bisect run: any code >= 128 stops the bisection


# every command: the module (under lnrepro.cli) that defines it, and its one-line summary.
# `lnrepro --help` lists them from here and imports none of them (click's LazyGroup pattern:
# https://click.palletsprojects.com/en/stable/complex/#lazily-loading-subcommands).
COMMANDS: dict[str, tuple[str, str]] = {
    "bisect": ("bisect", "Find the commit that introduced (or fixed) the bug."),
    "compare": ("records", "Compare two runs test by test."),
    "env-check": ("envcheck", "Check this host (or container) can run tt-metal's tests."),
    "explain": (
        "studies",
        "Rank the kernel models that reproduce a run or log; say where a hang waits.",
    ),
    "parse": ("parse", "Parse a gtest log (and its report) into typed results."),
    "report": ("records", "Write a bug report (Markdown), JUnit XML or JSON from a record."),
    "run": ("run", "Run the BugRepro and NIGHTLY gtests N times, with timeouts; report."),
    "runs": ("records", "List saved runs and bisects."),
    "show": ("records", "Show one saved run or bisect."),
    "shrink": (
        "shrink",
        "Shrink a failing (or masked) test to its smallest, loudest deterministic case.",
    ),
    "tolerance": (
        "studies",
        "Which tolerance (and which data) tells the correct kernel from the bug.",
    ),
}
SUMMARY = {name: summary for name, (_, summary) in COMMANDS.items()}


def wrap_whole(text: str, width: int, indent: str = "", paragraphs: bool = False) -> str:
    """click's ``wrap_text`` that never splits a token: lines break at spaces only (click's
    TextWrapper breaks after hyphens and inside words longer than the line, so ``--hang-in``,
    paths and test names came out cut). A token longer than the line stands on a line of its own
    (the terminal folds it; a reader or a copy gets it whole). ``paragraphs``: click's rules
    (blank lines part paragraphs; a paragraph that starts with ``\\b`` is kept as written)."""
    import textwrap

    wrapper = textwrap.TextWrapper(
        max(width, 1),
        initial_indent=indent,
        subsequent_indent=indent,
        replace_whitespace=False,
        break_on_hyphens=False,
        break_long_words=False,
    )
    text = text.expandtabs()
    if not paragraphs:
        return wrapper.fill(text)
    out: list[str] = []
    for block in re.split(r"\n[ \t]*\n", text.strip("\n")):
        lines = block.splitlines()
        if not lines:
            continue
        extra = " " * (len(lines[0]) - len(lines[0].lstrip()))
        if lines[0].strip() == "\b":  # as written, indented
            out.append(
                "\n".join(
                    indent + extra + line.lstrip() if line.strip() else "" for line in lines[1:]
                )
            )
            continue
        para = textwrap.TextWrapper(
            max(width, 1),
            initial_indent=indent + extra,
            subsequent_indent=indent + extra,
            replace_whitespace=False,
            break_on_hyphens=False,
            break_long_words=False,
        )
        out.append(para.fill(" ".join(line.strip() for line in lines)))
    return "\n\n".join(out)


class HelpFormatter(click.HelpFormatter):
    """click's help formatter, wrapping with :func:`wrap_whole` so no flag, path or test name is
    ever split across lines (click's formatter is documented to be subclassed for this)."""

    def write_usage(self, prog: str, args: str = "", prefix: str | None = None) -> None:
        prefix = "Usage: " if prefix is None else prefix
        head = f"{prefix:>{self.current_indent}}{prog} "
        if not args:
            self.write(head.rstrip(" ") + "\n")
            return
        width = self.width - self.current_indent
        body = wrap_whole(args, width - len(head), paragraphs=False)
        self.write(head + body.replace("\n", "\n" + " " * len(head)) + "\n")

    def write_text(self, text: str) -> None:
        self.write(wrap_whole(text, self.width, " " * self.current_indent, paragraphs=True) + "\n")

    def write_dl(
        self, rows: Iterable[tuple[str, str]], col_max: int = 30, col_spacing: int = 2
    ) -> None:
        rows = list(rows)
        first_col = min(max((len(a) for a, _ in rows), default=0), col_max) + col_spacing
        pad = " " * (first_col + self.current_indent)
        for first, second in rows:
            self.write(f"{'':>{self.current_indent}}{first}")
            if not second:
                self.write("\n")
                continue
            if len(first) <= first_col - col_spacing:
                self.write(" " * (first_col - len(first)))
            else:
                self.write("\n" + pad)
            lines = wrap_whole(second, max(self.width - first_col - 2, 10), paragraphs=True)
            self.write(lines.replace("\n", "\n" + pad) + "\n")


class Context(click.Context):
    formatter_class = HelpFormatter


class LazyGroup(click.Group):
    """A group whose commands are imported when one is run or its help asked for."""

    context_class = Context

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in COMMANDS and cmd_name not in self.commands:
            importlib.import_module(f"lnrepro.cli.{COMMANDS[cmd_name][0]}")  # registers it
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, SUMMARY[name]) for name in self.list_commands(ctx)])


def all_commands() -> dict[str, click.Command]:
    """Every command, imported (for the docs and the tests)."""
    for module in {m for m, _ in COMMANDS.values()}:
        importlib.import_module(f"lnrepro.cli.{module}")
    return {name: cli.commands[name] for name in sorted(COMMANDS)}


@click.group(
    cls=LazyGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog=EXIT_CODES_HELP,
)
@click.version_option(__version__, "--version", "-V", prog_name="lnrepro")
def cli() -> None:
    """Reproduce, measure and bisect numerical bugs in accelerator kernels.

    First target: tt-train's fused LayerNorm backward kernel in tt-metal, whose
    block-based path gets gradients wrong by ~1000 for constant inputs while the
    random-data NIGHTLY test passes. Runs on a Tenstorrent card, or anywhere on the
    built-in numpy emulator of the kernel.
    """


def echo_json(doc: object) -> None:
    """A document on stdout as strict JSON (and, for the test suite, captured: see fsio)."""
    from lnrepro.doors.fsio import capture_json
    from lnrepro.model.jsonio import dumps

    text = dumps(doc)
    click.echo(text)
    capture_json(text)


def write_output(path: Path, text: str, flag: str = "-o") -> None:
    """``-o FILE``: written atomically, through the one write door. A path that cannot be a file
    is the user's to change (exit 2); a directory that refuses the write is the environment's."""
    from lnrepro.doors.fsio import atomic_write_text, write_error

    if path.is_dir():
        raise UsageError(
            f"{flag} {path} is a directory", f"name a file, e.g. {flag} {path / 'report.md'}"
        )
    if not path.parent.is_dir():
        raise UsageError(
            f"{flag} {path}: the directory {path.parent} does not exist",
            f"create it (mkdir -p {path.parent}), or write elsewhere",
        )
    try:
        atomic_write_text(path, text)
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise write_error(path, exc) from None
        raise EnvironmentProblem(
            f"cannot write {flag} {path}: {exc.strerror}",
            f"pass {flag} a path in a directory you can write",
        ) from None
    click.echo(f"lnrepro: wrote {path}", err=True)


def _crash_log(exc: BaseException) -> Path | None:
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


_signals = _Signals()


def _on_signal(signum: int, _frame: object) -> None:
    from lnrepro.doors import proc

    if _signals.first is None:
        _signals.first = signum
    proc.raise_or_hold(Interrupted() if signum == signal.SIGINT else Terminated(signum))


def _redeliver(
    hook: Callable[[sys.UnraisableHookArgs], object],
) -> Callable[[sys.UnraisableHookArgs], object]:
    """Python runs a signal's handler wherever the main thread is, also in a callback whose
    exceptions it ignores (an import lock's weakref callback): the stop it raises would be printed
    as a traceback and lost, and the command go on (a bisect step of an hour). Such a stop is sent
    again instead, to be raised where it can propagate."""

    def on_unraisable(u: sys.UnraisableHookArgs) -> object:
        exc = u.exc_value
        if isinstance(exc, (Terminated, Interrupted)):
            import threading

            # from another thread, a moment later: the main thread has left the callback (sent
            # from here, the handler would run here again, in the same ignoring place)
            signum = exc.signum if isinstance(exc, Terminated) else signal.SIGINT
            threading.Timer(0.01, os.kill, (os.getpid(), signum)).start()
            return None
        return hook(u)

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
    from lnrepro.doors import proc

    _safe_streams()
    args = list(argv) if argv is not None else sys.argv[1:]
    git_protocol = "--bisect-exit-code" in args  # errors must not read as "bad" to git bisect run
    proc.become_subreaper()  # nothing a test binary starts may outlive lnrepro
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
