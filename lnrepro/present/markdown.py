"""Markdown a maintainer can paste: issue bodies in tt-metal's bug form, comparisons, gtest tables.

Pure: typed records (and the log texts a report quotes) in, text out. Every value that came from
a log, a path or a test name goes through :mod:`lnrepro.present.escape`.

The issue body is what GitHub makes of tt-metal's bug form when it is filled in: one
``### <label>`` section per submitted field, in the form's order, with its values. The labels,
their order and the dropdowns' options were read from tenstorrent/tt-metal
``.github/ISSUE_TEMPLATE/bug_report.yml`` at 28c3e72cdeba06b3c72961de8e4915151162a45f; an optional
field left empty reads ``_No response_`` and an unanswered dropdown ``None``, as GitHub writes them.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lnrepro import __version__, options
from lnrepro.model.bisect import BisectRecord, SearchKind
from lnrepro.model.compare import compare, environment_changes
from lnrepro.model.gtest import GtestRun
from lnrepro.model.jsonio import strings
from lnrepro.model.record import RunRecord, RunState, Seen, TestAggregate, Verdict
from lnrepro.model.requests import CommandOracleSpec
from lnrepro.model.stats import wilson
from lnrepro.present.escape import fence, markdown, markdown_code
from lnrepro.present.text import attempts_text, fmt_metrics, fmt_num, fmt_pct, why

FORM_SOURCE = "tenstorrent/tt-metal .github/ISSUE_TEMPLATE/bug_report.yml@28c3e72cde"


@dataclass(frozen=True)
class Field:
    id: str  # the form's id for the field
    kind: str  # input | textarea | dropdown
    label: str
    required: bool
    options: tuple[str, ...] = ()  # a dropdown's


# The bug form's submitted fields, in order (markdown elements are not submitted).
AREA = Field("area", "input", "Component / Area", True)
ISSUE_TYPE = Field(
    "issue_type",
    "dropdown",
    "Issue Type (optional)",
    False,
    (
        "Deterministic Hang",
        "Non-Deterministic Hang",
        "Bad Outputs",
        "Runtime Crash",
        "Out of Memory",
        "Other",
    ),
)
OBSERVED = Field("observed", "textarea", "Observed", True)
EXPECTED = Field("expected", "textarea", "Expected", True)
STEPS = Field("repro_steps", "textarea", "1. Steps (exact commands)", True)
INPUT = Field("repro_input", "textarea", "2. Input data / link or description", True)
FREQUENCY = Field("repro_frequency", "textarea", "3. Frequency", True)
SOFTWARE = Field("software_versions", "textarea", "1. Software Versions", True)
HARDWARE = Field("hardware_details", "textarea", "2. Hardware Details", True)
REGRESSION = Field(
    "regression", "dropdown", "Is this a regression?", False, ("Unknown", "Yes", "No")
)
REGRESSION_DETAILS = Field("regression_info", "textarea", "Regression Details", False)
LOGS = Field("diagnostics", "textarea", "Logs & Diagnostics", False)
PRIORITY = Field("priority", "dropdown", "Priority", False, ("P0", "P1", "P2", "P3"))
IMPACT = Field("optional_impact", "textarea", "Impact", False)
FORM = (
    AREA,
    ISSUE_TYPE,
    OBSERVED,
    EXPECTED,
    STEPS,
    INPUT,
    FREQUENCY,
    SOFTWARE,
    HARDWARE,
    REGRESSION,
    REGRESSION_DETAILS,
    LOGS,
    PRIORITY,
    IMPACT,
)
NO_RESPONSE = "_No response_"
NO_CHOICE = "None"


def form(values: Mapping[Field, str], comment: str) -> str:
    """The issue body GitHub writes for the form with these answers (every field, in order)."""
    out = [comment, ""]
    for f in FORM:
        v = values.get(f, "").strip()
        if f.options and v and v not in f.options:
            raise ValueError(f"{v!r} is not an option of {f.label!r}")
        out += [f"### {f.label}", "", v or (NO_CHOICE if f.options else NO_RESPONSE), ""]
    return "\n".join(out).rstrip() + "\n"


# ---------------------------------------------------------------------------------- run facts
def _area(names: Sequence[str]) -> str:
    if any("LayerNorm" in t or t.lower().startswith("ttml") for t in names):
        return "tt-train (ops, kernels)"
    return "tt-metal"


def issue_type(rec: RunRecord) -> str:
    tests = rec.tests
    verdicts = {t.verdict for t in tests}
    if Verdict.HANG in verdicts:
        hung = [t for t in tests if t.verdict is Verdict.HANG]
        every = all(t.statuses.get(Seen.TIMEOUT, 0) == t.runs for t in hung)
        return "Deterministic Hang" if every else "Non-Deterministic Hang"
    if Verdict.CRASH in verdicts:
        return "Runtime Crash"
    if verdicts & {Verdict.FAIL, Verdict.FLAKY}:
        return "Bad Outputs"
    return "Other"


def _rate(t: TestAggregate) -> str:
    if not t.runs:
        return "not run"
    lo, hi = t.pass_rate_ci95
    return f"{t.passed}/{t.runs} ({t.passed / t.runs:.0%}; 95% CI {lo:.0%}–{hi:.0%})"


def _first_failures(rec: RunRecord, name: str) -> list[str]:
    """The first failure messages (or crash reasons) one test printed, de-duplicated."""
    texts = (
        text
        for a in rec.attempts
        for t in a.results
        if t.name == name
        for text in [f.message.strip() for f in t.failures] + ([t.crash.reason] if t.crash else [])
    )
    return [text for text in dict.fromkeys(texts) if text][:3]


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def log_excerpt(log: str, test: str, limit: int = 40) -> str:
    """The lines of ``log`` from ``[ RUN ] test`` to its end marker (colour codes ignored)."""
    out: list[str] = []
    on = False
    for raw in log.splitlines():
        line = _ANSI.sub("", raw)
        if re.match(r"^\[ RUN\s+\] " + re.escape(test) + r"\s*$", line):
            on, out = True, [line]
            continue
        if on:
            out.append(line)
            if re.match(r"^\[\s+(OK|FAILED|SKIPPED)\s+\] " + re.escape(test) + r"\b", line):
                break
    if len(out) > limit:
        out = [*out[: limit // 2], f"... ({len(out) - limit} lines cut)", *out[-limit // 2 :]]
    return "\n".join(out)


def _log_tail(log: str, lines: int = 30) -> str:
    return "\n".join(_ANSI.sub("", x) for x in log.splitlines()[-lines:])


def _metric(t: TestAggregate, key: str) -> str:
    """A test's worst value of ``key`` as text (max_diff falls back to max_abs_diff)."""
    m = t.worst_of(key) or (t.worst_of("max_abs_diff") if key == "max_diff" else None)
    return f"{fmt_num(m[1])} ({m[0]})" if m else ""


