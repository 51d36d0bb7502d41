"""A shrink request checked completely before anything runs, and its start case."""

from __future__ import annotations

import math
from dataclasses import replace

import msgspec

from lnrepro.errors import UsageError
from lnrepro.model.case import Case, DataKind, DataSpec, Shape, Tolerance
from lnrepro.model.requests import BackendSpec, BinarySpec, EmulatorSpec, PythonSpec, TtMetalSpec
from lnrepro.model.shrink import ShrinkRequest
from lnrepro.options import shrink as shrink_options
from lnrepro.options.table import flag
from lnrepro.run.validate import (
    MAX_SEED,
    MAX_TIMEOUT_S,
    check_dispatch_timeout,
    check_emulator,
    check_record_dir,
    check_tt_metal,
    finite,
    within,
)

MAX_START_RUNS = 1000
MAX_BUDGET = 100_000


def _own(field: str) -> str:
    """The flag of :class:`ShrinkRequest`'s own ``field`` (shrink's table of options)."""
    return next(o.flag for o in shrink_options.OPTS if o.of == "ShrinkRequest" and o.field == field)


class Flag:
    """The flags these messages name, as the tables of options spell them."""

    test = _own("test")
    run = _own("run")
    pytest = _own("pytest")
    command = _own("command")
    timeout = _own("timeout_s")
    seed = _own("seed")
    confidence = _own("confidence")
    start_runs = _own("start_runs")
    budget = _own("budget")
    source = _own("source")
    source_for = _own("source_flavour")
    tt_metal = flag(TtMetalSpec, "checkout")
    data = flag(EmulatorSpec, "data")


def resolve_test(name: str) -> str:
    """The full name of the one modelled test ``name`` means (full or short name, or a pattern
    that matches exactly one)."""
    from lnrepro.emulator.catalogue import CASES

    hits = [c.full_name for c in CASES if c.matches(name)]
    if len(hits) == 1:
        return hits[0]
    names = ", ".join(c.name for c in CASES)
    if not hits:
        raise UsageError(
            f"{Flag.test} {name!r} is not a test lnrepro models", f"give one of {names}"
        )
    raise UsageError(
        f"{Flag.test} {name!r} matches {len(hits)} tests",
        "give one test: " + ", ".join(h.split(".", 1)[1] for h in hits),
    )


def validate_shrink(req: ShrinkRequest) -> ShrinkRequest:
    """``req`` checked and made concrete (the full test name, absolute paths), or the one-line
    error that says what to change."""
    req = replace(req, record_dir=check_record_dir(req.record_dir))
    if req.pytest:
        return validate_pytest(req)
    if req.run is not None:
        req = from_run(req)
    elif not req.test:
        raise UsageError(
            "shrink needs a test to start from", f"pass {Flag.test} NAME or {Flag.run} ID"
        )
    backend = given = probe_backend(req.backend)  # also an API caller's request, typed or not
    if isinstance(given, TtMetalSpec):
        if req.command is not None:
            raise UsageError(
                f"{Flag.command} and {Flag.tt_metal} do not go together",
                "give one evaluator: the checkout's probe, or the command",
            )
        backend = check_tt_metal(given)
        check_dispatch_timeout(backend, req.timeout_s)
    else:
        if given.data != "copy":
            raise UsageError(
                f"{Flag.data} does not apply to shrink: it chooses the data",
                f"drop {Flag.data} ({Flag.seed} seeds its random data)",
            )
        backend = check_emulator(msgspec.structs.replace(given, seed=None, data="copy"))
    if req.command is not None:
        if not req.command:
            raise UsageError(f"{Flag.command} is empty", "give the command that tests a case")
        finite(req.timeout_s, Flag.timeout, 0.1, MAX_TIMEOUT_S, " seconds")
    req = validate_search(req)
    return replace(req, test=resolve_test(req.test), backend=backend)


def probe_backend(backend: BackendSpec) -> EmulatorSpec | TtMetalSpec:
    """``backend``, if shrink has a probe for it (the emulator's, or one patched onto a checkout)."""
    if isinstance(backend, BinarySpec | PythonSpec):
        raise UsageError(
            "shrink cannot test cases with a prebuilt binary or a Python project: it has no probe",
            f"pass {Flag.tt_metal} DIR (shrink patches its probe on and builds once), "
            f"or test cases with {Flag.command}",
        )
    return backend


def validate_pytest(req: ShrinkRequest) -> ShrinkRequest:
    """A shrink of a ttnn op's pytest: a checkout (its probe is a test file patched onto it), the
    node id checked as ``run --pytest`` checks it, and the search's own options."""
    from lnrepro.pytests.argv import node_id_problem

    if req.test or req.run is not None or req.command is not None:
        raise UsageError(
            f"{Flag.pytest} starts on its own",
            f"drop {Flag.test}, {Flag.run} and {Flag.command} with {Flag.pytest}",
        )
    if not isinstance(req.backend, TtMetalSpec):
        raise UsageError(
            f"{Flag.pytest} needs a tt-metal checkout",
            f"pass {Flag.tt_metal} DIR (the probe is patched on)",
        )
    problem = node_id_problem(req.pytest or "")
    if problem:
        raise UsageError(problem, "pass a node id as pytest --collect-only -q prints it")
    checked = validate_search(replace(req, test="-"))
    backend = check_tt_metal(req.backend)
    check_dispatch_timeout(backend, req.timeout_s)
    return replace(checked, test="", backend=backend)


