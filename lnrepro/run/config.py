"""Build profiles and user configuration (``lnrepro.toml`` or ``[tool.lnrepro]`` in pyproject.toml).

A *profile* says how to build a tt-metal checkout and where its ``ttml_tests`` ends up. The two
that ship with lnrepro decide their commands per commit, from the files of the commit being
built (:mod:`lnrepro.run.buildplan`; docs/compatibility.md):

``in-tree``     tt-metal's own CMake: ``./build_metal.sh --debug --build-tt-train --enable-ccache
                --configure-only`` once per build directory (again when the commit's toolchain
                differs from the cache's), then ``cmake --build build_Debug --target ttml_tests``
                → ``build_Debug/tt-train/tests/ttml_tests``
``standalone``  tt-train's own CMake, against tt-metal built at the same commit
                (``./build_metal.sh --debug --enable-ccache``), with that commit's default
                toolchain file → ``tt-train/build/tests/ttml_tests``

A configuration file may add profiles with fixed commands::

    [tool.lnrepro]
    profile = "standalone"
    base_image = "my-registry/tt-metal-dev:2025-12"   # lnrepro's image is built on it

    prebuilt = ["dir:/artifacts/{short}/build_Debug"]  # bisect's --prebuilt, when not given

    [tool.lnrepro.profiles.release]
    build = [["./build_metal.sh", "--release", "--build-tt-train"]]
    binary = "build_Release/tt-train/tests/ttml_tests"
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypeVar

import msgspec

from lnrepro.errors import InputError, UsageError
from lnrepro.model.checkout import IN_TREE_BINARY, STANDALONE_BINARY

NON_EMPTY = msgspec.Meta(min_length=1)
T = TypeVar("T")

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]


@dataclass(frozen=True)
class BuildProfile:
    name: str
    build: tuple[tuple[str, ...], ...]  # fixed commands, each an argv run at the checkout's root
    binary: str  # the gtest binary, relative to the checkout
    planned: str | None = None  # "in-tree" or "standalone": commands decided per commit


PROFILES: dict[str, BuildProfile] = {
    "in-tree": BuildProfile("in-tree", (), IN_TREE_BINARY, "in-tree"),
    "standalone": BuildProfile("standalone", (), STANDALONE_BINARY, "standalone"),
}
DEFAULT_PROFILE = "in-tree"


@dataclass(frozen=True)
class Config:
    profile: str = DEFAULT_PROFILE
    profiles: dict[str, BuildProfile] = field(default_factory=lambda: dict(PROFILES))
    image: str | None = None  # a ready image for --runner docker
    base_image: str | None = None  # or: build lnrepro's image (docker/Dockerfile) on this base
    env: dict[str, str] = field(default_factory=dict)
    source: str | None = None  # the file it came from
    prebuilt: tuple[str, ...] = ()  # bisect's --prebuilt SPECs when the command line gives none

    def get_profile(self, name: str | None) -> BuildProfile:
        key = name or self.profile
        if key not in self.profiles:
            raise UsageError(
                f"no build profile {key!r}", f"choose one of {', '.join(sorted(self.profiles))}"
            )
        return self.profiles[key]


def _table(doc: dict[str, Any], path: Path) -> dict[str, Any] | None:
    if path.name == "pyproject.toml":
        tool = doc.get("tool", {})
        section = tool.get("lnrepro") if isinstance(tool, dict) else None
        return section if isinstance(section, dict) else None
    return doc


def load_config(start: Path) -> Config:
    """The first ``lnrepro.toml`` (or pyproject.toml with ``[tool.lnrepro]``) in ``start``."""
    for name in ("lnrepro.toml", "pyproject.toml"):
        path = start / name
        if not path.is_file():
            continue
        try:
            doc = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise InputError(f"cannot read {path}: {exc}", "fix the TOML syntax") from None
        table = _table(doc, path)
        if table is None:
            continue
        return _parse(table, path)
    return Config()


class ProfileDoc(msgspec.Struct, kw_only=True, frozen=True):
    """``[tool.lnrepro.profiles.NAME]``: fixed build commands and where the binary ends up."""

    build: Annotated[list[Annotated[list[str], msgspec.Meta(min_length=1)]], NON_EMPTY]
    binary: Annotated[str, NON_EMPTY]


class ConfigDoc(msgspec.Struct, kw_only=True, frozen=True):
    """The keys of lnrepro.toml. Each key but the file-only ones (:data:`FILE_ONLY`) is the
    default of an option of the table (lnrepro.options.table, ``toml=``), with the type of
    that option's request field (tests/run/test_config_table.py holds the two together)."""

    profile: str = DEFAULT_PROFILE  # --profile
    image: str | None = None  # --image
    env: dict[str, str] = msgspec.field(default_factory=dict)  # --env, under the command line's
    prebuilt: tuple[str, ...] | str = ()  # bisect's --prebuilt when the command line gives none
    base_image: str | None = None  # lnrepro's image is built on it (no option)
    profiles: dict[str, ProfileDoc] = msgspec.field(default_factory=dict)  # --profile's choices


