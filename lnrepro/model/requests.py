"""What each command is asked to do, as typed, frozen data: one request per command.

A request is the whole input of a command, nothing else: the click layer builds one, a library
user builds one in Python, and ``bisect --resume`` rebuilds one from the saved state. From a
request come, each in exactly one place:

* its validation, before anything starts (:mod:`lnrepro.run.validate`,
  :mod:`lnrepro.bisect.validate`): no record, lock, worktree or state for a request that is wrong;
* the command line that repeats it (:meth:`RunRequest.argv`, :meth:`BisectRequest.argv`), for
  records and reports;
* its JSON (``to_json``/``from_json``), saved with records and a bisect's state.

Defaults are the values a command line without the option gives; ``None`` means "not given" and
the documented default applies where the request is carried out.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from lnrepro.model.jsonio import Reader

DEFAULT_FILTER = "LayerNormBackwardOpTest.BugRepro_*:LayerNormBackwardOpTest.NIGHTLY_*"
DEFAULT_TIMEOUT_S = 1800.0  # tt-metal's own bisect script allows 30 minutes
DEFAULT_RECORD_DIR = Path(".lnrepro/runs")
KERNEL_ERAS = ("2025-11", "2025-12", "fixed")
ARCHES = ("wormhole_b0", "blackhole")
DATA_KINDS = ("copy", "reference", "random")
RUNNERS = ("docker", "local")
MOUNT_SETS = ("full", "tt-metal", "seed-broken")


class BackendKind(str, Enum):
    EMULATOR = "emulator"
    LOCAL = "local"
    TT_METAL = "tt-metal"


@dataclass(frozen=True)
class EmulatorSpec:
    """The built-in numpy emulator of the kernel (no card, no checkout)."""

    kernel_era: str = "2025-12"
    arch: str = "wormhole_b0"
    defect: str | None = None  # None: the era's defects
    block_size: int | None = None
    l1_max_tiles: int | None = None
    fp32_stats: bool = False
    data: str = "copy"
    seed: int | None = None  # --data random: attempt k uses seed + k - 1

    kind = BackendKind.EMULATOR

    def argv(self) -> list[str]:
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

    def to_json(self) -> dict[str, Any]:
        return {
            "backend": self.kind.value,
            "kernel_era": self.kernel_era,
            "arch": self.arch,
            "defect": self.defect,
            "block_size": self.block_size,
            "l1_max_tiles": self.l1_max_tiles,
            "fp32_stats": self.fp32_stats,
            "data": self.data,
            "seed": self.seed,
        }

    @classmethod
    def from_json(cls, r: Reader) -> EmulatorSpec:
        return cls(
            r.str("kernel_era", "2025-12"),
            r.str("arch", "wormhole_b0"),
            r.opt_str("defect"),
            r.opt_int("block_size"),
            r.opt_int("l1_max_tiles"),
            r.bool("fp32_stats", False),
            r.str("data", "copy"),
            r.opt_int("seed"),
        )


@dataclass(frozen=True)
class BinarySpec:
    """A gtest binary already built on this machine."""

    binary: Path

    kind = BackendKind.LOCAL

    def argv(self) -> list[str]:
        return ["--backend", "local", "--binary", str(self.binary)]

    def to_json(self) -> dict[str, Any]:
        return {"backend": self.kind.value, "binary": str(self.binary)}

    @classmethod
    def from_json(cls, r: Reader) -> BinarySpec:
        return cls(Path(r.str("binary")))


@dataclass(frozen=True)
class TtMetalSpec:
    """A tt-metal checkout: built by a profile, tested on this host or in lnrepro's container."""

    checkout: Path
    runner: str = "docker"
    profile: str | None = None  # None: the configuration's default profile
    image: str | None = None  # None: lnrepro's image on the configured base
    mount_set: str = "full"
    env: tuple[tuple[str, str], ...] = ()
    require_device: bool = False
    reset_cmd: tuple[str, ...] | None = None
    watcher_s: int | None = None
    docker_context: str | None = None  # another engine (a card host); None: the default
    devices: tuple[str, ...] | None = None  # only these /dev/tenstorrent/N (bisect --jobs)
    python: str | None = None  # the interpreter of --pytest runs; None: decided by the runner
    prebuilt: Path | None = None  # a build tree to test instead of building (bisect --prebuilt)
    triage: bool = True  # run the checkout's tools/tt-triage.py on a hung attempt before the kill
    dispatch_timeout_s: float | None = None  # TT_METAL_OPERATION_TIMEOUT_SECONDS per attempt

    kind = BackendKind.TT_METAL

    def argv(self) -> list[str]:
        args = ["--tt-metal", str(self.checkout), "--runner", self.runner]
        if self.profile:
            args += ["--profile", self.profile]
        if self.image:
            args += ["--image", self.image]
        if self.mount_set != "full":
            args += ["--mount-set", self.mount_set]
        for k, v in self.env:
            args += ["--env", f"{k}={v}"]
        if self.require_device:
            args.append("--require-device")
        if self.reset_cmd:
            args += ["--reset-cmd", shlex.join(self.reset_cmd)]
        if self.watcher_s:
            args += ["--watcher", str(self.watcher_s)]
        if self.docker_context:
            args += ["--docker-context", self.docker_context]
        for d in self.devices or ():
            args += ["--device", d]
        if self.python:
            args += ["--python", self.python]
        if not self.triage:
            args.append("--no-triage")
        if self.dispatch_timeout_s is not None:
            args += ["--dispatch-timeout", f"{self.dispatch_timeout_s:g}"]
        return args  # prebuilt: chosen per commit by a bisect, never on a command line

    def to_json(self) -> dict[str, Any]:
        return {
            "backend": self.kind.value,
            "checkout": str(self.checkout),
            "runner": self.runner,
            "profile": self.profile,
            "image": self.image,
            "mount_set": self.mount_set,
            "env": dict(self.env),
            "require_device": self.require_device,
            "reset_cmd": list(self.reset_cmd) if self.reset_cmd is not None else None,
            "watcher_s": self.watcher_s,
            "docker_context": self.docker_context,
            "devices": list(self.devices) if self.devices is not None else None,
            "python": self.python,
            "prebuilt": str(self.prebuilt) if self.prebuilt else None,
            "triage": self.triage,
            "dispatch_timeout_s": self.dispatch_timeout_s,
        }

    @classmethod
    def from_json(cls, r: Reader) -> TtMetalSpec:
        reset = r.strs("reset_cmd") if r.has("reset_cmd") else None
        devices = r.strs("devices") if r.has("devices") else None
        return cls(
            Path(r.str("checkout")),
            r.str("runner", "docker"),
            r.opt_str("profile"),
            r.opt_str("image"),
            r.str("mount_set", "full"),
            tuple(r.str_map("env").items()),
            r.bool("require_device", False),
            reset,
            r.opt_int("watcher_s"),
            r.opt_str("docker_context"),
            devices,
            r.opt_str("python"),
            Path(p) if (p := r.opt_str("prebuilt")) else None,
            triage=r.bool("triage", True),
            dispatch_timeout_s=r.opt_float("dispatch_timeout_s"),
        )


