"""An entry of the table of options (:class:`Opt`) and what is derived from one: every request
field a command line sets is declared once (issue 39).

An :class:`Opt` names its field (the request type and the field's name) and says what only a
command line knows: its flag(s), help, help section, metavar, whether ``bisect --resume`` may
give it again, and its key in lnrepro.toml. What the field itself says is not restated: the
type (a ``Literal`` or an enum is a choice, a ``bool`` a flag, a tuple a repeatable option), the
default and the constraints come from the request's annotation. From this table come:

* the click options of ``run``, ``bisect`` and ``shrink`` and their typed parse into requests
  (:mod:`lnrepro.cli.params`);
* the command line that repeats a request (:func:`lnrepro.options.argv`), which records keep;
* the keys of lnrepro.toml that set an option's default (:mod:`lnrepro.run.config`);
* ``bisect --resume``'s "cannot be changed" (every option but ``--repo``: the request is saved);
* the flag every error names (:func:`flag`, and :class:`Opt.flag`).

Why a table beside the requests rather than metadata on each field (``Annotated``): the
requests stay short and readable as data (the help text is most of this file); one field can
be set by the same option in two commands, or one option set two fields (``--timeout`` is the
tests' limit and a ``--command``'s); and ``--help`` lists options in the order a person reads
them, not the order of the fields. tests/cli/test_options_table.py holds the two together:
every entry names a real field, every field a command line can set has an entry (or is named in
:data:`NOT_OPTIONS`), and each entry's flag and help are in its command's ``--help``.

The entries are in :mod:`lnrepro.options.table` (``shrink``'s own in
:mod:`lnrepro.options.shrink`); only the standard library is imported
here and there (and the requests): no click.
"""

from __future__ import annotations

import enum
import shlex
import types
import typing
from dataclasses import MISSING, dataclass, fields, is_dataclass
from pathlib import Path
from typing import Any, Literal

# how a value is written on the command line, when its type alone does not say
Form = Literal["value", "command", "pairs", "rates", "tag"]


@dataclass(frozen=True, kw_only=True)
class Opt:
    """One option: the field it sets and what the command line shows of it."""

    of: str  # the name of the request type whose field this is (see :func:`owner_type`)
    field: str
    flags: tuple[str, ...]  # the first long flag is the one errors name
    dest: str = ""  # the click parameter's name (when not given: the field's)
    help: str
    group: str
    metavar: str | None = None
    form: Form = "value"  # command: one shell line; pairs: KEY=VALUE, repeatable; rates: A,B
    negate: bool = False  # a flag that sets its bool field to False (--no-triage)
    always: bool = False  # the rerun line writes it even at its default
    resume: bool = False  # bisect --resume may give it again (no request field may)
    toml: str | None = None  # its key in lnrepro.toml, where the file sets its default
    show_default: bool = False  # --help shows the default: the field's, or ``fallback``
    fallback: Any = None  # the command line's default where the field has none (--repo: .)

    def __post_init__(self) -> None:
        if not self.dest:
            object.__setattr__(self, "dest", self.field)

    @property
    def owner(self) -> type:
        """The request type whose field this is (imported when first asked: not by ``--help``)."""
        return owner_type(self.of)

    @property
    def shape(self) -> Shape:
        """What click needs of the field, without importing the requests (their msgspec):
        :data:`lnrepro.options.shapes.SHAPES`, derived from the field and checked by
        tests/cli/test_options_table.py."""
        from lnrepro.options.shapes import SHAPES

        return Shape(*SHAPES[(self.of, self.field)])

    @property
    def flag(self) -> str:
        """The flag ``--help`` shows and every error names."""
        return next((f for f in self.flags if f.startswith("--")), self.flags[0])

    @property
    def annotation(self) -> Any:
        """The field's type, without ``None`` and constraints: what a given value is."""
        return bare(hints(self.owner)[self.field])

    @property
    def is_flag(self) -> bool:
        return self.annotation is bool

    @property
    def multiple(self) -> bool:
        return self.form == "pairs" or (
            self.form == "value" and typing.get_origin(self.annotation) is tuple
        )

    @property
    def item(self) -> Any:
        """The type of one value given on the command line."""
        if self.form != "value":
            return str
        if typing.get_origin(self.annotation) is tuple:
            return bare(typing.get_args(self.annotation)[0])
        return self.annotation

    @property
    def choices(self) -> tuple[str, ...] | None:
        t = self.item
        if typing.get_origin(t) is Literal:
            return tuple(str(a) for a in typing.get_args(t))
        if isinstance(t, type) and issubclass(t, enum.Enum):
            return tuple(str(m.value) for m in t)
        return None

    def default(self) -> Any:
        """The field's default (what the command line without this option gives)."""
        return field_default(self.owner, self.field)