def _observed(rec: RunRecord) -> list[str]:
    tests = rec.tests
    failing = [t for t in tests if t.verdict.failing]
    v = rec.verdict
    out: list[str] = []
    if not v.about_the_kernel or rec.incomplete or rec.state is not RunState.COMPLETE:
        what = rec.why or "; ".join(rec.notes) or v.value
        out += [f"**{v.value}**: {markdown(what)}", ""]
    if failing:
        out.append(
            f"{len(failing)} of {len(tests)} test(s) fail (run verdict **{v.value}**, "
            f"{attempts_text(rec)}, filter {markdown_code(rec.gtest_filter)}):"
        )
    elif tests and v is Verdict.PASS:
        out.append(f"All {len(tests)} test(s) pass (run verdict **{v.value}**).")
    elif not tests:
        out.append("No test reached a verdict.")
    if tests:
        has = {k for k in ("max_diff", "mean_diff", "pcc") if any(_metric(t, k) for t in tests)}
        # gtest's differences always (empty when not measured); a PCC when one was measured
        cols = ([] if has == {"pcc"} else ["max_diff", "mean_diff"]) + (
            ["pcc"] if "pcc" in has else []
        )
        out += [
            "",
            f"| test | verdict | {' | '.join(cols)} | first failure |",
            f"|---|---|{'---|' * len(cols)}---|",
        ]
        for t in tests:
            first = _first_failures(rec, t.name)
            cells = " | ".join(markdown(_metric(t, k)) for k in cols)
            out.append(
                f"| {markdown(t.name)} | **{t.verdict.value}** | {cells} | "
                f"{markdown(first[0].splitlines()[0], limit=120) if first else ''} |"
            )
    for a in rec.attempts:
        if a.hang is not None:
            log = a.extra_files.get("watcher")
            triaged = a.extra_files.get("triage")
            where = (
                f" (watcher log {markdown_code(log)})"
                if log
                else f" (tt-triage output {markdown_code(triaged)})"
                if triaged
                else ""
            )
            out += [
                "",
                f"Hang, attempt {a.index}{where}: **{a.hang.pattern.value}**",
                "",
                fence("\n".join(a.hang.lines())),
            ]
    for note in rec.notes:
        if note not in (rec.why or ""):
            out += ["", f"Note: {markdown(note)}"]
    return out


