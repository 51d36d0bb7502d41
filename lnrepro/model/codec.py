"""Records defined once: a record is one typed definition, and its JSON and JSON Schema are derived.

A record is a frozen, keyword-only dataclass (or a msgspec Struct) with enums for its closed
sets. msgspec derives the rest from that one definition:

* :func:`encode` turns a record into plain JSON values (``jsonio.dumps`` then writes non-finite
  numbers in their one documented encoding, ``"NaN"``/``"Infinity"``/``"-Infinity"``);
* :func:`decode` reads a parsed document back into the type, checking every field against its
  type and constraints; a value of the wrong shape is a MalformedRecord naming the document and
  the place in it (``steps[3].outcomes``), never a ``KeyError``;
* :func:`schema` gives the JSON Schema (draft 2020-12) that ``scripts/schemas.py`` writes to
  docs/schemas/, and CI fails when the written schema and the type differ.

Why msgspec (issue 39, measured by ``scripts/bench_records.py``): a 10,000-step bisect-shaped
record round-trips in 0.19 s (pydantic v2: 0.55 s; the hand-written ``to_json``/``from_json``:
1.4 s), it reads standard dataclasses as they are, and it is imported only when a record is
read or written: ``lnrepro --help`` loads none of it.

Two annotations carry what plain types cannot say:

* :data:`Real` is a float that may be non-finite (a max_diff of ``inf``): JSON's number or one
  of the three strings. A plain ``float`` field accepts numbers only.
* ``pathlib.Path`` fields are JSON strings.

Old schema versions still read: a record's upgrader rewrites the parsed document of an older
version into the current shape before :func:`decode` (the upgraders work on the documents,
so they keep working whatever the types become).
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lnrepro.errors import MalformedRecord
from lnrepro.model.jsonio import JSON, NON_FINITE, Reader, decode_number, kind_of

T = TypeVar("T")

if TYPE_CHECKING:
    Real = float
else:

    class Real(float):
        """A float that may be non-finite: JSON's number, or "NaN"/"Infinity"/"-Infinity"."""

        __slots__ = ()

        def __repr__(self) -> str:
            return float.__repr__(self)


NON_FINITE_SCHEMA: dict[str, JSON] = {
    "description": "A number; non-finite values are the strings NaN, Infinity and -Infinity "
    "(protobuf's JSON mapping for double).",
    "anyOf": [{"type": "number"}, {"enum": list(NON_FINITE)}],
}


_WRITTEN: dict[type, tuple[type, Callable[[Any], object], Callable[[Any], object]]] = {}


def written_as(
    kind: type[T], doc: type, write: Callable[[T], object], read: Callable[[Any], T]
) -> None:
    """``kind`` is written as the document ``doc`` (``write(value)``, a Struct) and read back from
    it (``read(doc)``, which raises ValueError ``"what - at `$.field`"`` for what ``doc``'s types
    cannot say). For a type whose document has another shape than it (a case's flattened shape),
    and which is a plain class, so that msgspec asks these hooks, wherever it is held. Hold it
    in Struct documents: a dataclass document's schema would mark ``doc``'s fields required."""
    _WRITTEN[kind] = (doc, write, read)


def _enc_hook(obj: object) -> object:
    if (w := _WRITTEN.get(type(obj))) is not None:
        return w[1](obj)
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, float):  # a Real read back: msgspec knows float itself, not its subclasses
        return float(obj)
    raise NotImplementedError(f"lnrepro records cannot hold a {type(obj).__name__}")


def _dec_hook(kind: type, obj: object) -> object:
    if (w := _WRITTEN.get(kind)) is not None:
        import msgspec

        try:
            doc: object = msgspec.convert(obj, w[0], dec_hook=_dec_hook, str_keys=True)
        except msgspec.ValidationError as exc:  # as a ValueError, msgspec adds where it is held
            raise ValueError(str(exc)) from None
        return w[2](doc)
    if kind is Real:
        v = decode_number(obj)
        if v is not None:
            return Real(v)
        raise TypeError(f"Expected `number`, got {kind_of(obj)}")
    if kind is Path:
        if isinstance(obj, str):
            return Path(obj)
        raise TypeError(f"Expected `str`, got {kind_of(obj)}")
    raise NotImplementedError(kind)


