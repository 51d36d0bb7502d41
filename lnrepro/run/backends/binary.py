"""A gtest binary that already exists on this machine (e.g. ``ttml_tests`` on a card host)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lnrepro.errors import EnvironmentProblem
from lnrepro.model.events import Events
from lnrepro.run.backends.host import LocalProcess


@dataclass(frozen=True)
class BinaryBackend(LocalProcess):
    binary: Path
    extra_args: tuple[str, ...] = ()
    name: str = "local"

    def describe(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "binary": str(self.binary),
            "extra_args": list(self.extra_args),
        }

    def rerun_args(self) -> list[str]:
        return ["--backend", "local", "--binary", str(self.binary)]

    def build(self, record_dir: Path, events: Events) -> dict[str, Any] | None:
        if not self.binary.is_file():
            raise EnvironmentProblem(
                f"no test binary at {self.binary}",
                "build it first (./build_metal.sh --build-tt-train) or pass --binary",
            )
        return None

    def command(self, gtest_filter: str, report: Path, attempt: int) -> list[str]:
        return [str(self.binary), f"--gtest_filter={gtest_filter}", f"--gtest_output=json:{report}",
                "--gtest_color=no", *self.extra_args]  # fmt: skip