def _steps(rec: RunRecord) -> list[str]:
    out = ["With lnrepro (the run recorded here):", "", fence(shlex.join(rec.rerun), "sh")]
    build = strings(rec.commands, "build")
    test = str(rec.commands.get("test") or "")
    if build or test:
        out += [
            "",
            "The same without lnrepro (build, then test):",
            "",
            fence("\n".join(x for x in [*build, test] if x), "sh"),
        ]
    return out


def _input(rec: RunRecord) -> list[str]:
    b = rec.backend
    out = [f"- Tests: {markdown_code(rec.gtest_filter)} ({len(rec.tests)} matched)"]
    if b.get("seed") is not None:
        out.append(
            f"- Data: the emulator's seed {markdown_code(b['seed'])} (attempt k uses seed+k-1)"
        )
    elif b.get("backend") == "emulator":
        out.append(
            f"- Data: the test's own, from std::mt19937(5489) ({markdown(b.get('data', 'copy'))}); "
            f"emulated kernel {markdown_code(b.get('kernel_era'))} on {markdown_code(b.get('arch'))}"
        )
    else:
        out.append(
            "- Data: each test's own inputs (see the test source); the same for every attempt"
        )
    return out


def _frequency(rec: RunRecord) -> list[str]:
    out = ["| test | verdict | passed (95% interval) |", "|---|---|---|"]
    out += [f"| {markdown(t.name)} | {t.verdict.value} | {markdown(_rate(t))} |" for t in rec.tests]
    return out if rec.tests else [f"Not measured: {markdown(rec.why or 'no test ran')}"]


def _versions(rec: RunRecord | None) -> list[str]:
    if rec is None:
        return ["- (no test run recorded: a `--command` bisect)"]
    fp, b = rec.fingerprint, rec.backend
    commit = markdown_code(str(fp["commit"])[:12]) if fp.get("commit") else ""
    describe = f" ({markdown(fp['describe'])})" if fp.get("describe") else ""
    rows = [  # a row with no value is left out
        ("OS version", markdown(fp["os"]) if fp.get("os") else ""),
        ("Kernel", markdown(fp["host_kernel"]) if fp.get("host_kernel") else ""),
        ("tt-metal", (commit + describe).strip()),
        (
            "Build",
            f"{markdown(rec.build.profile)} profile" if rec.build and rec.build.profile else "",
        ),
        (
            "Image",
            " ".join(
                markdown_code(str(x)[:40]) for x in (fp.get("image"), fp.get("image_id")) if x
            ),
        ),
        (
            "Backend",
            markdown(b.get("backend"))
            + (f" (defect model {markdown_code(b['defect'])})" if b.get("defect") else ""),
        ),
        ("lnrepro", markdown(fp.get("lnrepro") or __version__)),
    ]
    return [f"- **{k}:** {v}" for k, v in rows if v]


def _hardware(rec: RunRecord | None) -> list[str]:
    if rec is None:
        return ["- (no test run recorded)"]
    fp = rec.fingerprint
    devices = strings(fp, "devices")
    lines = [
        f"- **Devices:** {', '.join(markdown_code(d) for d in devices) if devices else 'none (no Tenstorrent card on the host)'}",
        f"- **Driver (tt-kmd):** {markdown(fp.get('driver') or 'not loaded')}",
        f"- **ARCH_NAME:** {markdown(fp.get('arch_name') or 'unset')}",
        f"- **Host:** {markdown(fp.get('machine') or '?')}",
    ]
    if rec.backend.get("backend") == "emulator":
        lines.append("- **Note:** run on lnrepro's numpy emulator of the kernel, not on a card")
    return lines