BackendSpec = EmulatorSpec | BinarySpec | TtMetalSpec


def backend_from_json(r: Reader) -> BackendSpec:
    kind = r.enum("backend", BackendKind)
    if kind is BackendKind.EMULATOR:
        return EmulatorSpec.from_json(r)
    if kind is BackendKind.LOCAL:
        return BinarySpec.from_json(r)
    return TtMetalSpec.from_json(r)


@dataclass(frozen=True)
class TestSpec:
    """Which tests, how often, for how long: ``--filter``, ``-n``, ``--timeout``, metrics."""

    __test__ = False

    gtest_filter: str = DEFAULT_FILTER
    repeat: int = 1
    timeout_s: float = DEFAULT_TIMEOUT_S
    metric_patterns: tuple[str, ...] = ()
    pytest: tuple[str, ...] = ()  # pytest node ids: run them instead of the gtest binary

    @property
    def selection(self) -> str:
        """What is run, as a person reads it: the gtest filter, or the pytest node ids."""
        return " ".join(self.pytest) if self.pytest else self.gtest_filter

    def argv(self) -> list[str]:
        args = [a for nid in self.pytest for a in ("--pytest", nid)] or [
            "--filter",
            self.gtest_filter,
        ]
        if self.repeat != 1:
            args += ["--repeat", str(self.repeat)]
        if self.timeout_s != DEFAULT_TIMEOUT_S:
            args += ["--timeout", f"{self.timeout_s:g}"]
        for p in self.metric_patterns:
            args += ["--metric-pattern", p]
        return args

    def to_json(self) -> dict[str, Any]:
        return {
            "filter": self.gtest_filter,
            "repeat": self.repeat,
            "timeout_s": self.timeout_s,
            "metric_patterns": list(self.metric_patterns),
            "pytest": list(self.pytest),
        }

    @classmethod
    def from_json(cls, r: Reader) -> TestSpec:
        return cls(
            r.str("filter", DEFAULT_FILTER),
            r.int("repeat", 1),
            r.float("timeout_s", DEFAULT_TIMEOUT_S),
            r.strs("metric_patterns"),
            r.strs("pytest"),
        )