class Shape(typing.NamedTuple):
    """A field as its click option sees it: ``kind`` is flag, int, float, path or str."""

    kind: str
    choices: tuple[str, ...] | None
    multiple: bool
    default: Any  # the command line's default as click takes it (with ``show_default``)


def shape_of(o: Opt) -> Shape:
    """``o``'s :class:`Shape`, from its field (scripts/option_shapes.py writes them all)."""
    kind = "flag" if o.is_flag else {int: "int", float: "float"}.get(o.item, "str")
    if o.item is Path and o.form == "value":
        kind = "path"
    d = (o.fallback if o.default() is None else o.default()) if o.show_default else None
    d = d.value if isinstance(d, enum.Enum) else str(d) if isinstance(d, Path) else d
    return Shape(kind, o.choices, o.multiple, d)


def owner_type(name: str) -> type:
    """A request type by its name: one of :mod:`lnrepro.model.requests`' or ShrinkRequest."""
    from lnrepro.model import requests, shrink

    found = getattr(requests, name, None) or getattr(shrink, name)
    assert isinstance(found, type), name
    return found


def hints(owner: type) -> dict[str, Any]:
    return typing.get_type_hints(owner, include_extras=True)


def bare(tp: Any) -> Any:
    """``tp`` without ``Annotated`` constraints and without ``| None``."""
    if typing.get_origin(tp) is typing.Annotated:
        return bare(typing.get_args(tp)[0])
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1:
            return bare(args[0])
    return tp


def field_default(owner: type, name: str) -> Any:
    """The default of ``owner``'s field ``name`` (None when it has none)."""
    import msgspec

    found = fields(owner) if is_dataclass(owner) else msgspec.structs.fields(owner)
    f = next(f for f in found if f.name == name)
    if f.default is not MISSING and f.default is not msgspec.NODEFAULT:
        return f.default
    factory = f.default_factory
    return None if factory is MISSING or factory is msgspec.NODEFAULT else factory()


def by_dest(opts: tuple[Opt, ...]) -> dict[str, Opt]:
    """A command's options by their click parameter's name (the first entry of a shared one)."""
    out: dict[str, Opt] = {}
    for o in opts:
        out.setdefault(o.dest, o)
    return out


# ---------------------------------------------------------------------------------- argv
def written(o: Opt, value: Any) -> list[str]:
    """The arguments that give ``o`` this value (none for a default the line may leave out)."""
    if o.form == "tag" or value is None or (not o.always and value == o.default()):
        return []
    if o.is_flag:
        return [o.flag] if bool(value) != o.negate else []
    if o.form == "command":
        return [o.flag, shlex.join(value)]
    if o.form == "pairs":
        return [a for k, v in value.items() for a in (o.flag, f"{k}={v}")]
    if o.form == "rates":
        return [o.flag, f"{text(value[0])},{text(value[1])}"]
    if o.multiple:
        return [a for v in value for a in (o.flag, text(v))]
    return [o.flag, text(value)]


def text(v: Any) -> str:
    """A value as the command line gives it: an enum's value, a float as short as it reads back."""
    if isinstance(v, enum.Enum):
        return str(v.value)
    if isinstance(v, float):
        short = f"{v:g}"
        return short if float(short) == v else repr(v)
    return str(v)


def argv(obj: Any, opts: tuple[Opt, ...]) -> list[str]:
    """The options of ``opts`` that set ``obj``'s fields, in the table's order."""
    return [
        a for o in opts if o.of == type(obj).__name__ for a in written(o, getattr(obj, o.field))
    ]
