"""Progress callbacks from the core to whoever draws: the default does nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lnrepro.model.bisect import ActionKind, CommitInfo, Mark
    from lnrepro.model.gtest import TestResult
    from lnrepro.model.record import Attempt


class Events:
    """Subclass and override what you show; rich lives in :mod:`lnrepro.present.console`, not here."""

    def build_started(self, what: str) -> None: ...
    def build_output(self, data: bytes) -> None: ...
    def build_finished(self, ok: bool, seconds: float) -> None: ...
    def attempt_started(self, index: int, total: int, argv: list[str]) -> None: ...
    def test_started(self, name: str) -> None: ...
    def test_finished(self, result: TestResult) -> None: ...
    def attempt_finished(self, attempt: Attempt) -> None: ...


class BisectEvents(Events):
    """A bisect's progress: the search started, a step started, a step has its verdict; and,
    inherited from :class:`Events`, the build and attempts of a step's run."""

    def started(self, candidates: int, steps_left: int, note: str = "") -> None: ...
    def note(self, text: str) -> None:
        """Something a person should know before the steps (e.g. where the fail rates came from)."""

    def step_started(
        self, kind: ActionKind, info: CommitInfo, candidates: int, steps_left: int, note: str = ""
    ) -> None:
        """``note``: the search's own word on its progress, instead of the candidates and steps
        (a noisy search's leading commit and the runs expected to its stop)."""

    def step_finished(
        self, kind: ActionKind, info: CommitInfo, mark: Mark, reason: str, seconds: float
    ) -> None: ...
    def job_lost(self, job: int, info: CommitInfo, why: str) -> None:
        """A job's engine stopped answering: its step is dropped and the job stops."""
