"""What ``lnrepro explain`` reads (a saved run, a gtest console log, a hang text alone) and
what it finds, as typed records; :func:`lnrepro.api.explain` fits the models to them.

``explain --json`` on a run or gtest log writes an :class:`ExplainDoc`, defined once (issue 39):
its JSON and docs/schemas/explain.json are derived from the types by :mod:`lnrepro.model.codec`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Literal

from lnrepro.hang.model import Diagnosis
from lnrepro.model.jsonio import JSON
from lnrepro.model.requests import Count
from lnrepro.studies.model_fit import ExplainMeta, ModelFit, ranking_scope, tie_note

if TYPE_CHECKING:
    from lnrepro.hang.door import HangReading
    from lnrepro.studies.model_fit import Observed

# /2: a run's hang diagnoses ("hangs"); later, additively: the notes the console shows ("scope",
# "tie", "undiagnosed") and each model's "tied"
EXPLAIN_SCHEMA: Literal["lnrepro.explain/2"] = "lnrepro.explain/2"
# every kind of input explain reads, for the fix of an error about one
EXPLAIN_READS = (
    "pass a run id (`lnrepro runs` lists them) or `last`, a gtest console log, a watcher log "
    "(generated/watcher/watcher.log) or tt-triage output"
)


@dataclass(frozen=True, kw_only=True)
class HangText:
    """A watcher log, tt-triage output or a summary of one: its diagnosis, nothing to fit."""

    path: Path
    reading: HangReading

    def to_json(self) -> JSON:
        return self.reading.to_json()


@dataclass(frozen=True, kw_only=True)
class HangAt:
    """A hang diagnosis and where it was found (a run's attempt, a log)."""

    where: str
    diagnosis: Diagnosis


@dataclass(frozen=True, kw_only=True)
class ExplainDoc:
    """``lnrepro explain --json`` on a run or a gtest log (``lnrepro.explain/2``): every model's
    fit, best first, the hangs it kept, and the notes the console shows beside them."""

    schema: Literal["lnrepro.explain/2"] = EXPLAIN_SCHEMA
    source: str  # the run's id, or the log's path
    seconds: float
    models: tuple[ModelFit, ...]
    computed: Count  # distinct emulator runs
    tests: tuple[str, ...]  # the tests scored
    skipped_tests: tuple[str, ...]  # observed, but not modelled by the emulator
    hangs: tuple[HangAt, ...]
    scope: str | None = None  # what the ranking leaves out (tests that hung, crashed, were cut)
    tie: str | None = None  # several models fit best alike: which, and what would tell them apart
    undiagnosed: str | None = None  # a run's hang that kept nothing to place it, and how to


@dataclass(frozen=True, kw_only=True)
class Explanation:
    """What a run or a gtest log showed, and every candidate model's fit to it (best first)."""

    source: str  # the run's id, or the log's path
    observed: list[Observed]
    hangs: list[tuple[str, Diagnosis]]  # (where, diagnosis) for each hang that kept one
    left_out: list[tuple[str, str]]  # (test, verdict): tests that hung, crashed or were cut off
    fits: list[ModelFit] = field(default_factory=list)  # after api.explain
    meta: ExplainMeta = field(default_factory=ExplainMeta)
    undiagnosed: str | None = None  # a run's hang that kept nothing to place it

    def scope(self) -> str | None:
        """What the ranking leaves out, for a note above it."""
        return ranking_scope(self.observed, self.left_out)

    def tie(self) -> str | None:
        """When several models fit best alike: which, and what would tell them apart."""
        return tie_note(self.fits)

    def document(self) -> ExplainDoc:
        """The ``lnrepro.explain/2`` document: what the console shows, notes included."""
        return ExplainDoc(
            source=self.source,
            seconds=self.meta.seconds,
            models=tuple(self.fits),
            computed=self.meta.computed,
            tests=self.meta.tests,
            skipped_tests=self.meta.skipped_tests,
            hangs=tuple(HangAt(where=w, diagnosis=d) for w, d in self.hangs),
            scope=self.scope() if self.fits else None,
            tie=self.tie(),
            undiagnosed=self.undiagnosed,
        )

    def to_json(self) -> JSON:
        from lnrepro.model import codec

        return codec.encode(self.document())


def read_log(path: Path, stream: BinaryIO | None = None) -> HangText | Explanation:
    """A log file (or, with ``stream``, standard input named ``path``): a hang text alone, or a
    gtest console log (with a hang in it, maybe)."""
    import io

    from lnrepro.errors import MalformedLog
    from lnrepro.gtest.files import parse_log_file, parse_log_stream
    from lnrepro.hang.door import MAX_BYTES, read_paste
    from lnrepro.hang.door import read_file as read_hang
    from lnrepro.studies.model_fit import observed_from_run

    data = stream.read(MAX_BYTES) if stream is not None else None
    # a watcher log, tt-triage, a summary
    reading = read_hang(path) if data is None else read_paste(data.decode("utf-8", "replace"))
    if reading is not None and not reading.in_gtest_log:
        return HangText(path=path, reading=reading)
    try:
        parsed = (
            parse_log_file(path) if data is None else parse_log_stream(io.BytesIO(data), str(path))
        )
    except MalformedLog as exc:  # the fix names every kind explain reads, not gtest's alone
        raise MalformedLog(
            f"{path} holds no googletest output, watcher dump or tt-triage table ({exc.message})",
            EXPLAIN_READS,
        ) from None
    observed = observed_from_run(parsed)
    seen = {o.name for o in observed}
    left_out = [
        (t.name, t.status.value)
        for t in parsed.tests
        if t.name not in seen and t.status.value in ("CRASHED", "TIMEOUT")
    ]
    hangs = [(f"{path} ({reading.what()})", reading.diagnosis)] if reading else []
    return Explanation(source=str(path), observed=observed, hangs=hangs, left_out=left_out)


def read_run(bases: list[Path], ref: str) -> Explanation:
    """A saved run (id, unique prefix, ``last``, a path) under ``bases``."""
    from lnrepro.doors.store import load_run
    from lnrepro.model.record import Verdict
    from lnrepro.run.pipeline import undiagnosed_hang
    from lnrepro.studies.model_fit import observed_from_record

    rec = load_run(bases, ref, "explain takes a run or a log")
    hangs = [(f"{rec.id} attempt {a.index}", a.hang) for a in rec.attempts if a.hang]
    left_out = [
        (t.name, t.verdict.value) for t in rec.tests if t.verdict in (Verdict.HANG, Verdict.CRASH)
    ]
    return Explanation(
        source=rec.id,
        observed=observed_from_record(rec),
        hangs=hangs,
        left_out=left_out,
        undiagnosed=undiagnosed_hang(rec),
    )
