"""A validated shrink request carried out: the evaluator and control chosen, the search run,
the record made (and the test source written when asked)."""

from __future__ import annotations

import time

from lnrepro.model.requests import TtMetalSpec
from lnrepro.model.shrink import ShrinkEvents, ShrinkRecord, ShrinkRequest, Status
from lnrepro.shrink.core import Control, Evaluator, Search
from lnrepro.shrink.validate import start_case


def evaluator_for(req: ShrinkRequest, events: ShrinkEvents) -> tuple[Evaluator, Control, str]:
    """The evaluator, the control and what to know about them (a probe left in a checkout)."""
    from lnrepro.shrink.emulator import EmulatorEvaluator, ModelControl

    if req.command is not None:
        from lnrepro.shrink.command import CommandEvaluator

        return CommandEvaluator(req.command, req.timeout_s), ModelControl(req.model), ""
    if isinstance(req.backend, TtMetalSpec):
        from lnrepro.doors.fsio import new_record_dir
        from lnrepro.model.events import Events
        from lnrepro.run.backends.factory import make_backend
        from lnrepro.shrink.checkout import CheckoutProbe, patch_and_build
        from lnrepro.shrink.emit import Flavour

        backend = make_backend(req.backend)
        record_dir = new_record_dir(req.record_dir, "shrink")
        events.phase(f"building {req.backend.checkout} with lnrepro's probe")
        path = patch_and_build(backend, req.backend.checkout, Flavour(req.source_flavour),
                               record_dir, Events())  # fmt: skip
        ev = CheckoutProbe(backend, record_dir, req.timeout_s,
                           model_why=EmulatorEvaluator(req.model).why)  # fmt: skip
        return ev, ModelControl(req.model), f"the probe is left at {path} for the rerun lines"
    emu = EmulatorEvaluator(req.model)
    return emu, emu, ""


def shrink(req: ShrinkRequest, events: ShrinkEvents | None = None) -> ShrinkRecord:
    t0 = time.monotonic()
    events = events or ShrinkEvents()
    start = start_case(req)  # before any build: a test that is not modelled fails here
    evaluator, control, aside = evaluator_for(req, events)
    search = Search(start, evaluator, control, confidence=req.confidence,
                    start_runs=req.start_runs, budget=req.budget, seed=req.seed,
                    events=events, known_start=req.known_start)  # fmt: skip
    result = search.run()
    assert search.measured is not None
    inadmissible = [j for j in search.cache.values() if j.status is Status.INADMISSIBLE]
    rec = ShrinkRecord(
        req, evaluator.name, search.measured, search.repeats, result,
        tuple(evaluator.rerun(result.case)) if result else (), search.smaller,
        search.evaluations, search.control_checks, len(search.cache), inadmissible,
        search.budget_exhausted, time.monotonic() - t0, None, "",
    )  # fmt: skip
    rec.lower_bounds = list(search.lower_bounds)
    rec.note = "; ".join(n for n in (note(rec), aside) if n)
    if result is not None and req.source is not None:
        from lnrepro.shrink.emit import write_source

        rec.source = write_source(req.source, result.case, req)
    return rec


def note(rec: ShrinkRecord) -> str:
    """What a person must know about the answer, in one sentence."""
    if rec.result is None:
        tried = f"{rec.candidates} cases ({rec.evaluations} runs)"
        extra = (f"; {len(rec.inadmissible)} failed on the correct kernel's model too (the "
                 "tolerance asks more than bf16 gives there), not counted") if rec.inadmissible else ""  # fmt: skip
        if rec.budget_exhausted:
            return f"the budget ran out after {tried} with nothing failing{extra}"
        return f"nothing fails: every case tried passes or is not deterministic, {tried}{extra}"
    if rec.budget_exhausted:
        return "the budget ran out: the case fails every time but may not be the smallest"
    return ""
