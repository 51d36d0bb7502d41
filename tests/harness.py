"""The one way a test runs the ``lnrepro`` command, and the one check of its one-line errors.

:func:`lnrepro` runs it in this process, through the real entry point
(:func:`lnrepro.cli.main`: the exit codes, the one-line errors, the git bisect run mapping) with
click's :class:`~click.testing.CliRunner` holding stdin, stdout, stderr and the environment; it
is the default. :func:`lnrepro_process` starts it as a user does, for what only a process shows:
signals, a terminal, containers (their owner label), real git under another user, the
interpreter's start-up. Both return a :class:`Result`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tests import leftovers

# the installed command, as a person runs it (the interpreter of this test run)
LNREPRO = [sys.executable, "-m", "lnrepro"]


@dataclass(frozen=True)
class Result:
    """How a command ended: its exit code, stdout and stderr (``owner``: its containers' label,
    from a process only)."""

    code: int
    out: str
    err: str
    owner: str = ""

    def __iter__(self) -> Iterator[Any]:  # code, out, err = lnrepro(...)
        return iter((self.code, self.out, self.err))

    @property
    def returncode(self) -> int:  # the name subprocess gives it
        return self.code

    @property
    def stdout(self) -> str:
        return self.out

    @property
    def stderr(self) -> str:
        return self.err


@contextlib.contextmanager
def _own_process_state() -> Iterator[None]:
    """main() installs lnrepro's signal handlers and unraisable hook and keeps the first signal:
    all of it is put back after the command, as pytest had it. And the test process is not made
    lnrepro's subreaper: as one, lnrepro kills every child it did not start itself (escaped
    test binaries), which here would be the test's own (a bisect it runs in the background)."""
    from lnrepro.cli import exits
    from lnrepro.doors import proc

    sigs = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    saved = {s: signal.getsignal(s) for s in sigs}
    hook = sys.unraisablehook
    become, reaping = proc.become_subreaper, proc._subreaper
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as a process starts
    proc.become_subreaper = lambda: False  # type: ignore[assignment]
    proc._subreaper = False
    try:
        yield
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)
        sys.unraisablehook = hook
        proc.become_subreaper, proc._subreaper = become, reaping  # type: ignore[method-assign]
        exits.forget_signals()


@contextlib.contextmanager
def _chdir(where: Path | None) -> Iterator[None]:
    """``contextlib.chdir`` (Python 3.11), for 3.10 too."""
    back = os.getcwd()
    if where is not None:
        os.chdir(where)
    try:
        yield
    finally:
        os.chdir(back)


def lnrepro(
    *args: str | Path,
    cwd: Path | None = None,
    env: Mapping[str, str | None] | None = None,
    input: str | None = None,
    width: int = 80,
) -> Result:
    """``lnrepro ARGS`` in this process: ``cwd`` the working directory for the command, ``env``
    variables set (None: unset) for it, ``input`` its stdin. click's runner lays help out at
    ``width`` columns (80) whatever ``COLUMNS`` says: a test that reads what a help says, not how
    it is laid out, asks for a wide one; a test of the terminal's width runs a process."""
    from click import formatting

    from lnrepro.cli import main

    runner = CliRunner()
    with (
        _own_process_state(),
        _chdir(cwd),
        runner.isolation(input=input, env=env) as (out, err, _),
    ):
        formatting.FORCED_WIDTH = width  # the runner puts its own back on the way out
        code = main([str(a) for a in args])
        sys.stdout.flush()
        sys.stderr.flush()
        text = out.getvalue().decode(errors="backslashreplace")
        errors = err.getvalue().decode(errors="backslashreplace")
    return Result(code, text, errors)


def lnrepro_process(
    *args: str | Path,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
    timeout: float = 120,
    **kw: Any,
) -> Result:
    """``lnrepro ARGS`` as a new process (``env``: added to this one's), stopped as a user would
    (SIGTERM) if the test fails while it runs."""
    ran = leftovers.run(
        [*LNREPRO, *map(str, args)],
        cwd=cwd,
        env={**os.environ, **env} if env is not None else None,
        input=input,
        timeout=timeout,
        **kw,
    )
    return Result(ran.returncode, ran.stdout, ran.stderr, ran.owner)


def assert_one_line_error(
    result: Result, code: int | None, *contains: str, out: str | None = ""
) -> str:
    """Exit ``code`` (None: any but 0), on stderr exactly one line, ``lnrepro: error: …`` (no
    traceback, no internal error, no blank line), holding each of ``contains``: that line. And
    stdout is ``out`` (nothing, by default: a refused request prints nothing; None: anything, for
    a command that ran and says what it found before the error)."""
    if code is None:
        assert result.code != 0, (result.err, result.out[-500:])
    else:
        assert result.code == code, (result.code, result.err, result.out[-500:])
    if out is not None:
        assert result.out == out, repr(result.out[-500:])
    assert result.err.startswith("lnrepro: error: ") and result.err.count("\n") == 1, repr(
        result.err
    )
    line = result.err.strip()
    for needle in contains:
        assert needle in line, line
    return line
