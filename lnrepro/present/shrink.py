"""``lnrepro shrink`` drawn: live progress on stderr, the result on a terminal (one block per
item, so 80 columns hold it and a pipe gets plain lines), and Markdown for an issue body."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from lnrepro.model.case import Judged, case_text
from lnrepro.model.shrink import ShrinkEvents, ShrinkRecord, StartMeasure
from lnrepro.present.console import say, say_command, styled
from lnrepro.present.console.style import build_line
from lnrepro.present.escape import fence, markdown, markdown_code
from lnrepro.present.escape import terminal as esc

if TYPE_CHECKING:
    from rich.console import Console


def _margin(m: float | None) -> str:
    if m is None:
        return "?"
    return f"{m:,.0f}x" if m >= 10 else f"{m:.3g}x"


def _fails_text(rec: ShrinkRecord) -> list[str]:
    """How the result fails: its runs, its margin over the tolerance and what the evaluator
    said; a --command that prints no margin line has none (the search ranked its failures by
    data kind and size), and that is said instead of a margin."""
    r = rec.result
    detail = f" ({r.detail})" if r is not None and r.detail else ""
    if r is not None and r.margin is not None:
        return [_runs(rec), f", margin {_margin(r.margin)} the tolerance", detail]
    why = (
        "the command prints no `lnrepro-probe: margin=M` line"
        if rec.evaluator == "command"
        else "not measured"
    )
    return [_runs(rec), detail, f"; no margin: {why}"]


def _runs(rec: ShrinkRecord) -> str:
    r = rec.result
    if r is not None and r.runs < rec.repeats:
        return f"every run (the same inputs on a deterministic model: {r.runs} run is all {rec.repeats})"
    return f"{rec.repeats}/{rec.repeats} runs"


class RichShrinkEvents(ShrinkEvents):
    """One status line: candidates tried, runs, the best case so far."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.status = console.status("shrink: measuring the start")
        self.text = ""
        self.best: Judged | None = None  # what a stop printed
        self.saved: Path | None = None  # the saved state a stop left

    def __enter__(self) -> RichShrinkEvents:
        self.status.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.status.stop()

    def started(self, start: StartMeasure, repeats: int) -> None:
        say(
            self.console,
            styled(
                ("start ", "bold"),
                f"{_start_name(start.case.origin)}: ",
                f"passed {start.passes}/{start.runs}",
                "" if start.admissible else " (fails on the correct kernel's model too)",
                f"; a case fails only if it fails {repeats} run(s) in a row",
            ),
        )

    def phase(self, text: str) -> None:
        self.text = text
        self.status.update(esc(f"shrink: {text}"))

    def build_output(self, data: bytes) -> None:
        room = max(20, self.console.width - 22)  # one line on the terminal, spinner included
        line = data.rstrip().rsplit(b"\n", 1)[-1].decode("utf-8", "replace")[:room]
        if line:
            self.status.update(esc(f"shrink: building: {line}"))

    def build_finished(self, ok: bool, seconds: float) -> None:
        say(self.console, build_line("probe build ", ok, seconds))

    def judged(self, j: Judged, candidates: int, evaluations: int, best: Judged | None) -> None:
        margin = f" {_margin(best.margin)}" if best and best.margin is not None else ""
        b = (
            f"best {best.case.shape_label} {best.case.data.kind.value}{margin}"
            if best
            else "no failing case yet"
        )
        self.status.update(esc(f"shrink: {candidates} cases, {evaluations} runs; {b}"))

    def interrupted(self, best: Judged | None, rerun: tuple[str, ...], saved: Path | None) -> None:
        self.status.stop()
        self.best, self.saved = best, saved
        if best is None:
            return
        say(
            self.console,
            styled(("stopped: ", "bold"), "the best case so far (it may not be the smallest)"),
        )
        say(self.console, styled(("case ", "bold"), (case_text(best.case), "bold red")))
        margin = f", margin {_margin(best.margin)} the tolerance" if best.margin is not None else ""
        say(
            self.console,
            styled(
                ("  fails ", "bold"),
                f"{best.runs}/{best.runs} runs"
                if best.runs > 1
                else "(one run tells: a deterministic model)",
                margin,
                f" ({best.detail})" if best.detail else "",
            ),
        )
        if rerun:
            say_command(self.console, "  rerun ", rerun)

    def stop_hint(self) -> str | None:
        """What the ``lnrepro: interrupted`` line adds: how to continue, or where the best is."""
        if self.saved is not None:
            where = shlex.join([str(self.saved)])
            return f"its state is saved in {self.saved}: `lnrepro shrink --resume {where}` continues it"
        if self.best is not None:
            return "the best case so far is above, with its rerun line"
        return None