@dataclass(frozen=True)
class RunRequest:
    """``lnrepro run``: build (if there is code to build), then run the tests N times."""

    backend: BackendSpec = field(default_factory=EmulatorSpec)
    tests: TestSpec = field(default_factory=TestSpec)
    record_dir: Path = DEFAULT_RECORD_DIR

    def argv(self) -> list[str]:
        """The command line that repeats this run exactly (the record's ``rerun``)."""
        args = ["lnrepro", "run", *self.backend.argv(), *self.tests.argv()]
        if self.record_dir != DEFAULT_RECORD_DIR:
            args += ["--record-dir", str(self.record_dir)]
        return args

    def to_json(self) -> dict[str, Any]:
        return {
            "backend": self.backend.to_json(),
            "tests": self.tests.to_json(),
            "record_dir": str(self.record_dir),
        }

    @classmethod
    def from_json(cls, r: Reader) -> RunRequest:
        return cls(
            backend_from_json(r.obj("backend")),
            TestSpec.from_json(r.obj("tests")),
            Path(r.str("record_dir", str(DEFAULT_RECORD_DIR))),
        )


# ---------------------------------------------------------------------------------- bisect
class OnCrash(str, Enum):
    MATCH = "match"  # bad only when the buggy endpoint crashed too
    BAD = "bad"
    SKIP = "skip"


class OnHang(str, Enum):
    BAD = "bad"
    SKIP = "skip"


@dataclass(frozen=True)
class Policy:
    """How a bisect reads a run: crashes, hangs, and a metric with its threshold."""

    on_crash: OnCrash = OnCrash.MATCH
    on_hang: OnHang = OnHang.SKIP
    metric: str | None = None
    threshold: float | None = None
    higher_is_better: bool = False  # a PCC: bad when the worst value falls BELOW the threshold
    hang_in: str | None = (
        None  # --hang-in: only a hang whose watcher diagnosis names this is the bug
    )

    def argv(self) -> list[str]:
        args = []
        if self.on_crash is not OnCrash.MATCH:
            args += ["--on-crash", self.on_crash.value]
        if self.on_hang is not OnHang.SKIP:
            args += ["--on-hang", self.on_hang.value]
        if self.hang_in is not None:
            args += ["--hang-in", self.hang_in]
        if self.metric is not None:
            args += ["--metric", self.metric]
        if self.threshold is not None:
            args += ["--threshold", f"{self.threshold:g}"]
        return args

    def to_json(self) -> dict[str, Any]:
        return {
            "on_crash": self.on_crash.value,
            "on_hang": self.on_hang.value,
            "metric": self.metric,
            "threshold": self.threshold,
            "higher_is_better": self.higher_is_better,
            "hang_in": self.hang_in,
        }

    @classmethod
    def from_json(cls, r: Reader) -> Policy:
        return cls(
            r.enum("on_crash", OnCrash, OnCrash.MATCH),
            r.enum("on_hang", OnHang, OnHang.SKIP),
            r.opt_str("metric"),
            r.opt_float("threshold"),
            r.bool("higher_is_better", False),
            r.opt_str("hang_in"),
        )


