"""``lnrepro bisect``: find the commit that introduced (or fixed) the bug."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from lnrepro.cli.commands import SUMMARY, cli
from lnrepro.cli.exits import on_stop
from lnrepro.cli.output import echo_json
from lnrepro.cli.params import (
    Command,
    Params,
    backend_spec,
    flag_of,
    given,
    is_given,
    json_flag,
    option,
    split_command,
    table_options,
    test_spec,
    values_of,
)
from lnrepro.errors import ExitCode, UsageError
from lnrepro.model.kinds import OnHang
from lnrepro.options import table as table
from lnrepro.options.opt import by_dest

if TYPE_CHECKING:
    from lnrepro.model.bisect import BisectRecord
    from lnrepro.model.requests import BisectRequest, OracleSpec

# what --resume takes from the command line (the table's resume=True, and the command's own
# switches); every other option is the saved request's
RESUME_OWN = {o.dest for o in table.BISECT_OPTS if o.resume} | {"resume", "as_json", "show_log"}


def _oracle(params: Params, repo: Path) -> OracleSpec:
    """How each commit is judged; a misplaced option is named as ``--help`` spells it."""
    from lnrepro.model.requests import CommandOracleSpec, PythonSpec, RunOracleSpec, TtMetalSpec

    command = params.get("command")
    if command is not None:
        flag = table.flag(CommandOracleSpec, "argv")
        argv = split_command(command, flag)
        for o in by_dest((*table.BACKEND_OPTS, *table.TEST_OPTS)).values():
            shared = o.of == "TestSpec" and o.field in ("repeat", "timeout_s")  # a command's too
            if not shared and is_given(params.get(o.dest)):
                raise UsageError(
                    f"{o.flag} does not apply with {flag}", f"drop {o.flag}, or drop {flag}"
                )
        aliases = values_of(CommandOracleSpec, table.COMMAND_ORACLE_ALIASES, params)
        return CommandOracleSpec(argv=argv, **aliases)
    kind = params.get("backend")
    if kind == "python":  # a Python project's --pytest tests, at each commit
        values = values_of(PythonSpec, table.PYTHON_OPTS, params)
        values.pop("project", None)
        return RunOracleSpec(backend=PythonSpec(project=repo, **values), tests=test_spec(params))
    if kind not in (None, "tt-metal"):
        raise UsageError(
            f"bisect builds and tests a tt-metal checkout or a Python project, not --backend {kind}",
            "drop --backend (or --backend python for a Python project), or judge commits with "
            "--command",
        )
    checkout = params.get("tt_metal")
    if checkout is not None and Path(checkout).absolute() != repo.absolute():
        raise UsageError(
            "--tt-metal and --repo name different checkouts",
            "bisect tests its own worktree of --repo: drop --tt-metal",
        )
    spec = backend_spec({**params, "tt_metal": None}, default_checkout=repo)
    assert isinstance(spec, TtMetalSpec)
    return RunOracleSpec(backend=spec, tests=test_spec(params))


@cli.command(cls=Command, short_help=SUMMARY["bisect"])
@table_options(table.BISECT_OPTS)
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
@json_flag("the bisect record (lnrepro.bisect/6)")
@click.argument(
    "paths",
    nargs=-1,
    metavar="[-- PATHS]",
    help="Only commits that touch these paths are candidates, as with git bisect's `-- PATHS`.",
)
@option(
    "--package",
    metavar="NAME",
    group="Released versions",
    help="Bisect the released versions of this dependency instead of commits: --good and --bad "
    "are versions, the test (--pytest) runs in the project (--repo) with each step's version "
    "installed in a cached venv over --python's environment.",
)
@option(
    "--index-url",
    metavar="URL",
    group="Released versions",
    help="With --package: a PEP 503 simple index (a folder or file:// URL) to list and install "
    "the versions from. [default: pip's configured index]",
)
@option(
    "--find-links",
    metavar="DIR",
    group="Released versions",
    help="With --package: a folder of wheels to list and install the versions from (offline).",
)
def bisect(repo: Path, resume: bool, show_log: bool, as_json: bool, **kwargs: Any) -> int:
    """Find the commit that introduced (or, with --find-fix, fixed) the bug.

    Works in a worktree of its own (your checkout, branch and uncommitted work are never
    touched), picks the BugRepro tests onto old commits, skips commits that do not build or
    cannot be tested, writes its state after every step (--resume continues after a crash,
    Ctrl-C or kill -9 with every option it was started with), and names the first bad commit
    with the evidence.

    \b
    lnrepro bisect --good v0.60.0 --bad main --pick 16165972af --runner local
    lnrepro bisect --good GOOD --bad BAD --command 'sh check.sh'  # git bisect run
    lnrepro bisect --resume        # after Ctrl-C, kill -9, a reboot
    lnrepro bisect --log           # the steps so far
    """
    from lnrepro import api

    package, index_url, find_links = (kwargs.pop(k) for k in ("package", "index_url", "find_links"))
    if package is not None and not (resume or show_log):  # else: refused below, by its flag
        return _versions(repo, package, index_url, find_links, as_json, kwargs)
    if (index_url is not None or find_links is not None) and not (resume or show_log):
        raise UsageError("--index-url and --find-links go with --package", "add --package NAME")
    ctx = click.get_current_context()
    if show_log or resume:
        extra = [p for p in ctx.params if p not in RESUME_OWN and given(ctx, p)]
        extra += ["paths"] if kwargs.get("paths") else []
        saved = _saved(repo) if "record_dir" in extra else None
        started = saved.request.record_dir if saved is not None else None
        if started is not None and _norm(started) == _norm(kwargs["record_dir"]):
            extra.remove("record_dir")  # what the bisect was started with: no change
        if extra:
            flag = flag_of(extra[0])
            what = (
                "--resume continues with the options the bisect was started with"
                if resume
                else "--log only shows"
            )
            was = f" (it was started with {flag} {started})" if extra[0] == "record_dir" else ""
            raise UsageError(
                f"{what}; {flag} cannot be changed{was if started else ''}",
                f"drop {flag} (or start a new bisect)",
            )
        if show_log and resume:
            raise UsageError("--log and --resume do not go together", "pick one")
    finished = None
    if resume:  # a finished bisect is shown, not run again
        from lnrepro.bisect.state import finished as is_finished

        saved = _saved(repo)
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
            events = RichBisectEvents(make_console(stderr=True))
            rec = api.resume(repo, events) if resume else api.bisect(_request(repo, kwargs), events)
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


def _saved(repo: Path) -> BisectRecord | None:
    """The bisect saved in ``repo`` (None: none, or one that cannot be read: ``--resume`` says
    what is wrong, in its own words)."""
    from lnrepro import api
    from lnrepro.errors import LnreproError

    try:
        return api.bisect_log(repo)
    except LnreproError:
        return None


def _norm(path: Path) -> str:
    """A directory's name as the saved bisect's ``--record-dir`` is compared with it."""
    return os.path.normpath(path.expanduser().absolute())


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


def _request(repo: Path, params: Params) -> BisectRequest:
    """The bisect the command line asks for (its options are the table's BISECT_OPTS)."""
    from lnrepro.model.requests import BisectRequest, Policy, TestSpec

    values = values_of(BisectRequest, table.BISECT_OPTS, params)
    values.pop("repo", None)  # resolved by the command
    good, bad = table.flag(BisectRequest, "good"), table.flag(BisectRequest, "bad")
    if "good" not in values or "bad" not in values:
        raise UsageError(f"bisect needs {good} and {bad}", "pass both (or --resume)")
    repeat, confidence = table.flag(TestSpec, "repeat"), table.flag(BisectRequest, "confidence")
    if "confidence" in values and params.get("repeat") not in (None, 1):  # 1 is the default
        raise UsageError(
            f"{repeat} and {confidence} are two ways to handle flakiness",
            f"use one: {confidence} decides how often to re-run each commit",
        )
    from lnrepro.model.gtest import HIGHER_IS_BETTER

    policy = values_of(Policy, table.BISECT_OPTS, params)
    hang_in = policy.get("hang_in")
    if hang_in is not None and (policy.get("on_hang") is not OnHang.BAD or not hang_in.strip()):
        flag = table.flag(Policy, "hang_in")
        raise UsageError(
            f"{flag} names the place of a hang that is the bug",
            f"pass it with --on-hang bad and a non-empty text, e.g. {flag} layernorm_fused_rm.cpp",
        )
    return BisectRequest(
        repo=repo,
        oracle=_oracle(params, repo),
        policy=Policy(higher_is_better=policy.get("metric") in HIGHER_IS_BETTER, **policy),
        paths=tuple(params.get("paths") or ()),
        **values,
    )


def _versions(
    repo: Path,
    package: str,
    index_url: str | None,
    find_links: str | None,
    as_json: bool,
    params: Params,
) -> int:
    """``bisect --package NAME``: which release of NAME made the test fail (or fixed it)."""
    import time

    from lnrepro.bisect import releases as rel
    from lnrepro.model.requests import PythonSpec, TestSpec
    from lnrepro.run.backends.python import project_python
    from lnrepro.run.python_project import check_project

    goods: tuple[str, ...] = tuple(params.get("goods") or ())
    bad: str | None = params.get("bad")
    nodes = tuple(params.get("pytest_nodeids") or ())
    if not nodes:
        raise UsageError("--package bisects a --pytest test", "name it with --pytest NODEID")
    if len(goods) != 1 or bad is None:
        raise UsageError(
            "--package needs one --good and one --bad version", "e.g. --good 1.26.4 --bad 2.0.2"
        )
    find_fix = bool(params.get("find_fix"))
    if params.get("image"):  # each step's venv is layered over a Python of this host
        raise UsageError("--package does not run in --image", "drop --image; pass --python PATH")
    spec = PythonSpec(project=repo.absolute(), python=params.get("python"))
    check_project(spec, nodes, collect=False)  # the package is in each step's venv only
    python = project_python(repo.absolute(), spec.python)
    if find_links is not None:
        source, index = find_links, ["--no-index", "--find-links", find_links]
    elif index_url is not None:
        url = index_url if "://" in index_url else Path(index_url).absolute().as_uri()
        source, index = index_url, ["--index-url", url]
    else:
        raise UsageError(
            "--package needs the index to list its versions from",
            "pass --index-url URL (a PEP 503 simple index) or --find-links DIR",
        )
    found = rel.releases(source, package)
    if not found:
        raise UsageError(f"no package {package} in {source}", "check the name and the index")
    span = rel.in_range(found, goods[0], bad, find_fix=find_fix)
    cache = (
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "lnrepro" / "versions"
    )
    record_dir = repo.absolute() / ".lnrepro" / "runs"
    tests = TestSpec(
        pytest=nodes, repeat=params.get("repeat") or 1, timeout_s=params.get("timeout_s") or 1800.0
    )

    def judge(r: rel.Release) -> rel.Step:
        from lnrepro.errors import EnvironmentProblem
        from lnrepro.model.record import Verdict
        from lnrepro.model.requests import RunRequest
        from lnrepro.run.backends.factory import make_backend
        from lnrepro.run.pipeline import run_tests

        start = time.monotonic()
        try:
            py = rel.step_env(cache, python, package, r, index)
        except EnvironmentProblem as exc:
            return rel.Step(
                version=r.version,
                mark=rel.Mark.SKIP,
                why=exc.message,
                seconds=time.monotonic() - start,
            )
        step = PythonSpec(project=repo.absolute(), python=py)
        rec = run_tests(
            make_backend(step), RunRequest(backend=step, tests=tests, record_dir=record_dir)
        )
        v = rec.verdict
        mark = (
            rel.Mark.GOOD
            if v is Verdict.PASS
            else rel.Mark.BAD
            if v.failing and not rec.incomplete
            else rel.Mark.SKIP
        )
        click.echo(f"  {package} {r.version} -> {mark.value} ({v.value})", err=True)
        return rel.Step(
            version=r.version,
            mark=mark,
            why=rec.why or "",
            record=str(rec.record_dir),
            seconds=round(time.monotonic() - start, 3),
        )

    out = rel.search(span, judge, find_fix=find_fix)
    if as_json:
        echo_json(out.as_json(package, find_fix))
    else:
        what = "first fixed" if find_fix else "first bad"
        click.echo(
            f"{package}: {what} version {out.first_bad}, last {'bad' if find_fix else 'good'} "
            f"{out.last_good}"
            if out.first_bad
            else f"{package}: no answer: {out.reason}"
        )
    return ExitCode.OK if out.first_bad else ExitCode.FAILED
