"""Live progress on stderr: a long step's spinner (:class:`Working`), a run's attempts and
tests, a bisect's steps. Written for a CI log as much as for a person."""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from lnrepro.model.bisect import ActionKind, CommitInfo, Mark
from lnrepro.model.events import BisectEvents, Events
from lnrepro.model.gtest import TestResult, TestStatus
from lnrepro.model.record import Attempt
from lnrepro.present.console.layout import plain_line, say
from lnrepro.present.console.runs import full_name
from lnrepro.present.console.style import MARK_STYLE, STATUS_STYLE, build_line, styled
from lnrepro.present.escape import terminal as esc
from lnrepro.present.escape import visible
from lnrepro.present.text import fmt_metrics

if TYPE_CHECKING:
    from rich.console import Console


class Working:
    """What a long step is doing, on stderr while it works: a spinner line on a terminal
    (rich's status, gone when done); in a log (stderr piped), a plain line whenever the step's
    subject changes and at most every ``every`` seconds otherwise, so a CI log shows it alive."""

    def __init__(self, console: Console, text: str, every: float = 10.0) -> None:
        self.console, self.text, self.every = console, text, every
        self.status: Any = None
        self.said, self.subject = -math.inf, ""

    def __enter__(self) -> Working:
        if self.console.is_terminal:
            self.status = self.console.status(esc(self.text))
            self.status.__enter__()
        else:
            self._line(self.text)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.status is not None:
            self.status.__exit__(*exc)

    def update(self, text: str, subject: str = "") -> None:
        """``text`` now; ``subject`` (a test's name): a new one is always logged."""
        if self.status is not None:
            self.status.update(esc(text))
        elif subject != self.subject or time.monotonic() - self.said >= self.every:
            self._line(text)
        self.subject = subject

    def _line(self, text: str) -> None:
        self.said = time.monotonic()
        plain_line(self.console, [text])


class RichRunEvents(Events):
    """Live progress for `lnrepro run` on stderr, written for a CI log as much as for a person.

    A bar over the attempts (on a terminal only, transient) with the running test named whole on
    its own line under it. Lines that stay: per attempt one line with its counts; a test's line
    only when its status changes (attempt 1: the tests that did not pass; later attempts: a test
    that flips), each with its attempt as a prefix. ``run -n 50`` of a steady bug: one line per
    failing test, then one line per attempt."""

    def __init__(self, console: Console) -> None:
        from rich.console import Group
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.text import Text

        class _Progress(Progress):
            def get_renderables(self) -> Iterable[Any]:  # the bar, then the test on its own line
                table = self.make_tasks_table(self.tasks)
                names = [str(t.fields.get("test") or "") for t in self.tasks]
                lines = [Text("  " + visible(n), style="dim", overflow="fold") for n in names if n]
                yield Group(table, *lines) if lines else table

        # fixed-width columns first and a short description: at 60 columns nothing is cut
        self.progress = _Progress(
            SpinnerColumn(),
            TextColumn("{task.description}", markup=False),
            BarColumn(bar_width=20),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )
        self.task: Any = None
        self.build_task: Any = None
        self.attempt = (0, 0)
        self.last: dict[str, TestStatus] = {}  # each test's status in the attempt before
        self.now: dict[str, TestStatus] = {}  # in this attempt
        self.in_flight = False  # an attempt started and not finished

    def __enter__(self) -> RichRunEvents:
        if self.progress.console.is_terminal:  # in a log, a bar is noise (and a blank line)
            self.progress.start()
        return self

    def __exit__(self, kind: object, exc: object, tb: object) -> None:
        if self.progress.console.is_terminal:
            self.progress.stop()  # the bar is transient: what it showed goes with it
        from lnrepro.errors import Terminated

        # Ctrl-C or SIGTERM mid-attempt (an error says its own one line, nothing else)
        if isinstance(exc, (KeyboardInterrupt, Terminated)) and self.in_flight:
            i, n = self.attempt
            how = "interrupted" if isinstance(exc, KeyboardInterrupt) else "stopped"
            say(self.progress.console, esc(f"attempt {i}/{n}: {how} {partial_counts(self.now)}"))

    def build_started(self, what: str) -> None:
        self.build_task = self.progress.add_task(f"building: {what}", total=None)

    def build_output(self, data: bytes) -> None:
        line = data.rstrip().rsplit(b"\n", 1)[-1].decode("utf-8", "replace")[:100]
        if line and self.build_task is not None:
            self.progress.update(self.build_task, description=esc(f"building: {line}").plain)

    def build_finished(self, ok: bool, seconds: float) -> None:
        if self.build_task is not None:
            self.progress.remove_task(self.build_task)
            self.build_task = None
        say(self.progress.console, build_line("  build ", ok, seconds))

    def _prefix(self) -> str:
        i, n = self.attempt
        return f"attempt {i}/{n}:" if n > 1 else ""

    def attempt_started(self, index: int, total: int, argv: list[str]) -> None:
        self.attempt = (index, total)
        if self.task is None:
            self.task = self.progress.add_task("starting", total=total)
        self.progress.update(self.task, description=f"attempt {index}/{total}", test="")
        self.now = {}
        self.in_flight = True

    def test_started(self, name: str) -> None:
        self.progress.update(self.task, test=name)

    def test_finished(self, result: TestResult) -> None:
        name = full_name(result)
        before = self.last.get(name)
        self.now[name] = result.status
        if result.status is before or (before is None and result.status is TestStatus.PASSED):
            return  # no change: the attempt's count line says it
        was = f"  (was {before.value})" if before is not None else ""
        metrics = f"  {fmt_metrics(result.metrics)}" if result.metrics else ""
        prefix = [self._prefix() + " "] if self._prefix() else []
        status = (f"{result.status.value:<7}", STATUS_STYLE[result.status])
        console = self.progress.console
        head = styled(*prefix, status, f" {name}{was}")
        from rich.cells import cell_len

        if console.is_terminal and cell_len(head.plain) > console.width:
            # a long name would fold in its middle among the other words: the status line
            # first, then the name whole at the start of a line of its own (a fold there does
            # no harm: a copy or tmux's joined capture gets it whole), then the metrics
            bare = (result.status.value, STATUS_STYLE[result.status])
            say(console, styled(*prefix, bare, was), hang=8)
            console.print(esc("  " + name), soft_wrap=True)
            if metrics.strip():
                say(console, esc(metrics.strip()), indent=8)
            return
        say(console, head + esc(metrics), hang=8)  # head fits: a wrap comes after it

    def attempt_finished(self, attempt: Attempt) -> None:
        self.progress.advance(self.task)
        self.progress.update(self.task, test="")
        self.last.update(self.now)
        self.in_flight = False
        if self.attempt[1] > 1:
            say(self.progress.console, esc(f"{self._prefix()} {attempt_counts(attempt)}"))


