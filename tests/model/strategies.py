"""Hypothesis strategies for lnrepro's record types, read from the types themselves.

``for_type(T)`` walks T's annotations (dataclass fields, msgspec Struct fields, unions, tuples,
lists, dicts, enums, literals) and honours msgspec's ``Meta`` constraints (``ge``, ``le``,
``gt``, ``lt``, ``min_length``, ``max_length``), which Hypothesis's own ``from_type`` ignores: a
value it draws is one the type says is valid, so a round trip that fails is a real defect.
A record whose constructor refuses a drawn value (a request's ``__post_init__`` check) is
rejected by Hypothesis, not failed.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import types
import typing
from functools import cache
from pathlib import Path
from typing import Any

import msgspec
from hypothesis import strategies as st

from lnrepro.errors import LnreproError
from lnrepro.model import codec
from lnrepro.model.codec import Real
from lnrepro.model.jsonio import JSON

TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
FLOAT = st.floats(allow_nan=False, allow_infinity=False, width=64)
JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | FLOAT | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)
REAL = st.one_of(FLOAT, st.sampled_from([math.nan, math.inf, -math.inf]))


def for_type(tp: Any) -> st.SearchStrategy[Any]:
    return _for(tp, ())


@cache
def _record(kind: type) -> st.SearchStrategy[Any]:
    if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
        fields = {f.name: _for(f.type, ()) for f in msgspec.structs.fields(kind)}
    else:
        hints = typing.get_type_hints(kind, include_extras=True)
        fields = {f.name: _for(hints[f.name], ()) for f in dataclasses.fields(kind) if f.init}

    def build(values: dict[str, Any]) -> Any:
        try:
            return kind(**values)
        except (LnreproError, ValueError, TypeError):
            return None

    return st.fixed_dictionaries(fields).map(build).filter(lambda x: x is not None)


def _for(tp: Any, metas: tuple[msgspec.Meta, ...]) -> st.SearchStrategy[Any]:
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        extra = tuple(m for m in tp.__metadata__ if isinstance(m, msgspec.Meta))
        return _for(args[0], metas + extra)
    if isinstance(tp, typing.NewType):  # ResolvedBisect: its JSON is its base type's
        return _for(tp.__supertype__, metas)
    if tp is Real:
        return REAL
    if tp is Any:  # an open-ended JSON value (facts, a fingerprint)
        return JSON_VALUE
    if tp is float:
        return _bounded_float(metas)
    if tp is bool:
        return st.booleans()
    if tp is int:
        return _bounded_int(metas)
    if tp is str:
        lo, hi = _lengths(metas)
        return st.text(
            st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=lo, max_size=hi
        )
    if tp is Path:
        return st.sampled_from([Path("/tmp/x"), Path("rel/dir"), Path("/a b/ü")])
    if tp is type(None):
        return st.none()
    if tp is msgspec.UnsetType:  # a field a Struct leaves out of its document
        return st.just(msgspec.UNSET)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return st.sampled_from(list(tp))
    if origin is typing.Literal:
        return st.sampled_from(args)
    if origin in (typing.Union, types.UnionType):
        return st.one_of(*(_for(a, metas) for a in args))
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            lo, hi = _lengths(metas, default=3)
            return st.lists(_for(args[0], ()), min_size=lo, max_size=hi).map(tuple)
        return st.tuples(*(_for(a, ()) for a in args))
    if origin in (list, frozenset, set):
        lo, hi = _lengths(metas, default=3)
        inner = st.lists(_for(args[0], ()), min_size=lo, max_size=hi)
        return inner if origin is list else inner.map(origin)
    if origin is dict:
        lo, hi = _lengths(metas, default=3)
        return st.dictionaries(_for(args[0], ()), _for(args[1], ()), min_size=lo, max_size=hi)
    if dataclasses.is_dataclass(tp) or (isinstance(tp, type) and issubclass(tp, msgspec.Struct)):
        return st.deferred(lambda: _record(tp))
    if tp in codec._WRITTEN:  # a case: drawn as its document, read as codec reads it
        doc, _, read = codec._WRITTEN[tp]
        return st.deferred(lambda: _record(doc)).map(lambda d: _read(read, d)).filter(bool)
    raise TypeError(f"no strategy for {tp!r}: teach tests/model/strategies.py")


def _read(read: Any, doc: object) -> object:
    try:
        return read(doc)
    except ValueError:  # what the document's types cannot say (a ttnn op's case with no pcc)
        return None


def _lengths(metas: tuple[msgspec.Meta, ...], default: int = 12) -> tuple[int, int]:
    lo = max([m.min_length for m in metas if m.min_length is not None], default=0)
    hi = min([m.max_length for m in metas if m.max_length is not None], default=max(lo, default))
    return lo, max(lo, min(hi, lo + default))


def _bounded_int(metas: tuple[msgspec.Meta, ...]) -> st.SearchStrategy[int]:
    lo = max(
        [m.ge for m in metas if m.ge is not None] + [m.gt + 1 for m in metas if m.gt is not None],
        default=-(2**40),
    )
    hi = min(
        [m.le for m in metas if m.le is not None] + [m.lt - 1 for m in metas if m.lt is not None],
        default=2**40,
    )
    return st.integers(int(lo), int(hi))


def _bounded_float(metas: tuple[msgspec.Meta, ...]) -> st.SearchStrategy[float]:
    lo = [m.ge for m in metas if m.ge is not None]
    hi = [m.le for m in metas if m.le is not None]
    glo = [m.gt for m in metas if m.gt is not None]
    ghi = [m.lt for m in metas if m.lt is not None]
    return st.floats(
        min_value=max(lo + glo) if lo or glo else None,
        max_value=min(hi + ghi) if hi or ghi else None,
        exclude_min=bool(glo),
        exclude_max=bool(ghi),
        allow_nan=False,
        allow_infinity=False,
    )


def same(a: object, b: object) -> bool:
    """``a == b`` as JSON sees them: NaN equals NaN (a round trip keeps a NaN a NaN)."""
    return _same(codec.encode(a), codec.encode(b))


def _same(a: JSON, b: JSON) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if _number(a) and _number(b):
        return bool(a == b)
    return type(a) is type(b) and bool(a == b)


def _number(v: JSON) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)
