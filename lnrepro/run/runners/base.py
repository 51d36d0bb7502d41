"""What every runner offers (:class:`Runner`) and what every command is given (:class:`Place`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from lnrepro.doors import proc
from lnrepro.model.jsonio import JSON

Output = Callable[[bytes], None]  # where a command's output goes, as it comes


@dataclass(frozen=True)
class Place:
    """What a command sees: its working directory, its environment (beyond the runner's own),
    ``mounts`` — the checkout first, then the directories written to — and ``ro_mounts``, read
    only (a worktree's git directories)."""

    cwd: Path
    env: dict[str, str]
    mounts: tuple[Path, ...]
    ro_mounts: tuple[Path, ...] = ()

    @property
    def checkout(self) -> Path:
        return self.mounts[0] if self.mounts else self.cwd

    @property
    def written(self) -> tuple[Path, ...]:
        """The directories the command writes to (a run's record directory)."""
        return self.mounts[1:]


@dataclass(frozen=True)
class OnHang:
    """A command to run where a timed-out command still hangs, before it is killed: tt-triage
    against the still-hung device, in the same container and environment, with its own time
    limit. ``begin`` is called at the timeout, before it runs; ``done`` gets its exit status
    (None: unknown) and whether its own limit ran out."""

    argv: tuple[str, ...]
    timeout_s: float
    on_output: Output
    begin: Callable[[], None]
    done: Callable[[int | None, bool], None]


@dataclass(frozen=True)
class TimeLimit:
    """How long a command may run (None: as long as it takes), and what runs where it still
    hangs then, before it is killed (``on_hang``)."""

    seconds: float | None
    on_hang: OnHang | None = None


class Runner(Protocol):
    """Where commands run. ``shell_line`` is what a person would type to do the same."""

    @property
    def name(self) -> str: ...

    def run(
        self, argv: list[str], on_output: Output, place: Place, limit: TimeLimit
    ) -> proc.ProcResult:
        """``argv`` in ``place``, its output to ``on_output`` as it comes, within ``limit``."""
        ...

    def shell_line(self, argv: list[str], place: Place) -> str: ...

    def describe(self) -> dict[str, JSON]: ...

    def fingerprint(self) -> dict[str, JSON]:
        """What the results depend on beyond describe() (e.g. the image's id)."""
        ...

    # the checkout as the commands see it (build trees, caches): here, or on a remote engine
    def read_text(self, checkout: Path, rel: str) -> str | None: ...

    def write_text(self, checkout: Path, rel: str, text: str) -> None: ...

    def exists(self, checkout: Path, rel: str) -> bool: ...

    def outputs_digest(self, checkout: Path, roots: list[str]) -> tuple[str, int]:
        """:func:`lnrepro.run.inputs.outputs_digest` of the build trees the commands made."""
        ...


class HereFiles:
    """The checkout the commands see is this machine's (this host, or bind-mounted)."""

    def read_text(self, checkout: Path, rel: str) -> str | None:
        try:
            return (checkout / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def write_text(self, checkout: Path, rel: str, text: str) -> None:
        import contextlib

        from lnrepro.doors.fsio import atomic_write_text

        with contextlib.suppress(OSError):
            atomic_write_text(checkout / rel, text)

    def exists(self, checkout: Path, rel: str) -> bool:
        return (checkout / rel).exists()

    def outputs_digest(self, checkout: Path, roots: list[str]) -> tuple[str, int]:
        from lnrepro.run import inputs as inp

        return inp.outputs_digest([checkout / r for r in roots], checkout)