def _schema_hook(kind: type, asked: list[type] | None = None) -> dict[str, JSON]:
    if (w := _WRITTEN.get(kind)) is not None:
        if asked is not None:
            asked.append(w[0])
        return {"$ref": f"#/$defs/{w[0].__name__}"}
    if kind is Real:
        return dict(NON_FINITE_SCHEMA)
    if kind is Path:
        return {"type": "string"}
    raise NotImplementedError(kind)


def encode(record: object) -> JSON:
    """``record`` as plain JSON values (dicts, lists, str, numbers; enums as their values)."""
    import msgspec  # not at the top: ``lnrepro --help`` loads no record library

    value: JSON = msgspec.to_builtins(record, enc_hook=_enc_hook, str_keys=True)  # JSON's keys
    return value


def encode_obj(record: object) -> dict[str, JSON]:
    """A record (a dataclass or Struct) as the JSON object it writes."""
    value = encode(record)
    assert isinstance(value, dict), f"{type(record).__name__} is not a record"
    return value


def decode(r: Reader, kind: type[T]) -> T:
    """The value ``r`` holds, as ``kind``: every field checked, or MalformedRecord naming the
    document and the place in it. ``kind`` may be a union of records with no tag, told apart by
    their fields (``A | B``): the first that reads, or the error of the one whose fields the
    document names most."""
    import msgspec

    if len(members := _records(kind)) > 1:
        keys = set(r.value) if isinstance(r.value, dict) else set()
        best, *rest = sorted(
            members, key=lambda m: -len(keys & {f.name for f in dataclasses.fields(m)})
        )
        try:
            return typing.cast(T, decode(r, best))
        except MalformedRecord as exc:
            first = exc
        for m in rest:
            try:
                return typing.cast(T, decode(r, m))
            except MalformedRecord:
                pass
        raise first
    _defaults_in_instances(kind)
    try:
        # str_keys: a JSON object's keys are strings, also those of a dict[int, ...]
        return msgspec.convert(r.value, kind, dec_hook=_dec_hook, str_keys=True)
    except msgspec.ValidationError as exc:
        what, *ats = str(exc).split(" - at `")  # innermost first: a written_as read's own place
        key = bool(ats) and ats[0].startswith("key` in `")  # a map's key is wrong, not its value
        ats[:1] = [a.removeprefix("key` in `") for a in ats[:1]]
        at = "".join(a.rstrip("`").removeprefix("$") for a in reversed(ats))
        if key:
            bad = what.removeprefix("Invalid enum value ").removeprefix("Expected ")
            what = f"has the key {bad}, which is not an allowed key"
        elif what.startswith("Expected "):
            what = "should be " + what.removeprefix("Expected ").replace("`", "")
        elif what.startswith(("Invalid enum value ", "Invalid value ")):  # a union's tag: value
            bad = what.removeprefix("Invalid enum value ").removeprefix("Invalid value ")
            what = f"is {bad}, which is not an allowed value"
        elif what.startswith("Object missing required field "):
            what = "is missing " + what.removeprefix("Object missing required field ")
        else:
            what = what[:1].lower() + what[1:]
        place = at.rstrip("`").lstrip(".")
        r.fail(what, place or None)


_ABSENT = object()
_PREPARED: set[object] = set()


def _defaults_in_instances(kind: object) -> None:
    """Every dataclass ``kind`` holds reads a field its document lacks (an older schema) as the
    field's default, in the instance, so :func:`encode` writes it back. msgspec sets a missing
    field only when the instance has no such attribute, and a dataclass's plain default is also
    a class attribute, which answers: the field stayed out of the instance's ``__dict__``, and
    out of the document written from it. A dataclass needs no class attribute for a default
    (``__init__`` holds its own), so it goes."""
    import msgspec

    if kind in _PREPARED:
        return
    _PREPARED.add(kind)
    seen: set[int] = set()
    todo: list[object] = [msgspec.inspect.type_info(kind)]
    while todo:
        node = todo.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, msgspec.inspect.DataclassType):
            for f in dataclasses.fields(node.cls):
                if f.default is dataclasses.MISSING:
                    continue
                for owner in node.cls.__mro__:  # an inherited field's default is its base's
                    if owner.__dict__.get(f.name, _ABSENT) is f.default:
                        delattr(owner, f.name)
        if isinstance(node, (msgspec.inspect.Type, msgspec.inspect.Field)):
            for value in msgspec.structs.astuple(node):
                todo += value if isinstance(value, tuple) else [value]


