"""The click side of the options: the table's entries as click parameters, the parameters
shared by commands, and the one place command-line values become typed requests.

The options of ``run``, ``bisect`` and ``shrink`` that set a request's fields are made from the
table of options (:mod:`lnrepro.options.table`, and shrink's own in
:mod:`lnrepro.options.shrink`): :func:`table_options` turns its entries into click
options, and :func:`values_of` reads the parsed values back into a request's fields, typed as
the request holds them (:func:`backend_spec`, :func:`test_spec`, the commands'
``request_from``/``_request``/``shrink_request``). A value option defaults to ``None`` and a
repeatable one to ``()``, so "did the user pass it?" is asked of the value (:func:`is_given`),
here and nowhere else; the request's own default applies. Options carry a help *section*
(``group``), which :class:`Command` prints as click's own help sections, and every error names
an option by the flag the table declares.

Loaded only by the commands themselves: ``lnrepro --help`` imports none of this.
"""

from __future__ import annotations

import enum
import os
import shlex
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from lnrepro.cli.help import Context
from lnrepro.emulator.defects import DEFECT_NAMES
from lnrepro.errors import UsageError
from lnrepro.model.kinds import DEFAULT_RECORD_DIR, BackendKind
from lnrepro.options import table as table
from lnrepro.options.opt import Opt, by_dest

if TYPE_CHECKING:
    from lnrepro.model.requests import BackendSpec, TestSpec

F = Callable[..., Any]
# Paths are the request's to check (validate.py): click's own checks would make an unreadable
# record directory a usage error, and it is the environment's (exit 5).
PATHS = click.Path(path_type=Path, readable=False)


