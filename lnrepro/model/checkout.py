"""What a tt-metal checkout's own files say about building and running it, commit by commit.

tt-metal changed how it builds and runs over its history; lnrepro never assumes one era. It reads
the files of the commit in front of it and decides from them (:mod:`lnrepro.run.buildplan`). Each fact and
the file it comes from, with the tt-metal commits they were read at (docs/compatibility.md has the
table):

``build_metal.sh``
    the default toolchain file (``toolchain_path=``; clang-17 until tt-metal PR #35887, about
    2026-01-15, clang-20 after: read at 03019bebff and 5cd3a453f1) and whether it knows
    ``--configure-only``;
``cmake/<toolchain>.cmake``
    whether that file is in the tree (PR #36463 removed the clang-17 ones);
``tt-train/CMakeLists.txt``, ``tt-train/cmake/compilers.cmake``
    which compiler a standalone tt-train build picks by itself: Clang 17 (ed20e1c1ee,
    35761b817b), Clang 20 (082493e6d9), none (043f229f89, after PR #36568: CMake's default, GCC,
    fails, issue #36993), or tt-metal's own build's (PR #37166);
``tt_metal/llrt/rtoptions.cpp``
    the variable the runtime takes its root from: ``TT_METAL_HOME`` (00a21394d9) or, since PR
    #30502 (commit 1446f9ced5), ``TT_METAL_RUNTIME_ROOT``;
``tt-train/tests/ops/layernorm_bw_fused_op_test.cpp``
    which LayerNorm backward tests exist (the BugRepro ones only on 16165972af's branch);
``.gitmodules``
    the submodules (the LLK headers the JIT reads at run time are one).

Pure: :meth:`TreeFacts.parse` reads file texts; :func:`lnrepro.doors.fsio.read_tree` reads them
from a checkout, and :mod:`lnrepro.run.buildplan` turns the facts into a build.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

BUILD_METAL = "build_metal.sh"
TRAIN_CMAKE = "tt-train/CMakeLists.txt"
TRAIN_COMPILERS = "tt-train/cmake/compilers.cmake"
RTOPTIONS = "tt_metal/llrt/rtoptions.cpp"
TEST_FILE = "tt-train/tests/ops/layernorm_bw_fused_op_test.cpp"
GITMODULES = ".gitmodules"
SFPI_VERSION = ("tt_metal/sfpi-version", "tt_metal/sfpi-version.sh")
CHECKOUT_FILES = (BUILD_METAL, TRAIN_CMAKE, TRAIN_COMPILERS, RTOPTIONS, TEST_FILE, GITMODULES)

BUILD_TYPE = "Debug"
BUILD_DIR = f"build_{BUILD_TYPE}"
TRAIN_BUILD_DIR = "tt-train/build"
TARGET = "ttml_tests"
# written into a build directory after lnrepro configured it, naming where (this host, or an
# image): compiler paths in a CMake cache made on the host mean nothing in a container
STAMP = ".lnrepro-configured"
IN_TREE_BINARY = f"{BUILD_DIR}/tt-train/tests/{TARGET}"
STANDALONE_BINARY = f"{TRAIN_BUILD_DIR}/tests/{TARGET}"


def default_toolchain(build_metal: str) -> str | None:
    """The toolchain file build_metal.sh passes when given no compiler (``toolchain_path=``)."""
    m = re.search(r"""(?im)^\s*toolchain_path\s*=\s*["']?([^"'\s]+)""", build_metal)
    return m.group(1) if m else None


class TrainCompiler(str, Enum):
    """What a standalone tt-train configure picks when it is given no compiler."""

    CLANG17 = "clang-17"  # compilers.cmake FIND_AND_SET_CLANG17
    CLANG20 = "clang-20"  # FIND_AND_SET_CLANG20
    NONE = "none"  # no selection: CMake's default compiler (GCC fails: tt-metal #36993)
    INHERIT = "inherit"  # tt-metal's build's compiler, from its CMakeCache.txt
    ABSENT = "absent"  # no tt-train in this tree


@dataclass(frozen=True, kw_only=True)
class TreeFacts:
    """One commit's answers; every field says what was found, never what is usual."""

    default_toolchain: str | None  # relative to the checkout, e.g. cmake/x86_64-…-toolchain.cmake
    toolchain_present: bool
    configure_only: bool
    train_compiler: TrainCompiler
    runtime_root_var: str  # TT_METAL_RUNTIME_ROOT or TT_METAL_HOME
    tests: tuple[str, ...] = ()  # Suite.Name of the LayerNorm backward tests
    test_file_present: bool = False
    submodules: tuple[str, ...] = ()
    sfpi_version_file: str | None = None

    @classmethod
    def parse(
        cls, files: Mapping[str, str | None], present: frozenset[str] = frozenset()
    ) -> TreeFacts:
        """From the texts of :data:`FILES` (None: absent) and the other paths known to exist."""
        build = files.get(BUILD_METAL) or ""
        toolchain = default_toolchain(build)
        train = files.get(TRAIN_CMAKE)
        compilers = files.get(TRAIN_COMPILERS)
        if train is None:
            compiler = TrainCompiler.ABSENT
        elif compilers is not None and re.search(
            r"(?i)inherit_compiler_from_tt_metal", train + compilers
        ):
            compiler = TrainCompiler.INHERIT
        elif compilers is not None and re.search(r"(?i)find_and_set_clang20\s*\(", train):
            compiler = TrainCompiler.CLANG20
        elif compilers is not None and re.search(r"(?i)find_and_set_clang17\s*\(", train):
            compiler = TrainCompiler.CLANG17
        else:
            compiler = TrainCompiler.NONE
        rt = files.get(RTOPTIONS) or ""
        # the name as a string literal (a getenv argument, an entry of the env-var table), not
        # a comment that mentions it
        root_var = "TT_METAL_RUNTIME_ROOT" if '"TT_METAL_RUNTIME_ROOT"' in rt else "TT_METAL_HOME"
        test = files.get(TEST_FILE)
        names = tuple(
            f"{suite}.{name}"
            for suite, name in re.findall(
                r"\bTEST(?:_F|_P)?\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)", test or ""
            )
        )
        modules = tuple(re.findall(r"(?m)^\s*path\s*=\s*(\S+)", files.get(GITMODULES) or ""))
        sfpi = next((f for f in SFPI_VERSION if f in present), None)
        return cls(
            default_toolchain=toolchain,
            toolchain_present=toolchain is not None and toolchain in present,
            configure_only=re.search(r"(?m)^(?!\s*#).*configure-only", build) is not None,
            train_compiler=compiler,
            runtime_root_var=root_var,
            tests=names,
            test_file_present=test is not None,
            submodules=modules,
            sfpi_version_file=sfpi,
        )


@dataclass(frozen=True, kw_only=True)
class CacheFacts:
    """A build directory's CMakeCache.txt: what it was configured with (None: not configured)."""

    toolchain: str | None = None
    cxx_compiler: str | None = None
    build_tt_train: bool | None = None
    configured: bool = False
    where: str | None = None  # who configured it (lnrepro's stamp); None: not lnrepro

    @classmethod
    def parse(cls, text: str | None, stamp: str | None = None) -> CacheFacts:
        if text is None:
            return cls()
        values: dict[str, str] = {}
        for line in text.splitlines():
            m = re.match(r"^([A-Za-z_][\w.-]*):[A-Z_]+=(.*)$", line)
            if m:
                values[m.group(1)] = m.group(2)
        tt = values.get("BUILD_TT_TRAIN")
        return cls(
            toolchain=values.get("CMAKE_TOOLCHAIN_FILE") or None,
            cxx_compiler=values.get("CMAKE_CXX_COMPILER") or None,
            build_tt_train=None if tt is None else tt.upper() in ("ON", "TRUE", "1", "YES"),
            configured=True,
            where=stamp.strip() if stamp else None,
        )


def same_toolchain(cached: str | None, wanted: str | None) -> bool:
    """A cache configured with ``cached`` builds what ``wanted`` would (compared by file name:
    build_metal.sh passes it relative, a person may have passed it absolute)."""
    if wanted is None:
        return True
    return cached is not None and Path(cached).name == Path(wanted).name
