"""The built-in numpy emulator, run as a gtest binary: ``python -m lnrepro.emulator``."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lnrepro.model.events import Events
from lnrepro.run.backends.host import LocalProcess


@dataclass(frozen=True)
class EmulatorBackend(LocalProcess):
    kernel_era: str = "2025-12"
    arch: str = "wormhole_b0"
    defect: str | None = None  # None: the era's
    block_size: int | None = None
    l1_max_tiles: int | None = None
    fp32_stats: bool = False
    data: str = "copy"
    seed: int | None = None  # --data random: attempt k uses seed + k - 1
    name: str = "emulator"

    def describe(self) -> dict[str, Any]:
        from lnrepro.emulator.kernel import ERA_DEFECTS, Era, defects_label

        return {
            "backend": self.name,
            "kernel_era": self.kernel_era,
            "arch": self.arch,
            "defect": self.defect or defects_label(ERA_DEFECTS[Era(self.kernel_era)]),
            "block_size": self.block_size,
            "l1_max_tiles": self.l1_max_tiles,
            "fp32_stats": self.fp32_stats,
            "data": self.data,
            "seed": self.seed,
        }

    def rerun_args(self) -> list[str]:
        args = ["--backend", "emulator", "--kernel-era", self.kernel_era, "--arch", self.arch]
        if self.defect is not None:
            args += ["--defect", self.defect]
        if self.block_size is not None:
            args += ["--block-size", str(self.block_size)]
        if self.l1_max_tiles is not None:
            args += ["--l1-max-tiles", str(self.l1_max_tiles)]
        if self.fp32_stats:
            args.append("--fp32-stats")
        if self.data != "copy":
            args += ["--data", self.data]
        if self.seed is not None:
            args += ["--seed", str(self.seed)]
        return args

    def build(self, record_dir: Path, events: Events) -> dict[str, Any] | None:
        return None  # nothing to build

    def command(self, gtest_filter: str, report: Path, attempt: int) -> list[str]:
        argv = [
            sys.executable, "-m", "lnrepro.emulator",
            f"--gtest_filter={gtest_filter}", f"--gtest_output=json:{report}", "--gtest_color=no",
            f"--emu_kernel={self.kernel_era}", f"--emu_arch={self.arch}", f"--emu_data={self.data}",
        ]  # fmt: skip
        if self.defect is not None:
            argv.append(f"--emu_defect={self.defect}")
        if self.block_size is not None:
            argv.append(f"--emu_block_size={self.block_size}")
        if self.l1_max_tiles is not None:
            argv.append(f"--emu_l1_max_tiles={self.l1_max_tiles}")
        if self.fp32_stats:
            argv.append("--emu_bf16_stats=0")
        if self.seed is not None:
            argv.append(f"--emu_seed={self.seed + attempt - 1}")
        return argv
