"""Mutation testing of lnrepro's pure modules with mutmut: which changed rule leaves the tests green.

mutmut (``pip install -e '.[dev]'``) changes one operator, constant or call at a time in a module
and runs the tests that reach the changed function; a mutant the tests still pass "survived".
Each module in ``TARGETS`` runs on its own, in a copy of the project under ``--workdir``, with
its own fast selection of unit tests (seconds each, no subprocess), so a module's score says
what its own contract tests pin. Mutants listed in ``EQUIVALENT`` change nothing a caller can
observe (the reason is given beside each); they are left out of the score.

    python scripts/mutation.py [--only SUBSTRING ...] [--jobs 2] [--report docs/mutation.md]

The score is killed / (mutants - equivalent); a mutant that times out counts as killed (a hang
fails a test run), one no selected test reaches counts as survived. Not run by CI (minutes).
``--report`` rewrites the Markdown report (how it was run, the table, every survivor and every
equivalent mutant); it exits 1 when the score over all modules is under ``--min-score``.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Target:
    """One module to mutate and the unit tests (pytest node ids or files) that run against it."""

    path: str
    tests: tuple[str, ...]
    deselect: tuple[str, ...] = ()  # slow tests of those files (whole bisect runs), left out


_BISECT_SLOW = tuple(  # whole seeded searches: seconds to a minute each, per mutant
    "tests/bisect/test_noise.py::" + name
    for name in (
        "test_stated_confidence_is_calibrated_on_seeded_trials",
        "test_heavy_noise_everywhere_sets_no_testable_commit_aside",
        "test_cost_rule_builds_fewer_commits_than_the_entropy_rule",
        "test_equal_costs_need_no_more_runs_than_the_entropy_rule",
        "test_infrastructure_noise_is_set_aside_not_believed",
        "test_jobs_never_run_one_commit_twice_at_once",
        "test_replaying_observations_rebuilds_the_same_posterior",
    )
)

# The one list: a module moved or added is one line here.
TARGETS: tuple[Target, ...] = (
    Target(
        "lnrepro/bisect/evidence.py",
        (  # test_rates: the fail rates' priors (Rates) live in evidence.py
            "tests/bisect/test_evidence_rules.py",
            "tests/bisect/test_noise.py",
            "tests/bisect/test_rates.py",
        ),
        (
            *_BISECT_SLOW,
            "tests/bisect/test_rates.py::test_measured_rates_shorten_the_search",  # whole searches
            "tests/bisect/test_rates.py::test_bisect_rates_from_on_the_command_line",  # the CLI
        ),
    ),
    Target(
        "lnrepro/bisect/bayes.py",
        (
            "tests/bisect/test_stop_rule.py",
            "tests/bisect/test_bayes_rules.py",
            "tests/bisect/test_noise.py",
            "tests/bisect/test_confidence_progress.py",
            "tests/bisect/test_margins.py",
        ),
        (
            *_BISECT_SLOW,
            # the emulator's gtest binary in a subprocess, a whole bisect: half a minute
            "tests/bisect/test_margins.py::"
            "test_end_to_end_the_emulators_nightly_test_passes_everywhere_and_the_culprit_is_named",
        ),
    ),
    Target(
        "lnrepro/bisect/strategy.py",
        ("tests/bisect/test_strategy_rules.py", "tests/bisect/test_noise.py"),
        _BISECT_SLOW,
    ),
    Target(
        "lnrepro/bisect/core.py",
        ("tests/bisect/test_search_core.py", "tests/bisect/test_core.py"),
        (  # hypothesis: hundreds of searches per mutant
            "tests/bisect/test_core.py::test_dag_with_merges_finds_a_commit_whose_parents_are_all_good",
            "tests/bisect/test_core.py::test_artifacts_first_then_builds_only_inside_the_last_interval",
        ),
    ),
    Target(
        "lnrepro/shrink/core.py", ("tests/shrink/test_core.py", "tests/shrink/test_search_rules.py")
    ),
    Target(
        "lnrepro/shrink/space.py",
        ("tests/shrink/test_core.py", "tests/shrink/test_search_rules.py"),
    ),
    Target(
        "lnrepro/hang/rules.py",
        (
            "tests/hang/triage/test_rules.py",
            "tests/hang/triage/test_cause_rules.py",
            "tests/hang/test_hang_rules.py",
        ),
    ),
    Target(
        "lnrepro/gtest/console.py",
        ("tests/gtest/test_console_rules.py", "tests/gtest/test_console.py"),
        (  # hypothesis: 20 s each, per mutant
            "tests/gtest/test_console.py::test_no_input_makes_the_parser_raise",
            "tests/gtest/test_console.py::test_chunking_never_changes_the_result",
            "tests/gtest/test_console.py::test_arbitrary_bytes",
        ),
    ),
    Target(
        "lnrepro/model/metrics.py",
        ("tests/model/test_metrics.py", "tests/model/test_metric_rules.py"),
    ),
    Target(
        "lnrepro/pytests/pcc.py", ("tests/pytests/test_pcc.py", "tests/pytests/test_pcc_rules.py")
    ),
)

# mutmut's mutant name -> why no caller can tell the mutant from the original.
_UNREACHABLE_NO_VERDICT = (
    "unreachable: classify calls _unrelated only when a test of the signature did not pass "
    "(every other case returned PASS before), so next() always finds one"
)
_SOME_MEASURED = (
    "a metric over the threshold is a measured one (_over is None for an unmeasured test), so "
    "`measured` is never empty and pick's default is never used"
)
EQUIVALENT: dict[str, str] = {
    "lnrepro.bisect.core.xǁSearchǁnext__mutmut_9": (
        "max's default=None is unreachable: next returns early when done, and a search that is "
        "not done has an untested candidate, so _pickable is never empty"
    ),
    "lnrepro.bisect.evidence.x__unrelated__mutmut_4": _UNREACHABLE_NO_VERDICT,
    "lnrepro.bisect.evidence.x__unrelated__mutmut_9": _UNREACHABLE_NO_VERDICT,
    "lnrepro.bisect.evidence.x__unrelated__mutmut_10": _UNREACHABLE_NO_VERDICT,
    "lnrepro.bisect.evidence.x_classify__mutmut_101": 'float("NAN") is float("nan"): NaN either way',
    "lnrepro.bisect.evidence.x_classify__mutmut_108": 'float("NAN") is float("nan"): NaN either way',
    "lnrepro.bisect.evidence.x_classify__mutmut_103": _SOME_MEASURED,
    "lnrepro.bisect.evidence.x_classify__mutmut_105": _SOME_MEASURED,
    **{
        f"lnrepro.bisect.bayes.xǁPosteriorǁrow__mutmut_{n}": (
            "the row cache: a row recomputed is the same row"
        )
        for n in (1, 2, 30)
    },
    "lnrepro.bisect.bayes.xǁPosteriorǁrow__mutmut_18": (
        "(n + 8) // 8 bytes: at most one byte more, of zero bits, cut off by [:n]"
    ),
    "lnrepro.bisect.bayes.xǁPosteriorǁ__init____mutmut_27": (
        "_counted is set by _compute before anything reads it"
    ),
    **{
        f"lnrepro.bisect.bayes.xǁPosteriorǁ_compute__mutmut_{n}": (
            "log B(prior) is one constant for every candidate: normalising (ll - ll.max()) "
            "removes it whatever its sign"
        )
        for n in (45, 47)
    },
    "lnrepro.bisect.bayes.xǁPosteriorǁstated__mutmut_38": (
        "at <= 255.5/256 < cumsum's last (1 up to rounding): searchsorted never returns len"
    ),
    "lnrepro.bisect.bayes.xǁPosteriorǁtop__mutmut_1": "top's default n: every caller passes n",
    **{
        f"lnrepro.bisect.bayes.xǁPosteriorǁverdict_information__mutmut_{n}": (
            "np.errstate: every log and division in the block is guarded by np.where (w > 0, "
            "z > 0, w and z finite): no floating-point error to ignore or warn of"
        )
        for n in (60, 61, 62, 63)
    },
    **{
        f"lnrepro.bisect.bayes.xǁPosteriorǁverdict_information__mutmut_{n}": (
            "a guard's value where w == 0 (or z == 0): masked by the outer np.where(w > 0) "
            "(z > 0), or multiplied by w (z) = 0"
        )
        for n in (76, 86, 88, 98, 108, 110, 118, 120, 121)
    },
    **{
        f"lnrepro.bisect.bayes.xǁBayesSearchǁnext_for__mutmut_{n}": (
            "the tip is always a candidate (ancestors(tip) minus the clean side; none would "
            "raise), so the branch that adds it to the pool is never taken"
        )
        for n in (122, 123)
    },
    **{
        f"lnrepro.bisect.bayes.xǁBayesSearchǁnext_for__mutmut_{n}": (
            "batch sizes: column 0 is one run's information whether ms is (1,) or _M "
            "(information's default), and the entropy rule reads column 0 only"
        )
        for n in (130, 167, 171, 172, 177)
    },
    "lnrepro.bisect.bayes.xǁBayesSearchǁ_revived__mutmut_9": (
        "information's default batch sizes start with 1: column 0 is the same one-run gain"
    ),
    "lnrepro.bisect.bayes.xǁBayesSearchǁnext_for__mutmut_134": (
        "with an empty pool `one` is read only by _revived's one.max(initial=0.0): 0 either way"
    ),
    **{
        name: (
            "every commit in set_aside_for_noise is a key of untestable (added together; "
            "removed together): pop finds it, the default is never used"
        )
        for name in (
            "lnrepro.bisect.bayes.xǁBayesSearchǁnext_for__mutmut_7",
            "lnrepro.bisect.bayes.xǁBayesSearchǁ_revived__mutmut_29",
        )
    },
    **{
        f"lnrepro.hang.rules.x__waiting__mutmut_{n}": (
            "a producer's stage: producers (and the blocked among them) have a stage below the "
            "consumer's (<= 2), so their role is a key of ROLE_ORDER and get's default unused"
        )
        for n in (29, 31, 33, 39, 41, 42)
    },
    "lnrepro.hang.rules.x__waiting__mutmut_12": (
        "an unknown role's default 9 or 10 is never below a consumer's stage (0 to 2)"
    ),
    "lnrepro.hang.rules.x__waiting__mutmut_81": (
        "an unknown role's default -1 or -2 is never above a producer's stage (0 to 2)"
    ),
    "lnrepro.hang.rules.x__explain__mutmut_50": (
        "the chain's pattern: _waiting returns None only for a CWFW or CRBW wait, so the first "
        "waiter's wait is always one of the two and the OTHER_WAIT fallback is never taken"
    ),
    "lnrepro.hang.rules.x_explain__mutmut_17": (
        "the sort key of a role not in ROLE_ORDER: 3 or 4, one value for all of them, after 0-2"
    ),
    "lnrepro.hang.rules.x_consequence_words__mutmut_9": (
        "the cause role's stand-in: neither '' nor 'XXXX' is a key of ROLE_ORDER, default 3 both"
    ),
    "lnrepro.hang.rules.x_consequence_words__mutmut_16": (
        "a waiter of unknown role: 3 or 4 is never below the cause's stage (at most 3)"
    ),
    **{
        f"lnrepro.hang.rules.x_role__mutmut_{n}": (
            "the separator of the names: the words looked for (reader, writer, compute, "
            "/compute/) hold neither a space nor an X, so no match spans it"
        )
        for n in (3, 8)
    },
    **{
        f"lnrepro.model.metrics.xǁMetricRulesǁtensor_name__mutmut_{n}": (
            "rsplit(sep, k)[-1] is the text after the last sep for every k >= 1 and for no k"
        )
        for n in (5, 10, 13, 17)
    },
}


@dataclass
class Outcome:
    path: str
    mutants: int = 0
    killed: int = 0
    timeout: int = 0
    survived: list[str] = field(default_factory=list)
    untested: list[str] = field(default_factory=list)
    equivalent: list[str] = field(default_factory=list)
    pending: int = 0  # not run yet (a run stopped early, read by --collect): not killed
    seconds: float = 0.0

    @property
    def score(self) -> float:
        counted = self.mutants - len(self.equivalent)
        return (self.killed + self.timeout) / counted if counted else 1.0


def _slug(path: str) -> str:
    return path.removesuffix(".py").replace("/", "-")


def _prepare(work: Path, target: Target) -> None:
    """A fresh copy of the sources and tests, with mutmut's settings for this one module."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "lnrepro", work / "lnrepro", ignore=ignore)
    shutil.copytree(ROOT / "tests", work / "tests", ignore=ignore)
    # the schemas every JSON document a test writes is checked against (tests/conftest.py)
    shutil.copytree(ROOT / "docs" / "schemas", work / "docs" / "schemas")
    pytest_args = ["-n0", "-q", "-p", "no:cacheprovider", "--timeout=120"]
    for node in target.deselect:
        pytest_args += ["--deselect", node]
    settings = {
        "source_paths": ["lnrepro"],
        "only_mutate": [target.path],
        "pytest_add_cli_args": pytest_args,
        "pytest_add_cli_args_test_selection": list(target.tests),
        "use_git_change_detection": False,
        "also_copy": ["docs/schemas"],
    }
    lines = [f"{key} = {json.dumps(value)}" for key, value in settings.items()]
    text = (ROOT / "pyproject.toml").read_text()
    (work / "pyproject.toml").write_text(text + "\n[tool.mutmut]\n" + "\n".join(lines) + "\n")


