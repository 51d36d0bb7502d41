"""A real terminal for lnrepro: a pty of a given size, its output fed to pyte (a VT100/xterm
emulator), read back as what a person sees. Rows the terminal wrapped (a line longer than the
screen) are joined back, as a terminal's copy does, so a token printed whole but folded only by
the screen's edge counts as whole; a token that lnrepro itself broke does not."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Sequence
from pathlib import Path

import pyte
from pyte import modes

ROWS = 1000  # taller than any output here: nothing scrolls off, rows keep their numbers
BOX = frozenset("│┃┏┓┗┛━─┼╇┡┩└┘┌┐╋┳┻┣┫")


def lnrepro() -> str:
    """The installed command (the venv's), as a user runs it."""
    beside = Path(sys.executable).with_name("lnrepro")
    return str(beside) if beside.exists() else "lnrepro"


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a person's terminal: no size or colour overrides from the test run."""
    drop = {
        "COLUMNS",
        "LINES",
        "FORCE_COLOR",
        "NO_COLOR",
        "TTY_COMPATIBLE",
        "TTY_INTERACTIVE",
        "PYTEST_CURRENT_TEST",
    }
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["TERM"] = "xterm-256color"
    return {**env, **(extra or {})}


class _Screen(pyte.Screen):
    """A pyte screen that remembers which rows the terminal itself wrapped."""

    def __init__(self, columns: int, lines: int) -> None:
        super().__init__(columns, lines)
        self.wrapped: set[int] = set()

    def draw(self, data: str) -> None:
        for ch in data:
            if self.cursor.x == self.columns and modes.DECAWM in self.mode:
                self.wrapped.add(self.cursor.y)
            super().draw(ch)

    def erase_in_line(self, how: int = 0, private: bool = False) -> None:
        self.wrapped.discard(self.cursor.y)
        super().erase_in_line(how, private)

    def erase_in_display(self, how: int = 0, *args: object, **kwargs: object) -> None:
        if how in (0, 2, 3):
            self.wrapped = {y for y in self.wrapped if y < self.cursor.y}
        super().erase_in_display(how, *args, **kwargs)

    def logical_lines(self) -> list[str]:
        out, cur = [], ""
        for y, row in enumerate(self.display):
            cur += row if y in self.wrapped else row.rstrip()
            if y not in self.wrapped:
                out.append(cur)
                cur = ""
        while out and not out[-1]:
            out.pop()
        return out


def on_screen(
    argv: Sequence[str],
    width: int,
    *,
    cwd: Path,
    timeout: float = 120,
    env: dict[str, str] | None = None,
) -> tuple[int, list[str]]:
    """Run ``argv`` with stdin, stdout and stderr on a ``width``-column terminal; its exit code
    and the screen's lines (rows wrapped by the terminal joined)."""
    code, screen = terminal(argv, width, cwd=cwd, timeout=timeout, env=env)
    return code, screen.logical_lines()


def terminal(
    argv: Sequence[str],
    width: int,
    *,
    cwd: Path,
    timeout: float = 120,
    env: dict[str, str] | None = None,
) -> tuple[int, _Screen]:
    """:func:`on_screen`, with the pyte screen itself (its characters' colours and weights)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, width, 0, 0))
    screen = _Screen(width, ROWS)
    stream = pyte.ByteStream(screen)
    proc = subprocess.Popen(
        list(argv),
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=cwd,
        env=child_env(env),
        start_new_session=True,
    )
    os.close(slave)
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{argv} did not finish in {timeout} s")
            ready, _, _ = select.select([master], [], [], min(left, 1.0))
            if not ready:
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every writer closed the terminal
                break
            if not data:
                break
            stream.feed(data)
        code = proc.wait(timeout=max(deadline - time.monotonic(), 1))
    finally:
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 9)
            proc.wait()
        os.close(master)
    return code, screen


def piped(
    argv: Sequence[str], *, cwd: Path, timeout: float = 120, env: dict[str, str] | None = None
) -> tuple[int, list[str]]:
    """Run ``argv`` with its standard output piped (``| tee log``, a CI log); its exit code and
    the lines it wrote there."""
    p = subprocess.run(
        list(argv),
        cwd=cwd,
        env=child_env(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )
    return p.returncode, p.stdout.splitlines()


def whole(token: str, text: str) -> bool:
    """``token`` in ``text``, not inside a longer word or number."""
    return re.search(rf"(?<![\w.]){re.escape(token)}(?![\w]|\.\d)", text) is not None