def _logs(rec: RunRecord, logs: Mapping[str, str]) -> list[str]:
    out: list[str] = []
    rdir = rec.record_dir
    build = rec.build
    if build is not None and not build.ok:
        tail = "\n".join(build.tail) or build.reason or "(no output)"
        out += [
            f"**build** ({markdown(build.reason or build.first_error or 'failed')})",
            "",
            fence(tail),
            "",
        ]
        if build.log:
            out += [f"Full log: {markdown_code(rdir / build.log)}", ""]
    failing = [t for t in rec.tests if t.verdict.failing or t.verdict is Verdict.ENV_ERROR]
    for t in failing[:8]:
        text, path = "", ""
        for a in rec.attempts:
            text = log_excerpt(logs.get(a.log, ""), t.name)
            if text:
                path = str(rdir / a.log)
                break
        if not text:
            text = "\n".join(_first_failures(rec, t.name)) or "(no output captured)"
            path = str(rdir / rec.attempts[0].log) if rec.attempts else ""
        n = len(text.splitlines())
        if n > 15:
            out += [
                f"<details><summary>{markdown(t.name)} ({n} lines)</summary>",
                "",
                fence(text),
                "",
                "</details>",
                "",
            ]
        else:
            out += [f"**{markdown(t.name)}**", "", fence(text), ""]
        if path:
            out += [f"Full log: {markdown_code(path)}", ""]
    if not failing and rec.attempts and not rec.verdict.about_the_kernel:
        a = rec.attempts[-1]
        out += [
            f"**attempt {a.index}** (last lines)",
            "",
            fence(_log_tail(logs.get(a.log, "")) or "(empty)"),
            "",
            f"Full log: {markdown_code(rdir / a.log)}",
            "",
        ]
    if not out:
        out.append(f"No failing test. Full logs: {markdown_code(rdir)}")
    return out


def _regression(bisect: BisectRecord | None) -> tuple[str, str]:
    r = bisect.result if bisect else None
    if bisect is None or r is None or not r.first_bad:
        status = (
            "not finished"
            if bisect
            else "not performed (`lnrepro bisect --good REV --bad REV` finds it)"
        )
        return "Unknown", "\n".join(
            [
                "First bad version: Unknown",
                "Last known good version: Unknown",
                f"Git bisect status: {status}",
            ]
        )
    fixed = bisect.request.find_fix
    return ("No" if fixed else "Yes"), "\n".join(_bisect_facts(bisect))


def _bisect_facts(rec: BisectRecord) -> list[str]:
    r = rec.result
    assert r is not None
    c = r.commit
    who = f", {markdown(c.author)}, {markdown(c.date)}" if c and c.author else ""
    pr = f" (PR #{c.pr})" if c and c.pr else ""
    status = (
        f"lnrepro bisect (Bayesian, confidence {r.confidence:.4f} after {r.runs} run(s) on {r.builds} build(s))"
        if r.search is SearchKind.BAYESIAN and r.confidence is not None
        else f"lnrepro bisect, {r.steps} step(s) after {r.endpoint_checks} endpoint check(s)"
        + ("; culprit and parent re-tested: consistent" if r.confirmed else "")
    )
    out = [
        f"{'First fixed' if rec.request.find_fix else 'First bad'} version: "
        f"{markdown_code((r.first_bad or '')[:12])} {markdown(c.subject if c else '')}{pr}{who}",
        f"Last known good version: {markdown_code(r.last_good[:12]) if r.last_good else 'Unknown'}",
        f"Git bisect status: {status}",
        "",
        "| # | kind | commit | subject | mark | runs (fail/pass/noise) | evidence |",
        "|---|---|---|---|---|---|---|",
    ]
    for i, s in enumerate(rec.steps, 1):
        outs = [o.value for o, _ in s.outcomes]
        counts = f"{outs.count('fail')}/{outs.count('pass')}/{outs.count('noise')}"
        out.append(
            f"| {i} | {s.action.kind.value} | {markdown_code(s.sha[:12])} | {markdown(s.subject, limit=60)} | "
            f"**{s.mark.value}** | {counts} | {markdown(s.reason, limit=100)} |"
        )
    if r.search is SearchKind.BAYESIAN and r.rates:
        from lnrepro.bisect.rates import prior

        said = prior(rec.request)
        out += [
            "",
            *([f"Prior: {markdown(said)}", ""] if said else []),
            f"Posterior (fail rate learned: buggy {r.rates.bad:.2f}, clean {r.rates.good:.2f}):",
            "",
            "| commit | subject | P(first bad) |",
            "|---|---|---|",
        ]
        out += [
            f"| {markdown_code(p.sha[:12])} | {markdown(p.subject)} | {p.p:.4f} |"
            for p in r.posterior
        ]
    if r.margin:
        out += ["", f"Margins: {markdown(r.margin)}"]
    if r.drifted:
        shas = ", ".join(markdown_code(s[:12]) for s in r.drifted)
        out += [
            "",
            f"Drift: {len(r.drifted)} commit(s) whose margins matched neither endpoint (an "
            f"unrelated numerics change?), judged by their verdicts, not forced to a side: {shas}",
        ]
    return out


