"""``lnrepro shrink``'s request, saved state and record (``lnrepro.shrink/1``,
``lnrepro.shrink-state/1``), and their JSON, read and written by :mod:`lnrepro.model.codec`
(and the source of docs/schemas/shrink*.json, ``scripts/schemas.py``). The request, the start
and every judged case are written as they are; the two documents around them
(:class:`StateDoc`, :class:`ShrinkDoc`: the schema's name, the result's case flattened in) are
Structs. The case they hold is :mod:`lnrepro.model.case`'s, re-exported here. A new field: give
it a default (so older documents still read), then run ``python scripts/schemas.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import Enum
from pathlib import Path
from typing import Annotated, Final, Literal

import msgspec

# the emulator's probe reads the case from here (its vocabulary is lnrepro.model.case's)
from lnrepro.model.case import CASE_ENV as CASE_ENV
from lnrepro.model.case import PROBE_TEST as PROBE_TEST
from lnrepro.model.case import TENSORS as TENSORS
from lnrepro.model.case import Axis, Doc, Judged, Neighbour, NeighbourDoc, neighbour_doc
from lnrepro.model.case import Case as Case
from lnrepro.model.case import DataKind as DataKind
from lnrepro.model.case import DataSpec as DataSpec
from lnrepro.model.codec import Real, decode, encode_obj
from lnrepro.model.events import Events
from lnrepro.model.jsonio import JSON, Reader
from lnrepro.model.requests import (
    DEFAULT_RECORD_DIR,
    Count,
    EmulatorSpec,
    Positive,
    TtMetalSpec,
)

SCHEMA: Final = "lnrepro.shrink/1"
Pair = tuple[Count, Count]


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


class SourceFlavour(str, Enum):
    """Whose helpers the emitted test uses."""

    TT_METAL = "tt-metal"
    LOOKALIKE = "lookalike"


@dataclass(frozen=True)
class ShrinkRequest:
    # ``lnrepro shrink``: a test to start from, where to evaluate candidates, how sure to be.
    # Written as it is (a comment, not a docstring: the schema has no description for it).

    test: str = ""  # a test name (full or short); "" with ``run``: its first failing test
    # the emulator or a checkout (validation refuses the others: shrink has no probe for them)
    backend: EmulatorSpec | TtMetalSpec = field(default_factory=EmulatorSpec)
    command: tuple[str, ...] | None = None  # --command: any repository's test of a case
    confidence: Annotated[float, msgspec.Meta(ge=0.5, le=1)] = DEFAULT_CONFIDENCE
    start_runs: Positive = DEFAULT_START_RUNS
    budget: Positive = DEFAULT_BUDGET  # evaluations of the code under test, at most
    seed: Count = 0  # random data's seed
    source: Path | None = None  # write the emitted test here
    timeout_s: float = 600.0  # one --command run
    # whose helpers the emitted test uses; older documents may lack it
    source_flavour: SourceFlavour = field(
        default=SourceFlavour.TT_METAL, metadata={"may_lack": True}
    )
    record_dir: Path = field(
        default_factory=lambda: DEFAULT_RECORD_DIR
    )  # a checkout's runs go here
    run: str | None = None  # start from this run record's test, backend and pass rate
    known_start: Pair | None = None  # (runs, passes) measured already (the run's)
    # a ttnn op's pytest node id to start from; written only when given ("" reads as none)
    pytest: str | msgspec.UnsetType = field(default=msgspec.UNSET, kw_only=True)

    def __post_init__(self) -> None:
        if not self.pytest:
            object.__setattr__(self, "pytest", msgspec.UNSET)
        if self.source_flavour in SourceFlavour._value2member_map_:  # validation names others
            object.__setattr__(self, "source_flavour", SourceFlavour(self.source_flavour))

    @property
    def model(self) -> EmulatorSpec:
        """The kernel model whose correct kernel is the control and whose era gives the start
        test's tolerances: the emulator backend's, else the default era and arch."""
        return self.backend if isinstance(self.backend, EmulatorSpec) else EmulatorSpec()

    def to_json(self) -> dict[str, JSON]:
        return encode_obj(self)

    @classmethod
    def from_json(cls, r: Reader) -> ShrinkRequest:
        return decode(r, cls)


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
        own = {f.name: getattr(self, f.name) for f in fields(self)}  # StateDoc's, but its schema
        return encode_obj(StateDoc(schema=STATE_SCHEMA, **own))

    @classmethod
    def from_json(cls, r: Reader) -> ShrinkState:
        d = decode(r, StateDoc)
        return cls(**{f.name: getattr(d, f.name) for f in fields(cls)})


# ---------------------------------------------------------------------------------- record
@dataclass(frozen=True)
class StartMeasure:
    # The start test as written, run ``runs`` times (random data: a fresh draw each run).

    case: Case
    runs: Positive
    passes: Count
    pass_rate_interval: tuple[float, float]  # Wilson 95% interval of its pass rate
    admissible: bool  # the correct kernel's model passes it


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
        return encode_obj(self.doc())

    def doc(self) -> ShrinkDoc:
        """The record as ``lnrepro.shrink/1`` has it (the result's case flattened in)."""
        r = self.result
        return ShrinkDoc(
            schema=SCHEMA,
            request=self.request,
            evaluator=Evaluator(self.evaluator),
            start=self.start,
            confidence=self.request.confidence,
            repeats=self.repeats,
            found=self.found,
            case=r.case if r else None,
            margin=r.margin if r else None,
            detail=r.detail if r else None,
            rerun=list(self.rerun) if r else None,
            smaller=[neighbour_doc(n) for n in self.smaller],
            lower_bounds=list(self.lower_bounds),
            evaluations=self.evaluations,
            control_checks=self.control_checks,
            candidates=self.candidates,
            inadmissible=self.inadmissible[:20],
            budget_exhausted=self.budget_exhausted,
            seconds=round(self.seconds, 3),
            source=str(self.source) if self.source else None,
            note=self.note,
        )


# ---------------------------------------------------------------------------------- as written


class Evaluator(str, Enum):
    """What ran the candidates."""

    EMULATOR = "emulator"
    COMMAND = "command"
    CHECKOUT = "checkout"
    CHECKOUT_PYTEST = "checkout-pytest"  # a ttnn op's pytest probe on a checkout


class StateDoc(Doc, kw_only=True, frozen=True):
    schema: Literal["lnrepro.shrink-state/1"]
    request: ShrinkRequest
    start: Pair | None
    evaluations: Count = 0
    judged: list[Judged]


class ShrinkDoc(Doc, kw_only=True, frozen=True):
    schema: Literal["lnrepro.shrink/1"]
    request: ShrinkRequest
    evaluator: Evaluator
    start: StartMeasure
    confidence: float
    repeats: Positive
    found: bool
    case: Case | None
    margin: Real | None
    detail: str | None
    rerun: list[str] | None
    smaller: list[NeighbourDoc]
    lower_bounds: list[Axis]
    evaluations: Count
    control_checks: Count
    candidates: Count
    inadmissible: Annotated[list[Judged], msgspec.Meta(max_length=20)]
    budget_exhausted: bool
    seconds: float
    source: str | None
    note: str
