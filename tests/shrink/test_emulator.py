"""The issue's must-shows on the emulator: from the seeds' tests to a constant case that fails
every time by >= 100x the tolerance, on fewer elements, each smaller neighbour passing; the fixed
kernel finds nothing. The 8462-feature starts run once per module."""

from __future__ import annotations

import pytest

from lnrepro import api
from lnrepro.model.case import Axis, Case, DataKind, Status
from lnrepro.model.requests import EmulatorSpec
from lnrepro.model.shrink import ShrinkRecord, ShrinkRequest
from lnrepro.shrink.emulator import EmulatorEvaluator

TIGHT = "BugRepro_TightTolerance_8462Features"
NIGHTLY = "NIGHTLY_MetalLayerNormBw_LargeFeatures_NoL1Fit"


@pytest.fixture(scope="module")
def tight() -> ShrinkRecord:
    return api.shrink(ShrinkRequest(TIGHT, EmulatorSpec()))


@pytest.fixture(scope="module")
def nightly() -> ShrinkRecord:
    return api.shrink(ShrinkRequest(NIGHTLY, EmulatorSpec()))


def _fails_every_time(rec: ShrinkRecord, min_margin: float) -> Case:
    r = rec.result
    assert r is not None and r.status is Status.FAILS
    assert r.case.data.kind is DataKind.CONSTANT
    assert r.margin is not None and r.margin >= min_margin
    assert r.case.shape.elements < rec.start.case.shape.elements
    assert all(n.judged is not None and n.judged.status is Status.PASSES for n in rec.smaller)
    assert {n.axis for n in rec.smaller} | set(rec.lower_bounds) == set(Axis)
    # judged afresh by another evaluator: every repeat fails, the fixed kernel passes
    ev = EmulatorEvaluator(rec.request.model)
    assert all(ev.evaluate(r.case, d).verdict.value == "fail" for d in range(rec.repeats))
    assert ev.passes(r.case, 0)
    return r.case


def test_tight_tolerance_shrinks_to_constant_data(tight: ShrinkRecord) -> None:
    assert tight.start.passes == 0  # random data: fails every draw...
    assert not tight.start.admissible  # ...but the fixed kernel's model fails it too (dgamma)
    case = _fails_every_time(tight, 100.0)
    assert case.tol["dx"].atol == 0.01


def test_nightly_passes_on_random_data_and_shrinks_from_the_data_kinds(
    nightly: ShrinkRecord,
) -> None:
    assert nightly.start.passes == nightly.start.runs  # masked on random data
    assert nightly.repeats >= 2
    case = _fails_every_time(nightly, 100.0)
    assert case.tol["dx"].atol == 0.5


def test_the_fixed_kernel_finds_nothing() -> None:
    rec = api.shrink(ShrinkRequest(NIGHTLY, EmulatorSpec(kernel_era="fixed"), start_runs=2))
    assert rec.result is None and not rec.smaller and rec.rerun == ()
    assert rec.note.startswith("every case tried passes")  # found=False says nothing fails
    # what the tolerance asks more than bf16 gives is said, not counted
    assert rec.inadmissible and "correct kernel's model" in rec.note


def test_a_block_path_bug_reports_its_boundary_and_why() -> None:
    rec = api.shrink(
        ShrinkRequest("BugRepro_Deterministic_256Tiles", EmulatorSpec(defect="drop-xhat-blocks"))
    )
    assert rec.result is not None
    assert rec.result.case.data.kind is not DataKind.CONSTANT  # x̂ = 0 hides this defect
    [feat] = [n for n in rec.smaller if n.axis is Axis.FEATURES]
    assert feat.judged is not None and feat.judged.status is Status.PASSES
    assert "fits-in-L1 path" in feat.why
    assert feat.judged.case.shape.features == rec.result.case.shape.features - 32
