"""Backends: how the code under test is built and how its test program is started.

One protocol, one module per backend:

* :mod:`.emulator` — the built-in numpy emulator (no card, no checkout, nothing to build);
* :mod:`.binary` — a gtest binary that already exists on this machine;
* :mod:`.ttmetal` — a tt-metal checkout, built by a profile and run on this host or in
  lnrepro's container (a runner, :mod:`lnrepro.run.runners`).

The pipeline (:mod:`lnrepro.run.pipeline`) drives any of them the same way: ``build`` once (its
log lands in the record directory), then, per attempt, ``program`` plus googletest's flags (added
by the pipeline, in one place) through ``execute``, streaming output and getting the exit status
and timeout back as data. Which backend a request means is decided by :mod:`.factory`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from lnrepro.doors.proc import ProcResult
from lnrepro.model.events import Events
from lnrepro.model.jsonio import JSON
from lnrepro.model.record import BuildResult


@dataclass(frozen=True, kw_only=True)
class Call:
    """One command of an attempt, as :meth:`Backend.execute` runs it where the tests run."""

    argv: list[str]
    record_dir: Path  # the attempt's files (a watcher log, tt-triage's output) land here
    attempt: int
    on_output: Callable[[bytes], None]  # each chunk of output, as it comes
    timeout: float | None  # seconds; None: no limit
    extra_env: dict[str, str] | None = None  # added to the backend's environment (pytest's)


class Backend(Protocol):
    @property
    def name(self) -> str: ...

    def describe(self) -> dict[str, JSON]:
        """What the backend resolved to, for the record (image, devices, profile, warnings…)."""
        ...

    def build(self, record_dir: Path, events: Events) -> BuildResult | None:
        """Build what is under test, logging to ``record_dir``; None when nothing is built.

        A failed build is returned (``ok`` False, with the reason), not raised: it is an
        outcome of the run, not an error of lnrepro's.
        """
        ...

    def program(self, attempt: int) -> list[str]:
        """The test program of one attempt, before googletest's flags."""
        ...

    def python(self, attempt: int) -> str:
        """The interpreter that runs ``--pytest`` tests where the tests run."""
        ...

    def prepare_attempt(
        self, record_dir: Path, attempt: int, on_output: Callable[[bytes], None]
    ) -> str | None:
        """Before an attempt (a card reset): why the attempt cannot run, or None."""
        ...

    def execute(self, call: Call) -> ProcResult:
        """Run ``call.argv`` where the tests run, streaming its output; exit and timeout as
        data."""
        ...

    def fingerprint(self) -> dict[str, JSON]:
        """The environment the results depend on (commit, image, host, driver…)."""
        ...

    def shell_line(self, argv: list[str], record_dir: Path) -> str:
        """What a person would type to run ``argv`` as ``execute`` does."""
        ...

    def build_lines(self, record_dir: Path) -> list[str]:
        """The build, as lines a person could type (empty when there is nothing to build)."""
        ...
