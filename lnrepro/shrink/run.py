"""A validated shrink request carried out: the evaluator and control chosen, the search run,
the record made (and the test source written when asked)."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from lnrepro.errors import Terminated
from lnrepro.model.case import Judged, OpKind, Status
from lnrepro.model.requests import TtMetalSpec
from lnrepro.model.shrink import (
    STATE_FILE,
    ShrinkEvents,
    ShrinkRecord,
    ShrinkRequest,
    ShrinkState,
    StartMeasure,
)
from lnrepro.shrink.checkout import CheckoutProbe
from lnrepro.shrink.core import Control, Evaluator, Search
from lnrepro.shrink.pytest_probe import PytestProbe
from lnrepro.shrink.validate import start_case


def evaluator_for(req: ShrinkRequest, events: ShrinkEvents) -> tuple[Evaluator, Control, str]:
    """The evaluator, the control and what to know about them (a probe left in a checkout)."""
    from lnrepro.shrink.emulator import EmulatorEvaluator, ModelControl

    if req.command is not None:
        from lnrepro.shrink.command import CommandEvaluator

        return CommandEvaluator(req.command, req.timeout_s), ModelControl(req.model), ""
    if isinstance(req.backend, TtMetalSpec):
        from lnrepro.doors.fsio import new_record_dir
        from lnrepro.run.backends.factory import make_backend
        from lnrepro.shrink import probe, pytest_probe
        from lnrepro.shrink.checkout import patch_and_build
        from lnrepro.shrink.emit import Flavour

        checkout, flavour = req.backend.checkout, Flavour(req.source_flavour)
        backend = make_backend(req.backend)
        record_dir = new_record_dir(req.record_dir, "shrink")
        ev: Evaluator
        control: Control
        if req.pytest:
            events.phase(f"patching lnrepro's pytest probe onto {checkout}")
            ev = PytestProbe(backend, record_dir, req.timeout_s, checkout)
            control = pytest_probe.LayerNormControl()
            probe_file = (pytest_probe.PATH, pytest_probe.probe_source(flavour))
            tests, building = "ttnn's tests", str(checkout)
        else:
            events.phase(f"building {checkout} with lnrepro's probe")
            model_why = EmulatorEvaluator(req.model).why
            ev = CheckoutProbe(backend, record_dir, req.timeout_s, model_why=model_why)
            control = ModelControl(req.model)
            probe_file = (probe.PATH, probe.probe_source(flavour))
            tests, building = "tt-train's tests", f"{checkout} with lnrepro's probe"
        path = patch_and_build(
            backend, checkout, probe_file, record_dir, events, tests=tests, building=building
        )
        return ev, control, f"the probe is left at {path} for the rerun lines"
    emu = EmulatorEvaluator(req.model)
    return emu, emu, ""


class Persist(ShrinkEvents):
    """Passes progress on, and saves the state after every candidate (atomically), so that a
    long shrink (a checkout, a --command) can be resumed where it stopped."""

    def __init__(self, inner: ShrinkEvents, state: ShrinkState, path: Path | None) -> None:
        self.inner, self.state, self.path = inner, state, path

    def save(self) -> None:
        from lnrepro.doors.fsio import capture_json, new_record_dir, write_text
        from lnrepro.model.jsonio import dumps

        if self.path is None:  # made with the first thing to keep: no empty directory
            self.path = new_record_dir(self.state.request.record_dir, "shrink") / STATE_FILE
        text = dumps(self.state.to_json())
        write_text(self.path, text)
        capture_json(text)

    def started(self, start: StartMeasure, repeats: int) -> None:
        self.state.start = (start.runs, start.passes)
        self.save()
        self.inner.started(start, repeats)

    def phase(self, text: str) -> None:
        self.inner.phase(text)

    def judged(self, j: Judged, candidates: int, evaluations: int, best: Judged | None) -> None:
        self.state.judged.append(j)
        self.state.evaluations = evaluations
        self.save()
        self.inner.judged(j, candidates, evaluations, best)

    def interrupted(self, best: Judged | None, rerun: tuple[str, ...], saved: Path | None) -> None:
        self.inner.interrupted(best, rerun, saved)


def shrink(
    req: ShrinkRequest,
    events: ShrinkEvents | None = None,
    resumed: ShrinkState | None = None,
    state_path: Path | None = None,
) -> ShrinkRecord:
    """``req`` carried out; ``resumed``: a saved state whose judgments are taken as they are."""
    t0 = time.monotonic()
    events = events or ShrinkEvents()
    start = start_case(req)  # before any build: a test that is not modelled fails here
    evaluator, control, aside = evaluator_for(req, events)
    persist = None
    if not evaluator.deterministic:  # a checkout or a command: each run costs; keep what is learned
        state = resumed or ShrinkState(req)
        state.request = req
        if state_path is None and isinstance(evaluator, (CheckoutProbe, PytestProbe)):
            state_path = evaluator.record_dir / STATE_FILE  # beside the probe's build and runs
        events = persist = Persist(events, state, state_path)
    search = Search(
        start,
        evaluator,
        control,
        confidence=req.confidence,
        start_runs=req.start_runs,
        budget=req.budget,
        seed=req.seed,
        events=events,
        known_start=req.known_start,
    )
    if resumed is not None:
        search.cache = {j.case: j for j in resumed.judged}
        search.evaluations = resumed.evaluations
    try:
        result = search.run()
    except (KeyboardInterrupt, Terminated):
        # what the search knows is not thrown away: the best case (and where the state is)
        best = search.best
        saved = persist.path.parent if persist is not None and persist.path is not None else None
        events.interrupted(best, tuple(evaluator.rerun(best.case)) if best else (), saved)
        raise
    assert search.measured is not None
    inadmissible = [j for j in search.cache.values() if j.status is Status.INADMISSIBLE]
    rec = ShrinkRecord(
        req,
        evaluator.name,
        search.measured,
        search.repeats,
        result,
        tuple(evaluator.rerun(result.case)) if result else (),
        search.smaller,
        search.evaluations,
        search.control_checks,
        len(search.cache),
        inadmissible,
        search.budget_exhausted,
        time.monotonic() - t0,
        lower_bounds=list(search.lower_bounds),
    )
    saving = ""
    if persist is not None and persist.path is not None:
        saving = f"saved in {persist.path.parent} (lnrepro shrink --resume {persist.path.parent})"
    rec.note = "; ".join(n for n in (note(rec), aside, saving) if n)
    if result is not None and req.source is not None:
        from lnrepro.shrink.emit import write_source

        smaller = neighbours_text(rec)
        if result.case.op is OpKind.TTNN_LAYER_NORM:
            from lnrepro.shrink import emit_pytest

            rec.source = emit_pytest.write_source(req.source, result.case, req, smaller)
        else:
            rec.source = write_source(req.source, result.case, req, smaller)
    return rec


def neighbours_text(rec: ShrinkRecord) -> str:
    """What the one-step-smaller cases did, for the emitted file's header: only what is true
    (no axis may have a smaller step; a neighbour may have been skipped or flaky)."""
    passes = [n.axis.value for n in rec.smaller if n.judged and n.judged.status is Status.PASSES]
    other = [
        f"{n.axis.value} {n.judged.status.value}"
        for n in rec.smaller
        if n.judged and n.judged.status is not Status.PASSES
    ]
    bounds = [a.value for a in rec.lower_bounds]
    if not passes and not other:
        return f"every axis ({', '.join(bounds)}) is at its lower bound" if bounds else ""
    said = []
    if passes:
        said.append(f"one step smaller on {', '.join(passes)} passes")
    if other:
        said.append(f"one step smaller: {', '.join(other)}")
    if bounds:
        said.append(f"{', '.join(bounds)} at {'its' if len(bounds) == 1 else 'their'} lower bound")
    return "; ".join(said)


def note(rec: ShrinkRecord) -> str:
    """What a person must know about the answer, in one sentence."""
    if rec.result is None:
        tried = f"{rec.candidates} cases ({rec.evaluations} runs)"
        extra = (
            (
                f"; {len(rec.inadmissible)} failed on the correct kernel's model too (the "
                "tolerance asks more than bf16 gives there), not counted"
            )
            if rec.inadmissible
            else ""
        )
        # the record's found (and every view's heading) says that nothing fails: not again here
        if rec.budget_exhausted:
            return f"the budget ran out after {tried}{extra}"
        return f"every case tried passes or is not deterministic: {tried}{extra}"
    if rec.budget_exhausted:
        return "the budget ran out: the case fails every time but may not be the smallest"
    return ""


def load_state(where: Path) -> tuple[ShrinkState, Path]:
    """A saved shrink's state: ``where`` is its directory or its state file."""
    from lnrepro.errors import InputError
    from lnrepro.model.jsonio import load

    path = where / STATE_FILE if where.is_dir() else where
    if not path.is_file():
        raise InputError(
            f"no saved shrink at {where}",
            f"give the directory a shrink with --tt-metal or --command wrote ({STATE_FILE} in it)",
        )
    return ShrinkState.from_json(load(path)), path


def resume(
    where: Path, events: ShrinkEvents | None = None, budget: int | None = None
) -> ShrinkRecord:
    """``lnrepro shrink --resume DIR``: the saved request, its judgments replayed, the rest run."""
    from lnrepro.shrink.validate import validate_shrink

    state, path = load_state(where.expanduser().absolute())
    req = replace(
        state.request,
        known_start=state.start or state.request.known_start,
        budget=budget or state.request.budget,
    )
    req = validate_shrink(replace(req, run=None))  # the run's choices are in the request already
    return shrink(req, events, state, path)
