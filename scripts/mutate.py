"""Plant known mutants in a copy of the project and show that the test suite kills each one.

Every mutant is one textual change to lnrepro's code: a bug a test is supposed to catch (the
list started from the mutants that survived an outside review). For each, the project is copied
to a temporary directory, the change applied, and the tests named for it run with ``CI=true``
(so missing tools fail instead of skipping) and a per-test time limit (a hang counts as killed).

    python scripts/mutate.py [--only ID ...] [--list]

Prints a Markdown table and exits 1 if any mutant survived.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Mutant:
    id: str
    file: str
    old: str
    new: str
    tests: tuple[str, ...]
    why: str


MUTANTS = (
    Mutant(
        "proc-kill-not-killpg",
        "lnrepro/doors/proc.py",
        "os.killpg(pgid, sig)",
        "os.kill(pgid, sig)",
        ("tests/doors/test_proc.py",),
        "a timeout kills the shell but not its children",
    ),
    Mutant(
        "proc-no-sigkill",
        "lnrepro/doors/proc.py",
        "((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, 2.0))",
        "((signal.SIGTERM, KILL_GRACE_S),)",
        ("tests/doors/test_proc.py",),
        "a child ignoring SIGTERM outlives its timeout",
    ),
    Mutant(
        "proc-no-new-session",
        "lnrepro/doors/proc.py",
        "start_new_session=True",
        "start_new_session=False",
        ("tests/doors/test_proc.py",),
        "children share lnrepro's group: nothing can be killed as a group",
    ),
    Mutant(
        "proc-leftovers-kept",
        "lnrepro/doors/proc.py",
        "leftovers = _kill_leftovers(pgid)",
        "leftovers = 0",
        ("tests/doors/test_proc.py",),
        "a binary's background helpers keep running after it exits",
    ),
    Mutant(
        "proc-no-subreaper",
        "lnrepro/cli/exits.py",
        "    proc.become_subreaper()",
        "    pass",
        ("tests/cli/test_faults.py::test_what_the_binary_leaves_behind_is_killed",),
        "a setsid escapee outlives lnrepro",
    ),
    Mutant(
        "metric-keeps-smallest",
        "lnrepro/model/gtest.py",
        "return value < than if key in HIGHER_IS_BETTER else value > than",
        "return value > than if key in HIGHER_IS_BETTER else value < than",
        ("tests/model/test_metrics.py",),
        "worst metric is the best one",
    ),
    Mutant(
        "metric-drops-nan",
        "lnrepro/model/gtest.py",
        "    if value != value:\n        return True\n",
        "",
        ("tests/model/test_metrics.py",),
        "a NaN metric is replaced by a number",
    ),
    Mutant(
        "double-subtract-block-only",
        "lnrepro/emulator/kernel.py",
        "if Defect.DOUBLE_SUBTRACT in cfg.defects:",
        "if Defect.DOUBLE_SUBTRACT in cfg.defects and not cfg.fits_in_l1(features):",
        ("tests/emulator/test_kernel.py",),
        "the double subtraction only on the block path",
    ),
    Mutant(
        "device-readable-or-writable",
        "lnrepro/envcheck/checks.py",
        "not (d.readable and d.writable)",
        "not (d.readable or d.writable)",
        ("tests/envcheck/test_sysroot.py",),
        "a device node you can only read passes",
    ),
    Mutant(
        "driver-minimum-exclusive",
        "lnrepro/envcheck/checks.py",
        "if _version(f.module_version) < _version(ctx.min_driver):",
        "if _version(f.module_version) <= _version(ctx.min_driver):",
        ("tests/envcheck/test_sysroot.py",),
        "a driver exactly at the minimum fails",
    ),
    Mutant(
        "render-reads-markup",
        "lnrepro/present/escape.py",
        "    return Text(visible(text))",
        "    return Text.from_markup(visible(text))",
        (
            "tests/present/test_console.py",
            "tests/cli/test_faults.py::test_hostile_names_and_messages_render_as_written",
        ),
        "test names and messages are read as rich markup",
    ),
    Mutant(
        "record-only-at-the-end",
        "lnrepro/run/pipeline.py",
        "            record.attempts.append(attempt)\n            write_json(",
        "            record.attempts.append(attempt)\n            (lambda *a: None)(",
        ("tests/cli/test_faults.py::test_kill_9_after_an_attempt_keeps_the_finished_attempt",),
        "kill -9 after attempt 1 loses it",
    ),
    Mutant(
        "glued-run-marker-dropped",
        "lnrepro/gtest/console.py",
        'if self._current is None and "[ RUN " in text:',
        "if False:",
        ("tests/gtest/test_console.py",),
        "a test glued to other output vanishes",
    ),
    Mutant(
        "bind-source-not-checked",
        "lnrepro/doors/container/create.py",
        "    if missing:\n",
        "    if False:\n",
        ("tests/cli/test_faults.py::test_missing_bind_source_is_refused_before_anything_starts",),
        "docker creates a missing checkout path on the host as root",
    ),
    Mutant(
        "rerun-drops-fp32-stats",
        "lnrepro/model/requests.py",
        '            args.append("--fp32-stats")',
        "            pass",
        ("tests/cli/test_faults.py::test_the_rerun_line_reproduces_the_run",),
        "the printed rerun line runs a different model",
    ),
    Mutant(
        "infra-error-counts-as-bad",
        "lnrepro/bisect/evidence.py",
        'return RunOutcome.NOISE, f"infrastructure: {a.env_error}"',
        'return RunOutcome.FAIL, f"infrastructure: {a.env_error}"',
        ("tests/bisect/test_noise.py",),
        "a driver error is taken as the bug",
    ),
    Mutant(
        "md-cell-keeps-pipes",
        "lnrepro/present/escape.py",
        '_MD = {c: f"&#{ord(c)};" for c in "\\\\`*_[]|~$"}',
        '_MD = {c: f"&#{ord(c)};" for c in "\\\\`*_[]~$"}',
        ("tests/present/test_reports.py::test_markdown_holds_hostile_names_and_logs",),
        "a test name with a pipe breaks the issue's table",
    ),
    Mutant(
        "copied-record-keeps-old-id",
        "lnrepro/doors/store.py",
        "        return RunRecord.from_json(r, path.parent)",
        "        return RunRecord.from_json(r, Path(str(r.value.get('record_dir') or path.parent)))",
        (
            "tests/present/test_reports.py::test_old_partial_and_corrupt_records_are_listed_never_a_crash",
        ),
        "two records listed under one id",
    ),
    Mutant(
        "gumbel-location-sign",
        "lnrepro/studies/tolerance.py",
        "float(a.mean()) - EULER * beta",
        "float(a.mean()) + EULER * beta",
        ("tests/studies/test_tolerance.py",),
        "the tail estimate is shifted: bands and pass probabilities are wrong",
    ),
    Mutant(
        "container-not-removed",
        "lnrepro/doors/container/create.py",
        "            ct.remove(force=True, v=True)\n        _live_containers.pop",
        "            pass\n        _live_containers.pop",
        ("tests/cli/test_faults.py::test_image_without_a_shell_leaves_no_container",),
        "a container that failed to start stays behind",
    ),
)


def copy_project(dest: Path) -> None:
    files = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    for f in files:
        src = ROOT / f
        if src.is_file():
            (dest / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / f)


def run_mutant(m: Mutant, work: Path) -> tuple[str, float, str]:
    copy = work / m.id
    copy_project(copy)
    target = copy / m.file
    text = target.read_text()
    if text.count(m.old) != 1:
        return "NOT PLANTED", 0.0, f"{m.old!r} occurs {text.count(m.old)} times in {m.file}"
    target.write_text(text.replace(m.old, m.new))
    env = {**os.environ, "CI": "true", "PYTHONPATH": str(copy)}
    start = time.monotonic()
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-x",
            "-q",
            "-p",
            "no:cacheprovider",
            "--timeout",
            "120",
            *m.tests,
        ],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    secs = time.monotonic() - start
    # a mutant may leave what lnrepro would have removed: clear it before the next one runs
    if shutil.which("docker"):
        ids = subprocess.run(
            ["docker", "ps", "-aq", "--filter", "label=io.lnrepro"], capture_output=True, text=True
        ).stdout.split()
        if ids:
            subprocess.run(["docker", "rm", "-f", *ids], capture_output=True, check=False)
    probe = subprocess.run(
        [sys.executable, "-c", "import lnrepro; print(lnrepro.__file__)"],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if not probe.stdout.startswith(str(copy)):
        return "ERROR", secs, f"tests imported lnrepro from {probe.stdout.strip()}, not the copy"
    last = (res.stdout.strip().splitlines() or ["?"])[-1]
    if res.returncode == 0:
        return "SURVIVED", secs, last
    if res.returncode in (1, 2) or "Timeout" in res.stdout:
        return "killed", secs, last
    return "ERROR", secs, last


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--only", nargs="*", default=None, help="mutant ids to run")
    ap.add_argument("--list", action="store_true")
    ns = ap.parse_args()
    chosen = [m for m in MUTANTS if ns.only is None or m.id in ns.only]
    if ns.list:
        for m in chosen:
            print(f"{m.id}: {m.why} ({m.file})")
        return 0
    work = Path(tempfile.mkdtemp(prefix="lnrepro-mutants-"))
    print("| mutant | what it breaks | tests | result | s |")
    print("| --- | --- | --- | --- | ---: |")
    bad = 0
    try:
        for m in chosen:
            result, secs, detail = run_mutant(m, work)
            bad += result != "killed"
            shown = result if result == "killed" else f"**{result}** ({detail})"
            print(
                f"| `{m.id}` | {m.why} | {', '.join(t.split('::')[-1] for t in m.tests)} | {shown} | {secs:.0f} |",
                flush=True,
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n{len(chosen) - bad} of {len(chosen)} mutants killed")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
