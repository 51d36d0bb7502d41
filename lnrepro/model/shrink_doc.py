"""``lnrepro.shrink/1`` and ``lnrepro.shrink-state/1``, defined once: msgspec Structs,
keyword-only, closed sets as enums. Reading validates against them
(:func:`~lnrepro.model.codec.decode`), writing goes through them, and ``scripts/schemas.py``
derives docs/schemas/shrink*.json from them. The types of :mod:`lnrepro.model.shrink` keep their
in-memory shape (a Case's Shape, the tolerances in TENSORS order); the functions here map.

A new field: add it to its Doc (with a default, so older documents still read) and to the
mapping functions, then run ``python scripts/schemas.py`` and commit the schemas it rewrites.
Loaded by the records' ``to_json``/``from_json`` only: ``lnrepro --help`` loads no msgspec.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Literal

import msgspec

from lnrepro.model.jsonio import JSON, NON_FINITE, NonFinite, Reader, encode_number
from lnrepro.model.requests import BinarySpec, EmulatorSpec, PythonSpec, TtMetalSpec
from lnrepro.model.shrink import (
    SCHEMA,
    STATE_SCHEMA,
    TENSORS,
    VARIANTS,
    Axis,
    Case,
    DataKind,
    DataSpec,
    Judged,
    Neighbour,
    OpKind,
    Shape,
    ShrinkRecord,
    ShrinkRequest,
    ShrinkState,
    StartMeasure,
    Status,
    Tolerance,
    Variant,
)

Number = float | NonFinite  # a measured value: JSON's number, or "NaN"/"Infinity"/"-Infinity"
Count = Annotated[int, msgspec.Meta(ge=0)]
Positive = Annotated[int, msgspec.Meta(ge=1)]
Extent = Annotated[int, msgspec.Meta(ge=1, le=1 << 24)]
Pair = tuple[Count, Count]


class SourceFlavour(str, Enum):
    """Whose helpers the emitted test uses."""

    TT_METAL = "tt-metal"
    LOOKALIKE = "lookalike"


class Evaluator(str, Enum):
    """What ran the candidates."""

    EMULATOR = "emulator"
    COMMAND = "command"
    CHECKOUT = "checkout"
    CHECKOUT_PYTEST = "checkout-pytest"  # a ttnn op's pytest probe on a checkout


class _Doc(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, frozen=True):
    pass


class DataDoc(_Doc, kw_only=True, frozen=True):
    kind: DataKind
    variant: Variant
    dy: Number | msgspec.UnsetType = msgspec.UNSET  # constant data only
    gamma: Number | msgspec.UnsetType = msgspec.UNSET  # constant data only
    x: Number | msgspec.UnsetType = msgspec.UNSET  # constant data only
    seed: Count | msgspec.UnsetType = msgspec.UNSET  # random data only


class ToleranceDoc(_Doc, kw_only=True, frozen=True):
    rtol: Number
    atol: Number


class TolerancesDoc(_Doc, kw_only=True, frozen=True):
    dx: ToleranceDoc
    dgamma: ToleranceDoc
    dbeta: ToleranceDoc


class CaseDoc(_Doc, kw_only=True, frozen=True):
    batch: Extent
    seq: Extent
    heads: Extent
    features: Extent
    data: DataDoc
    tolerance: TolerancesDoc | msgspec.UnsetType = msgspec.UNSET  # the gtest's (op absent)
    origin: str = ""
    op: OpKind | msgspec.UnsetType = msgspec.UNSET  # absent: tt-train's LayerNorm backward
    pcc: Annotated[float, msgspec.Meta(gt=0, lt=1)] | msgspec.UnsetType = msgspec.UNSET


class JudgedDoc(_Doc, kw_only=True, frozen=True):
    case: CaseDoc
    status: Status
    margin: Number | None
    runs: Count
    detail: str = ""


class NeighbourDoc(_Doc, kw_only=True, frozen=True):
    axis: Axis
    step: str
    case: CaseDoc | None  # None: the axis is at its lower bound
    status: Status | None
    margin: Number | None
    why: str
    rerun: list[str] | None


class StartDoc(_Doc, kw_only=True, frozen=True):
    case: CaseDoc
    runs: Positive
    passes: Count
    pass_rate_interval: tuple[float, float]
    admissible: bool


class RequestDoc(_Doc, kw_only=True, frozen=True):
    test: str
    backend: EmulatorSpec | TtMetalSpec  # validation refuses a local binary
    command: list[str] | None
    confidence: Annotated[float, msgspec.Meta(ge=0.5, le=1)]
    start_runs: Positive
    budget: Positive
    seed: Count
    source: str | None
    timeout_s: float
    source_flavour: SourceFlavour = SourceFlavour.TT_METAL
    record_dir: str
    run: str | None
    known_start: Pair | None
    pytest: str | msgspec.UnsetType = msgspec.UNSET  # a ttnn op's pytest node id (absent: a gtest)


class StateDoc(_Doc, kw_only=True, frozen=True):
    schema: Literal["lnrepro.shrink-state/1"]
    request: RequestDoc
    start: Pair | None
    evaluations: Count = 0
    judged: list[JudgedDoc]


class ShrinkDoc(_Doc, kw_only=True, frozen=True):
    schema: Literal["lnrepro.shrink/1"]
    request: RequestDoc
    evaluator: Evaluator
    start: StartDoc
    confidence: float
    repeats: Positive
    found: bool
    case: CaseDoc | None
    margin: Number | None
    detail: str | None
    rerun: list[str] | None
    smaller: list[NeighbourDoc]
    lower_bounds: list[Axis]
    evaluations: Count
    control_checks: Count
    candidates: Count
    inadmissible: Annotated[list[JudgedDoc], msgspec.Meta(max_length=20)]
    budget_exhausted: bool
    seconds: float
    source: str | None
    note: str


def builtins(doc: _Doc) -> dict[str, JSON]:
    from lnrepro.model import codec  # a backend's Paths are strings

    return codec.encode_obj(doc)


def opt_number(v: float | None) -> Number | None:
    return None if v is None else encode_number(v)


def number_from(v: Number) -> float:
    return v if isinstance(v, float) else NON_FINITE[v]


def data_doc(d: DataSpec) -> DataDoc:
    constant, random = d.kind is DataKind.CONSTANT, d.kind is DataKind.RANDOM
    return DataDoc(
        kind=d.kind,
        variant=Variant(d.variant),
        dy=encode_number(d.dy) if constant else msgspec.UNSET,
        gamma=encode_number(d.gamma) if constant else msgspec.UNSET,
        x=encode_number(d.x) if constant else msgspec.UNSET,
        seed=d.seed if random else msgspec.UNSET,
    )


def data(d: DataDoc, r: Reader) -> DataSpec:
    if d.variant.value not in VARIANTS[d.kind]:
        r.fail(f"is {d.variant.value!r}, not one of {', '.join(VARIANTS[d.kind])}", "variant")
    return DataSpec(
        kind=d.kind,
        variant=d.variant.value,
        dy=1.0 if d.dy is msgspec.UNSET else number_from(d.dy),
        gamma=1.0 if d.gamma is msgspec.UNSET else number_from(d.gamma),
        x=0.5 if d.x is msgspec.UNSET else number_from(d.x),
        seed=0 if d.seed is msgspec.UNSET else d.seed,
    )


def case_doc(c: Case) -> CaseDoc:
    tol = {
        t: ToleranceDoc(rtol=encode_number(v.rtol), atol=encode_number(v.atol))
        for t, v in c.tolerance
    }
    gtest = c.op is OpKind.LAYERNORM_BW
    return CaseDoc(
        batch=c.shape.batch,
        seq=c.shape.seq,
        heads=c.shape.heads,
        features=c.shape.features,
        data=data_doc(c.data),
        tolerance=(
            TolerancesDoc(dx=tol["dx"], dgamma=tol["dgamma"], dbeta=tol["dbeta"])
            if gtest
            else msgspec.UNSET
        ),
        origin=c.origin,
        op=msgspec.UNSET if gtest else c.op,
        pcc=msgspec.UNSET if gtest else c.pcc,
    )


def case(d: CaseDoc, r: Reader) -> Case:
    shape = Shape(batch=d.batch, seq=d.seq, heads=d.heads, features=d.features)
    if d.op is not msgspec.UNSET and d.op is not OpKind.LAYERNORM_BW:
        if d.pcc is msgspec.UNSET:
            r.fail("is required for a ttnn op's case", "pcc")
        if d.tolerance is not msgspec.UNSET:
            r.fail("does not apply to a ttnn op's case (its pcc does)", "tolerance")
        dd = data(d.data, r.get("data"))
        return Case(shape=shape, data=dd, tolerance=(), origin=d.origin, op=d.op, pcc=d.pcc)
    if d.tolerance is msgspec.UNSET:
        r.fail("is required", "tolerance")
    tol = {"dx": d.tolerance.dx, "dgamma": d.tolerance.dgamma, "dbeta": d.tolerance.dbeta}
    return Case(
        shape=shape,
        data=data(d.data, r.get("data")),
        tolerance=tuple(
            (t, Tolerance(rtol=number_from(tol[t].rtol), atol=number_from(tol[t].atol)))
            for t in TENSORS
        ),
        origin=d.origin,
    )


def judged_doc(j: Judged) -> JudgedDoc:
    return JudgedDoc(
        case=case_doc(j.case),
        status=j.status,
        margin=opt_number(j.margin),
        runs=j.runs,
        detail=j.detail,
    )


def judged(d: JudgedDoc, r: Reader) -> Judged:
    return Judged(
        case=case(d.case, r.get("case")),
        status=d.status,
        margin=None if d.margin is None else number_from(d.margin),
        runs=d.runs,
        detail=d.detail,
    )


def neighbour_doc(n: Neighbour) -> NeighbourDoc:
    j = n.judged
    return NeighbourDoc(
        axis=n.axis,
        step=n.step,
        case=case_doc(j.case) if j else None,
        status=j.status if j else None,
        margin=opt_number(j.margin) if j else None,
        why=n.why,
        rerun=list(n.rerun) if j else None,
    )


def start_doc(s: StartMeasure) -> StartDoc:
    return StartDoc(
        case=case_doc(s.case),
        runs=s.runs,
        passes=s.passes,
        pass_rate_interval=s.interval,
        admissible=s.admissible,
    )


def request_doc(q: ShrinkRequest) -> RequestDoc:
    if isinstance(q.backend, BinarySpec | PythonSpec):
        raise ValueError("a shrink's backend is the emulator or a checkout (validation says so)")
    return RequestDoc(
        test=q.test,
        backend=q.backend,
        command=list(q.command) if q.command is not None else None,
        confidence=q.confidence,
        start_runs=q.start_runs,
        budget=q.budget,
        seed=q.seed,
        source=str(q.source) if q.source else None,
        timeout_s=q.timeout_s,
        source_flavour=SourceFlavour(q.source_flavour),
        record_dir=str(q.record_dir),
        run=q.run,
        known_start=q.known_start if q.known_start else None,
        pytest=q.pytest or msgspec.UNSET,
    )


def request(d: RequestDoc) -> ShrinkRequest:
    return ShrinkRequest(
        test=d.test,
        backend=d.backend,
        command=tuple(d.command) if d.command is not None else None,
        confidence=d.confidence,
        start_runs=d.start_runs,
        budget=d.budget,
        seed=d.seed,
        source=Path(d.source) if d.source else None,
        timeout_s=d.timeout_s,
        source_flavour=d.source_flavour.value,
        record_dir=Path(d.record_dir),
        run=d.run,
        known_start=d.known_start,
        pytest="" if d.pytest is msgspec.UNSET else d.pytest,
    )


def state_doc(s: ShrinkState) -> StateDoc:
    return StateDoc(
        schema=STATE_SCHEMA,
        request=request_doc(s.request),
        start=s.start,
        evaluations=s.evaluations,
        judged=[judged_doc(j) for j in s.judged],
    )


def state(d: StateDoc, r: Reader) -> ShrinkState:
    return ShrinkState(
        request=request(d.request),
        start=d.start,
        evaluations=d.evaluations,
        judged=[judged(j, e) for j, e in zip(d.judged, r.list("judged"), strict=True)],
    )


def record_doc(rec: ShrinkRecord) -> ShrinkDoc:
    r = rec.result
    return ShrinkDoc(
        schema=SCHEMA,
        request=request_doc(rec.request),
        evaluator=Evaluator(rec.evaluator),
        start=start_doc(rec.start),
        confidence=rec.request.confidence,
        repeats=rec.repeats,
        found=rec.found,
        case=case_doc(r.case) if r else None,
        margin=opt_number(r.margin) if r else None,
        detail=r.detail if r else None,
        rerun=list(rec.rerun) if r else None,
        smaller=[neighbour_doc(n) for n in rec.smaller],
        lower_bounds=list(rec.lower_bounds),
        evaluations=rec.evaluations,
        control_checks=rec.control_checks,
        candidates=rec.candidates,
        inadmissible=[judged_doc(j) for j in rec.inadmissible[:20]],
        budget_exhausted=rec.budget_exhausted,
        seconds=round(rec.seconds, 3),
        source=str(rec.source) if rec.source else None,
        note=rec.note,
    )