@dataclass(frozen=True)
class CommandOracleSpec:
    """``--command``: git bisect run's protocol (0 good, 125 skip, 1-127 bad)."""

    argv: tuple[str, ...]
    timeout_s: float = DEFAULT_TIMEOUT_S
    repeat: int = 1

    @property
    def command(self) -> str:
        return shlex.join(self.argv)

    def cli_args(self) -> list[str]:
        args = ["--command", self.command]
        if self.repeat != 1:
            args += ["--repeat", str(self.repeat)]
        if self.timeout_s != DEFAULT_TIMEOUT_S:
            args += ["--timeout", f"{self.timeout_s:g}"]
        return args

    def to_json(self) -> dict[str, Any]:
        return {
            "oracle": "command",
            "argv": list(self.argv),
            "command": self.command,
            "timeout_s": self.timeout_s,
            "repeat": self.repeat,
        }


@dataclass(frozen=True)
class RunOracleSpec:
    """Without ``--command``: ``lnrepro run`` on each commit's worktree (a tt-metal checkout)."""

    backend: TtMetalSpec  # ``checkout`` is the repository; each job tests its own worktree
    tests: TestSpec = field(default_factory=TestSpec)

    def cli_args(self) -> list[str]:
        return [*self.backend.argv()[2:], *self.tests.argv()]  # --tt-metal is --repo's

    def to_json(self) -> dict[str, Any]:
        return {"oracle": "run", "backend": self.backend.to_json(), "tests": self.tests.to_json()}


OracleSpec = CommandOracleSpec | RunOracleSpec


def oracle_from_json(r: Reader) -> OracleSpec:
    kind = r.str("oracle")
    if kind == "command":
        return CommandOracleSpec(
            r.strs("argv"), r.float("timeout_s", DEFAULT_TIMEOUT_S), r.int("repeat", 1)
        )
    if kind == "run":
        b = backend_from_json(r.obj("backend"))
        if not isinstance(b, TtMetalSpec):
            r.fail("should be a tt-metal backend", "backend")
        return RunOracleSpec(b, TestSpec.from_json(r.obj("tests")))
    r.fail(f"is {kind!r}, which is not command or run", "oracle")


@dataclass(frozen=True)
class EndpointRuns:
    """Runs of the test measured at the endpoints before the bisect (``--rates-from``, or found
    in the store): the counts of the Beta prior over the fail rates, in the bug's terms (``bad``:
    the buggy commit's runs). Kept in the request, so ``--resume`` needs no record again."""

    bad_fails: int = 0
    bad_runs: int = 0
    good_fails: int = 0
    good_runs: int = 0
    sources: tuple[str, ...] = ()  # the run records counted
    found: bool = False  # found in the store by the endpoints' commits and the test

    def to_json(self) -> dict[str, Any]:
        return {
            "bad_fails": self.bad_fails,
            "bad_runs": self.bad_runs,
            "good_fails": self.good_fails,
            "good_runs": self.good_runs,
            "sources": list(self.sources),
            "found": self.found,
        }

    @classmethod
    def from_json(cls, r: Reader) -> EndpointRuns:
        return cls(
            r.int("bad_fails"),
            r.int("bad_runs"),
            r.int("good_fails"),
            r.int("good_runs"),
            r.strs("sources"),
            r.bool("found", False),
        )


