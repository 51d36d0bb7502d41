"""The built-in numpy emulator, run as a gtest binary: ``python -m lnrepro.emulator``."""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from pathlib import Path

from lnrepro.doors.proc import ProcResult
from lnrepro.model.events import Events
from lnrepro.model.jsonio import JSON
from lnrepro.model.record import BuildResult
from lnrepro.model.requests import CASE_ENV, EmulatorSpec
from lnrepro.run.backends import Call
from lnrepro.run.backends.host import LocalProcess


@dataclass(frozen=True)
class EmulatorBackend(LocalProcess):
    spec: EmulatorSpec
    name: str = "emulator"

    def describe(self) -> dict[str, JSON]:
        from lnrepro.emulator.defects import ERA_DEFECTS, Era, defects_label
        from lnrepro.model import codec

        s = self.spec
        return {
            **codec.encode_obj(s),
            "defect": s.defect or defects_label(ERA_DEFECTS[Era(s.kernel_era)]),
        }

    def execute(self, call: Call) -> ProcResult:
        if isinstance(self.spec.case, str):  # the probe's case, whatever this environment says
            call = replace(call, extra_env={**(call.extra_env or {}), CASE_ENV: self.spec.case})
        return super().execute(call)

    def build(self, record_dir: Path, events: Events) -> BuildResult | None:
        return None  # nothing to build

    def program(self, attempt: int) -> list[str]:
        s = self.spec
        argv = [
            sys.executable,
            "-m",
            "lnrepro.emulator",
            f"--emu_kernel={s.kernel_era}",
            f"--emu_arch={s.arch}",
            f"--emu_data={s.data}",
        ]
        if s.defect is not None:
            argv.append(f"--emu_defect={s.defect}")
        if s.block_size is not None:
            argv.append(f"--emu_block_size={s.block_size}")
        if s.l1_max_tiles is not None:
            argv.append(f"--emu_l1_max_tiles={s.l1_max_tiles}")
        if s.fp32_stats:
            argv.append("--emu_bf16_stats=0")
        if s.seed is not None:
            argv.append(f"--emu_seed={s.seed + attempt - 1}")
        return argv
