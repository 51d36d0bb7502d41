"""``lnrepro shrink``'s vocabulary: a case (shape, data, tolerance), its verdicts, the request and
the record (``lnrepro.shrink/1``). numpy-free: the emulator's probe test, the search core and the
renderers all read these.

A *case* is what one LayerNorm backward test checks: the input shape ``(batch, seq, heads,
features)`` as ``CompareKernelVsXArray`` takes it, the data (:class:`DataSpec`), and the
``xt::allclose`` tolerance per output tensor. Its JSON is what a probe reads from the environment
variable :data:`CASE_ENV` (the emulator's ``LayerNormBackwardOpTest.LnreproProbe``, a checkout's
patched-in probe, a ``--command``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from lnrepro.model.codec import decode
from lnrepro.model.events import Events
from lnrepro.model.jsonio import JSON, Reader, dumps
from lnrepro.model.requests import (  # CASE_ENV: the case, as compact JSON, for a probe
    CASE_ENV as CASE_ENV,
)
from lnrepro.model.requests import (
    DEFAULT_RECORD_DIR,
    BackendSpec,
    EmulatorSpec,
)

if TYPE_CHECKING:
    from lnrepro.model.shrink_doc import ShrinkDoc

# The JSON of every type here is defined once, in lnrepro.model.shrink_doc (msgspec Structs);
# to_json/from_json import it late (it imports this module, and msgspec stays out of --help).

SCHEMA: Final = "lnrepro.shrink/1"
ARGS_ENV = "LNREPRO_CASE_ARGS"  # the same case as numbers, for a C++ probe (Case.args_value)
PROBE_TEST = "LayerNormBackwardOpTest.LnreproProbe"
TENSORS = ("dx", "dgamma", "dbeta")
TILE = 32


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

    def to_json(self) -> dict[str, JSON]:
        from lnrepro.model.shrink_doc import builtins, data_doc

        return builtins(data_doc(self))

    @classmethod
    def from_json(cls, r: Reader) -> DataSpec:
        from lnrepro.model.shrink_doc import DataDoc, data

        return data(decode(r, DataDoc), r)


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


@dataclass(frozen=True)
class Case:
    shape: Shape
    data: DataSpec
    tolerance: tuple[tuple[str, Tolerance], ...]  # (tensor, tolerance), in TENSORS order
    origin: str = ""  # the test it was shrunk from (full gtest name, or a pytest node id)
    op: OpKind = field(default=OpKind.LAYERNORM_BW, kw_only=True)
    pcc: float = field(default=0.0, kw_only=True)  # a ttnn op's PCC threshold (0: none)

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

    def to_json(self) -> dict[str, JSON]:
        from lnrepro.model.shrink_doc import builtins, case_doc

        return builtins(case_doc(self))

    def env_value(self) -> str:
        """The case as :data:`CASE_ENV` carries it: one line of compact JSON."""
        return dumps(self.to_json(), indent=None)

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
    def from_json(cls, r: Reader) -> Case:
        from lnrepro.model.shrink_doc import CaseDoc, case

        return case(decode(r, CaseDoc), r)

    @classmethod
    def from_env_value(cls, text: str, source: str = CASE_ENV) -> Case:
        from lnrepro.model.jsonio import loads_text

        return cls.from_json(Reader(loads_text(text, source), source))


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
    margin: float | None  # the smallest over its repeats of max over tensors (needed atol / atol)
    runs: int  # evaluations of the code under test this candidate cost
    detail: str = ""  # what the evaluator said (e.g. "dx max_diff=1000")

    def to_json(self) -> dict[str, JSON]:
        from lnrepro.model.shrink_doc import builtins, judged_doc

        return builtins(judged_doc(self))

    @classmethod
    def from_json(cls, r: Reader) -> Judged:
        from lnrepro.model.shrink_doc import JudgedDoc, judged

        return judged(decode(r, JudgedDoc), r)


@dataclass(frozen=True)
class Neighbour:
    """A one-step-smaller case on one axis, and what it did (it passes when the result is
    minimal); ``why`` when the evaluator can tell (a path, the partial tile, the lower bound)."""

    axis: Axis
    step: str  # "one tile fewer", "the partial tile dropped", "one fewer"
    judged: Judged | None  # None: the axis is at its lower bound
    why: str
    rerun: tuple[str, ...] = ()

    def to_json(self) -> dict[str, JSON]:
        from lnrepro.model.shrink_doc import builtins, neighbour_doc

        return builtins(neighbour_doc(self))


class ShrinkEvents(Events):
    """A shrink's progress, and (inherited from :class:`Events`) the build of a checkout's
    probe; the default shows nothing (rich lives in lnrepro.present.shrink)."""

    def started(self, start: StartMeasure, repeats: int) -> None: ...
    def phase(self, text: str) -> None: ...
    def judged(self, j: Judged, candidates: int, evaluations: int, best: Judged | None) -> None: ...
    def interrupted(self, best: Judged | None, rerun: tuple[str, ...], saved: Path | None) -> None:
        """Ctrl-C or SIGTERM stopped the search: the best case so far and its rerun line (kept,
        so the person gets what the progress showed), and the directory whose saved state
        ``--resume`` continues (None: nothing saved, e.g. the emulator's)."""


# ---------------------------------------------------------------------------------- request
DEFAULT_CONFIDENCE = 0.95
DEFAULT_START_RUNS = 5
DEFAULT_BUDGET = 600
SourceFor = Literal["tt-metal", "lookalike"]  # --source-for


@dataclass(frozen=True)
class ShrinkRequest:
    """``lnrepro shrink``: a test to start from, where to evaluate candidates, how sure to be."""

    test: str = ""  # a test name (full or short); "" with ``run``: its first failing test
    backend: BackendSpec = field(default_factory=EmulatorSpec)  # validated: the emulator's
    command: tuple[str, ...] | None = None  # --command: any repository's test of a case
    confidence: float = DEFAULT_CONFIDENCE
    start_runs: int = DEFAULT_START_RUNS
    budget: int = DEFAULT_BUDGET  # evaluations of the code under test, at most
    seed: int = 0  # random data's seed
    source: Path | None = None  # write the emitted test here
    timeout_s: float = 600.0  # one --command run
    source_flavour: SourceFor = "tt-metal"  # whose helpers the emitted test uses
    record_dir: Path = DEFAULT_RECORD_DIR  # a checkout's build and runs go in a new directory here
    run: str | None = None  # start from this run record's test, backend and pass rate
    known_start: tuple[int, int] | None = None  # (runs, passes) measured already (the run's)
    pytest: str = field(default="", kw_only=True)  # a ttnn op's pytest node id to start from

    @property
    def model(self) -> EmulatorSpec:
        """The kernel model whose correct kernel is the control and whose era gives the start
        test's tolerances: the emulator backend's, else the default era and arch."""
        return self.backend if isinstance(self.backend, EmulatorSpec) else EmulatorSpec()

    def argv(self) -> list[str]:
        """The command line that repeats this shrink (the table's options)."""
        from lnrepro.model.option_table_shrink import shrink_argv

        return shrink_argv(self)

    def to_json(self) -> dict[str, JSON]:
        from lnrepro.model.shrink_doc import builtins, request_doc

        return builtins(request_doc(self))

    @classmethod
    def from_json(cls, r: Reader) -> ShrinkRequest:
        from lnrepro.model.shrink_doc import RequestDoc, request

        return request(decode(r, RequestDoc))


STATE_SCHEMA: Final = "lnrepro.shrink-state/1"
STATE_FILE = "shrink-state.json"


@dataclass
class ShrinkState:
    """What a long shrink has learned, saved after every candidate: ``--resume`` replays the
    search on it (the search is deterministic given its judgments) and runs only what is new."""

    request: ShrinkRequest
    start: tuple[int, int] | None = None  # (runs, passes) of the start, once measured
    evaluations: int = 0
    judged: list[Judged] = field(default_factory=list)

    def to_json(self) -> dict[str, JSON]:
        from lnrepro.model.shrink_doc import builtins, state_doc

        return builtins(state_doc(self))

    @classmethod
    def from_json(cls, r: Reader) -> ShrinkState:
        from lnrepro.model.shrink_doc import StateDoc, state

        return state(decode(r, StateDoc), r)


# ---------------------------------------------------------------------------------- record
@dataclass(frozen=True)
class StartMeasure:
    """The start test as written, run ``runs`` times (random data: a fresh draw each run)."""

    case: Case
    runs: int
    passes: int
    interval: tuple[float, float]  # Wilson 95% interval of its pass rate
    admissible: bool  # the correct kernel's model passes it

    def to_json(self) -> dict[str, JSON]:
        from lnrepro.model.shrink_doc import builtins, start_doc

        return builtins(start_doc(self))


@dataclass
class ShrinkRecord:
    request: ShrinkRequest
    evaluator: str  # what ran the candidates
    start: StartMeasure
    repeats: int  # a candidate fails only if it fails this many runs in a row
    result: Judged | None  # None: nothing fails
    rerun: tuple[str, ...]  # runs exactly the result's case (empty when nothing was found)
    smaller: list[Neighbour] = field(default_factory=list)
    evaluations: int = 0  # runs of the code under test
    control_checks: int = 0  # runs of the correct kernel's model (admissibility)
    candidates: int = 0  # distinct cases judged
    inadmissible: list[Judged] = field(default_factory=list)  # failed, but so does the model
    budget_exhausted: bool = False
    seconds: float = 0.0
    source: Path | None = None
    note: str = ""  # why nothing was found, or what to know
    lower_bounds: list[Axis] = field(default_factory=list)  # axes with no smaller value

    @property
    def found(self) -> bool:
        return self.result is not None

    def to_json(self) -> dict[str, JSON]:
        from lnrepro.model.shrink_doc import builtins

        return builtins(self.doc())

    def doc(self) -> ShrinkDoc:
        """The record as ``lnrepro.shrink/1`` has it (the result's case flattened in)."""
        from lnrepro.model.shrink_doc import record_doc

        return record_doc(self)


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
