"""What each command is asked to do, as typed, frozen data: one request per command.

A request is the whole input of a command, nothing else: the click layer builds one, a library
user builds one in Python, and ``bisect --resume`` rebuilds one from the saved state. From a
request come, each in exactly one place:

* its validation, before anything starts (:mod:`lnrepro.run.validate`,
  :mod:`lnrepro.bisect.validate`): no record, lock, worktree or state for a request that is wrong;
* the command line that repeats it (:func:`lnrepro.options.argv`), for records and reports,
  written from the table of options that also makes the commands' options;
* its JSON, both ways, and its JSON Schema (docs/schemas/requests.json), derived from these
  definitions by :mod:`lnrepro.model.codec` (issue 39). The backends and the oracles are msgspec
  Structs because they are tagged unions (the ``backend`` and ``oracle`` keys name the kind,
  as they always have); the rest are keyword-only dataclasses. Older documents still read: a
  field a version did not have takes its default.

Defaults are the values a command line without the option gives; ``None`` means "not given" and
the documented default applies where the request is carried out. Closed sets are ``Literal``
types (their values stay plain strings, as on the command line); msgspec checks them on read.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, NewType, TypeVar, get_args

import msgspec

from lnrepro.model import codec
from lnrepro.model.jsonio import Reader
from lnrepro.model.kinds import CASE_ENV as CASE_ENV
from lnrepro.model.kinds import DEFAULT_FILTER as DEFAULT_FILTER
from lnrepro.model.kinds import DEFAULT_RECORD_DIR as DEFAULT_RECORD_DIR
from lnrepro.model.kinds import DEFAULT_TIMEOUT_S as DEFAULT_TIMEOUT_S
from lnrepro.model.kinds import BackendKind as BackendKind
from lnrepro.model.kinds import Margin as Margin
from lnrepro.model.kinds import MountSet as MountSet
from lnrepro.model.kinds import OnCrash as OnCrash
from lnrepro.model.kinds import OnHang as OnHang
from lnrepro.model.kinds import ReportFormat as ReportFormat
from lnrepro.model.kinds import StudyEra as StudyEra

T = TypeVar("T")
KernelEra = Literal["2025-11", "2025-12", "fixed"]
Arch = Literal["wormhole_b0", "blackhole"]
DataKind = Literal["copy", "reference", "random"]
RunnerName = Literal["docker", "local"]
MountSetName = Literal["full", "tt-metal", "seed-broken"]
KERNEL_ERAS: tuple[str, ...] = get_args(KernelEra)
ARCHES: tuple[str, ...] = get_args(Arch)
DATA_KINDS: tuple[str, ...] = get_args(DataKind)
RUNNERS: tuple[str, ...] = get_args(RunnerName)
MOUNT_SETS: tuple[str, ...] = get_args(MountSetName)

Count = Annotated[int, msgspec.Meta(ge=0)]
Positive = Annotated[int, msgspec.Meta(ge=1)]
Seconds = Annotated[float, msgspec.Meta(gt=0)]
# tt-metal's dispatch timeout: 0 turns it off (TT_METAL_OPERATION_TIMEOUT_SECONDS=0)
OffOrSeconds = Annotated[float, msgspec.Meta(ge=0)]
NonEmpty = Annotated[str, msgspec.Meta(min_length=1)]


class _Backend(msgspec.Struct, frozen=True, kw_only=True, tag_field="backend"):
    """A backend's JSON object starts with ``"backend": KIND``."""


class EmulatorSpec(_Backend, frozen=True, kw_only=True, tag="emulator"):
    """The built-in numpy emulator of the kernel (no card, no checkout)."""

    kernel_era: KernelEra = "2025-12"
    arch: Arch = "wormhole_b0"
    defect: str | None = None  # None: the era's defects
    block_size: int | None = None
    l1_max_tiles: int | None = None
    fp32_stats: bool = False
    data: DataKind = "copy"
    seed: Count | None = None  # --data random: attempt k uses seed + k - 1
    # the case its probe test runs (``$LNREPRO_CASE``, as shrink's rerun line sets it): kept,
    # so that the run's own rerun line sets it again (absent from the JSON when there is none)
    case: str | msgspec.UnsetType = msgspec.UNSET

    kind = BackendKind.EMULATOR