def _comment(kind: str, rid: str) -> str:
    return f"<!-- written by lnrepro {__version__} from {kind} {rid}, in the fields of {FORM_SOURCE}; regenerate: lnrepro report {rid} -->"


def run_markdown(
    rec: RunRecord, logs: Mapping[str, str] | None = None, bisect: BisectRecord | None = None
) -> str:
    """A GitHub issue body for one run (``logs``: attempt log name -> text)."""
    regression, details = _regression(bisect)
    values = {
        AREA: _area([t.name for t in rec.tests]),
        ISSUE_TYPE: issue_type(rec),
        OBSERVED: "\n".join(_observed(rec)),
        EXPECTED: "Every test passes: the kernel's outputs agree with the reference within each "
        "test's own tolerance (the allclose rtol/atol in the test source), in every attempt.",
        STEPS: "\n".join(_steps(rec)),
        INPUT: "\n".join(_input(rec)),
        FREQUENCY: "\n".join(_frequency(rec)),
        SOFTWARE: "\n".join(_versions(rec)),
        HARDWARE: "\n".join(_hardware(rec)),
        REGRESSION: regression,
        REGRESSION_DETAILS: details,
        LOGS: "\n".join(_logs(rec, logs or {})),
    }
    return form(values, _comment("run", rec.id))


def bisect_markdown(rec: BisectRecord, run: RunRecord | None = None) -> str:
    """A GitHub issue body for a bisect (``run``: one of its steps' run records, for versions)."""
    req, r = rec.request, rec.result
    rid = rec.id or "?"
    sig = sorted(rec.signature.tests) if rec.signature else []
    if r and r.first_bad:
        c = r.commit
        observed = [
            f"The {markdown(r.kind.value)} is {markdown_code(r.first_bad[:12])}: {markdown(c.subject if c else '')}."
        ]
    else:
        observed = [
            f"The bisect did not name one commit: {markdown((r.reason or r.error) if r else 'not finished')}."
        ]
    if sig:
        observed += [
            "",
            f"The bug's signature (learned from {markdown_code(req.bad[:12])}): "
            + ", ".join(markdown_code(t.split(".", 1)[-1]) for t in sig),
        ]
    git_lines = [f"git bisect start {req.bad} {' '.join(req.good)}"]
    o = req.oracle
    if isinstance(o, CommandOracleSpec):
        git_lines.append(f"git bisect run {o.command}")
    else:
        flt = shlex.quote(o.tests.gtest_filter)
        git_lines.append(
            f"git bisect run lnrepro run --tt-metal . --filter {flt} --bisect-exit-code"
        )
    steps = [
        "With lnrepro:",
        "",
        fence(shlex.join(rec.rerun or options.argv(req)), "sh"),
        "",
        "The same with git alone (no isolation, no retries, no evidence rules):",
        "",
        fence("\n".join(git_lines), "sh"),
    ]
    inputs = [
        "- Oracle: command"
        if isinstance(o, CommandOracleSpec)
        else f"- Oracle: run, filter {markdown_code(o.tests.gtest_filter)}"
    ]
    if req.picks:
        inputs.append(
            f"- Tests picked onto every commit: {', '.join(markdown_code(p[:12]) for p in req.picks)}"
        )
    regression, details = _regression(rec)
    values = {
        AREA: _area(sig) if sig else "tt-metal",
        ISSUE_TYPE: "Runtime Crash"
        if rec.signature and rec.signature.crash
        else "Deterministic Hang"
        if rec.signature and rec.signature.hang
        else "Bad Outputs"
        if r and r.first_bad
        else "Other",
        OBSERVED: "\n".join(observed),
        EXPECTED: f"The tests pass at {markdown_code((r.first_bad if r and r.first_bad else req.bad)[:12])} as they do at "
        + ", ".join(markdown_code(g[:12]) for g in req.good)
        + ".",
        STEPS: "\n".join(steps),
        INPUT: "\n".join(inputs),
        FREQUENCY: "\n".join(_bisect_frequency(rec)),
        SOFTWARE: "\n".join(_versions(run)),
        HARDWARE: "\n".join(_hardware(run)),
        REGRESSION: regression,
        REGRESSION_DETAILS: details,
        LOGS: f"Bisect record: {markdown_code(rec.record or rid)}; each step's run record is named in `lnrepro show {rid}`.",
    }
    return form(values, _comment("bisect", rid))