def _counted(statuses: Iterable[TestStatus]) -> str:
    """Tests counted by status, worst first: ``2 failed, 5 passed``."""
    counts = Counter(s.value.lower() for s in statuses)
    order = ("failed", "crashed", "timeout", "passed", "skipped", "disabled")
    return ", ".join(f"{counts[k]} {k}" for k in order if counts[k])


def attempt_counts(attempt: Attempt) -> str:
    """An attempt in a few words: its tests counted by status, its time, how it ended."""
    text = _counted(t.status for t in attempt.tests) or "no test finished"
    end = " (timed out)" if attempt.timed_out else ""
    return f"{text} in {attempt.seconds:.1f} s{end}"


def partial_counts(now: dict[str, TestStatus]) -> str:
    """An attempt cut short, in a few words: the tests that finished before it stopped, counted
    by status (the attempt is not kept in the record: only finished attempts are)."""
    done = (
        f"after {len(now)} test(s) ({_counted(now.values())})" if now else "before any test result"
    )
    return f"{done}, not kept"


class RichBisectEvents(BisectEvents):
    """One line per step on stderr, with the candidates left and the steps to go."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def started(self, candidates: int, steps_left: int, note: str = "") -> None:
        where = note or f"about {steps_left} step(s)"
        say(self.console, esc(f"bisecting: {candidates} candidate(s), {where}"), hang=2)

    def note(self, text: str) -> None:
        self.console.print(esc(text))

    def step_started(
        self, kind: ActionKind, info: CommitInfo, candidates: int, steps_left: int, note: str = ""
    ) -> None:
        where = note or f"{candidates} left, ~{steps_left} steps"
        say(self.console, esc(f"  {kind.value} {info.sha[:12]} {info.subject} ({where})"), hang=4)

    def build_started(self, what: str) -> None:
        say(self.console, esc(f"    building ({what})"), hang=4)

    def build_finished(self, ok: bool, seconds: float) -> None:
        say(self.console, esc(f"    build {'ok' if ok else 'FAILED'} in {seconds:.0f} s"))

    def attempt_started(self, index: int, total: int, argv: list[str]) -> None:
        say(self.console, esc(f"    testing: attempt {index}/{total}"))

    def step_finished(
        self, kind: ActionKind, info: CommitInfo, mark: Mark, reason: str, seconds: float
    ) -> None:
        say(
            self.console,
            styled(
                f"    {info.sha[:12]} -> ",
                (mark.value, MARK_STYLE.get(mark.value, "")),
                f" ({reason}, {seconds:.1f} s)",
            ),
            hang=6,
        )

    def job_lost(self, job: int, info: CommitInfo, why: str) -> None:
        say(
            self.console,
            styled(
                ("    job lost: ", "bold yellow"),
                f"job {job} ({why}); {info.sha[:12]} goes back to the search, the other jobs go on",
            ),
            hang=6,
        )
