"""Backends: how the code under test is built and how one attempt of its gtests is run.

One protocol, one module per backend:

* :mod:`.emulator` — the built-in numpy emulator (no card, no checkout, nothing to build);
* :mod:`.binary` — a gtest binary that already exists on this machine;
* :mod:`.ttmetal` — a tt-metal checkout, built by a profile and run on this host or in
  lnrepro's container (``runner``).

The pipeline (:mod:`lnrepro.run.pipeline`) drives any of them the same way: ``build`` once (its
log lands in the record directory), then ``execute`` each attempt, streaming output and getting
the exit status and timeout back as data.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from lnrepro.doors.proc import ProcResult
from lnrepro.model.events import Events


class Backend(Protocol):
    @property
    def name(self) -> str: ...

    def describe(self) -> dict[str, Any]:
        """What the record says about this backend (all it needs to be rebuilt)."""
        ...

    def rerun_args(self) -> list[str]:
        """The ``lnrepro run`` options that select this backend exactly as configured."""
        ...

    def build(self, record_dir: Path, events: Events) -> dict[str, Any] | None:
        """Build what is under test, logging to ``record_dir``; None when nothing is built.

        Returns the build's description (``ok``, ``seconds``, ``log``, ``tail``…); a failed
        build returns ``ok: False`` rather than raising: it is an outcome, not an error.
        """
        ...

    def command(self, gtest_filter: str, report: Path, attempt: int) -> list[str]:
        """The test command of one attempt, as a person would type it."""
        ...

    def execute(
        self,
        gtest_filter: str,
        report: Path,
        attempt: int,
        on_output: Callable[[bytes], None],
        timeout: float | None,
    ) -> ProcResult:
        """Run one attempt, streaming its output; the exit status and timeout come back as data."""
        ...

    def fingerprint(self) -> dict[str, Any]:
        """The environment the results depend on (commit, image, host, driver…)."""
        ...

    def plan(self, gtest_filter: str, record_dir: Path) -> dict[str, list[str] | str]:
        """What a run would do, as lines a person could type: ``build`` commands and ``test``."""
        ...