def _bisect_frequency(rec: BisectRecord) -> list[str]:
    from lnrepro.bisect.evidence import Sense

    r, req = rec.result, rec.request
    sense = Sense.of(req)  # outcomes are kept in the search's sense: the bug's, here
    per: dict[str, list[str]] = {}
    for s in rec.steps:
        per.setdefault(s.sha, []).extend(sense.turn(o).value for o, _ in s.outcomes)
    roles = {req.bad: "--bad", **{g: "--good" for g in req.good}}
    if r and r.first_bad:
        roles[r.first_bad] = "first fixed" if req.find_fix else "first bad"
    if r and r.last_good:
        roles.setdefault(r.last_good, "last good")
    rows = ["| commit | role | runs showing the bug | noise |", "|---|---|---|---|"]
    for sha, role in roles.items():
        outs = per.get(sha, [])
        fails, passes = outs.count("fail"), outs.count("pass")
        n = fails + passes
        lo, hi = wilson(fails, n)
        rate = f"{fails}/{n} (95% CI {lo:.0%}–{hi:.0%})" if n else "not run"
        rows.append(f"| {markdown_code(sha[:12])} | {role} | {rate} | {outs.count('noise')} |")
    return rows


def compare_markdown(a: RunRecord, b: RunRecord) -> str:
    def head(r: RunRecord) -> str:
        commit = str(r.fingerprint.get("commit") or "?")[:12]
        return (
            f"{markdown_code(r.id)} ({markdown(r.backend.get('backend'))}, {markdown_code(commit)})"
        )

    out = [
        f"A: {head(a)}; B: {head(b)}",
        "",
        "| test | A | B | pass rate A | pass rate B | max_diff A | max_diff B | change |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in compare(a, b):
        out.append(
            f"| {markdown(r.test)} | {r.verdict_a.value if r.verdict_a else ''} | "
            f"{r.verdict_b.value if r.verdict_b else ''} | {fmt_pct(r.pass_rate_a)} | "
            f"{fmt_pct(r.pass_rate_b)} | {fmt_num(r.max_diff_a)} | {fmt_num(r.max_diff_b)} | "
            f"{markdown(r.change)} |"
        )
    changes = environment_changes(a, b)
    if changes:
        out += ["", f"Environment A → B: {markdown('; '.join(changes))}"]
    return "\n".join(out) + "\n"


def gtest_run_markdown(run: GtestRun) -> str:
    """``lnrepro parse --markdown``: one row per test per iteration."""
    lines = ["| iteration | test | status | time | metrics | why |", "|---|---|---|---|---|---|"]
    for t in run.tests:
        ms = "" if t.duration_ms is None else f"{t.duration_ms:.0f} ms"
        lines.append(
            f"| {t.iteration} | {markdown_code(t.name)} | **{t.status.value}** | {ms} | "
            f"{markdown(fmt_metrics(t.metrics))} | {markdown(why(t))} |"
        )
    totals = ", ".join(f"{v} {k.lower()}" for k, v in run.totals().items() if v)
    lines += ["", f"{len(run.iterations)} iteration(s): {totals or 'no tests'}"]
    lines += [f"> warning: {markdown(w)}" for w in run.warnings]
    return "\n".join(lines) + "\n"
