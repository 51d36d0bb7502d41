"""The built-in numpy emulator, run as a gtest binary: ``python -m lnrepro.emulator``."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lnrepro.backends.host import LocalProcess
from lnrepro.events import Events


@dataclass(frozen=True)
class EmulatorBackend(LocalProcess):
    defect: str = "shipped"
    block_size: int | None = None
    l1_max_tiles: int | None = None
    bf16_stats: bool = False
    seed: int | None = None  # attempt k uses seed + k - 1: different data, reproducible
    name: str = "emulator"

    def describe(self) -> dict[str, Any]:
        from lnrepro.emulator.kernel import DEFAULT_BLOCK_SIZE, DEFAULT_L1_MAX_TILES

        return {
            "backend": self.name,
            "defect": self.defect,
            "block_size": self.block_size or DEFAULT_BLOCK_SIZE,
            "l1_max_tiles": DEFAULT_L1_MAX_TILES
            if self.l1_max_tiles is None
            else self.l1_max_tiles,
            "bf16_stats": self.bf16_stats,
            "seed": self.seed,
        }

    def rerun_args(self) -> list[str]:
        args = ["--backend", "emulator", "--defect", self.defect]
        if self.block_size is not None:
            args += ["--block-size", str(self.block_size)]
        if self.l1_max_tiles is not None:
            args += ["--l1-max-tiles", str(self.l1_max_tiles)]
        if self.bf16_stats:
            args.append("--bf16-stats")
        if self.seed is not None:
            args += ["--seed", str(self.seed)]
        return args

    def build(self, record_dir: Path, events: Events) -> dict[str, Any] | None:
        return None  # nothing to build

    def command(self, gtest_filter: str, report: Path, attempt: int) -> list[str]:
        argv = [
            sys.executable, "-m", "lnrepro.emulator",
            f"--gtest_filter={gtest_filter}", f"--gtest_output=json:{report}", "--gtest_color=no",
            f"--emu_defect={self.defect}",
        ]  # fmt: skip
        if self.block_size is not None:
            argv.append(f"--emu_block_size={self.block_size}")
        if self.l1_max_tiles is not None:
            argv.append(f"--emu_l1_max_tiles={self.l1_max_tiles}")
        if self.bf16_stats:
            argv.append("--emu_bf16_stats=1")
        if self.seed is not None:
            argv.append(f"--emu_seed={self.seed + attempt - 1}")
        return argv
