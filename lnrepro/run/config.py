"""Build profiles and user configuration (``lnrepro.toml`` or ``[tool.lnrepro]`` in pyproject.toml).

A *profile* says how to build a tt-metal checkout and where its ``ttml_tests`` ends up. Two
ship with lnrepro, following tt-metal's own instructions (``../shared/TTMETAL.md``):

``in-tree``     ``./build_metal.sh --debug --build-tt-train --build-tests --enable-ccache``
                → ``build/tt-train/tests/ttml_tests``
``standalone``  seed 000's tt-train build: ``cmake -S tt-train -B tt-train/build -G Ninja
                -DCMAKE_BUILD_TYPE=Debug`` (ccache as the launcher) and ``cmake --build``
                → ``tt-train/build/tests/ttml_tests``

A configuration file may change them or add others::

    [tool.lnrepro]
    profile = "standalone"
    base_image = "my-registry/tt-metal-dev:2025-12"   # lnrepro's image is built on it

    [tool.lnrepro.profiles.release]
    build = [["./build_metal.sh", "--release", "--build-tt-train", "--build-tests"]]
    binary = "build/tt-train/tests/ttml_tests"
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lnrepro.errors import InputError, UsageError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - 3.10
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]


KERNEL_SOURCES = ("tt-train/sources/ttml/metal", "tt_metal/hw", "tt_metal/include")


@dataclass(frozen=True)
class BuildProfile:
    name: str
    build: tuple[tuple[str, ...], ...]  # commands, each an argv run at the checkout's root
    binary: str  # the gtest binary, relative to the checkout
    # sources the binary reads at run time (tt-metal JIT-compiles kernels from the checkout):
    # with the binary's bytes, what decides whether two commits test the same thing
    kernels: tuple[str, ...] = KERNEL_SOURCES

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "build": [list(c) for c in self.build], "binary": self.binary,
                "kernels": list(self.kernels)}  # fmt: skip


_STANDALONE_CONFIGURE = (
    "cmake", "-S", "tt-train", "-B", "tt-train/build", "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Debug",
    "-DCMAKE_C_COMPILER_LAUNCHER=ccache", "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache",
)  # fmt: skip
PROFILES: dict[str, BuildProfile] = {
    "in-tree": BuildProfile(
        "in-tree",
        (("./build_metal.sh", "--debug", "--build-tt-train", "--build-tests", "--enable-ccache"),),
        "build/tt-train/tests/ttml_tests",
    ),
    "standalone": BuildProfile(
        "standalone",
        (_STANDALONE_CONFIGURE, ("cmake", "--build", "tt-train/build")),
        "tt-train/build/tests/ttml_tests",
    ),
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
        kernels = spec.get("kernels", list(KERNEL_SOURCES))
        if not isinstance(kernels, list) or not all(isinstance(k, str) for k in kernels):
            raise bad(f"profile {name!r}: kernels must be a list of paths relative to the checkout")
        profiles[name] = BuildProfile(name, tuple(tuple(c) for c in build), binary, tuple(kernels))
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
    cfg = Config(profile, profiles, image, base, dict(env), str(path))
    cfg.get_profile(None)  # the default must exist
    return cfg
