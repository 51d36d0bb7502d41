"""A gtest binary that already exists on this machine (e.g. ``ttml_tests`` on a card host)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lnrepro.model.events import Events
from lnrepro.model.jsonio import JSON
from lnrepro.model.record import BuildResult
from lnrepro.model.requests import BinarySpec
from lnrepro.run.backends.host import LocalProcess


@dataclass(frozen=True)
class BinaryBackend(LocalProcess):
    spec: BinarySpec
    name: str = "local"

    def describe(self) -> dict[str, JSON]:
        from lnrepro.model import codec

        return codec.encode_obj(self.spec)

    def build(self, record_dir: Path, events: Events) -> BuildResult | None:
        """Nothing to build; a missing binary makes this commit untestable, not lnrepro broken
        (``git bisect run`` gets 125 for it, as for a build that failed)."""
        if self.spec.binary.is_file():
            return None
        return BuildResult(
            ok=False,
            log="",
            reason=f"no test binary at {self.spec.binary} (build it first, or pass --binary)",
        )

    def program(self, attempt: int) -> list[str]:
        return [str(self.spec.binary)]