def render_shrink(rec: ShrinkRecord, console: Console) -> None:
    """The answer: the case, its margin and rerun line, the neighbours that pass, the counts."""
    r = rec.result
    counts = (
        f"{rec.candidates} cases, {rec.evaluations} runs, {rec.control_checks} model "
        f"checks, {rec.seconds:.1f} s"
    )
    if r is None:
        say(console, styled(("nothing fails", "bold green"), f" ({counts})"))
        if rec.note:
            say(console, styled(rec.note))
        return
    say(console, styled(("case ", "bold"), (case_text(r.case), "bold red")))
    say(console, styled(("  fails ", "bold"), *_fails_text(rec)))
    # one line however wide: a terminal folds it, a copy or a pipe gets the command whole
    say_command(console, "  rerun ", rec.rerun)
    for n in rec.smaller:
        j = n.judged
        if j is None:
            continue
        say(
            console,
            styled(
                ("  smaller ", "bold"),
                f"{n.axis.value} {j.case.shape.get(n.axis)} ({n.step}): ",
                (j.status.value, "green" if j.status.value == "passes" else "yellow"),
                f" — {n.why}" if n.why else "",
            ),
        )
    if rec.lower_bounds:
        say(
            console,
            styled(("  at its lower bound ", "bold"), ", ".join(a.value for a in rec.lower_bounds)),
        )
    if rec.source is not None:
        say(console, styled(("  source ", "bold"), str(rec.source)))
    say(console, styled(f"  {counts}"))
    if rec.note:
        say(console, styled(("  note ", "bold"), rec.note))


def shrink_markdown(rec: ShrinkRecord) -> str:
    """The result as a GitHub issue body (every piece of text escaped for Markdown)."""
    s = rec.start
    out = [f"## Shrunk from {markdown_code(s.case.origin)}", ""]
    out.append(f"Start: {markdown(case_text(s.case))}, passed {s.passes}/{s.runs} runs.")
    r = rec.result
    if r is None:
        note = rec.note[:1].upper() + rec.note[1:]
        out += ["", f"**Nothing fails.** {markdown(note)}.", ""]
        return "\n".join(out)
    out += [
        "",
        f"**Smallest, loudest deterministic case:** {markdown(case_text(r.case))}",
        f"fails {markdown(''.join(_fails_text(rec)))}" + ".",
        "",
        "Rerun:",
        "",
        fence(shlex.join(rec.rerun), "sh"),
        "",
    ]
    if rec.smaller:
        out += ["| one step smaller | case | status | why |", "| --- | --- | --- | --- |"]
        for n in rec.smaller:
            if n.judged is not None:
                out.append(
                    f"| {markdown(n.axis.value)} ({markdown(n.step)}) | "
                    f"{markdown(n.judged.case.shape_label)} | {markdown(n.judged.status.value)} | {markdown(n.why)} |"
                )
        out.append("")
    if rec.lower_bounds:
        out += [
            f"At its lower bound: {markdown(', '.join(a.value for a in rec.lower_bounds))}.",
            "",
        ]
    if rec.source is not None:
        out += [f"Test to pick: {markdown_code(str(rec.source))}.", ""]
    out.append(
        f"Found by `lnrepro shrink` ({rec.evaluator}): {rec.candidates} cases, {rec.evaluations} runs."
    )
    return "\n".join(out) + "\n"


def _start_name(origin: str) -> str:
    """A gtest's name without its suite; a pytest node id's test and parameters."""
    if "::" in origin:
        return origin.rsplit("::", 1)[-1]
    return origin.split(".", 1)[-1]
