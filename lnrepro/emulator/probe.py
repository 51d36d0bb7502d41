"""A case of ``lnrepro shrink`` as the emulator runs it: its inputs, and the probe test.

:func:`inputs` is the one definition of each data kind's values (``model.shrink.DataSpec``): the
shrink search, the emulator's ``LayerNormBackwardOpTest.LnreproProbe`` (a case read from
``$LNREPRO_CASE``, so that ``lnrepro run`` repeats exactly the case shrink found) and the emitted
gtest all make the same numbers. :func:`evaluate` runs a case on a kernel config and its
correct-kernel control together (the defect-free part of the kernel computed once).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TextIO

import numpy as np

from lnrepro.emulator.catalogue import Case as CatalogueCase
from lnrepro.emulator.kernel import F32, Grads, KernelConfig, kernels, reference
from lnrepro.errors import LnreproError
from lnrepro.model.shrink import CASE_ENV, PROBE_TEST, TENSORS, Case, DataKind, DataSpec

PROBE_NAME = PROBE_TEST.split(".", 1)[1]


def inputs(data: DataSpec, rows: int, features: int, draw: int = 0) -> tuple[F32, F32, F32]:
    """(x, dy, gamma) as the host holds them: float32, [rows, F], [rows, F], [1, F]."""
    shape = (rows, features)
    f32 = np.float32
    if data.kind is DataKind.CONSTANT:
        return (
            np.full(shape, data.x, f32),
            np.full(shape, data.dy, f32),
            np.full((1, features), data.gamma, f32),
        )
    if data.kind is DataKind.FEW_VALUED:  # two-valued: alternating along the features
        odd = (np.arange(features) % 2).astype(f32)[None, :]
        x = np.broadcast_to(f32(-1.0) + f32(2.0) * odd, shape).astype(f32)
        dy = np.broadcast_to(f32(1.0) - f32(0.5) * odd, shape).astype(f32)
        return x, dy, np.ones((1, features), f32)
    if data.kind is DataKind.STRUCTURED:  # ramp
        x = np.broadcast_to(np.linspace(-1, 1, features, dtype=f32)[None, :], shape).astype(f32)
        dy = np.broadcast_to(np.linspace(0, 1, features, dtype=f32)[None, :], shape).astype(f32)
        return x, dy, np.ones((1, features), f32)
    rng = np.random.default_rng([data.seed, draw])
    x = rng.uniform(-1, 1, shape).astype(f32)
    lo = 0.0 if data.variant == "mean-shifted" else -1.0
    dy = rng.uniform(lo, 1, shape).astype(f32)
    return x, dy, rng.uniform(0, 1, (1, features)).astype(f32)


@dataclass(frozen=True)
class TensorCheck:
    tensor: str
    ok: bool
    max_diff: float
    needed_atol: float  # the smallest atol allclose passes with, at the case's rtol
    atol: float

    @property
    def margin(self) -> float:
        return self.needed_atol / self.atol if self.atol > 0 else float("inf")


def check(got: Grads, ref: Grads, case: Case) -> tuple[TensorCheck, ...]:
    out = []
    for t in TENSORS:
        tol = case.tol[t]
        r = np.asarray(getattr(ref, t), dtype=np.float32)
        diff = np.abs(np.asarray(getattr(got, t), dtype=np.float32) - r)
        slack = diff - np.float32(tol.rtol) * np.abs(r)
        need = float(slack.max()) if slack.size else 0.0
        need = float("inf") if np.isnan(need) else max(need, 0.0)
        ok = bool((diff <= np.float32(tol.atol) + np.float32(tol.rtol) * np.abs(r)).all())
        out.append(TensorCheck(t, ok, float(diff.max()), need, tol.atol))
    return tuple(out)


def evaluate(case: Case, cfgs: list[KernelConfig], draw: int = 0) -> list[tuple[TensorCheck, ...]]:
    """``case`` (one draw of its data) on each config, checked as its tolerance says."""
    x, dy, gamma = inputs(case.data, case.shape.rows, case.shape.features, draw)
    ref = reference(x, dy, gamma)
    return [check(got, ref, case) for got in kernels(x, dy, gamma, cfgs)]


# ---------------------------------------------------------------------------------- the test
def catalogue_case(case: Case) -> CatalogueCase:
    """``case`` as a test of the emulated binary: ``LayerNormBackwardOpTest.LnreproProbe``, one
    iteration, its data (draw 0) and tolerances; constant data prints as BugRepro's helper does."""
    s, tol = case.shape, case.tol
    constant = case.data.kind is DataKind.CONSTANT
    return CatalogueCase(
        PROBE_NAME,
        s.batch,
        s.seq,
        s.heads,
        s.features,
        1,
        tol["dx"].rtol,
        tol["dx"].atol,
        "rtol, atol",
        (case.data.dy, case.data.gamma, case.data.x) if constant else None,
        0,
        inputs=lambda: inputs(case.data, s.rows, s.features),
        tensor_tols=tuple(
            (tol[t].rtol, tol[t].atol, f"{tol[t].rtol:g}F, {tol[t].atol:g}F") for t in TENSORS
        ),
    )


def probe_cases(env: Mapping[str, str], err: TextIO) -> list[CatalogueCase]:
    """The probe test when ``$LNREPRO_CASE`` holds a case (else none). A value that is not a
    case is said on stderr, and the probe is then not there (a run asking for it finds no test)."""
    text = env.get(CASE_ENV)
    if not text:
        return []
    try:
        return [catalogue_case(Case.from_env_value(text))]
    except LnreproError as exc:
        err.write(f"lnrepro emulator: ${CASE_ENV} is not a case: {exc.one_line()}\n")
        return []