class BinarySpec(_Backend, frozen=True, kw_only=True, tag="local"):
    """A gtest binary already built on this machine."""

    binary: Path

    kind = BackendKind.LOCAL


class TtMetalSpec(_Backend, frozen=True, kw_only=True, tag="tt-metal"):
    """A tt-metal checkout: built by a profile, tested on this host or in lnrepro's container."""

    checkout: Path
    runner: RunnerName = "docker"
    profile: str | None = None  # None: the configuration's default profile
    image: str | None = None  # None: lnrepro's image on the configured base
    mount_set: MountSetName = "full"
    env: dict[str, str] = msgspec.field(default_factory=dict)  # --env K=V, in the given order
    require_device: bool = False
    reset_cmd: tuple[str, ...] | None = None
    watcher_s: int | None = None
    docker_context: str | None = None  # another engine (a card host); None: the default
    devices: tuple[str, ...] | None = None  # only these /dev/tenstorrent/N (bisect --jobs)
    python: str | None = None  # the interpreter of --pytest runs; None: decided by the runner
    prebuilt: Path | None = None  # a build tree to test instead of building (bisect --prebuilt)
    triage: bool = True  # run the checkout's tools/tt-triage.py on a hung attempt before the kill
    dispatch_timeout_s: OffOrSeconds | None = None  # TT_METAL_OPERATION_TIMEOUT_SECONDS per attempt

    kind = BackendKind.TT_METAL


class PythonSpec(_Backend, frozen=True, kw_only=True, tag="python"):
    """Any Python project's pytest tests (a git checkout, no tt-metal), run in its own Python:
    ``python`` if given, else the project's ``.venv``/``venv``, else ``python3`` on PATH."""

    project: Path = msgspec.field(default_factory=Path)  # a factory: see RunRequest.record_dir
    python: str | None = None  # None: the project's .venv/bin/python, venv/bin/python, python3
    env: dict[str, str] = msgspec.field(default_factory=dict)  # --env K=V, in the given order
    # run before the tests, in an environment of the run's own layered over ``python``'s (what
    # it installs never reaches the user's); it failing makes the commit untestable
    setup: tuple[str, ...] | None = None
    # a local image whose python3 (or ``python``) has pytest: the project is mounted into a fresh
    # container of it, run as the invoking user; None: here
    image: str | None = None

    kind = BackendKind.PYTHON


BackendSpec = EmulatorSpec | BinarySpec | TtMetalSpec | PythonSpec


class TestSpec(msgspec.Struct, frozen=True, kw_only=True):
    """Which tests, how often, for how long: ``--filter``, ``-n``, ``--timeout``, metrics."""

    __test__ = False

    gtest_filter: NonEmpty = msgspec.field(default=DEFAULT_FILTER, name="filter")
    repeat: Positive = 1
    timeout_s: Seconds = DEFAULT_TIMEOUT_S
    metric_patterns: tuple[str, ...] = ()
    pytest: tuple[str, ...] = ()  # pytest node ids: run them instead of the gtest binary

    @property
    def selection(self) -> str:
        """What is run, as a person reads it: the gtest filter, or the pytest node ids."""
        return " ".join(self.pytest) if self.pytest else self.gtest_filter


class _Coded:
    """A request's JSON both ways, by :mod:`lnrepro.model.codec`."""

    def to_json(self) -> Any:
        return codec.encode(self)

    @classmethod
    def from_json(cls: type[T], r: Reader) -> T:
        return codec.decode(r, cls)


