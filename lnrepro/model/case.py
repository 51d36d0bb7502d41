"""A case of ``lnrepro shrink``: what one LayerNorm backward test checks, the input shape
``(batch, seq, heads, features)`` as ``CompareKernelVsXArray`` takes it, the data
(:class:`DataSpec`), and the ``xt::allclose`` tolerance per output tensor; and what a candidate
case did (:class:`Judged`, :class:`Neighbour`). numpy-free: the emulator's probe test, the search
core and the renderers all read these.

Owns the case's JSON, which a probe reads from the environment variable :data:`CASE_ENV` (the
emulator's ``LayerNormBackwardOpTest.LnreproProbe``, a checkout's patched-in probe, a
``--command``) and shrink's records hold. :class:`Judged` and the rest are written by
:mod:`lnrepro.model.codec` as they are; a case alone has a document of another shape (its shape
flattened in, the tolerances by tensor, a ttnn op's ``op`` and ``pcc`` only for it): the
``*Doc`` Structs below, which ``codec.written_as`` maps wherever a case is held.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from enum import Enum
from typing import Annotated

import msgspec

from lnrepro.model.codec import Real, decode, encode_obj, written_as
from lnrepro.model.jsonio import Reader, dumps, loads_text
from lnrepro.model.requests import CASE_ENV as CASE_ENV  # the case, as compact JSON, for a probe
from lnrepro.model.requests import Count

ARGS_ENV = "LNREPRO_CASE_ARGS"  # the same case as numbers, for a C++ probe (Case.args_value)
PROBE_TEST = "LayerNormBackwardOpTest.LnreproProbe"
TENSORS = ("dx", "dgamma", "dbeta")
TILE = 32
Extent = Annotated[int, msgspec.Meta(ge=1, le=1 << 24)]


class OpKind(str, Enum):
    """What a case tests: tt-train's LayerNorm backward gtest (the default, whose JSON carries no
    ``op``), or ttnn's ``layer_norm`` through a pytest probe (shape ``h x w`` as ``seq x features``
    with batch = heads = 1, both on tile multiples; a PCC threshold in place of tolerances)."""

    LAYERNORM_BW = "layernorm-bw"
    TTNN_LAYER_NORM = "ttnn.layer_norm"

    @property
    def tiled_rows(self) -> bool:
        """The rows (``seq``) go by whole tiles too."""
        return self is OpKind.TTNN_LAYER_NORM


class DataKind(str, Enum):
    """Data kinds, loudest first (``tolerance``'s ranking of what exposes a defect): constant
    inputs make x̂ = 0 and rstd = 1/sqrt(eps), so an error in the sums shows ×1000."""

    CONSTANT = "constant"
    FEW_VALUED = "few-valued"
    STRUCTURED = "structured"
    RANDOM = "random"

    @property
    def rank(self) -> int:
        return list(DataKind).index(self)


@dataclass(frozen=True)
class DataSpec:
    """The inputs of a case. ``variant`` names the pattern within a kind:

    * ``constant``: x, dy, gamma the constants ``x``, ``dy``, ``gamma`` (BugRepro's inputs);
    * ``few-valued`` ``two-valued``: along the features, x alternates -1, 1 and dy 1, 0.5;
      gamma 1 (rstd = 1, x̂ = ±1; dy·γ and dy·x̂ have means, which double-subtract and
      drop-xhat-blocks get wrong, while bf16's 1/N moves dx by less than 0.008);
    * ``structured`` ``ramp``: x = linspace(-1, 1, F), dy = linspace(0, 1, F) on every row; gamma 1;
    * ``random`` ``uniform`` (the tests' own distributions: x, dy ~ U(-1, 1), gamma ~ U(0, 1)) or
      ``mean-shifted`` (dy ~ U(0, 1)), draw ``i`` from numpy's generator seeded ``[seed, i]``.
    """

    kind: DataKind
    variant: str
    dy: float = 1.0
    gamma: float = 1.0
    x: float = 0.5
    seed: int = 0

    @property
    def label(self) -> str:
        if self.kind is DataKind.CONSTANT:
            return f"constant dy={self.dy:g} gamma={self.gamma:g} x={self.x:g}"
        if self.kind is DataKind.RANDOM:
            return f"random {self.variant} (seed {self.seed})"
        return f"{self.kind.value} {self.variant}"

    @property
    def same_every_draw(self) -> bool:
        return self.kind is not DataKind.RANDOM


VARIANTS: dict[DataKind, tuple[str, ...]] = {
    DataKind.CONSTANT: ("bugrepro", "different-values"),
    DataKind.FEW_VALUED: ("two-valued",),
    DataKind.STRUCTURED: ("ramp",),
    DataKind.RANDOM: ("uniform", "mean-shifted"),
}


def data_menu(seed: int = 0) -> tuple[DataSpec, ...]:
    """Every data variant shrink tries, loudest kind first; within a kind, the seeds' own values
    first (BugRepro's dy=1, gamma=1, x=0.5, then _DifferentValues' 0.5, 2, 1)."""
    return (
        DataSpec(DataKind.CONSTANT, "bugrepro", 1.0, 1.0, 0.5),
        DataSpec(DataKind.CONSTANT, "different-values", 0.5, 2.0, 1.0),
        DataSpec(DataKind.FEW_VALUED, "two-valued"),
        DataSpec(DataKind.STRUCTURED, "ramp"),
        DataSpec(DataKind.RANDOM, "uniform", seed=seed),
        DataSpec(DataKind.RANDOM, "mean-shifted", seed=seed),
    )


class Variant(str, Enum):
    """Every data variant, of every kind (:data:`VARIANTS` says which kind has which)."""

    BUGREPRO = "bugrepro"
    DIFFERENT_VALUES = "different-values"
    TWO_VALUED = "two-valued"
    RAMP = "ramp"
    UNIFORM = "uniform"
    MEAN_SHIFTED = "mean-shifted"


class Axis(str, Enum):
    FEATURES = "features"
    SEQ = "seq"
    BATCH = "batch"
    HEADS = "heads"


@dataclass(frozen=True)
class Shape:
    batch: int
    seq: int
    heads: int
    features: int

    @property
    def rows(self) -> int:
        return self.batch * self.seq * self.heads

    @property
    def elements(self) -> int:
        return self.rows * self.features

    @property
    def tiles(self) -> int:
        return -(-self.features // TILE)

    def get(self, axis: Axis) -> int:
        return int(getattr(self, axis.value))

    def with_(self, axis: Axis, value: int) -> Shape:
        return replace(self, **{axis.value: value})

    @property
    def label(self) -> str:
        return f"{self.batch}x{self.seq}x{self.heads}x{self.features}"


@dataclass(frozen=True)
class Tolerance:
    """``xt::allclose(metal, ref, rtol, atol)`` per output tensor."""

    rtol: float
    atol: float


class Case:
    """A case. A plain class, not a dataclass: its document has another shape (the shape
    flattened in, the tolerances by tensor, a ttnn op's ``op`` and ``pcc`` only for it), so
    :func:`lnrepro.model.codec.written_as` writes it as :class:`CaseDoc` wherever it is held."""

    __slots__ = ("data", "op", "origin", "pcc", "shape", "tolerance")
    shape: Shape
    data: DataSpec
    tolerance: tuple[tuple[str, Tolerance], ...]  # (tensor, tolerance), in TENSORS order
    origin: str  # the test it was shrunk from (full gtest name, or a pytest node id)
    op: OpKind
    pcc: float  # a ttnn op's PCC threshold (0: none)

    def __init__(
        self,
        shape: Shape,
        data: DataSpec,
        tolerance: tuple[tuple[str, Tolerance], ...],
        origin: str = "",
        *,
        op: OpKind = OpKind.LAYERNORM_BW,
        pcc: float = 0.0,
    ) -> None:
        for name, value in zip(
            _CASE_FIELDS, (shape, data, tolerance, origin, op, pcc), strict=True
        ):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a Case is frozen: cannot set {name}")

    def _fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in _CASE_FIELDS)

    def __eq__(self, other: object) -> bool:
        return self._fields() == other._fields() if isinstance(other, Case) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={v!r}" for n, v in zip(_CASE_FIELDS, self._fields(), strict=True))
        return f"Case({inner})"

    @property
    def tol(self) -> dict[str, Tolerance]:
        return dict(self.tolerance)

    @property
    def shape_label(self) -> str:
        s = self.shape
        return f"{s.seq}x{s.features}" if self.op.tiled_rows else s.label

    @property
    def label(self) -> str:
        return f"{self.shape_label}, {self.data.label}"

    def env_value(self) -> str:
        """The case as :data:`CASE_ENV` carries it: one line of compact JSON."""
        return dumps(encode_obj(self), indent=None)

    def args_value(self) -> str:
        """The case as :data:`ARGS_ENV` carries it, space-separated: batch seq heads features,
        the kind's and variant's indices (``DataKind`` order, ``VARIANTS`` order), dy gamma x
        seed, then rtol atol for dx, dgamma, dbeta."""
        s, d = self.shape, self.data
        nums: list[object] = [
            s.batch,
            s.seq,
            s.heads,
            s.features,
            d.kind.rank,
            VARIANTS[d.kind].index(d.variant),
            repr(d.dy),
            repr(d.gamma),
            repr(d.x),
            d.seed,
        ]
        for _, tol in self.tolerance:
            nums += [repr(tol.rtol), repr(tol.atol)]
        return " ".join(str(n) for n in nums)

    @classmethod
    def from_env_value(cls, text: str, source: str = CASE_ENV) -> Case:
        return decode(Reader(loads_text(text, source), source), cls)


_CASE_FIELDS = ("shape", "data", "tolerance", "origin", "op", "pcc")


class Status(str, Enum):
    """What a candidate case turned out to be."""

    FAILS = "fails"  # failed every one of its repeats, and the correct kernel passes it
    PASSES = "passes"  # passed its first run
    FLAKY = "flaky"  # failed some repeats, passed others: not deterministic
    INADMISSIBLE = "inadmissible"  # fails, but the correct kernel's model fails it too
    SKIPPED = "skipped"  # the evaluator could not test it (exit 125, a timeout)


@dataclass(frozen=True)
class Judged:
    case: Case
    status: Status
    margin: Real | None  # the smallest over its repeats of max over tensors (needed atol / atol)
    runs: Count  # evaluations of the code under test this candidate cost
    # what the evaluator said (e.g. "dx max_diff=1000")
    detail: str = field(default="", metadata={"may_lack": True})


@dataclass(frozen=True)
class Neighbour:
    """A one-step-smaller case on one axis, and what it did (it passes when the result is
    minimal); ``why`` when the evaluator can tell (a path, the partial tile, the lower bound)."""

    axis: Axis
    step: str  # "one tile fewer", "the partial tile dropped", "one fewer"
    judged: Judged | None  # None: the axis is at its lower bound
    why: str
    rerun: tuple[str, ...] = ()


def env_prefixed(case: Case, argv: list[str], args: bool = False) -> list[str]:
    """``env LNREPRO_CASE=<json> argv...``: a command line that hands ``case`` to a probe (with
    ``args``, also ``LNREPRO_CASE_ARGS``, which a C++ probe reads)."""
    extra = [f"{ARGS_ENV}={case.args_value()}"] if args else []
    return ["env", f"{CASE_ENV}={case.env_value()}", *extra, *argv]


def case_text(case: Case) -> str:
    """The case as one line a person reads."""
    tol = "; ".join(f"{t} rtol={v.rtol:g} atol={v.atol:g}" for t, v in case.tolerance)
    if case.op is not OpKind.LAYERNORM_BW:
        tol = f"{case.op.value}, PCC >= {case.pcc:g}"
    return f"{case.label} ({tol})"


# ---------------------------------------------------------------------------------- as written
class Doc(msgspec.Struct, kw_only=True, forbid_unknown_fields=True, frozen=True):
    pass


class DataDoc(Doc, kw_only=True, frozen=True):
    kind: DataKind
    variant: Variant
    dy: Real | msgspec.UnsetType = msgspec.UNSET  # constant data only
    gamma: Real | msgspec.UnsetType = msgspec.UNSET  # constant data only
    x: Real | msgspec.UnsetType = msgspec.UNSET  # constant data only
    seed: Count | msgspec.UnsetType = msgspec.UNSET  # random data only


class ToleranceDoc(Doc, kw_only=True, frozen=True):
    rtol: Real
    atol: Real


class TolerancesDoc(Doc, kw_only=True, frozen=True):
    dx: ToleranceDoc
    dgamma: ToleranceDoc
    dbeta: ToleranceDoc


class CaseDoc(Doc, kw_only=True, frozen=True):
    batch: Extent
    seq: Extent
    heads: Extent
    features: Extent
    data: DataDoc
    tolerance: TolerancesDoc | msgspec.UnsetType = msgspec.UNSET  # the gtest's (op absent)
    origin: str = ""
    op: OpKind | msgspec.UnsetType = msgspec.UNSET  # absent: tt-train's LayerNorm backward
    pcc: Annotated[float, msgspec.Meta(gt=0, lt=1)] | msgspec.UnsetType = msgspec.UNSET


class NeighbourDoc(Doc, kw_only=True, frozen=True):
    axis: Axis
    step: str
    case: Case | None  # None: the axis is at its lower bound
    status: Status | None
    margin: Real | None
    why: str
    rerun: list[str] | None


def data_doc(d: DataSpec) -> DataDoc:
    constant, random = d.kind is DataKind.CONSTANT, d.kind is DataKind.RANDOM
    return DataDoc(
        kind=d.kind,
        variant=Variant(d.variant),
        dy=d.dy if constant else msgspec.UNSET,
        gamma=d.gamma if constant else msgspec.UNSET,
        x=d.x if constant else msgspec.UNSET,
        seed=d.seed if random else msgspec.UNSET,
    )


def data(d: DataDoc) -> DataSpec:
    if d.variant.value not in VARIANTS[d.kind]:
        allowed = ", ".join(VARIANTS[d.kind])
        raise ValueError(f"is {d.variant.value!r}, not one of {allowed} - at `$.data.variant`")
    return DataSpec(
        kind=d.kind,
        variant=d.variant.value,
        dy=1.0 if d.dy is msgspec.UNSET else d.dy,
        gamma=1.0 if d.gamma is msgspec.UNSET else d.gamma,
        x=0.5 if d.x is msgspec.UNSET else d.x,
        seed=0 if d.seed is msgspec.UNSET else d.seed,
    )


def case_doc(c: Case) -> CaseDoc:
    gtest = c.op is OpKind.LAYERNORM_BW
    tol = {t: ToleranceDoc(rtol=v.rtol, atol=v.atol) for t, v in c.tolerance}
    return CaseDoc(
        **asdict(c.shape),  # batch, seq, heads, features
        data=data_doc(c.data),
        tolerance=TolerancesDoc(**tol) if gtest else msgspec.UNSET,
        origin=c.origin,
        op=msgspec.UNSET if gtest else c.op,
        pcc=msgspec.UNSET if gtest else c.pcc,
    )


def case(d: CaseDoc) -> Case:
    shape = Shape(batch=d.batch, seq=d.seq, heads=d.heads, features=d.features)
    if d.op is not msgspec.UNSET and d.op is not OpKind.LAYERNORM_BW:
        if d.pcc is msgspec.UNSET:
            raise ValueError("is required for a ttnn op's case - at `$.pcc`")
        if d.tolerance is not msgspec.UNSET:
            raise ValueError("does not apply to a ttnn op's case (its pcc does) - at `$.tolerance`")
        return Case(shape, data(d.data), (), d.origin, op=d.op, pcc=d.pcc)
    if d.tolerance is msgspec.UNSET:
        raise ValueError("is required - at `$.tolerance`")
    tol = ((t, getattr(d.tolerance, t)) for t in TENSORS)
    tolerance = tuple((t, Tolerance(rtol=v.rtol, atol=v.atol)) for t, v in tol)
    return Case(shape=shape, data=data(d.data), tolerance=tolerance, origin=d.origin)


def neighbour_doc(n: Neighbour) -> NeighbourDoc:
    j = n.judged
    return NeighbourDoc(
        axis=n.axis,
        step=n.step,
        case=j.case if j else None,
        status=j.status if j else None,
        margin=j.margin if j else None,
        why=n.why,
        rerun=list(n.rerun) if j else None,
    )


written_as(Case, CaseDoc, case_doc, case)
