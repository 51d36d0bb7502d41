"""JSON in and out, strictly: the one encoder every document goes through, and a typed reader.

Writing
    :func:`dumps` writes JSON that strict parsers accept (``JSON.parse``, ``jq``, Python with
    ``allow_nan=False``). Non-finite numbers have one documented encoding, protobuf's canonical
    JSON mapping for ``double``: the strings ``"NaN"``, ``"Infinity"`` and ``"-Infinity"``.
    A metric of ``inf`` is therefore ``"Infinity"`` in every record and ``--json`` document.

Reading
    :class:`Reader` walks a parsed document and hands out typed values. Anything of the wrong
    shape raises :class:`~lnrepro.errors.MalformedRecord` naming the file, the place in it
    (``steps[3].outcomes``) and the fix: never a ``KeyError`` or ``TypeError`` that would become
    an internal error. :func:`load` reads a file into a Reader with the same guarantees (unreadable,
    not UTF-8, not JSON, nested too deeply).
"""

from __future__ import annotations

import builtins
import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from lnrepro.errors import InputError, MalformedRecord

_SURROGATE = re.compile("[\ud800-\udfff]")
NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}

if TYPE_CHECKING:
    # A value json.loads returns, what a document holds (typed access goes through Reader).
    JSON = None | bool | int | float | str | list["JSON"] | dict[str, "JSON"]
else:
    # msgspec cannot read a recursive alias: at run time a record's open bag of facts takes any
    # value, which, read from JSON text, is one of the above. mypy checks the exact type.
    JSON = Any


def plain(obj: object) -> JSON:
    """``obj`` with every non-finite float encoded (``"NaN"``/``"Infinity"``/``"-Infinity"``) and
    tuples as lists: ready for ``json.dumps``. A string holding bytes that were not UTF-8 (a
    surrogate escape from a path) shows U+FFFD there: JSON text is Unicode."""
    if isinstance(obj, float):
        if math.isnan(obj):
            return "NaN"
        return obj if math.isfinite(obj) else ("Infinity" if obj > 0 else "-Infinity")
    if isinstance(obj, str):
        return _SURROGATE.sub("\ufffd", obj) if _SURROGATE.search(obj) else obj
    if isinstance(obj, Mapping):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    if obj is None or isinstance(obj, (bool, int)):
        return obj
    raise TypeError(f"{type(obj).__name__} is not a JSON value")


def member(d: Mapping[str, JSON], key: str) -> dict[str, JSON]:
    """``d[key]`` when it is an object, else an empty one (an open bag of facts, read leniently)."""
    v = d.get(key)
    return v if isinstance(v, dict) else {}


def strings(d: Mapping[str, JSON], key: str) -> list[str]:
    """``d[key]`` as strings when it is a list (a backend's warnings, a build's lines), else []."""
    v = d.get(key)
    return [str(x) for x in v] if isinstance(v, list) else []


def dumps(obj: object, *, indent: int | None = 2) -> str:
    """Strict JSON text (no ``NaN``/``Infinity`` literals, ever)."""
    return json.dumps(plain(obj), indent=indent, allow_nan=False, ensure_ascii=False)


def decode_number(v: object) -> float | None:
    """A number as :func:`plain` writes it, read back (None when ``v`` is not a number in either
    form)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str) and v in NON_FINITE:
        return NON_FINITE[v]
    return None


def loads_text(text: str, source: Path | str) -> JSON:
    """``json.loads`` with every failure as a MalformedRecord that names ``source``."""
    try:
        value: JSON = json.loads(text)
    except RecursionError:
        raise MalformedRecord(
            f"{source} is nested too deeply to be an lnrepro document", _fix(source)
        ) from None
    except ValueError as exc:
        raise MalformedRecord(
            f"{source} is not valid JSON ({exc}); it was probably cut off while being written",
            _fix(source),
        ) from None
    return value


def _fix(source: Path | str) -> str:
    return f"move {source} aside (or restore it from a backup); the logs beside it are intact"


def load(path: Path) -> Reader:
    """A JSON file as a Reader; a missing, unreadable or damaged file is a one-line InputError."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path} does not exist", "list the records with `lnrepro runs`") from None
    except IsADirectoryError:
        raise InputError(f"{path} is a directory, not a file", "pass the file inside it") from None
    except UnicodeDecodeError:
        raise MalformedRecord(f"{path} is not UTF-8 text", _fix(path)) from None
    except OSError as exc:
        raise InputError(
            f"cannot read {path}: {exc.strerror or exc}", "check its permissions"
        ) from None
    return Reader(loads_text(text, path), str(path))