@dataclass(frozen=True, kw_only=True)
class RunRequest(_Coded):
    """``lnrepro run``: build (if there is code to build), then run the tests N times."""

    backend: BackendSpec = field(default_factory=EmulatorSpec)
    tests: TestSpec = field(default_factory=TestSpec)
    # a factory: msgspec writes a plain default into the schema and cannot write a Path
    record_dir: Path = field(default_factory=lambda: DEFAULT_RECORD_DIR)


# ---------------------------------------------------------------------------------- bisect
@dataclass(frozen=True, kw_only=True)
class Policy:
    """How a bisect reads a run: crashes, hangs, and a metric with its threshold."""

    on_crash: OnCrash = OnCrash.MATCH
    on_hang: OnHang = OnHang.SKIP
    metric: str | None = None
    threshold: float | None = None
    higher_is_better: bool = False  # a PCC: bad when the worst value falls BELOW the threshold
    hang_in: NonEmpty | None = None  # only a hang whose watcher diagnosis names this is the bug


class _Oracle(msgspec.Struct, frozen=True, kw_only=True, tag_field="oracle"):
    """An oracle's JSON object starts with ``"oracle": KIND``."""


class CommandOracleSpec(_Oracle, frozen=True, kw_only=True, tag="command"):
    """``--command``: git bisect run's protocol (0 good, 125 skip, 1-127 bad)."""

    argv: Annotated[tuple[str, ...], msgspec.Meta(min_length=1)]
    command: str = ""  # ``argv`` as one shell line (derived: whatever is given is replaced)
    timeout_s: Seconds = DEFAULT_TIMEOUT_S
    repeat: Positive = 1

    def __post_init__(self) -> None:
        msgspec.structs.force_setattr(self, "command", shlex.join(self.argv))


class RunOracleSpec(_Oracle, frozen=True, kw_only=True, tag="run"):
    """Without ``--command``: ``lnrepro run`` on each commit's worktree (a tt-metal checkout)."""

    # ``checkout`` (``project``) is the repository; each job tests its own worktree
    backend: TtMetalSpec | PythonSpec
    tests: TestSpec = msgspec.field(default_factory=TestSpec)


OracleSpec = CommandOracleSpec | RunOracleSpec


@dataclass(frozen=True, kw_only=True)
class EndpointRuns:
    """Runs of the test measured at the endpoints before the bisect (``--rates-from``, or found
    in the store): the counts of the Beta prior over the fail rates, in the bug's terms (``bad``:
    the buggy commit's runs). Kept in the request, so ``--resume`` needs no record again."""

    bad_fails: Count = 0
    bad_runs: Count = 0
    good_fails: Count = 0
    good_runs: Count = 0
    sources: tuple[str, ...] = ()  # the run records counted
    found: bool = False  # found in the store by the endpoints' commits and the test


@dataclass(frozen=True, kw_only=True)
class BisectRequest(_Coded):
    """``lnrepro bisect``: everything a bisect needs, saved with its state (``--resume``)."""

    repo: Path
    good: Annotated[tuple[str, ...], msgspec.Meta(min_length=1)]
    bad: str
    oracle: OracleSpec
    policy: Policy = field(default_factory=Policy)
    confidence: float | None = None  # the Bayesian search, stopping at this posterior
    fail_rates: tuple[float, float] | None = None  # (buggy, clean), when known
    jobs: Positive = 1
    contexts: tuple[str, ...] = ()  # Docker contexts, job i on contexts[i % len]
    devices: tuple[str, ...] = ()  # /dev/tenstorrent/N, one per job
    picks: tuple[str, ...] = ()
    patches: tuple[Path, ...] = ()
    find_fix: bool = False
    first_parent: bool = False
    confirm: bool = True
    paths: tuple[str, ...] = ()
    record_dir: Path | None = None  # None: inside the repository's .git (the checkout stays clean)
    prebuilt: tuple[str, ...] = ()  # --prebuilt dir:TEMPLATE: ready build trees, tested first
    rates_from: tuple[str, ...] = ()  # --rates-from RUN: run records at the endpoints
    endpoint_runs: EndpointRuns | None = None  # their counts (validation fills it in)
    margin: Margin = Margin.AUTO  # --margin: runs' margins weigh in the Bayesian search


