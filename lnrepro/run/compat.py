"""tt-metal's history as lnrepro meets it: the compatibility table, as data.

Each era is a stretch of tt-metal's main where the facts :mod:`lnrepro.run.buildplan` reads stay the
same. lnrepro never looks the era up: it reads each commit's files and plans from them. This
table says what that reading gives in each era, with the sources it was checked against;
``docs/compatibility.md`` is written from it (``scripts/compat_table.py``) and the tests run
``lnrepro run --dry-run`` on a look-alike commit of each era and compare the plan with its row.
Dates are approximate: they come from the pull requests named, not from the commits.
"""

from __future__ import annotations

from dataclasses import dataclass

from lnrepro.model.checkout import IN_TREE_BINARY, STANDALONE_BINARY, TrainCompiler

CLANG17 = "cmake/x86_64-linux-clang-17-libstdcpp-toolchain.cmake"
CLANG20 = "cmake/x86_64-linux-clang-20-libstdcpp-toolchain.cmake"
IN_TREE = (
    "./build_metal.sh --debug --build-tt-train --enable-ccache --configure-only",
    "cmake --build build_Debug --target ttml_tests",
)


@dataclass(frozen=True)
class Era:
    name: str
    period: str  # from … to …, by the pull requests that bound it
    toolchain: str  # build_metal.sh's default toolchain file
    clang17_files: bool  # the clang-17 toolchain files are in the tree
    train_compiler: TrainCompiler  # what a standalone tt-train picks by itself
    runtime_root_var: str
    sources: tuple[str, ...]  # file@commit and pull requests read for this row
    lookalike: tuple[str, ...]  # the look-alike's era flags that stand for it

    @property
    def in_tree(self) -> tuple[str, ...]:
        """lnrepro's plan on a fresh worktree (the same in every era)."""
        return IN_TREE

    @property
    def standalone(self) -> tuple[str, ...]:
        return (
            "./build_metal.sh --debug --enable-ccache",
            "cmake -S tt-train -B tt-train/build -G Ninja -DCMAKE_BUILD_TYPE=Debug "
            "-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache "
            f"-DCMAKE_TOOLCHAIN_FILE=<checkout>/{self.toolchain}",
            "cmake --build tt-train/build --target ttml_tests",
        )

    @property
    def binary(self) -> str:
        return IN_TREE_BINARY

    @property
    def standalone_binary(self) -> str:
        return STANDALONE_BINARY


TESTS = (
    "the five `LayerNormBackwardOpTest.MetalLayerNormBw_*`/`NIGHTLY_*` tests on main "
    "(layernorm_bw_fused_op_test.cpp@642f4c0ad3); the seven `BugRepro_*` only on branch "
    "ivoitovych/layernorm-bw-nightly-test-failure-bug-report-3 (16165972af)"
)

ERAS: tuple[Era, ...] = (
    Era(
        "A",
        "until PR #30502 (2025-10-14)",
        CLANG17,
        True,
        TrainCompiler.CLANG17,
        "TT_METAL_HOME",
        (
            "build_metal.sh default per PR #35887",
            "tt-train/CMakeLists.txt@ed20e1c1ee",
            "tt-train/cmake/compilers.cmake@35761b817b",
            "tt_metal/llrt/rtoptions.cpp@00a21394d9",
        ),
        ("configure-only",),
    ),
    Era(
        "B",
        "PR #30502 (commit 1446f9ced5, 2025-10-14) to PR #35887 (2026-01-15)",
        CLANG17,
        True,
        TrainCompiler.CLANG17,
        "TT_METAL_RUNTIME_ROOT",
        ("PR #30502", "tt-umd PR #1481 (names commit 1446f9ced5)", "rtoptions.cpp, newest stored"),
        ("configure-only", "runtime-root"),
    ),
    Era(
        "C",
        "PR #35887 (2026-01-15) to PR #36463 (2026-01-25)",
        CLANG20,
        True,
        TrainCompiler.CLANG17,
        "TT_METAL_RUNTIME_ROOT",
        (
            "build_metal.sh@5cd3a453f1",
            "build_metal.sh@03019bebff",
            "cmake/x86_64-linux-clang-20-libstdcpp-toolchain.cmake@173c1d066d",
            "PR #35887",
            "PR #36099",
        ),
        ("configure-only", "runtime-root", "clang20"),
    ),
    Era(
        "D1",
        "PR #36463 (2026-01-25) to PR #36568 (2026-01-27)",
        CLANG20,
        False,
        TrainCompiler.CLANG20,
        "TT_METAL_RUNTIME_ROOT",
        ("PR #36463", "tt-train/cmake/compilers.cmake@082493e6d9"),
        ("configure-only", "runtime-root", "clang20", "no-clang17"),
    ),
    Era(
        "D2",
        "PR #36568 (commit a7618b9282, 2026-01-27) to PR #37166 (2026-02-05)",
        CLANG20,
        False,
        TrainCompiler.NONE,
        "TT_METAL_RUNTIME_ROOT",
        ("tt-train/CMakeLists.txt@043f229f89", "PR #36568", "issue #36993 (GCC fails)"),
        ("configure-only", "runtime-root", "clang20", "no-clang17", "train-none"),
    ),
    Era(
        "E",
        "since PR #37166 (2026-02-05)",
        CLANG20,
        False,
        TrainCompiler.INHERIT,
        "TT_METAL_RUNTIME_ROOT",
        (
            "PR #37166 (tt-train/cmake/compilers.cmake restored, TT_TRAIN_INHERIT_COMPILER)",
            "tt-train/CMakeLists.txt@043f229f89",
        ),
        ("configure-only", "runtime-root", "clang20", "no-clang17", "train-inherit"),
    ),
)