def load_schema(path: Path) -> tuple[Reader, str | None]:
    """A JSON file that must hold an object (a record, a state), and its ``schema`` (None when
    it has none): the one way a saved document is opened before its schema picks the reader."""
    r = load(path)
    if not isinstance(r.value, dict):
        r.fail("should be an object")
    return r, r.opt_str("schema")


class Reader:
    """A typed view of one value inside a parsed JSON document.

    ``r.str("id")``, ``r.opt_str("schema")``, ``r.list("steps")``, ``r.obj("plan")``: each
    returns the typed value or raises MalformedRecord with the document and the place in it.
    """

    __slots__ = ("_at", "_source", "value")

    def __init__(self, value: JSON, source: builtins.str, at: builtins.str = "") -> None:
        self.value = value
        self._source = source
        self._at = at

    # ------------------------------------------------------------------ errors
    def where(self, key: builtins.str | builtins.int | None = None) -> builtins.str:
        if key is None:
            return self._at or "the top level"
        if isinstance(key, int):
            return f"{self._at}[{key}]"
        return f"{self._at}.{key}" if self._at else key

    def fail(self, what: builtins.str, key: builtins.str | builtins.int | None = None) -> NoReturn:
        raise MalformedRecord(
            f"{self._source}: {self.where(key)} {what}",
            f"move {self._source} aside (or restore it); lnrepro writes only documents it can read",
        )

    # ------------------------------------------------------------------ shape
    def _dict(self) -> dict[builtins.str, JSON]:
        if not isinstance(self.value, dict):
            self.fail(f"should be an object, not {kind_of(self.value)}")
        return self.value

    def get(self, key: builtins.str) -> Reader:
        """The member ``key`` (null when absent)."""
        return type(self)(self._dict().get(key), self._source, self.where(key))

    def rewritten(self, value: JSON) -> Reader:
        """The same place of the same document holding ``value``: an upgrader's rewrite of it."""
        return Reader(value, self._source, self._at)

    def obj(self, key: builtins.str) -> Reader:
        r = self.get(key)
        if not isinstance(r.value, dict):
            self.fail(f"should be an object, not {kind_of(r.value)}", key)
        return r

    def list(self, key: builtins.str) -> builtins.list[Reader]:
        v = self._dict().get(key)
        if not isinstance(v, list):
            self.fail(f"should be a list, not {kind_of(v)}", key)
        return [type(self)(x, self._source, f"{self.where(key)}[{i}]") for i, x in enumerate(v)]

    # ------------------------------------------------------------------ scalars
    def opt_str(self, key: builtins.str) -> builtins.str | None:
        """The string ``key`` holds; None when it is absent or null."""
        v = self._dict().get(key)
        if v is not None and not isinstance(v, str):
            self.fail(f"should be a string, not {kind_of(v)}", key)
        return v

    def str(self, key: builtins.str, default: builtins.str | None = None) -> builtins.str:
        """The string ``key`` holds; ``default`` when it is absent or null (None: required)."""
        v = self.opt_str(key)
        if v is not None:
            return v
        if default is None:
            self.fail("is missing (should be a string)", key)
        return default


def kind_of(v: object) -> str:
    """What a JSON value is, as an error message says it (``the string 'x'``, ``a list``)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true/false"
    if isinstance(v, (int, float)):
        return f"the number {v!r}"[:40]
    if isinstance(v, str):
        return f"the string {v[:30]!r}"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    return type(v).__name__