# A bisect request checked and resolved (lnrepro.bisect.validate.resolve_bisect): refs and picks
# full shas, paths absolute, lnrepro.toml's prebuilt trees and the endpoints' runs filled in. The
# only kind the record, the loop and the oracles take, so a raw request cannot reach them.
ResolvedBisect = NewType("ResolvedBisect", BisectRequest)


@dataclass(frozen=True, kw_only=True)
class RequestShapes:
    """The requests records keep (a run's, a bisect's), for the other schemas to refer to."""

    run: RunRequest
    bisect: BisectRequest


# ---------------------------------------------------------------------------------- the other commands
# Requests of the commands that read what is saved, judge a machine or study the emulator. A
# ``record_dir`` of None means "not given": the default and the bisects' own place are looked in.


@dataclass(frozen=True, kw_only=True)
class RunsRequest:
    """``lnrepro runs``: the saved runs and bisects."""

    record_dir: Path | None = None


@dataclass(frozen=True, kw_only=True)
class ShowRequest:
    """``lnrepro show``: one saved run or bisect (id, unique prefix, ``last``, a path)."""

    ref: str = "last"
    record_dir: Path | None = None


@dataclass(frozen=True, kw_only=True)
class CompareRequest:
    """``lnrepro compare A B``: two saved runs, named as :class:`ShowRequest` names one."""

    a: str
    b: str
    record_dir: Path | None = None


@dataclass(frozen=True, kw_only=True)
class ReportRequest:
    """``lnrepro report``: a saved run or bisect as text; ``bisect`` names the bisect whose
    regression details a run's Markdown carries (default: the one that ran it, if any)."""

    ref: str = "last"
    record_dir: Path | None = None
    format: ReportFormat = ReportFormat.MD
    bisect: str | None = None


@dataclass(frozen=True, kw_only=True)
class ExplainRequest:
    """``lnrepro explain``: a saved run (id, ``last``, a path) or a log (gtest console, watcher,
    tt-triage) to explain."""

    ref: str
    record_dir: Path | None = None


@dataclass(frozen=True, kw_only=True)
class EnvCheckRequest:
    """``lnrepro env-check``: this host, a sysroot judged as if it were ``/``, or (``container``)
    also the inside of the container lnrepro would start. ``tt_metal`` None: no checkout."""

    sysroot: Path | None = None
    container: bool = False
    image: str | None = None  # with container; None: the tt-metal dev image
    mount_set: MountSet | None = None  # with container; None: full
    tt_metal: Path | None = None
    min_driver: str | None = None  # None: 1.33


@dataclass(frozen=True, kw_only=True)
class ToleranceRequest:
    """``lnrepro tolerance``: the seeds' tests (``tests``, gtest patterns; none: the BugRepro and
    NIGHTLY tests), or a ``shape`` ("B,S,H,F") with ``defects`` named as run's ``--defect``."""

    tests: tuple[str, ...] = ()
    shape: str | None = None
    defects: tuple[str, ...] = ()
    trials: int = 200
    alpha: float = 1e-6
    kernel_era: StudyEra = StudyEra.DEC_2025
    plot: Path | None = None  # with shape: .svg or .png
    reference_variants: bool = False


@dataclass(frozen=True, kw_only=True)
class ParseRequest:
    """``lnrepro parse``: a gtest console log (None: a stream the caller passes), its report,
    the binary's exit status and extra metric patterns."""

    log: Path | None
    report: Path | None = None
    exit_code: int | None = None
    metric_patterns: tuple[str, ...] = ()
