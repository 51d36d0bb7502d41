"""A bisect request checked completely before anything starts, in two steps: no lock, no
worktree, no state file for a request that is wrong. :func:`check_bisect` owns the request's own
rules and reads nothing; :func:`resolve_bisect` owns what the request names: git is read (refs,
ancestry, never written), the build profile looked up, lnrepro.toml's prebuilt trees and the
endpoints' run records (``--rates-from``) read. It returns a :data:`ResolvedBisect`, the request
made concrete, which the state keeps, so ``--resume`` needs nothing from the new command line.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import msgspec

from lnrepro.bisect.evidence import Sense
from lnrepro.bisect.prebuilt import template
from lnrepro.doors import gitops
from lnrepro.errors import GitError, UsageError
from lnrepro.model.requests import (
    BisectRequest,
    CommandOracleSpec,
    Policy,
    PythonSpec,
    ResolvedBisect,
    RunOracleSpec,
    RunRequest,
    TestSpec,
    TtMetalSpec,
)
from lnrepro.options.table import flag
from lnrepro.run.validate import (
    MAX_REPEAT,
    MAX_TIMEOUT_S,
    check_builds_tt_metal,
    check_dispatch_timeout,
    check_record_dir,
    check_tests,
    check_tt_metal,
    finite,
    within,
)

MAX_JOBS = 64


class Flag:
    """The flags these messages name, as the table of options spells them."""

    good = flag(BisectRequest, "good")
    bad = flag(BisectRequest, "bad")
    find_fix = flag(BisectRequest, "find_fix")
    repo = flag(BisectRequest, "repo")
    prebuilt = flag(BisectRequest, "prebuilt")
    docker_context = flag(BisectRequest, "contexts")
    device = flag(BisectRequest, "devices")
    confidence = flag(BisectRequest, "confidence")
    fail_rates = flag(BisectRequest, "fail_rates")
    rates_from = flag(BisectRequest, "rates_from")
    jobs = flag(BisectRequest, "jobs")
    pick = flag(BisectRequest, "picks")
    patch = flag(BisectRequest, "patches")
    command = flag(CommandOracleSpec, "argv")
    timeout = flag(CommandOracleSpec, "timeout_s")
    repeat = flag(CommandOracleSpec, "repeat")
    metric = flag(Policy, "metric")
    threshold = flag(Policy, "threshold")
    tt_metal = flag(TtMetalSpec, "checkout")
    runner = flag(TtMetalSpec, "runner")
    backend = flag(RunRequest, "backend")
    pytest = flag(TestSpec, "pytest")
    python = flag(PythonSpec, "python")


def check_bisect(req: BisectRequest) -> BisectRequest:
    """``req``'s own rules, reading nothing (no git, file, record or lnrepro.toml), or the
    one-line error that says what to change."""
    if not req.good or not req.bad:
        raise UsageError(f"bisect needs {Flag.good} and {Flag.bad}", "pass both (or --resume)")
    _policy(req)
    _search(req)
    if isinstance(req.oracle, CommandOracleSpec):
        _command(req)
    if req.find_fix and len(req.good) != 1:
        raise UsageError(
            f"{Flag.find_fix} takes one {Flag.good} (the fixed commit)",
            f"pass a single {Flag.good}",
        )
    return req


def resolve_bisect(req: BisectRequest) -> ResolvedBisect:
    """A checked ``req`` (:func:`check_bisect`) made concrete, reading git, the files it names,
    lnrepro.toml and the run records; or the one-line error of what is wrong there."""
    repo, sense = check_repo(req.repo), Sense.of(req)
    if isinstance(req.oracle, RunOracleSpec):  # before any engine or image is looked at
        check_tests(req.oracle.tests)
        if isinstance(req.oracle.backend, TtMetalSpec):
            _buildable(repo, sense.ends(req.good, req.bad)[0], req.oracle)  # the newest end
    oracle = _oracle(req, repo)
    good = tuple(gitops.resolve(repo, g) for g in req.good)
    bad = gitops.resolve(repo, req.bad)
    tip, bottoms = sense.ends(good, bad)
    for b in bottoms:
        if b == tip:
            raise UsageError(
                f"{Flag.good} and {Flag.bad} are the same commit ({b[:12]})", "give two commits"
            )
        if gitops.is_ancestor(repo, tip, b):  # git: the merge base is bad; nothing to search
            raise GitError(
                f"{tip[:12]} is an ancestor of {b[:12]}: the search would start at a bad commit",
                f"the newer commit goes last: swap {Flag.good}/{Flag.bad}, or add {Flag.find_fix} "
                "to find the fix",
            )
    picks = tuple(_pick(repo, p) for p in req.picks)
    patches = tuple(_patch(p) for p in req.patches)
    if not req.prebuilt and isinstance(oracle, RunOracleSpec) and not _python(oracle):
        from lnrepro.run.config import load_config

        # lnrepro.toml's, as the run's profile and image are read (the command line's win); kept
        # in the state, so --resume uses them whatever the directory it is started in
        cfg = load_config(Path.cwd())
        for spec in cfg.prebuilt:
            try:
                template(spec)
            except UsageError as exc:
                raise UsageError(
                    f"{cfg.source}: prebuilt: {exc.message.removeprefix(Flag.prebuilt + ' ')}",
                    exc.fix,
                ) from None
        req = replace(req, prebuilt=cfg.prebuilt)
    if req.prebuilt:
        if isinstance(oracle, CommandOracleSpec) or _python(oracle):
            raise UsageError(
                f"{Flag.prebuilt} build trees are tested by lnrepro's run, not by {Flag.command}",
                f"drop {Flag.command} (lnrepro builds and tests each commit), or {Flag.prebuilt}",
            )
        from lnrepro.doors.container import context_host, is_local_engine

        named = {
            c
            for c in (*req.contexts, getattr(oracle.backend, "docker_context", None))
            if c not in (None, "default")
        }
        remote = sorted(c for c in named if c and not is_local_engine(context_host(c)))
        if remote:
            raise UsageError(
                f"{Flag.prebuilt} dir: trees are this machine's directories, which the "
                f"engine of {Flag.docker_context} {remote[0]} cannot see",
                f"drop that {Flag.docker_context} (run on this machine's engine), or the "
                f"prebuilt trees ({Flag.prebuilt}, or prebuilt in lnrepro.toml)",
            )
        for spec in req.prebuilt:
            template(spec)
    record_dir = check_record_dir(req.record_dir) if req.record_dir is not None else None
    out = replace(
        req,
        repo=repo,
        good=good,
        bad=bad,
        oracle=oracle,
        picks=picks,
        patches=patches,
        record_dir=record_dir,
    )
    from lnrepro.bisect.oracle import oracles_for
    from lnrepro.bisect.rates import endpoint_runs

    # the endpoints' measured runs: --rates-from, or found in the store
    rates_from, counted = endpoint_runs(out)
    resolved = ResolvedBisect(replace(out, rates_from=rates_from, endpoint_runs=counted))
    oracles_for(resolved, Path("/"))  # jobs, devices and contexts: made once here, as they will be
    return resolved


def check_repo(path: Path) -> Path:
    """``--repo`` made absolute, or what is wrong with the path (before git is asked anything)."""
    repo = path.expanduser().absolute()
    if not repo.exists():
        raise GitError(
            f"{Flag.repo} {path} does not exist",
            f"pass the directory of a git clone, e.g. {Flag.repo} ~/tt-metal",
        )
    if not repo.is_dir():
        raise GitError(
            f"{Flag.repo} {path} is a file, not a directory",
            f"pass the directory of a git clone, e.g. {Flag.repo} ~/tt-metal",
        )
    if not gitops.is_work_tree(repo) and not (repo / "HEAD").is_file():
        if path == Path():  # --repo not given: the current directory
            raise GitError(
                f"the current directory {repo} is not in a git repository",
                f"run lnrepro bisect inside a git clone, or pass {Flag.repo} DIR",
            )
        raise GitError(
            f"{Flag.repo} {path} is not a git repository (no .git in it or above it)",
            "pass the directory of a git clone (where `git status` works)",
        )
    gitops.common_dir(repo)  # what git itself says (e.g. dubious ownership)
    return repo


def _buildable(repo: Path, ref: str, oracle: RunOracleSpec) -> None:
    """Without --command, bisect builds tt-metal at ``ref``: the check run makes of a directory,
    asked of that commit."""
    from lnrepro.model.checkout import BUILD_METAL

    tip = gitops.resolve(repo, ref)

    def has_build_metal() -> bool:
        try:
            gitops.git(repo, "cat-file", "-e", f"{tip}:{BUILD_METAL}")
        except GitError:
            return False
        return True

    assert isinstance(oracle.backend, TtMetalSpec)
    check_builds_tt_metal(
        oracle.backend.profile,
        has_build_metal,
        f"{repo} at {tip[:12]}",
        f"without {Flag.command} bisect builds tt-metal and runs its gtests",
        f"judge each commit with {Flag.command} CMD (exit 0 good, 1 bad, 125 skip), "
        f"or bisect a tt-metal clone ({Flag.repo} DIR, or {Flag.tt_metal} DIR)",
    )


def _oracle(req: BisectRequest, repo: Path) -> CommandOracleSpec | RunOracleSpec:
    o = req.oracle
    if isinstance(o, CommandOracleSpec):
        return o
    check_tests(o.tests)
    if isinstance(o.backend, PythonSpec):
        from lnrepro.run.backends.python import project_python
        from lnrepro.run.python_project import check_project

        if not o.tests.pytest:
            raise UsageError(
                f"{Flag.backend} python bisects a Python project's {Flag.pytest} tests",
                f"name the test with {Flag.pytest} NODEID",
            )
        py = msgspec.structs.replace(o.backend, project=repo)
        check_project(py, (), collect=False)  # its Python; the node ids are each commit's
        if py.image is None:  # with --image: the image's own python3, never this host's
            py = msgspec.structs.replace(py, python=project_python(repo, py.python))
        return msgspec.structs.replace(o, backend=py)
    spec = check_tt_metal(msgspec.structs.replace(o.backend, checkout=repo))
    check_dispatch_timeout(spec, o.tests.timeout_s)
    if (req.contexts or req.devices) and spec.runner != "docker":
        raise UsageError(
            f"{Flag.docker_context} and {Flag.device} need {Flag.runner} docker", "drop them"
        )
    return msgspec.structs.replace(o, backend=spec)


def _python(oracle: CommandOracleSpec | RunOracleSpec) -> bool:
    return isinstance(oracle, RunOracleSpec) and isinstance(oracle.backend, PythonSpec)


def _command(req: BisectRequest) -> None:
    o = req.oracle
    assert isinstance(o, CommandOracleSpec)
    if not o.argv or not o.argv[0].strip():
        raise UsageError(f"{Flag.command} is empty", "give the command to run at each commit")
    finite(o.timeout_s, Flag.timeout, 0.1, MAX_TIMEOUT_S, " seconds")
    within(o.repeat, Flag.repeat, 1, MAX_REPEAT)
    if req.contexts or req.devices:
        raise UsageError(
            f"{Flag.docker_context} and {Flag.device} need the run oracle (no {Flag.command})",
            f"drop them, or drop {Flag.command}",
        )


def _policy(req: BisectRequest) -> None:
    p = req.policy
    example = f"e.g. {Flag.metric} max_diff {Flag.threshold} 1.0"
    if p.metric is not None and p.threshold is None:
        raise UsageError(f"{Flag.metric} needs {Flag.threshold}", example)
    if p.threshold is not None:
        if p.metric is None:
            raise UsageError(f"{Flag.threshold} needs {Flag.metric}", example)
        finite(p.threshold, Flag.threshold, -1e300, 1e300)
    if p.metric is not None and isinstance(req.oracle, CommandOracleSpec):
        raise UsageError(
            f"{Flag.metric} judges the tests' output, not a {Flag.command}'s exit",
            f"drop {Flag.metric}, or drop {Flag.command}",
        )


def _search(req: BisectRequest) -> None:
    if req.confidence is not None and not (
        math.isfinite(req.confidence) and 0.5 <= req.confidence <= 0.9999
    ):
        raise UsageError(
            f"{Flag.confidence} {req.confidence:g} is not from 0.5 to 0.9999",
            f"e.g. {Flag.confidence} 0.95",
        )
    if req.fail_rates is not None:
        if req.confidence is None:
            raise UsageError(
                f"{Flag.fail_rates} only applies with {Flag.confidence}",
                f"add {Flag.confidence} 0.95",
            )
        bad_rate, good_rate = req.fail_rates
        if not (
            math.isfinite(bad_rate) and math.isfinite(good_rate) and 0 <= good_rate < bad_rate <= 1
        ):
            raise UsageError(
                f"{Flag.fail_rates} {bad_rate:g},{good_rate:g}: need 0 <= GOOD < BAD <= 1",
                "the buggy commits' rate first, e.g. 0.7,0.05",
            )
    if req.rates_from and req.confidence is None:
        raise UsageError(
            f"{Flag.rates_from} only applies with {Flag.confidence}", f"add {Flag.confidence} 0.95"
        )
    if req.rates_from and req.fail_rates is not None:
        raise UsageError(
            f"{Flag.rates_from} and {Flag.fail_rates} both give the fail rates",
            f"use one: {Flag.rates_from} keeps learning from the runs, {Flag.fail_rates} does not",
        )
    within(req.jobs, Flag.jobs, 1, MAX_JOBS)
    if req.devices and len(req.devices) < req.jobs:
        raise UsageError(
            f"{Flag.jobs} {req.jobs} needs {req.jobs} {Flag.device} options, got "
            f"{len(req.devices)}",
            f"give one device per job, or fewer {Flag.jobs}",
        )


def _pick(repo: Path, ref: str) -> str:
    try:
        return gitops.resolve(repo, ref)
    except GitError:
        raise GitError(
            f"{Flag.pick} {ref!r} is not a commit in {repo}",
            "fetch the branch that has it (git fetch origin BRANCH), then retry",
        ) from None


def _patch(path: Path) -> Path:
    p = path.expanduser().absolute()
    if not p.is_file():
        raise UsageError(
            f"{Flag.patch} {path} does not exist"
            if not p.exists()
            else f"{Flag.patch} {path} is not a file",
            "pass the path of a patch file (git format-patch or git diff output)",
        )
    try:
        with p.open("rb") as fh:
            fh.read(1)
    except OSError as exc:
        raise UsageError(
            f"{Flag.patch} {path} cannot be read: {exc.strerror}", "check its permissions"
        ) from None
    return p
