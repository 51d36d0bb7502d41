"""``lnrepro bisect``: find the commit that introduced (or fixed) the bug."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from lnrepro.cli import SUMMARY, cli, echo_json, on_stop
from lnrepro.cli.options import (
    BACKEND_NAMES,
    PATHS,
    Command,
    backend_spec,
    bisect_backend_options,
    flag_of,
    given,
    json_flag,
    option,
    pop_backend,
    pop_tests,
    split_command,
    test_options,
    test_spec,
)
from lnrepro.errors import ExitCode, UsageError
from lnrepro.model.requests import (
    DEFAULT_TIMEOUT_S,
    BisectRequest,
    CommandOracleSpec,
    OnCrash,
    OnHang,
    OracleSpec,
    Policy,
    RunOracleSpec,
    TtMetalSpec,
)

# what --resume takes from the command line; everything else comes from the saved request
RESUME_OWN = {"repo", "resume", "as_json", "show_log"}
SEARCH = "Search"
ORACLE = "How each commit is judged"
JOBS = "Jobs"


def _fail_rates(text: str | None) -> tuple[float, float] | None:
    if text is None:
        return None
    try:
        bad_rate, good_rate = (float(x) for x in text.split(","))
    except ValueError:
        raise UsageError(
            f"--fail-rates {text!r} is not BAD,GOOD", "e.g. --fail-rates 0.7,0.05"
        ) from None
    return bad_rate, good_rate


def _oracle(
    command: str | None, backend: dict[str, Any], tests: dict[str, Any], repo: Path
) -> OracleSpec:
    """How each commit is judged; a misplaced option is named as ``--help`` spells it."""
    if command is not None:
        argv = split_command(command, "--command")
        for name in (*BACKEND_NAMES, "gtest_filter", "pytest_nodeids", "metric_patterns"):
            v = {**backend, **tests}.get(name)
            if v is not None and v is not False and v != ():
                flag = flag_of(name)
                raise UsageError(
                    f"{flag} does not apply with --command", f"drop {flag}, or drop --command"
                )
        t = test_spec(tests)
        return CommandOracleSpec(
            argv=argv,
            timeout_s=t.timeout_s if tests.get("timeout_s") is not None else DEFAULT_TIMEOUT_S,
            repeat=t.repeat,
        )
    if backend.get("backend") not in (None, "tt-metal"):
        raise UsageError(
            f"bisect builds and tests a tt-metal checkout, not --backend {backend['backend']}",
            "drop --backend, or judge commits with --command",
        )
    if (
        backend.get("tt_metal") is not None
        and Path(backend["tt_metal"]).absolute() != repo.absolute()
    ):
        raise UsageError(
            "--tt-metal and --repo name different checkouts",
            "bisect tests its own worktree of --repo: drop --tt-metal",
        )
    spec = backend_spec({**backend, "tt_metal": None}, default_checkout=repo)
    assert isinstance(spec, TtMetalSpec)
    return RunOracleSpec(backend=spec, tests=test_spec(tests))


@cli.command(cls=Command, short_help=SUMMARY["bisect"])
@option(
    "--good",
    "goods",
    multiple=True,
    metavar="REV",
    group=SEARCH,
    help="A commit where the tests pass (need not be an ancestor of --bad: its merge base is "
    "tested first, as git does). Repeatable.",
)
@option("--bad", metavar="REV", group=SEARCH, help="A commit where the tests fail.")
@option(
    "--repo",
    type=PATHS,
    default=Path(),
    show_default=True,
    group=SEARCH,
    help="The repository (its checkout is never touched: lnrepro works in its own worktree).",
)
@option(
    "--find-fix",
    is_flag=True,
    group=SEARCH,
    help="Find the commit that fixed the bug: --bad is older, --good newer.",
)
@option(
    "--first-parent",
    is_flag=True,
    group=SEARCH,
    help="Follow only first parents (merges as units), as git does.",
)
@option(
    "--confidence",
    type=float,
    group=SEARCH,
    help="Bisect a flaky bug: a Bayesian search that re-runs and learns the fail rates, stopping "
    "when one commit is the culprit with this probability (0.5 to 0.9999, e.g. 0.95).",
)
@option(
    "--fail-rates",
    metavar="BAD,GOOD",
    group=SEARCH,
    help="With --confidence: the fail rates of buggy and clean commits when known (e.g. 0.7,0.05); "
    "default: learned from the runs.",
)
@option(
    "--rates-from",
    "rates_from",
    multiple=True,
    metavar="RUN",
    group=SEARCH,
    help="With --confidence: `lnrepro run` records at --bad (and --good) whose pass/fail counts "
    "start the fail rates (a prior the search keeps learning from). Repeatable; ids, `last` or "
    "paths. Without it, records of the endpoints with the same tests are found by themselves.",
)
@option(
    "--no-confirm",
    is_flag=True,
    group=SEARCH,
    help="Do not test the endpoints first or re-test the culprit after.",
)
@option(
    "--pick",
    "picks",
    multiple=True,
    metavar="COMMIT",
    group=SEARCH,
    help="Cherry-pick onto every tested commit (e.g. the BugRepro tests' 16165972af). Repeatable.",
)
@option(
    "--prebuilt",
    "prebuilt",
    multiple=True,
    metavar="dir:TEMPLATE",
    group=SEARCH,
    help="Ready build trees (what build_metal.sh leaves in build_<type>), one directory per commit: "
    "{sha}, {short} (10 characters) or {describe} in the path. Commits that have one are tested "
    "first, with no build; builds happen only inside the last interval. A tree that is missing "
    "or does not run decides nothing: that commit is built. Repeatable; without it, `prebuilt` "
    "in lnrepro.toml is used.",
)
@option(
    "--patch",
    "patches",
    multiple=True,
    type=PATHS,
    group=SEARCH,
    help="Apply onto every tested commit. Repeatable.",
)
@option(
    "--command",
    "command",
    metavar="CMD",
    group=ORACLE,
    help="Decide each commit by running CMD at the worktree's root, as `git bisect run` does: "
    "exit 0 good, 125 skip (at once), 1-127 bad. Without it: build and run the gtests.",
)
@option(
    "--metric",
    metavar="NAME",
    group=ORACLE,
    help="Judge by a metric instead of pass/fail, e.g. max_diff, or pcc for --pytest tests.",
)
@option(
    "--threshold",
    type=float,
    group=ORACLE,
    help="With --metric: bad when the worst value is on the wrong side of it: above it for a "
    "difference (max_diff), below it for a correlation (pcc: --threshold 0.999 means bad when "
    "the lowest PCC is under 0.999).",
)
@option(
    "--on-crash",
    type=click.Choice([c.value for c in OnCrash]),
    group=ORACLE,
    help="A crashed test (or a command killed by a signal): bad only when the buggy endpoint "
    "crashed too (match), always bad, or never (skip, as noise). [default: match]",
)
@option(
    "--on-hang",
    type=click.Choice([c.value for c in OnHang]),
    group=ORACLE,
    help="A hung test (or a command past --timeout) counts as this; with bad, only the hang of "
    "the tests that hung at --bad does, and where the watcher log (--watcher) or tt-triage, run "
    "on each hang, places it, only a "
    "hang at the same place: seen there twice, or named with --hang-in. [default: skip]",
)
@option(
    "--hang-in",
    metavar="TEXT",
    group=ORACLE,
    help="With --on-hang bad: the bug's hang is the one whose hang diagnosis (the watcher's or "
    "tt-triage's) names TEXT (a "
    "kernel file such as layernorm_fused_rm.cpp, a RISC, a waypoint, or a pattern such as "
    "CONSUMER_STARVED, as `lnrepro run` printed it); other hangs are noise.",
)
@bisect_backend_options
@test_options
@option(
    "--jobs",
    type=int,
    group=JOBS,
    help="Test this many commits at once (1 to 64), each in its own worktree and container. [default: 1]",
)
@option(
    "--docker-context",
    "contexts",
    multiple=True,
    metavar="NAME",
    group=JOBS,
    help="With --jobs: run job i on Docker context i (round robin), e.g. one per card host; "
    "'default' is this machine's engine, any other sees none of this machine's paths.",
)
@option(
    "--device",
    "devices",
    multiple=True,
    metavar="N",
    group=JOBS,
    help="With --jobs: bind job i to /dev/tenstorrent/N (one --device per job). "
    "[default: one host device per job when there are enough]",
)
@option(
    "--record-dir",
    type=PATHS,
    group="Records",
    help="Where the bisect and its runs keep their records. [default: inside the repository's .git]",
)
@option(
    "--resume",
    is_flag=True,
    group="State",
    help="Continue the bisect whose state is in the repository, with the options it was started with.",
)
@option(
    "--log",
    "show_log",
    is_flag=True,
    group="State",
    help="Show the steps of the last bisect and exit.",
)
@json_flag("the bisect record (lnrepro.bisect/5)")
@click.argument(
    "paths",
    nargs=-1,
    metavar="[-- PATHS]",
    help="Only commits that touch these paths are candidates, as with git bisect's `-- PATHS`.",
)
def bisect(repo: Path, resume: bool, show_log: bool, as_json: bool, **kwargs: Any) -> int:
    """Find the commit that introduced (or, with --find-fix, fixed) the bug.

    Works in a worktree of its own (your checkout, branch and uncommitted work are never
    touched), picks the BugRepro tests onto old commits, skips commits that do not build or
    cannot be tested, writes its state after every step (--resume continues after a crash,
    Ctrl-C or kill -9 with every option it was started with), and names the first bad commit
    with the evidence.

    \b
    lnrepro bisect --good v0.60.0 --bad main --pick 16165972af --tt-metal . --runner local
    lnrepro bisect --good GOOD --bad BAD --command 'sh check.sh'      # like git bisect run
    lnrepro bisect --resume        # after Ctrl-C, kill -9, a reboot
    lnrepro bisect --log           # the steps so far
    """
    from lnrepro import api

    ctx = click.get_current_context()
    if show_log or resume:
        extra = [p for p in ctx.params if p not in RESUME_OWN and given(ctx, p)]
        extra += ["paths"] if kwargs.get("paths") else []
        if extra:
            flag = flag_of(extra[0])
            what = (
                "--resume continues with the options the bisect was started with"
                if resume
                else "--log only shows"
            )
            raise UsageError(
                f"{what}; {flag} cannot be changed", f"drop {flag} (or start a new bisect)"
            )
        if show_log and resume:
            raise UsageError("--log and --resume do not go together", "pick one")
    finished = None
    if resume:  # a finished bisect is shown, not run again
        from lnrepro.bisect.state import finished as is_finished
        from lnrepro.errors import LnreproError

        try:
            saved = api.bisect_log(repo)
        except LnreproError:
            saved = None  # api.resume says what is wrong, in its own words
        finished = saved if saved is not None and is_finished(saved) else None
    if show_log:
        rec = api.bisect_log(repo)
    elif finished is not None:
        rec = finished
        click.echo(
            f"lnrepro: the bisect {rec.id or ''} in {rec.request.repo} already finished; its result "
            "is below (start a new one with --good and --bad)",
            err=True,
        )
    else:
        from lnrepro.errors import EndpointsDoNotSeparate
        from lnrepro.model.bisect import BisectRecord
        from lnrepro.present.console import RichBisectEvents, make_console

        on_stop(_resume_hint(repo, resume))
        try:
            with RichBisectEvents(make_console(stderr=True)) as events:
                rec = (
                    api.resume(repo, events)
                    if resume
                    else api.bisect(_request(repo, kwargs), events)
                )
        except EndpointsDoNotSeparate as exc:
            if as_json and isinstance(exc.record, BisectRecord):  # the document says so too
                echo_json(exc.record.to_json())
            raise
    if as_json:
        echo_json(rec.to_json())
    else:
        from lnrepro.present.console import make_console, render_bisect

        render_bisect(rec, make_console())
    if show_log:
        return ExitCode.OK
    return ExitCode.OK if rec.result and rec.result.first_bad else ExitCode.FAILED


def _resume_hint(repo: Path, resume: bool) -> Callable[[], str | None]:
    """After Ctrl-C or SIGTERM: how to continue, once this bisect's state is on disk (a new
    bisect's state is written after its request is checked; an older bisect's file is not it)."""
    import shlex

    from lnrepro.bisect import state
    from lnrepro.bisect.validate import check_repo
    from lnrepro.errors import LnreproError

    def stamp(p: Path) -> tuple[int, int, int] | None:
        try:
            st = p.stat()
        except OSError:
            return None
        return st.st_ino, st.st_mtime_ns, st.st_size  # written atomically: a new inode each time

    try:
        path = state.state_path(check_repo(repo))
    except LnreproError:
        return lambda: None  # the command itself says what is wrong with --repo
    before = stamp(path)

    def hint() -> str | None:
        now = stamp(path)
        if now is None or (not resume and now == before):
            return None
        where = [] if repo.absolute() == Path.cwd() else ["--repo", str(repo)]
        return f"its state is saved: `{shlex.join(['lnrepro', 'bisect', '--resume', *where])}` continues it"

    return hint


def _request(repo: Path, kw: dict[str, Any]) -> BisectRequest:
    backend, tests = pop_backend(kw), pop_tests(kw)
    if not kw["goods"] or not kw["bad"]:
        raise UsageError("bisect needs --good and --bad", "pass both (or --resume)")
    if kw["confidence"] is not None and tests.get("repeat") is not None:
        raise UsageError(
            "--repeat and --confidence are two ways to handle flakiness",
            "use one: --confidence decides how often to re-run each commit",
        )
    from lnrepro.model.gtest import HIGHER_IS_BETTER

    if kw["hang_in"] is not None and (kw["on_hang"] != "bad" or not kw["hang_in"].strip()):
        raise UsageError(
            "--hang-in names the place of a hang that is the bug",
            "pass it with --on-hang bad and a non-empty text, e.g. --hang-in layernorm_fused_rm.cpp",
        )
    policy = Policy(
        on_crash=OnCrash(kw["on_crash"] or "match"),
        on_hang=OnHang(kw["on_hang"] or "skip"),
        metric=kw["metric"],
        threshold=kw["threshold"],
        higher_is_better=kw["metric"] in HIGHER_IS_BETTER,
        hang_in=kw["hang_in"],
    )
    return BisectRequest(
        repo=repo,
        good=tuple(kw["goods"]),
        bad=kw["bad"],
        oracle=_oracle(kw["command"], backend, tests, repo),
        policy=policy,
        confidence=kw["confidence"],
        fail_rates=_fail_rates(kw["fail_rates"]),
        jobs=1 if kw["jobs"] is None else kw["jobs"],
        contexts=tuple(kw["contexts"]),
        devices=tuple(kw["devices"]),
        picks=tuple(kw["picks"]),
        patches=tuple(kw["patches"]),
        find_fix=kw["find_fix"],
        first_parent=kw["first_parent"],
        confirm=not kw["no_confirm"],
        paths=tuple(kw["paths"]),
        record_dir=kw["record_dir"],
        prebuilt=tuple(kw["prebuilt"]),
        rates_from=tuple(kw["rates_from"]),
    )
