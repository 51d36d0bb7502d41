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

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lnrepro.errors import InputError, UsageError
from lnrepro.model.checkout import IN_TREE_BINARY, STANDALONE_BINARY

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

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "build": [list(c) for c in self.build],
            "binary": self.binary,
            "planned": self.planned,
        }


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


def _parse(table: dict[str, Any], path: Path) -> Config:
    def bad(what: str) -> InputError:
        return InputError(f"{path}: {what}", "see the configuration example in docs/commands.md")

    profiles = dict(PROFILES)
    given = table.get("profiles") or {}
    if not isinstance(given, dict):
        raise bad(
            "profiles must be a table of profiles ([tool.lnrepro.profiles.NAME] or [profiles.NAME])"
        )
    for name, spec in given.items():
        if not isinstance(spec, dict):
            raise bad(f"profile {name!r} is not a table")
        build = spec.get("build")
        binary = spec.get("binary")
        if not (
            isinstance(build, list)
            and build
            and all(isinstance(c, list) and c and all(isinstance(a, str) for a in c) for c in build)
        ):
            raise bad(f"profile {name!r}: build must be a list of commands (lists of strings)")
        if not isinstance(binary, str) or not binary:
            raise bad(f"profile {name!r}: binary must be a path relative to the checkout")
        if "kernels" in spec:
            raise bad(
                f"profile {name!r}: kernels is no longer read (whether two commits test the same "
                "thing is decided from the whole source tree and the build's outputs); remove it"
            )
        profiles[name] = BuildProfile(name, tuple(tuple(c) for c in build), binary)
    env = table.get("env") or {}
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise bad("env must be a table of strings")
    profile = table.get("profile", DEFAULT_PROFILE)
    image = table.get("image")
    base = table.get("base_image")
    if not isinstance(profile, str) or not all(
        v is None or isinstance(v, str) for v in (image, base)
    ):
        raise bad("profile, image and base_image must be strings")
    prebuilt = table.get("prebuilt", [])
    if isinstance(prebuilt, str):
        prebuilt = [prebuilt]
    if not isinstance(prebuilt, list) or not all(isinstance(x, str) for x in prebuilt):
        raise bad('prebuilt must be a list of strings, e.g. ["dir:/artifacts/{short}/build_Debug"]')
    cfg = Config(profile, profiles, image, base, dict(env), str(path), tuple(prebuilt))
    cfg.get_profile(None)  # the default must exist
    return cfg
