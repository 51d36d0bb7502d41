"""The styles of statuses, verdicts and marks, and the console everything is drawn on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lnrepro.model.gtest import TestStatus
from lnrepro.present.escape import visible

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text


STATUS_STYLE = {
    TestStatus.PASSED: "green",
    TestStatus.FAILED: "bold red",
    TestStatus.SKIPPED: "yellow",
    TestStatus.DISABLED: "dim",
    TestStatus.CRASHED: "bold magenta",
    TestStatus.TIMEOUT: "bold magenta",
}
VERDICT_STYLE = {
    "PASS": "green",
    "FAIL": "bold red",
    "FLAKY": "bold yellow",
    "CRASH": "bold magenta",
    "HANG": "bold magenta",
    "ENV_ERROR": "bold cyan",
    "NOT_RUN": "dim",
    "BUILD_FAILED": "bold cyan",
    "SKIP": "dim",
}
MARK_STYLE = {"good": "green", "bad": "bold red", "skip": "yellow"}
ENV_STYLE = {"ok": "green", "warn": "yellow", "fail": "bold red", "skip": "dim"}


def styled(*parts: str | tuple[str, str] | Text) -> Text:
    """A line of our own styled words and data: ``(text, style)`` tuples style, strings are data."""
    from rich.text import Text

    out = Text()
    for p in parts:
        if isinstance(p, tuple):
            out.append(visible(p[0]), style=p[1])
        elif isinstance(p, str):
            out.append(visible(p))
        else:
            out.append_text(p)
    return out


def verdict_cell(verdict: str) -> Text:
    """A verdict in its colour."""
    return styled((verdict, VERDICT_STYLE.get(verdict, "")))


def build_line(label: str, ok: bool, seconds: float) -> Text:
    """How a build ended: ``build ok in 12 s`` (``FAILED`` in red)."""
    return styled(
        (label, "bold"),
        ("ok" if ok else "FAILED", "green" if ok else "bold red"),
        f" in {seconds:.0f} s",
    )


def make_console(stderr: bool = False) -> Console:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=False)
