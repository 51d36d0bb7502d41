"""Reports from records: the bug report a maintainer can act on, JUnit for CI, a comparison.

Pure: record documents (as :mod:`lnrepro.doors.store` loads them) in, text out; the logs a report
quotes are read by the caller and passed in. Every value that came from a log, a path or a test
name is escaped for where it goes (Markdown tables, code fences, XML).

The Markdown follows tt-metal's bug template (seed 002's sections, in its order): Component /
Area, Issue Type, Observed, Expected, Steps, Input data, Frequency, Software Versions, Hardware
Details, Is this a regression? / Regression Details (from a bisect record), Logs & Diagnostics.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from typing import Any

from lnrepro import __version__
from lnrepro.model.stats import wilson

FAILING = ("FAIL", "FLAKY", "CRASH", "HANG")


# ---------------------------------------------------------------------------------- escaping
def cell(text: object) -> str:
    """Text for one Markdown table cell: pipes escaped, no line breaks, no HTML."""
    s = str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")
    return s.replace("<", "&lt;").replace(">", "&gt;")


def inline(text: object) -> str:
    """An inline code span that holds any text."""
    s = str(text).replace("\n", " ")
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def fence(text: str, lang: str = "") -> str:
    """A fenced block that no line of ``text`` can close."""
    longest = max((len(m) for m in re.findall(r"^\s*(`{3,}|~{3,})", text, re.M)), default=0)
    f = "`" * max(3, longest + 1)
    return f"{f}{lang}\n{text.rstrip()}\n{f}"


def _num(v: object) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


# ---------------------------------------------------------------------------------- run facts
def _short(name: str) -> str:
    return name.split(".", 1)[1] if "." in name else name


def _metric(test: Mapping[str, Any], key: str) -> tuple[str, float] | None:
    """The worst value of ``key`` over a test's tensors, with the tensor's name."""
    best: tuple[str, float] | None = None
    for tensor, vals in (test.get("worst_metrics") or {}).items():
        v = vals.get(key) if isinstance(vals, dict) else None
        if isinstance(v, (int, float)) and (best is None or v > best[1] or v != v):
            best = (tensor, float(v))
    return best


def _metric_text(test: Mapping[str, Any], key: str) -> str:
    m = _metric(test, key)
    return f"{_num(m[1])} ({m[0]})" if m else ""


def _rate(test: Mapping[str, Any]) -> str:
    runs, passed = int(test.get("runs") or 0), int(test.get("passed") or 0)
    if not runs:
        return "not run"
    lo, hi = wilson(passed, runs)
    return f"{passed}/{runs} ({passed / runs:.0%}; 95% CI {lo:.0%}–{hi:.0%})"


def _issue_type(verdicts: Sequence[str]) -> str:
    if "CRASH" in verdicts:
        return "Crash"
    if "HANG" in verdicts:
        return "Hang"
    if "FAIL" in verdicts or "FLAKY" in verdicts:
        return "Bad Outputs"
    return "Other"


def _area(tests: Sequence[str]) -> str:
    if any("LayerNorm" in t or t.startswith(("ttml", "TTML")) for t in tests):
        return "tt-train, kernels, ops"
    return "tt-metal"


def _versions(fp: Mapping[str, Any], doc: Mapping[str, Any]) -> list[str]:
    b = doc.get("backend") or {}
    build = doc.get("build") or {}
    rows = [
        ("OS version", fp.get("os")),
        ("Kernel", fp.get("host_kernel")),
        (
            "tt-metal",
            " ".join(
                x
                for x in (
                    inline(fp["commit"][:12]) if fp.get("commit") else "",
                    f"({fp['describe']})" if fp.get("describe") else "",
                )
                if x
            )
            or None,
        ),
        ("Build", f"{build.get('profile') or fp.get('build_profile')} profile" if build else None),
        (
            "Image",
            " ".join(
                x
                for x in (
                    inline(fp["image"]) if fp.get("image") else "",
                    inline(fp["image_id"][:19]) if fp.get("image_id") else "",
                )
                if x
            )
            or None,
        ),
        (
            "Backend",
            f"{b.get('backend')}"
            + (f" (defect model {inline(b['defect'])})" if b.get("defect") else ""),
        ),
        ("lnrepro", fp.get("lnrepro") or __version__),
    ]
    return [f"- **{k}:** {v if str(v).startswith('`') else cell(v)}" for k, v in rows if v]


def _hardware(fp: Mapping[str, Any], doc: Mapping[str, Any]) -> list[str]:
    b = doc.get("backend") or {}
    devices = fp.get("devices") or []
    lines = [
        f"- **Devices:** {', '.join(inline(d) for d in devices) if devices else 'none (no Tenstorrent card on the host)'}",
        f"- **Driver (tt-kmd):** {cell(fp.get('driver') or 'not loaded')}",
        f"- **ARCH_NAME:** {cell(fp.get('arch_name') or 'unset')}",
        f"- **Host:** {cell(fp.get('machine') or '?')}",
    ]
    if b.get("backend") == "emulator":
        lines.append("- **Note:** run on lnrepro's numpy emulator of the kernel, not on a card")
    return lines


def _failure_lines(doc: Mapping[str, Any], name: str) -> list[str]:
    """The first failure messages one test printed (over all attempts), de-duplicated."""
    seen: list[str] = []
    for a in doc.get("attempts") or []:
        for t in a.get("tests") or []:
            if t.get("name") != name:
                continue
            for f in t.get("failures") or []:
                first = str(f.get("message", "")).strip()
                if first and first not in seen:
                    seen.append(first)
    return seen[:3]


def log_excerpt(log: str, test: str, limit: int = 40) -> str:
    """The lines of ``log`` from ``[ RUN ] test`` to its end marker (at most ``limit``)."""
    lines = log.splitlines()
    out: list[str] = []
    on = False
    for line in lines:
        if re.match(r"^\[ RUN\s+\] " + re.escape(test) + r"\s*$", line):
            on, out = True, [line]
            continue
        if on:
            out.append(line)
            if re.match(r"^\[\s+(OK|FAILED|SKIPPED)\s+\] " + re.escape(test), line):
                break
    if len(out) > limit:
        out = [*out[: limit // 2], f"... ({len(out) - limit} lines cut)", *out[-limit // 2 :]]
    return "\n".join(out)


# ---------------------------------------------------------------------------------- run markdown
def run_markdown(
    doc: Mapping[str, Any],
    logs: Mapping[str, str] | None = None,
    bisect: Mapping[str, Any] | None = None,
) -> str:
    """A GitHub issue body for one run (``logs``: attempt log name -> text)."""
    tests = [t for t in doc.get("tests") or [] if isinstance(t, dict)]
    verdicts = [str(t.get("verdict")) for t in tests]
    failing = [t for t in tests if t.get("verdict") in FAILING]
    fp = doc.get("fingerprint") or {}
    rid = doc.get("id", "?")
    out = [
        f"<!-- written by lnrepro {__version__} from run {rid}; regenerate: lnrepro report {rid} -->",
        "",
    ]
    out += ["### Component / Area", "", _area([str(t.get("name", "")) for t in tests]), ""]
    out += ["### Issue Type (optional)", "", _issue_type(verdicts), ""]
    out += ["### Observed", ""]
    n_fail = len(failing)
    out.append(
        f"{n_fail} of {len(tests)} test(s) fail (run verdict **{cell(doc.get('verdict'))}**, "
        f"{doc.get('repeat', 1)} attempt(s), filter {inline(doc.get('filter', '*'))}):"
        if n_fail
        else f"All {len(tests)} test(s) pass (run verdict **{cell(doc.get('verdict'))}**)."
    )
    out += [
        "",
        "| test | verdict | max_diff | mean_diff | first failure |",
        "|---|---|---|---|---|",
    ]
    for t in tests:
        name = str(t.get("name", ""))
        first = _failure_lines(doc, name)
        out.append(
            f"| {cell(_short(name))} | **{cell(t.get('verdict'))}** | {cell(_metric_text(t, 'max_diff'))} | "
            f"{cell(_metric_text(t, 'mean_diff'))} | {cell(first[0].splitlines()[0][:120]) if first else ''} |"
        )
    out += ["", "### Expected", ""]
    out.append(
        "Every test passes: the kernel's outputs agree with the reference within each test's own "
        "tolerance (the `allclose` rtol/atol in the test source), in every attempt."
    )
    out += ["", "### 1. Steps (exact commands)", "", "With lnrepro (the run recorded here):", ""]
    out.append(fence(" ".join(_shell_words(doc.get("rerun") or [])) or "lnrepro run", "sh"))
    cmds = doc.get("commands") or {}
    if cmds:
        block = [*(cmds.get("build") or []), str(cmds.get("test", ""))]
        out += [
            "",
            "The same without lnrepro (build, then test):",
            "",
            fence("\n".join(x for x in block if x), "sh"),
        ]
    out += ["", "### 2. Input data / link or description", ""]
    b = doc.get("backend") or {}
    out.append(f"- Tests: {inline(doc.get('filter', '*'))} ({len(tests)} matched)")
    if b.get("seed") is not None:
        out.append(f"- Data: the emulator's seed {inline(b['seed'])} (attempt k uses seed+k-1)")
    elif b.get("backend") == "emulator":
        out.append(f"- Data: the test's own, from `std::mt19937(5489)` ({cell(b.get('data', 'copy'))}); "
                   f"emulated kernel {inline(b.get('kernel_era'))} on {inline(b.get('arch'))}")  # fmt: skip
    else:
        out.append(
            "- Data: each test's own inputs (see the test source); the same for every attempt"
        )
    out += ["", "### 3. Frequency", ""]
    out += ["| test | verdict | passed (95% interval) |", "|---|---|---|"]
    for t in tests:
        out.append(
            f"| {cell(_short(str(t.get('name', ''))))} | {cell(t.get('verdict'))} | {cell(_rate(t))} |"
        )
    out += ["", "### 1. Software Versions", "", *_versions(fp, doc)]
    out += ["", "### 2. Hardware Details", "", *_hardware(fp, doc)]
    out += _regression(bisect)
    out += ["", "### Logs & Diagnostics", ""]
    out += _logs(doc, failing, logs or {})
    return "\n".join(out).rstrip() + "\n"


def _shell_words(argv: Sequence[str]) -> list[str]:
    import shlex

    return [shlex.quote(str(a)) for a in argv]


def _logs(
    doc: Mapping[str, Any], failing: Sequence[Mapping[str, Any]], logs: Mapping[str, str]
) -> list[str]:
    out: list[str] = []
    record_dir = str(doc.get("record_dir", ""))
    if not failing:
        return [f"No failing test. Full logs: {inline(record_dir)}"]
    for t in failing[:8]:
        name = str(t.get("name", ""))
        text = ""
        path = ""
        for a in doc.get("attempts") or []:
            log = str(a.get("log", ""))
            text = log_excerpt(logs.get(log, ""), name)
            if text:
                path = f"{record_dir}/{log}"
                break
        if not text:
            text = "\n".join(_failure_lines(doc, name)) or "(no output captured)"
        body = fence(text)
        if len(text.splitlines()) > 15:
            out += [
                f"<details><summary>{cell(_short(name))} ({len(text.splitlines())} lines)</summary>",
                "",
                body,
                "",
                "</details>",
                "",
            ]
        else:
            out += [f"**{cell(_short(name))}**", "", body, ""]
        if path:
            out += [f"Full log: {inline(path)}", ""]
    return out


def _regression(bisect: Mapping[str, Any] | None) -> list[str]:
    out = ["", "### Is this a regression?", ""]
    r = (bisect or {}).get("result") or {}
    if not bisect or not r.get("first_bad"):
        out += [
            "Unknown: no bisect record (`lnrepro bisect --good REV --bad REV` finds the commit).",
            "",
        ]
        out += ["### Regression Details", "", "- **First bad version:** Unknown", "- **Last known good version:** Unknown",
                "- **Git bisect status:** " + ("not finished" if bisect else "not performed")]  # fmt: skip
        return out
    fixed = bool((bisect.get("plan") or {}).get("find_fix"))
    out.append(
        ("No: it was fixed by " if fixed else "Yes: introduced by ")
        + f"{inline(str(r['first_bad'])[:12])}."
    )
    out += ["", "### Regression Details", ""]
    out += _bisect_facts(bisect)
    return out


def _bisect_facts(doc: Mapping[str, Any]) -> list[str]:
    r = doc.get("result") or {}
    c = r.get("commit") or {}
    out = [
        f"- **{'First fixed' if (doc.get('plan') or {}).get('find_fix') else 'First bad'} version:** "
        f"{inline(str(r.get('first_bad'))[:12])} {cell(c.get('subject', ''))}"
        + (f" (PR #{c['pr']})" if c.get("pr") else "")
        + (f", {cell(c.get('author', ''))}, {cell(c.get('date', ''))}" if c.get("author") else ""),
        f"- **Last known good version:** {inline(str(r.get('last_good'))[:12]) if r.get('last_good') else 'Unknown'}",
        "- **Git bisect status:** "
        + (
            f"lnrepro bisect (Bayesian, confidence {r['confidence']:.4f} after {r.get('runs')} run(s) on "
            f"{r.get('builds')} build(s))"
            if r.get("search") == "bayesian"
            else f"lnrepro bisect, {r.get('steps')} step(s) after {r.get('endpoint_checks')} endpoint check(s)"
            + ("; culprit and parent re-tested: consistent" if r.get("confirmed") else "")
        ),
        "",
        "| # | kind | commit | subject | mark | runs (fail/pass/noise) | evidence |",
        "|---|---|---|---|---|---|---|",
    ]
    for i, s in enumerate(doc.get("steps") or [], 1):
        outs = [o for o, _ in s.get("outcomes") or []]
        counts = f"{outs.count('fail')}/{outs.count('pass')}/{outs.count('noise')}"
        out.append(
            f"| {i} | {cell(s.get('kind'))} | {inline(str(s.get('sha', ''))[:12])} | {cell(str(s.get('subject', ''))[:60])} | "
            f"**{cell(s.get('mark'))}** | {counts} | {cell(str(s.get('reason', ''))[:100])} |"
        )
    if r.get("search") == "bayesian":
        rates = r.get("rates") or {}
        out += ["", f"Posterior (fail rate learned: buggy {rates.get('bad', 0):.2f}, clean {rates.get('good', 0):.2f}):", "",
                "| commit | subject | P(first bad) |", "|---|---|---|"]  # fmt: skip
        for p in r.get("posterior") or []:
            out.append(
                f"| {inline(str(p.get('sha', ''))[:12])} | {cell(p.get('subject', ''))} | {float(p.get('p', 0)):.4f} |"
            )
    return out


# ---------------------------------------------------------------------------------- bisect markdown
def bisect_command(plan: Mapping[str, Any], oracle: Mapping[str, Any]) -> list[str]:
    argv = ["lnrepro", "bisect", "--repo", str(plan.get("repo", "."))]
    for g in plan.get("good") or []:
        argv += ["--good", str(g)]
    argv += ["--bad", str(plan.get("bad"))]
    if oracle.get("oracle") == "command":
        argv += ["--command", str(oracle.get("command"))]
    else:
        argv += ["--tt-metal", str(plan.get("repo", ".")), "--runner", str(oracle.get("runner")),
                 "--filter", str(oracle.get("filter"))]  # fmt: skip
    for p in plan.get("picks") or []:
        argv += ["--pick", str(p)]
    for p in plan.get("patches") or []:
        argv += ["--patch", str(p)]
    flags = (("find_fix", "--find-fix"), ("first_parent", "--first-parent"))
    argv += [flag for key, flag in flags if plan.get(key)]
    if plan.get("confidence"):
        argv += ["--confidence", str(plan["confidence"])]
    if int(plan.get("jobs") or 1) > 1:
        argv += ["--jobs", str(plan["jobs"])]
    if plan.get("paths"):
        argv += ["--", *plan["paths"]]
    return argv


def bisect_markdown(doc: Mapping[str, Any], run: Mapping[str, Any] | None = None) -> str:
    """A GitHub issue body for a bisect (``run``: one of its step's run records, for versions)."""
    plan = doc.get("plan") or {}
    oracle = doc.get("oracle") or {}
    r = doc.get("result") or {}
    rid = doc.get("id", "?")
    fp = (run or {}).get("fingerprint") or {}
    out = [
        f"<!-- written by lnrepro {__version__} from bisect {rid}; regenerate: lnrepro report {rid} -->",
        "",
    ]
    sig = (doc.get("signature") or {}).get("tests") or []
    out += ["### Component / Area", "", _area([str(s) for s in sig]) if sig else "tt-metal", ""]
    out += ["### Issue Type (optional)", "", "Regression" if r.get("first_bad") else "Other", ""]
    out += ["### Observed", ""]
    if r.get("first_bad"):
        c = r.get("commit") or {}
        out.append(f"The {cell(r.get('kind', 'first bad commit'))} is {inline(str(r['first_bad'])[:12])}: "
                   f"{cell(c.get('subject', ''))}.")  # fmt: skip
    else:
        out.append(
            f"The bisect did not name one commit: {cell(r.get('reason') or r.get('error') or 'not finished')}."
        )
    if sig:
        out += ["", f"The bug's signature (learned from {inline(str(plan.get('bad'))[:12])}): "
                + ", ".join(inline(_short(t)) for t in sig)]  # fmt: skip
    out += ["", "### Expected", "", f"The tests pass at {inline(str(r.get('first_bad') or plan.get('bad'))[:12])} as they do at "
            f"{', '.join(inline(str(g)[:12]) for g in plan.get('good') or [])}."]  # fmt: skip
    out += [
        "",
        "### 1. Steps (exact commands)",
        "",
        "With lnrepro:",
        "",
        fence(" ".join(_shell_words(bisect_command(plan, oracle))), "sh"),
    ]
    git_lines = [f"git bisect start {plan.get('bad')} {' '.join(plan.get('good') or [])}"]
    if oracle.get("oracle") == "command":
        git_lines.append(f"git bisect run {oracle.get('command')}")
    else:
        git_lines.append(
            f"git bisect run lnrepro run --tt-metal . --filter {_shell_words([str(oracle.get('filter'))])[0]} --bisect-exit-code"
        )
    out += [
        "",
        "The same with git alone (no isolation, no retries, no evidence rules):",
        "",
        fence("\n".join(git_lines), "sh"),
    ]
    out += ["", "### 2. Input data / link or description", ""]
    out.append(
        f"- Oracle: {cell(oracle.get('oracle'))}"
        + (f", filter {inline(oracle.get('filter'))}" if oracle.get("filter") else "")
    )
    if plan.get("picks"):
        out.append(
            f"- Tests picked onto every commit: {', '.join(inline(str(p)[:12]) for p in plan['picks'])}"
        )
    out += ["", "### 3. Frequency", ""]
    out += _bisect_frequency(doc)
    out += [
        "",
        "### 1. Software Versions",
        "",
        *(_versions(fp, run) if run else ["- (no test run recorded: a `--command` bisect)"]),
    ]
    out += [
        "",
        "### 2. Hardware Details",
        "",
        *(_hardware(fp, run) if run else ["- (no test run recorded)"]),
    ]
    out += _regression(doc)
    out += [
        "",
        "### Logs & Diagnostics",
        "",
        f"Bisect record: {inline(doc.get('record') or rid)}; each step's run record is named in `lnrepro show {rid}`.",
    ]
    return "\n".join(out).rstrip() + "\n"


def _bisect_frequency(doc: Mapping[str, Any]) -> list[str]:
    r = doc.get("result") or {}
    per: dict[str, list[str]] = {}
    for s in doc.get("steps") or []:
        per.setdefault(str(s.get("sha")), []).extend(o for o, _ in s.get("outcomes") or [])
    rows = ["| commit | role | runs showing the bug | noise |", "|---|---|---|---|"]
    plan = doc.get("plan") or {}
    roles = {str(plan.get("bad")): "--bad", **{str(g): "--good" for g in plan.get("good") or []}}
    if r.get("first_bad"):
        roles[str(r["first_bad"])] = "first bad" if not plan.get("find_fix") else "first fixed"
    if r.get("last_good"):
        roles.setdefault(str(r["last_good"]), "last good")
    for sha, role in roles.items():
        outs = per.get(sha, [])
        fails, passes = outs.count("fail"), outs.count("pass")
        n = fails + passes
        if plan.get("find_fix"):
            fails, passes = passes, fails  # outcomes are stored in the search's sense
        rate = f"{fails}/{n}" + (
            f" (95% CI {wilson(fails, n)[0]:.0%}–{wilson(fails, n)[1]:.0%})" if n else ""
        )
        rows.append(
            f"| {inline(sha[:12])} | {cell(role)} | {cell(rate if n else 'not run')} | {outs.count('noise')} |"
        )
    return rows


# ---------------------------------------------------------------------------------- JUnit
def junit(doc: Mapping[str, Any]) -> str:
    """JUnit XML: a run's tests (one testcase per test per attempt and iteration), or a bisect's
    steps (one testcase per step: bad = failure, skip = skipped)."""
    if doc.get("kind") == "bisect":
        return _junit_bisect(doc)
    suites: dict[str, ET.Element] = {}
    root = ET.Element("testsuites", name=f"lnrepro {doc.get('id', '')}")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    fp = doc.get("fingerprint") or {}
    for a in doc.get("attempts") or []:
        for t in a.get("tests") or []:
            name = str(t.get("name", ""))
            suite_name = name.split(".", 1)[0] if "." in name else "tests"
            suite = suites.get(suite_name)
            if suite is None:
                suite = ET.SubElement(root, "testsuite", name=suite_name)
                props = ET.SubElement(suite, "properties")
                for k, v in (("lnrepro.id", doc.get("id")), ("commit", fp.get("commit")),
                             ("backend", (doc.get("backend") or {}).get("backend")), ("filter", doc.get("filter"))):  # fmt: skip
                    if v is not None:
                        ET.SubElement(props, "property", name=k, value=_xml(v))
                suites[suite_name] = suite
            case = ET.SubElement(
                suite, "testcase", classname=_xml(suite_name),
                name=_xml(f"{_short(name)} [attempt {a.get('index')}, iteration {t.get('iteration', 1)}]"),
                time=f"{(t.get('duration_ms') or 0) / 1000:.3f}",
            )  # fmt: skip
            status = str(t.get("status"))
            if a.get("env_error") and status in ("CRASHED", "TIMEOUT"):
                status = "ENV_ERROR"
            msgs = [str(f.get("message", "")) for f in t.get("failures") or []]
            totals["tests"] += 1
            if status == "FAILED":
                totals["failures"] += 1
                el = ET.SubElement(
                    case,
                    "failure",
                    message=_xml((msgs[0].splitlines() or [""])[0][:200] if msgs else "failed"),
                    type="FAILED",
                )
                el.text = _xml("\n\n".join(msgs))
            elif status in ("CRASHED", "TIMEOUT", "ENV_ERROR"):
                totals["errors"] += 1
                crash = t.get("crash") or {}
                why = crash.get("reason") or a.get("env_error") or status.lower()
                ET.SubElement(case, "error", message=_xml(why), type=status)
            elif status in ("SKIPPED", "DISABLED"):
                totals["skipped"] += 1
                ET.SubElement(
                    case, "skipped", message=_xml(t.get("skip_message") or status.lower())
                )
            metrics = t.get("metrics") or {}
            if metrics:
                props = ET.SubElement(case, "properties")
                for tensor, vals in metrics.items():
                    for k, v in (vals or {}).items():
                        ET.SubElement(props, "property", name=_xml(f"{tensor}.{k}"), value=_num(v))
    for suite in suites.values():
        cases = suite.findall("testcase")
        suite.set("tests", str(len(cases)))
        suite.set("failures", str(sum(1 for c in cases if c.find("failure") is not None)))
        suite.set("errors", str(sum(1 for c in cases if c.find("error") is not None)))
        suite.set("skipped", str(sum(1 for c in cases if c.find("skipped") is not None)))
        suite.set("time", f"{sum(float(c.get('time', '0')) for c in cases):.3f}")
    for k, v in totals.items():
        root.set(k, str(v))
    return _xml_text(root)


def _junit_bisect(doc: Mapping[str, Any]) -> str:
    root = ET.Element("testsuites", name=f"lnrepro {doc.get('id', '')}")
    suite = ET.SubElement(root, "testsuite", name="lnrepro.bisect")
    r = doc.get("result") or {}
    props = ET.SubElement(suite, "properties")
    for k in ("first_bad", "last_good", "confidence", "search"):
        if r.get(k) is not None:
            ET.SubElement(props, "property", name=k, value=_xml(r[k]))
    n = {"failures": 0, "skipped": 0}
    for i, s in enumerate(doc.get("steps") or [], 1):
        case = ET.SubElement(suite, "testcase", classname="bisect." + _xml(s.get("kind")),
                             name=_xml(f"{i:03d} {str(s.get('sha', ''))[:12]} {s.get('subject', '')}"),
                             time=f"{float(s.get('seconds') or 0):.3f}")  # fmt: skip
        if s.get("mark") == "bad":
            n["failures"] += 1
            ET.SubElement(case, "failure", message=_xml(s.get("reason", "bad")), type="bad")
        elif s.get("mark") == "skip":
            n["skipped"] += 1
            ET.SubElement(case, "skipped", message=_xml(s.get("reason", "skipped")))
    total = len(suite.findall("testcase"))
    for el in (suite, root):
        el.set("tests", str(total))
        el.set("failures", str(n["failures"]))
        el.set("errors", "0")
        el.set("skipped", str(n["skipped"]))
    return _xml_text(root)


_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml(v: object) -> str:
    """Text XML 1.0 can hold: control characters (ANSI escapes from logs) replaced."""
    return _XML_BAD.sub("\ufffd", str(v))


def _xml_text(root: ET.Element) -> str:
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# ---------------------------------------------------------------------------------- compare
def compare(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per test (in A's order, then B's new ones): verdicts, pass rates, max_diff, the change."""
    ta = {str(t.get("name")): t for t in a.get("tests") or []}
    tb = {str(t.get("name")): t for t in b.get("tests") or []}
    names = [*ta, *(n for n in tb if n not in ta)]
    rows = []
    for n in names:
        x, y = ta.get(n), tb.get(n)
        mx = _metric(x, "max_diff") if x else None
        my = _metric(y, "max_diff") if y else None
        vx, vy = (x or {}).get("verdict"), (y or {}).get("verdict")
        change = "only in B" if x is None else "only in A" if y is None else (
            f"{vx} → {vy}" if vx != vy else "same verdict")  # fmt: skip
        if mx and my and mx[1] != my[1]:
            change += f"; max_diff {_num(mx[1])} → {_num(my[1])}"
        rows.append({
            "test": n, "verdict_a": vx, "verdict_b": vy,
            "pass_rate_a": _pass_rate(x), "pass_rate_b": _pass_rate(y),
            "max_diff_a": mx[1] if mx else None, "max_diff_b": my[1] if my else None,
            "change": change,
        })  # fmt: skip
    return rows


def _pass_rate(t: Mapping[str, Any] | None) -> float | None:
    if not t or not t.get("runs"):
        return None
    return float(t.get("passed") or 0) / float(t["runs"])


def compare_markdown(a: Mapping[str, Any], b: Mapping[str, Any]) -> str:
    rows = compare(a, b)
    out = [f"A: {inline(a.get('id'))} ({cell((a.get('backend') or {}).get('backend'))}, "
           f"{inline(str((a.get('fingerprint') or {}).get('commit') or '?')[:12])}); "
           f"B: {inline(b.get('id'))} ({cell((b.get('backend') or {}).get('backend'))}, "
           f"{inline(str((b.get('fingerprint') or {}).get('commit') or '?')[:12])})", "",
           "| test | A | B | pass rate A | pass rate B | max_diff A | max_diff B | change |",
           "|---|---|---|---|---|---|---|---|"]  # fmt: skip

    def pct(v: float | None) -> str:
        return "" if v is None else f"{v:.0%}"

    for r in rows:
        out.append(
            f"| {cell(_short(r['test']))} | {cell(r['verdict_a'] or '')} | {cell(r['verdict_b'] or '')} | "
            f"{pct(r['pass_rate_a'])} | {pct(r['pass_rate_b'])} | {cell(_num(r['max_diff_a']) if r['max_diff_a'] is not None else '')} | "
            f"{cell(_num(r['max_diff_b']) if r['max_diff_b'] is not None else '')} | {cell(r['change'])} |"
        )
    return "\n".join(out) + "\n"
