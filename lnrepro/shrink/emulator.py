"""The emulator as shrink's evaluator and control, in-process: a candidate is one numpy run of
the kernel model (the request's defects, era, arch) and, on the same inputs, of the correct
kernel (no defect, same era and arch) for the control — the defect-free part computed once."""

from __future__ import annotations

from dataclasses import dataclass, replace

from lnrepro import options
from lnrepro.emulator.defects import ERA_DEFECTS, Arch, Era, parse_defects
from lnrepro.emulator.kernel import KernelConfig
from lnrepro.emulator.probe import TensorCheck
from lnrepro.emulator.probe import evaluate as run_case
from lnrepro.model.case import PROBE_TEST, Case, env_prefixed
from lnrepro.model.requests import EmulatorSpec
from lnrepro.shrink.core import Outcome, RunVerdict


def kernel_config(spec: EmulatorSpec) -> KernelConfig:
    era = Era(spec.kernel_era)
    defects = parse_defects(spec.defect) if spec.defect is not None else ERA_DEFECTS[era]
    return KernelConfig(
        defects=defects,
        era=era,
        arch=Arch(spec.arch),
        block_size=spec.block_size,
        l1_max_tiles=spec.l1_max_tiles,
        bf16_stats=not spec.fp32_stats,
    )


def _detail(checks: tuple[TensorCheck, ...]) -> str:
    bad = [c for c in checks if not c.ok] or list(checks)
    return ", ".join(f"{c.tensor} max_diff={c.max_diff:.4g}" for c in bad)


@dataclass
class EmulatorEvaluator:
    """Subject and control in one: ``evaluate`` runs both and keeps the control's verdict for
    ``passes`` (asked right after, on the same case and draw)."""

    spec: EmulatorSpec
    name: str = "emulator"
    deterministic: bool = True
    _last: tuple[Case, int, bool] | None = None  # the control's verdict on the last evaluation

    @property
    def config(self) -> KernelConfig:
        return kernel_config(self.spec)

    @property
    def correct(self) -> KernelConfig:
        return replace(self.config, defects=frozenset())

    def evaluate(self, case: Case, draw: int) -> Outcome:
        subject, control = run_case(case, [self.config, self.correct], draw)
        self._last = (case, draw, all(c.ok for c in control))
        margin = max(c.margin for c in subject)
        ok = all(c.ok for c in subject)
        return Outcome(RunVerdict.PASS if ok else RunVerdict.FAIL, margin, _detail(subject))

    def passes(self, case: Case, draw: int) -> bool:
        if self._last is not None and self._last[:2] == (case, draw):
            return self._last[2]
        [control] = run_case(case, [self.correct], draw)
        return all(c.ok for c in control)

    def rerun(self, case: Case) -> list[str]:
        return env_prefixed(
            case, ["lnrepro", "run", *options.argv(self.spec), "--filter", PROBE_TEST]
        )

    def why(self, smaller: Case, result: Case) -> str | None:
        cfg = self.config
        f_small, f_res = smaller.shape.features, result.shape.features
        if f_small != f_res:
            if cfg.fits_in_l1(f_small) and not cfg.fits_in_l1(f_res):
                return (
                    f"passes at <= {f_small} features: the fits-in-L1 path "
                    f"({cfg.path(f_res)} from {f_res})"
                )
            if f_res % 32 and f_small % 32 == 0:
                return f"passes without the partial last tile ({f_res % 32} features)"
        return None


@dataclass
class ModelControl:
    """The correct kernel's model as a control for an evaluator that is not the emulator."""

    spec: EmulatorSpec

    def passes(self, case: Case, draw: int) -> bool:
        correct = replace(kernel_config(self.spec), defects=frozenset())
        [control] = run_case(case, [correct], draw)
        return all(c.ok for c in control)