class Option(click.Option):
    """An option that knows its help section."""

    def __init__(self, *args: Any, group: str = "Options", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.group = group


SIMILAR = 0.75  # difflib ratio of two flags' names (without the dashes) to call one a typo


def _close(name: str, flags: list[str]) -> list[str]:
    import difflib

    by_bare = {f.lstrip("-"): f for f in flags if f.startswith("--")}
    return [by_bare[m] for m in difflib.get_close_matches(name.lstrip("-"), by_bare, 3, SIMILAR)]


def _as_choice(command: click.Command, name: str) -> str | None:
    """``--VALUE`` where this command takes ``--option VALUE``: the option and value it may mean
    (``--json`` for ``--format json``; ``--markdown`` for ``--format md``, a value whose letters
    come in order in the flag's, from its first)."""
    bare = name.lstrip("-").lower()

    def means(choice: str) -> bool:
        rest = iter(bare)
        return choice == bare or (
            choice[:1] == bare[:1] and len(choice) > 1 and all(c in rest for c in choice)
        )

    for p in command.params:
        if isinstance(p, click.Option) and isinstance(p.type, click.Choice) and p.opts:
            for choice in p.type.choices:
                if means(str(choice).lower()):
                    return f"{p.opts[0]} {choice}"
    return None


def no_such_option(ctx: click.Context, name: str) -> click.NoSuchOption:
    """An unknown flag, with the flags it may be a typo of: this command's, or else another
    command's (``run --thershold``: --threshold is bisect's). click's own suggestion compares
    with the dashes and a loose cutoff, and offered --watcher."""
    own = _close(name, [o for p in ctx.command.params for o in p.opts])
    message = f"no such option {name}"
    if own:
        message += f"; did you mean {' or '.join(own)}?"
    elif chosen := _as_choice(ctx.command, name):  # report --markdown: --format md
        message += f"; did you mean {chosen}?"
        own = [chosen]
    parent = ctx.parent
    if not own and parent is not None and isinstance(parent.command, click.Group):
        group = parent.command
        for other in group.list_commands(parent):
            cmd = group.get_command(parent, other)
            near = _close(name, [o for p in cmd.params for o in p.opts]) if cmd else []
            if near and other != ctx.info_name:
                message += f" ({near[0]} is an option of `{parent.info_name} {other}`)"
                break
    return click.NoSuchOption(name, message, ctx=ctx)


class Command(click.Command):
    """A command whose ``--help`` lists its options in sections (click's HelpFormatter.section)
    and whose unknown-option error suggests only near misses. Its help breaks lines at spaces
    only (:class:`lnrepro.cli.HelpFormatter`)."""

    context_class = Context

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command, lnrepro first made a subreaper (orphans of what it starts re-parent
        to it, and it kills them): here, not in ``main``, so ``--help``, which exits while the
        arguments are parsed, imports none of the process machinery (issue 45's start-up)."""
        from lnrepro.doors import proc

        proc.become_subreaper()
        return super().invoke(ctx)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            raise no_such_option(ctx, exc.option_name) from None
        except click.UsageError as exc:  # the parser's own (`-n` with no value) know no command
            if exc.ctx is None:
                exc.ctx = ctx  # so the fix names `lnrepro run --help`, not `lnrepro --help`
            raise

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        sections: dict[str, list[tuple[str, str]]] = {}
        for p in self.get_params(ctx):
            if isinstance(p, click.Argument):  # in "Positional arguments" (format_arguments)
                continue
            rec = p.get_help_record(ctx)
            if rec is not None:
                sections.setdefault(getattr(p, "group", "Options"), []).append(rec)
        for name, rows in sections.items():
            with formatter.section(name):
                formatter.write_dl(rows)


def option(*decls: str, group: str = "Options", **kw: Any) -> Callable[[F], F]:
    return click.option(*decls, cls=Option, group=group, **kw)


def flag_of(name: str, ctx: click.Context | None = None) -> str:
    """The flag ``--help`` shows for the running command's parameter ``name`` (its dest name, or
    a long flag it has), asked of click (``Parameter.opts``), so an error can never spell a flag
    the command does not have. A positional argument is named by its metavar."""
    ctx = ctx or click.get_current_context()
    params = ctx.command.params
    p = next((p for p in params if p.name == name), None) or next(
        (p for p in params if f"--{name.replace('_', '-')}" in p.opts), None
    )
    if p is None:  # a dest name that drifted from the options: a bug, found by the tests
        raise LookupError(f"{ctx.command_path} has no parameter {name!r}")
    if isinstance(p, click.Argument):
        return p.make_metavar(ctx).strip("[].")
    longs = [o for o in p.opts if o.startswith("--")]
    return (longs or list(p.opts))[0]


def exclusive(**flags: object) -> None:
    """At most one of these parameters (by dest name) was given."""
    given = [flag_of(k) for k, v in flags.items() if v]
    if len(given) > 1:
        raise UsageError(f"{' and '.join(given)} do not go together", "pick one")


def given(ctx: click.Context, name: str) -> bool:
    """The user typed this option (or set its environment variable): not a default."""
    src = ctx.get_parameter_source(name)
    return src is not None and src.name in ("COMMANDLINE", "ENVIRONMENT")


def tt_metal_home() -> Path | None:
    """``$TT_METAL_HOME``, the one way lnrepro reads it (empty counts as unset)."""
    v = os.environ.get("TT_METAL_HOME")
    return Path(v) if v else None


# ---------------------------------------------------------------------------------- the table
Params = Mapping[str, Any]  # click's parameters of one command, by dest name


def table_option(o: Opt) -> Callable[[F], F]:
    """The click option of one entry of the table (lnrepro.options.table): its type, choices,
    repetition and flag-ness from the request field's annotation, the rest as declared. A value
    option defaults to None and a repeatable one to (): "did the user give it?" is asked of the
    value, and the request's own default applies."""
    kw: dict[str, Any] = {"group": o.group, "help": o.help.replace("{DEFECT_NAMES}", DEFECT_NAMES)}
    if o.metavar:
        kw["metavar"] = o.metavar
    shape = o.shape  # the field's type, without importing the requests
    if shape.kind == "flag":
        kw.update(is_flag=True, default=False)
    elif o.form == "tag":
        kw["type"] = click.Choice([k.value for k in BackendKind])
    else:
        kind = {"int": int, "float": float, "path": PATHS}.get(shape.kind)
        if shape.choices is not None:
            kw["type"] = click.Choice(list(shape.choices))
        elif kind is not None:
            kw["type"] = kind
        kw["multiple"] = shape.multiple
    if o.show_default:
        kw.update(default=shape.default, show_default=True)
    return option(*o.flags, o.dest, **kw)


def table_options(opts: tuple[Opt, ...]) -> Callable[[F], F]:
    """The options of ``opts`` (one per dest), in the table's order."""

    def deco(f: F) -> F:
        for o in reversed(by_dest(opts).values()):
            f = table_option(o)(f)
        return f

    return deco


def is_given(v: object) -> bool:
    """A parameter's value the user gave (a value, a flag set, a repeatable option repeated)."""
    return v is not None and v is not False and v != ()


def values_of(owner: type | str, opts: tuple[Opt, ...], params: Params) -> dict[str, Any]:
    """The fields of ``owner`` the command line gave, typed as the request holds them (the
    fields not given keep the request's defaults)."""
    name = owner if isinstance(owner, str) else owner.__name__
    out: dict[str, Any] = {}
    for o in opts:
        v = params.get(o.dest)
        if o.of != name or o.form == "tag" or not is_given(v):
            continue
        out[o.field] = typed(o, v)
    return out


def typed(o: Opt, v: Any) -> Any:
    if o.is_flag:
        return not o.negate
    if o.form == "command":
        return split_command(v, o.flag)
    if o.form == "pairs":
        return env_pairs(v, o.flag)
    if o.form == "rates":
        return rates(v, o.flag)
    item = o.item
    if isinstance(item, type) and issubclass(item, enum.Enum):
        return tuple(item(x) for x in v) if o.multiple else item(v)
    return tuple(v) if o.multiple else v


def env_pairs(items: tuple[str, ...], flag: str) -> dict[str, str]:
    env: dict[str, str] = {}  # a name given twice: the last value, as a shell would
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"{flag} {item!r} is not KEY=VALUE", f"write it as {flag} NAME=value")
        env.pop(key, None)
        env[key] = value
    return env


def rates(text: str, flag: str) -> tuple[float, float]:
    try:
        bad_rate, good_rate = (float(x) for x in text.split(","))
    except ValueError:
        raise UsageError(f"{flag} {text!r} is not BAD,GOOD", f"e.g. {flag} 0.7,0.05") from None
    return bad_rate, good_rate


def split_command(text: str, flag: str) -> tuple[str, ...]:
    """A command given as one string, split as a shell would; a usage error when it cannot be."""
    try:
        argv = tuple(shlex.split(text))
    except ValueError as exc:
        raise UsageError(f"{flag} {text!r} cannot be split: {exc}", "balance the quotes") from None
    if not argv:
        raise UsageError(f"{flag} is empty", f"give the command for {flag}")
    return argv


# ---------------------------------------------------------------------------------- backend
OWNERS: dict[str, tuple[str, tuple[Opt, ...]]] = {
    "emulator": ("EmulatorSpec", table.EMULATOR_OPTS),
    "local": ("BinarySpec", table.LOCAL_OPTS),
    "tt-metal": ("TtMetalSpec", (*table.TT_METAL_OPTS, *table.ENGINE_OPTS)),
    "python": ("PythonSpec", table.PYTHON_OPTS),
}
# the dest names of each backend's options (tests/cli/test_flag_names.py walks them)
EMULATOR, LOCAL, TT_METAL, PYTHON = (tuple(o.dest for o in opts) for _, opts in OWNERS.values())


def _misplaced(chosen: str, params: Params) -> None:
    mine = {o.dest for o in OWNERS[chosen][1]}  # --python, --env: shared by two backends
    for other, (_, opts) in OWNERS.items():
        if other == chosen:
            continue
        for o in opts:
            if o.dest not in mine and is_given(params.get(o.dest)):
                raise UsageError(
                    f"{o.flag} only applies with --backend {other}",
                    f"add --backend {other}, or drop {o.flag}",
                )


def given_backend(params: Params, opts: tuple[Opt, ...]) -> list[str]:
    """The backend options the command line gave, as ``--help`` spells them."""
    return [
        o.flag
        for o in by_dest(opts).values()
        if o.of in ("EmulatorSpec", "BinarySpec", "TtMetalSpec", "PythonSpec", "RunRequest")
        and is_given(params.get(o.dest))
    ]


def backend_spec(params: Params, *, default_checkout: Path | None = None) -> BackendSpec:
    """The backend the options ask for, or a usage error naming the misplaced option."""
    chosen = params.get("backend") or (
        "tt-metal"
        if params.get("tt_metal") is not None or default_checkout
        else "python"
        if is_given(params.get("pytest_nodeids")) and "repo" in params
        else "emulator"
    )
    _misplaced(chosen, params)
    from lnrepro.model.requests import BinarySpec, EmulatorSpec, PythonSpec, TtMetalSpec

    owner, opts = OWNERS[chosen]
    values = values_of(owner, opts, params)
    if owner == "EmulatorSpec":
        if "seed" in values and "data" not in values:
            values["data"] = "random"  # --seed implies --data random
        return EmulatorSpec(**values)
    if owner == "PythonSpec":
        return PythonSpec(**values)
    if owner == "BinarySpec":
        if "binary" not in values:
            raise UsageError(
                "--backend local needs --binary PATH",
                "pass the gtest binary, e.g. build/tt-train/tests/ttml_tests",
            )
        return BinarySpec(**values)
    checkout = values.pop("checkout", None) or default_checkout or tt_metal_home()
    if checkout is None:
        raise UsageError("no tt-metal checkout given", "pass --tt-metal DIR or set TT_METAL_HOME")
    return TtMetalSpec(checkout=Path(checkout), **values)


# ---------------------------------------------------------------------------------- tests
def test_spec(params: Params) -> TestSpec:
    from lnrepro.model.requests import TestSpec

    values = values_of(TestSpec, table.TEST_OPTS, params)
    if "pytest" in values and "gtest_filter" in values:
        flt, pyt = table.flag(TestSpec, "gtest_filter"), table.flag(TestSpec, "pytest")
        raise UsageError(
            f"{flt} and {pyt} do not go together",
            f"{flt} picks gtests, {pyt} names pytest tests: give one",
        )
    return TestSpec(**values)


def record_dir_option(
    help_text: str, *, default: Path | None = DEFAULT_RECORD_DIR
) -> Callable[[F], F]:
    return option(
        "--record-dir",
        type=PATHS,
        default=default,
        group="Records",
        show_default=default is not None,
        help=help_text,
    )


def json_flag(what: str) -> Callable[[F], F]:
    return option("--json", "as_json", is_flag=True, group="Output", help=f"Print {what} as JSON.")