FILE_ONLY = {"base_image", "profiles"}  # keys that set no option's default
PREBUILT_EXAMPLE = '["dir:/artifacts/{short}/build_Debug"]'


def _wrong(place: list[str], what: str) -> str:
    """The one line that says which key is wrong and how it should be."""
    top = place[0] if place else ""
    if top in ("profile", "image", "base_image"):
        return "profile, image and base_image must be strings"
    if top == "env":
        return "env must be a table of strings"
    if top == "prebuilt":
        return f"prebuilt must be a list of strings, e.g. {PREBUILT_EXAMPLE}"
    if len(place) < 2:
        return (
            "profiles must be a table of profiles ([tool.lnrepro.profiles.NAME] or [profiles.NAME])"
        )
    name = place[1]
    key = place[2] if len(place) > 2 else next((k for k in ("build", "binary") if k in what), "")
    if key == "build":
        return f"profile {name!r}: build must be a list of commands (lists of strings)"
    if key == "binary":
        return f"profile {name!r}: binary must be a path relative to the checkout"
    return f"profile {name!r} is not a table"


def _parse(table: dict[str, Any], path: Path) -> Config:
    def bad(what: str) -> InputError:
        return InputError(f"{path}: {what}", "see the configuration example in docs/commands.md")

    given = table.get("profiles")
    for name, spec in given.items() if isinstance(given, dict) else ():
        if isinstance(spec, dict) and "kernels" in spec:
            raise bad(
                f"profile {name!r}: kernels is no longer read (whether two commits test the same "
                "thing is decided from the whole source tree and the build's outputs); remove it"
            )
        _convert(spec, ProfileDoc, ["profiles", name], bad)  # so the error names the profile
    doc = _convert(table, ConfigDoc, [], bad)
    profiles = dict(PROFILES)
    for name, spec in doc.profiles.items():
        if not _inside(spec.binary):  # the runners see the checkout (a container mounts it)
            raise InputError(
                f"{path}: profile {name!r}: binary {spec.binary} is not inside the checkout",
                "give its path relative to the checkout, e.g. build_Release/tt-train/tests/"
                "ttml_tests (a binary built elsewhere runs with --backend local --binary PATH)",
            )
        profiles[name] = BuildProfile(name, tuple(tuple(c) for c in spec.build), spec.binary)
    prebuilt = (doc.prebuilt,) if isinstance(doc.prebuilt, str) else doc.prebuilt
    cfg = Config(
        doc.profile, profiles, doc.image, doc.base_image, dict(doc.env), str(path), prebuilt
    )
    cfg.get_profile(None)  # the default must exist
    return cfg


def _inside(binary: str) -> bool:
    """``binary`` names a path inside the checkout: relative, never above it."""
    import os.path

    p = Path(binary)
    return not p.is_absolute() and Path(os.path.normpath(p)).parts[:1] != ("..",)


def _convert(value: object, kind: type[T], at: list[str], bad: Callable[[str], InputError]) -> T:
    try:
        return msgspec.convert(value, kind)
    except msgspec.ValidationError as exc:
        what, _, where = str(exc).partition(" - at `$")
        place = [p for p in re.split(r"[.\[\]`]+", where) if p]
        raise bad(_wrong([*at, *place], what)) from None
