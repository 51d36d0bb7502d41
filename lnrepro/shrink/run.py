"""A validated shrink request carried out: the evaluator and control chosen, the search run,
the record made (and the test source written when asked)."""

from __future__ import annotations

import time

from lnrepro.model.shrink import ShrinkEvents, ShrinkRecord, ShrinkRequest, Status
from lnrepro.shrink.core import Control, Evaluator, Search
from lnrepro.shrink.validate import start_case


def evaluator_for(req: ShrinkRequest) -> tuple[Evaluator, Control]:
    from lnrepro.shrink.emulator import EmulatorEvaluator, ModelControl

    if req.command is not None:
        from lnrepro.shrink.command import CommandEvaluator

        return CommandEvaluator(req.command, req.timeout_s), ModelControl(req.emulator)
    ev = EmulatorEvaluator(req.emulator)
    return ev, ev


def shrink(req: ShrinkRequest, events: ShrinkEvents | None = None) -> ShrinkRecord:
    t0 = time.monotonic()
    evaluator, control = evaluator_for(req)
    search = Search(start_case(req), evaluator, control, confidence=req.confidence,
                    start_runs=req.start_runs, budget=req.budget, seed=req.seed,
                    events=events or ShrinkEvents())  # fmt: skip
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
    rec.note = note(rec)
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