def _mutmut(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("CI", None)  # the selection is pure: nothing to skip or fail for a missing tool
    return subprocess.run(
        [sys.executable, "-m", "mutmut", *args],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def run_one(target: Target, workdir: Path, jobs: int) -> Outcome:
    if not (ROOT / target.path).exists():
        sys.exit(f"mutation.py: no {target.path}: update TARGETS in {Path(__file__).name}")
    tests = tuple(t for t in target.tests if (ROOT / t.split("::")[0]).exists())
    if tests != target.tests:
        print(f"mutation.py: {target.path}: no {set(target.tests) - set(tests)}", file=sys.stderr)
    if not tests:
        sys.exit(
            f"mutation.py: no tests for {target.path}: update TARGETS in {Path(__file__).name}"
        )
    target = Target(target.path, tests, target.deselect)
    work = workdir / _slug(target.path)
    _prepare(work, target)
    started = time.monotonic()
    done = _mutmut(work, "run", "--max-children", str(jobs))
    meta = work / "mutants" / (target.path + ".meta")
    if done.returncode != 0 or not meta.exists():
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        sys.exit(f"mutation.py: mutmut failed on {target.path} (exit {done.returncode})")
    return collect(target, work, time.monotonic() - started)


def collect(target: Target, work: Path, seconds: float) -> Outcome:
    """The outcome of mutmut's run in ``work`` (finished or not), saved beside it."""
    meta = work / "mutants" / (target.path + ".meta")
    codes: dict[str, int | None] = json.loads(meta.read_text())["exit_code_by_key"]
    listing = _mutmut(work, "results", "--all", "true").stdout
    status = {}
    for line in listing.splitlines():
        name, _, verdict = line.strip().rpartition(": ")
        if name:
            status[name] = verdict
    out = Outcome(target.path, mutants=len(codes), seconds=seconds)
    for name in sorted(codes, key=_natural):
        verdict = status.get(name, "")
        if name in EQUIVALENT:
            out.equivalent.append(name)
        elif verdict == "killed":
            out.killed += 1
        elif verdict == "timeout":
            out.timeout += 1
        elif verdict == "no tests":
            out.untested.append(name)
        elif codes[name] is None:
            out.pending += 1
        else:  # survived, suspicious, segfault (none expected of a pure module)
            out.survived.append(name)
    (work / "outcome.json").write_text(json.dumps(asdict(out)))
    return out


def _saved(target: Target, workdir: Path) -> Outcome | None:
    """The outcome of an earlier run of ``target`` in ``workdir`` (``--report-only``)."""
    saved = workdir / _slug(target.path) / "outcome.json"
    if not saved.exists():
        return None
    out = Outcome(**json.loads(saved.read_text()))
    out.equivalent = [n for n in out.survived + out.untested + out.equivalent if n in EQUIVALENT]
    out.survived = [n for n in out.survived if n not in EQUIVALENT]
    out.untested = [n for n in out.untested if n not in EQUIVALENT]
    return out


def _natural(name: str) -> tuple[str, int]:
    head, _, number = name.rpartition("_")
    return (head, int(number) if number.isdigit() else 0)


def _functions(work: Path, path: str) -> dict[str, list[str]]:
    """Every function of mutmut's mutated copy of ``path`` (its mutants and the originals)."""
    text = (work / "mutants" / path).read_text()
    lines = text.splitlines()
    out: dict[str, list[str]] = {}
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and "__mutmut_" in node.name:
            body = lines[node.body[0].lineno - 1 : node.end_lineno]
            out[node.name] = [ln.strip() for ln in body]
    return out


def _diff(functions: dict[str, list[str]], name: str) -> str:
    """The lines a mutant changes: ``-`` the original's, ``+`` the mutant's."""
    key = name.rsplit(".", 1)[-1]
    orig = functions.get(key.rsplit("__mutmut_", 1)[0] + "__mutmut_orig", [])
    changed = difflib.unified_diff(orig, functions.get(key, []), lineterm="", n=0)
    return "\n".join(ln for ln in changed if ln[:1] in "+-" and not ln.startswith(("+++", "---")))


def _short(name: str) -> str:
    return name.split(".", 2)[-1].replace("ǁ", ".").replace("x.", "", 1)


def report(outcomes: list[Outcome], workdir: Path, argv: list[str], seconds: float) -> str:
    total = Outcome("all")
    for o in outcomes:
        total.mutants += o.mutants
        total.killed += o.killed
        total.timeout += o.timeout
        total.survived += o.survived
        total.untested += o.untested
        total.equivalent += o.equivalent
        total.pending += o.pending
    rows = [
        "| module | mutants | killed | timeout | survived | no test | not run | equivalent | score |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for o in [*outcomes, total]:
        name = f"`{o.path}`" if o is not total else "**all**"
        rows.append(
            f"| {name} | {o.mutants} | {o.killed} | {o.timeout} | {len(o.survived)} "
            f"| {len(o.untested)} | {o.pending} | {len(o.equivalent)} | {o.score:.1%} |"
        )
    load = os.getloadavg()
    lines = [
        "## Last run",
        "",
        f"- command: `python scripts/mutation.py {' '.join(argv)}`".rstrip() + "",
        f"- tool: mutmut {metadata.version('mutmut')}, pytest {metadata.version('pytest')}, "
        f"Python {platform.python_version()}",
        f"- machine: {platform.machine()}, {os.cpu_count()} cores, {platform.system()} "
        f"{platform.release()}; load average at the end {load[0]:.1f}",
        f"- duration: {sum(o.seconds for o in outcomes) / 60:.1f} minutes of mutmut runs in all "
        f"(this invocation: {seconds / 60:.1f}); per module below",
        "",
        *rows,
        "",
        f"Of the mutants that ran ({total.mutants - total.pending - len(total.equivalent)}, "
        f"equivalent ones aside), {(total.killed + total.timeout) / max(1, total.mutants - total.pending - len(total.equivalent)):.1%} "
        "were killed; a mutant not run counts as not killed in the score column.",
        "",
        "Per module: " + ", ".join(f"`{_slug(o.path)}` {o.seconds:.0f} s" for o in outcomes) + ".",
        "",
        "### Equivalent mutants (left out of the score)",
        "",
    ]
    by_path = {o.path: o for o in outcomes}
    for o in outcomes:
        for name in o.equivalent:
            lines.append(f"- `{_short(name)}`: {EQUIVALENT[name]}")
    if not total.equivalent:
        lines.append("None.")
    lines += ["", "### Survivors (not killed, not equivalent)", ""]
    for path, o in by_path.items():
        functions = _functions(workdir / _slug(path), path)
        for name in o.survived + o.untested:
            why = "no selected test reaches it" if name in o.untested else "survived"
            diff = _diff(functions, name).replace("`", "'")
            lines.append(f"- `{_short(name)}` ({why}):")
            lines += ["  ```diff", *("  " + d for d in diff.splitlines()), "  ```"]
    if not (total.survived or total.untested):
        lines.append("None.")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--only", nargs="*", default=[], help="modules whose path contains this")
    ap.add_argument("--jobs", type=int, default=2, help="mutants run at once (mutmut's children)")
    ap.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "lnrepro-mutation"
    )
    ap.add_argument("--report", type=Path, help="rewrite this Markdown file's '## Last run' part")
    ap.add_argument("--min-score", type=float, default=0.9)
    ap.add_argument(
        "--report-only", action="store_true", help="no run: report the outcomes saved in --workdir"
    )
    ap.add_argument(
        "--collect",
        nargs=2,
        metavar=("SUBSTRING", "SECONDS"),
        help="no run: save the outcome of the module's mutmut run left in --workdir (stopped "
        "early or run by hand), with the seconds it took",
    )
    args = ap.parse_args()
    targets = [t for t in TARGETS if not args.only or any(s in t.path for s in args.only)]
    if args.collect:
        (target,) = [t for t in TARGETS if args.collect[0] in t.path]
        out = collect(target, args.workdir / _slug(target.path), float(args.collect[1]))
        print(f"{target.path}: {out.mutants} mutants, {out.pending} not run; saved")
        return 0
    started = time.monotonic()
    outcomes = []
    for target in targets:
        saved = _saved(target, args.workdir) if args.report_only else None
        if args.report_only and saved is None:
            print(f"{target.path}: no saved outcome in {args.workdir}", file=sys.stderr)
            continue
        out = saved or run_one(target, args.workdir, args.jobs)
        print(
            f"{target.path}: {out.mutants} mutants, {out.killed + out.timeout} killed, "
            f"{len(out.survived) + len(out.untested)} survived, {len(out.equivalent)} "
            f"equivalent, score {out.score:.1%} ({out.seconds:.0f} s)",
            flush=True,
        )
        outcomes.append(out)
    text = report(outcomes, args.workdir, sys.argv[1:], time.monotonic() - started)
    if args.report:
        head = args.report.read_text().split("## Last run")[0] if args.report.exists() else ""
        args.report.write_text(head + text)
    else:
        print(text)
    killed = sum(o.killed + o.timeout for o in outcomes)
    counted = sum(o.mutants - len(o.equivalent) for o in outcomes)
    return 0 if counted == 0 or killed / counted >= args.min_score else 1


if __name__ == "__main__":
    sys.exit(main())