@dataclass(frozen=True)
class BisectRequest:
    """``lnrepro bisect``: everything a bisect needs, saved with its state (``--resume``)."""

    repo: Path
    good: tuple[str, ...]
    bad: str
    oracle: OracleSpec
    policy: Policy = field(default_factory=Policy)
    confidence: float | None = None  # the Bayesian search, stopping at this posterior
    fail_rates: tuple[float, float] | None = None  # (buggy, clean), when known
    jobs: int = 1
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

    def argv(self) -> list[str]:
        """The command line that starts this bisect again from scratch."""
        args = ["lnrepro", "bisect", "--repo", str(self.repo)]
        for g in self.good:
            args += ["--good", g]
        args += ["--bad", self.bad, *self.oracle.cli_args(), *self.policy.argv()]
        if self.confidence is not None:
            args += ["--confidence", f"{self.confidence:g}"]
        if self.fail_rates is not None:
            args += ["--fail-rates", f"{self.fail_rates[0]:g},{self.fail_rates[1]:g}"]
        for run in self.rates_from:
            args += ["--rates-from", run]
        if self.jobs != 1:
            args += ["--jobs", str(self.jobs)]
        for c in self.contexts:
            args += ["--docker-context", c]
        for d in self.devices:
            args += ["--device", d]
        for p in self.picks:
            args += ["--pick", p]
        for pt in self.patches:
            args += ["--patch", str(pt)]
        for pb in self.prebuilt:
            args += ["--prebuilt", pb]
        flags = (
            (self.find_fix, "--find-fix"),
            (self.first_parent, "--first-parent"),
            (not self.confirm, "--no-confirm"),
        )
        args += [flag for on, flag in flags if on]
        if self.record_dir is not None:
            args += ["--record-dir", str(self.record_dir)]
        if self.paths:
            args += ["--", *self.paths]
        return args

    def to_json(self) -> dict[str, Any]:
        return {
            "repo": str(self.repo),
            "good": list(self.good),
            "bad": self.bad,
            "oracle": self.oracle.to_json(),
            "policy": self.policy.to_json(),
            "confidence": self.confidence,
            "fail_rates": list(self.fail_rates) if self.fail_rates else None,
            "jobs": self.jobs,
            "contexts": list(self.contexts),
            "devices": list(self.devices),
            "picks": list(self.picks),
            "patches": [str(p) for p in self.patches],
            "find_fix": self.find_fix,
            "first_parent": self.first_parent,
            "confirm": self.confirm,
            "paths": list(self.paths),
            "record_dir": str(self.record_dir) if self.record_dir else None,
            "prebuilt": list(self.prebuilt),
            "rates_from": list(self.rates_from),
            "endpoint_runs": self.endpoint_runs.to_json() if self.endpoint_runs else None,
        }

    @classmethod
    def from_json(cls, r: Reader) -> BisectRequest:
        rates = r.list("fail_rates") if r.has("fail_rates") else None
        if rates is not None and len(rates) != 2:
            r.fail("should be two numbers (buggy, clean)", "fail_rates")
        record = r.opt_str("record_dir")
        return cls(
            Path(r.str("repo")),
            r.strs("good"),
            r.str("bad"),
            oracle_from_json(r.obj("oracle")),
            Policy.from_json(r.obj("policy")),
            r.opt_float("confidence"),
            (rates[0].as_float(), rates[1].as_float()) if rates else None,
            r.int("jobs", 1),
            r.strs("contexts"),
            r.strs("devices"),
            r.strs("picks"),
            tuple(Path(p) for p in r.strs("patches")),
            r.bool("find_fix", False),
            r.bool("first_parent", False),
            r.bool("confirm", True),
            r.strs("paths"),
            Path(record) if record else None,
            r.strs("prebuilt"),
            r.strs("rates_from"),
            EndpointRuns.from_json(e) if (e := r.opt_obj("endpoint_runs")) else None,
        )


# ---------------------------------------------------------------------------------- the other commands
# Requests of the commands that read what is saved, judge a machine or study the emulator. A
# ``record_dir`` of None means "not given": the default and the bisects' own place are looked in.


class ReportFormat(str, Enum):
    """``lnrepro report --format``."""

    MD = "md"
    JSON = "json"
    JUNIT = "junit"


class MountSet(str, Enum):
    """Which mounts a container gets (``--mount-set``), as :data:`MOUNT_SETS` names them."""

    FULL = "full"
    TT_METAL = "tt-metal"
    SEED_BROKEN = "seed-broken"


class StudyEra(str, Enum):
    """The kernel eras a tolerance study samples (``tolerance --kernel-era``)."""

    NOV_2025 = "2025-11"
    DEC_2025 = "2025-12"


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