def validate_search(req: ShrinkRequest) -> ShrinkRequest:
    """The search's options (confidence, runs, budget, seed, source) checked."""
    if not 0.5 <= req.confidence <= 0.999999 or not math.isfinite(req.confidence):
        raise UsageError(
            f"{Flag.confidence} {req.confidence:g} is not from 0.5 to 0.999999",
            f"e.g. {Flag.confidence} 0.95",
        )
    within(req.start_runs, Flag.start_runs, 1, MAX_START_RUNS)
    within(req.budget, Flag.budget, 1, MAX_BUDGET, "give a count of evaluations in range")
    if req.known_start is None and req.budget <= req.start_runs:
        raise UsageError(
            f"{Flag.budget} {req.budget} leaves no run after the start's {req.start_runs}",
            f"give {Flag.budget} more than {Flag.start_runs} ({req.start_runs})",
        )
    within(req.seed, Flag.seed, 0, MAX_SEED, "give a seed in range")
    if req.source_flavour not in ("tt-metal", "lookalike"):
        raise UsageError(
            f"{Flag.source_for} {req.source_flavour!r} is not tt-metal or lookalike", "choose one"
        )
    source = req.source
    if source is not None:
        source = source.expanduser().absolute()
        if not source.parent.is_dir():  # as for -o: a folder is never made for a file
            raise UsageError(
                f"{Flag.source} {req.source}: the directory {source.parent} does not exist",
                f"create it (mkdir -p {source.parent}), or write elsewhere",
            )
        check_record_dir(source.parent, Flag.source)
        if source.is_dir():
            raise UsageError(
                f"{Flag.source} {source} is a directory",
                f"give the file to write, e.g. {Flag.source} shrunk_test.cpp",
            )
    return replace(req, source=source)


def from_run(req: ShrinkRequest) -> ShrinkRequest:
    """The request made concrete from a run record: its backend, the test (``req.test``, else its
    first failing test lnrepro models, else its first such test) and that test's pass rate."""
    from lnrepro.doors.store import bases_for, load_run
    from lnrepro.emulator.catalogue import BY_NAME
    from lnrepro.model.requests import DEFAULT_RECORD_DIR

    assert req.run is not None
    bases = bases_for(req.record_dir, req.record_dir != DEFAULT_RECORD_DIR.absolute())
    rec = load_run(bases, req.run, "shrink starts from a run of the LayerNorm backward tests")
    tests = [t for t in rec.tests if t.name in BY_NAME]
    if req.test:
        name = resolve_test(req.test)
        tests = [t for t in tests if t.name == name]
        if not tests:
            raise UsageError(
                f"run {rec.id} did not run {name}",
                f"give {Flag.test} one of the run's tests, or drop {Flag.test}",
            )
    if not tests:
        raise UsageError(
            f"run {rec.id} ran no test lnrepro models", f"start from {Flag.test} NAME instead"
        )
    t = next((t for t in tests if t.verdict.failing), tests[0])
    backend = probe_backend(rec.request.backend)
    if isinstance(backend, EmulatorSpec):
        backend = msgspec.structs.replace(backend, data="copy", seed=None)
    return replace(req, test=t.name, backend=backend, known_start=(t.runs, t.passed))


def start_case(req: ShrinkRequest) -> Case:
    """The test as written: its shape, its data (its constants, or the tests' random
    distributions) and its tolerances at the request's kernel era."""
    from lnrepro.emulator.catalogue import BY_NAME, tolerances
    from lnrepro.emulator.defects import Era

    if req.pytest:
        from lnrepro.shrink.pytest_probe import start_case as pytest_start

        assert isinstance(req.backend, TtMetalSpec)
        return pytest_start(req.backend.checkout, req.pytest, req.seed)
    c = BY_NAME[req.test]
    tol = tuple(
        (t, Tolerance(r, a)) for t, (r, a, _) in tolerances(c, Era(req.model.kernel_era)).items()
    )
    if c.constants is None:
        data = DataSpec(DataKind.RANDOM, "uniform", seed=req.seed)
    else:
        dy, gamma, x = c.constants
        variant = "bugrepro" if (dy, gamma, x) == (1.0, 1.0, 0.5) else "different-values"
        data = DataSpec(DataKind.CONSTANT, variant, dy, gamma, x)
    return Case(Shape(c.batch, c.seq, c.heads, c.features), data, tol, c.full_name)