def _records(kind: object) -> tuple[type[Any], ...]:
    """The records of an untagged union (``A | B``); () for anything else."""
    if typing.get_origin(kind) not in (typing.Union, types.UnionType):
        return ()
    return tuple(
        a for a in typing.get_args(kind) if isinstance(a, type) and dataclasses.is_dataclass(a)
    )


Schema = dict[str, JSON]  # a JSON Schema, or one definition of it


def schema(kinds: list[type[Any]]) -> tuple[tuple[Schema, ...], dict[str, Schema]]:
    """The JSON Schemas of ``kinds`` and the definitions they share (``#/$defs/NAME``)."""
    import msgspec

    docs: list[type] = []  # the documents of written_as types the kinds hold, at any depth
    while True:
        asked: list[type] = []
        tops, defs = msgspec.json.schema_components(
            [*kinds, *docs],
            schema_hook=functools.partial(_schema_hook, asked=asked),
            ref_template="#/$defs/{name}",
        )
        if not (new := [d for d in dict.fromkeys(asked) if d not in docs]):
            return tuple(tops[: len(kinds)]), dict(defs)
        docs += new


def _ref(top: Schema) -> str:
    """The definition's name a ``{"$ref": "#/$defs/NAME"}`` points to."""
    ref = top["$ref"]
    assert isinstance(ref, str)
    return ref.rsplit("/", 1)[1]


def document_schema(kind: type[Any], *, title: str, file: str) -> dict[str, JSON]:
    """The JSON Schema of a whole document of type ``kind``, as lnrepro writes it. Of a
    dataclass every field is written, so every property is required and no other is allowed
    (a msgspec Struct says itself which fields it omits)."""
    import msgspec

    if members := _records(kind):  # an untagged union of documents: exactly one of them
        tops, defs = schema(list(members))
        roots: list[JSON] = [defs.pop(_ref(t)) for t in tops]
        for part in (*roots, *defs.values()):
            _as_written(part)
        for part in roots:
            assert isinstance(part, dict)
            part.pop("title", None)
        root: dict[str, JSON] = {"oneOf": roots}
    else:
        (top,), defs = schema([kind])
        top_name = _ref(top)
        root = defs.pop(top_name)
        root.pop("title", None)
        written = {top_name: root, **defs}
        # per record (its ``$defs`` name): the dataclasses ``kind`` holds at any depth, and
        # their fields written only when set (``X | msgspec.UnsetType = msgspec.UNSET``)
        names, unset = _walk_records(kind)
        if issubclass(kind, msgspec.Struct):  # it says itself what it leaves out; not the
            # dataclasses inside it, which write every field
            written = {name: part for name, part in defs.items() if name in names}
        for name, part in written.items():
            _as_written(part, unset.get(name, set()))
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://lnrepro.invalid/schemas/{file}",
        "title": title,
        **root,
        "$defs": dict(sorted(defs.items())),
    }


def _walk_records(kind: type[Any]) -> tuple[set[str], dict[str, set[str]]]:
    import msgspec
    import msgspec.inspect as mi

    names: set[str] = set()
    unset: dict[str, set[str]] = {}
    seen: set[int] = set()

    def walk(t: object) -> None:
        if id(t) in seen:
            return
        seen.add(id(t))
        if isinstance(t, mi.DataclassType):
            names.add(t.cls.__name__)
            for d in dataclasses.fields(t.cls):  # older documents lack it: written, not required
                if d.metadata.get("may_lack"):
                    unset.setdefault(t.cls.__name__, set()).add(d.name)
        if isinstance(t, (mi.DataclassType, mi.StructType)):
            for f in t.fields:
                # msgspec.inspect shows a default of UNSET as no default on an optional field
                if not f.required and f.default is f.default_factory is msgspec.NODEFAULT:
                    unset.setdefault(t.cls.__name__, set()).add(f.encode_name)
        for f in getattr(t, "fields", ()):
            walk(f.type)
        for attr in ("item_type", "key_type", "value_type"):
            if (inner := getattr(t, attr, None)) is not None:
                walk(inner)
        for inner in getattr(t, "types", ()) or getattr(t, "item_types", ()):
            walk(inner)

    walk(mi.type_info(kind))
    return names, unset


def _as_written(part: JSON, unset: set[str] | None = None) -> None:
    if isinstance(part, dict) and part.get("type") == "object":
        props = part.get("properties")
        if not isinstance(props, dict):
            return
        part["required"] = [p for p in props if p not in (unset or set())]
        part.setdefault("additionalProperties", False)
