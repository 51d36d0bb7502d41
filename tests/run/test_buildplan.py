"""Reading a tt-metal checkout's own files, and the build plan they give (pure: file texts in).

The snippets are written here in the shapes tt-metal's files have at the commits
lnrepro/model/checkout.py names; the look-alike's eras run the same reading end to end
(tests/run/test_compat.py).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from lnrepro.model.checkout import (
    BUILD_METAL,
    RTOPTIONS,
    TEST_FILE,
    TRAIN_CMAKE,
    TRAIN_COMPILERS,
    CacheFacts,
    TrainCompiler,
    TreeFacts,
    same_toolchain,
)
from lnrepro.run import inputs as inp
from lnrepro.run.buildplan import plan_in_tree, plan_standalone

CLANG17 = "cmake/x86_64-linux-clang-17-libstdcpp-toolchain.cmake"
CLANG20 = "cmake/x86_64-linux-clang-20-libstdcpp-toolchain.cmake"


def build_metal(toolchain: str, configure_only: bool = True) -> str:
    return (
        "# --configure-only in a comment says nothing\n"
        'build_type="Release"\n'
        f'toolchain_path="{toolchain}"\n'
        'while true; do case "$1" in\n'
        + ("  --configure-only) configure_only=ON;;\n" if configure_only else "")
        + "esac; done\n"
    )


def facts(files: dict[str, str | None] | None = None) -> TreeFacts:
    texts = {
        BUILD_METAL: build_metal(CLANG20),
        TRAIN_CMAKE: "project(tt-train)\nadd_subdirectory(tests)\n",
        TRAIN_COMPILERS: None,
        RTOPTIONS: 'if (getenv("TT_METAL_RUNTIME_ROOT")) {}',
        TEST_FILE: "TEST_F(LayerNormBackwardOpTest, NIGHTLY_MetalLayerNormBw_LargeFeatures_NoL1Fit) {}",
    }
    texts.update(files or {})
    return TreeFacts.parse(texts, frozenset({CLANG20, CLANG17}))


def test_the_default_toolchain_and_configure_only_come_from_build_metal_sh() -> None:
    f = TreeFacts.parse({BUILD_METAL: build_metal(CLANG17, configure_only=False)}, frozenset())
    assert f.default_toolchain == CLANG17 and not f.toolchain_present and not f.configure_only
    f = TreeFacts.parse({BUILD_METAL: build_metal(CLANG20)}, frozenset({CLANG20}))
    assert f.default_toolchain == CLANG20 and f.toolchain_present and f.configure_only
    assert TreeFacts.parse({}, frozenset()).default_toolchain is None


@pytest.mark.parametrize(
    ("train", "compilers", "want"),
    [
        # ed20e1c1ee / 35761b817b: "defaulting to Clang-17", find_and_set_clang17()
        (
            "include(cmake/compilers.cmake)\nfind_and_set_clang17()\nproject(x)",
            "macro(FIND_AND_SET_CLANG17)",
            TrainCompiler.CLANG17,
        ),
        (
            "include(cmake/compilers.cmake)\nFIND_AND_SET_CLANG20()\nproject(x)",
            "macro(FIND_AND_SET_CLANG20)",
            TrainCompiler.CLANG20,
        ),
        # 043f229f89 (after #36568): no compilers.cmake, project() first
        ("project(x)\nadd_subdirectory(tests)", None, TrainCompiler.NONE),
        # a call left behind without the file still picks nothing
        ("find_and_set_clang17()\nproject(x)", None, TrainCompiler.NONE),
        # #37166: TT_TRAIN_INHERIT_COMPILER
        (
            "include(cmake/compilers.cmake)\nproject(x)",
            "function(INHERIT_COMPILER_FROM_TT_METAL)",
            TrainCompiler.INHERIT,
        ),
    ],
)
def test_what_a_standalone_tt_train_picks(
    train: str, compilers: str | None, want: TrainCompiler
) -> None:
    f = TreeFacts.parse({TRAIN_CMAKE: train, TRAIN_COMPILERS: compilers}, frozenset())
    assert f.train_compiler is want
    assert TreeFacts.parse({}, frozenset()).train_compiler is TrainCompiler.ABSENT


def test_runtime_root_tests_and_submodules() -> None:
    old = TreeFacts.parse({RTOPTIONS: 'root_dir = std::getenv("TT_METAL_HOME");'}, frozenset())
    assert old.runtime_root_var == "TT_METAL_HOME"
    assert facts().runtime_root_var == "TT_METAL_RUNTIME_ROOT"
    f = TreeFacts.parse(
        {
            TEST_FILE: "TEST_F(LayerNormBackwardOpTest, MetalLayerNormBw_OneTile) {}\n"
            "TEST_F( LayerNormBackwardOpTest ,\n BugRepro_Deterministic_256Tiles ) {}\n",
            ".gitmodules": '[submodule "a"]\n\tpath = tt_metal/third_party/tt_llk\n\turl = x\n'
            '[submodule "b"]\n\tpath = tt_metal/third_party/umd\n',
        },
        frozenset({"tt_metal/sfpi-version"}),
    )
    assert f.tests == (
        "LayerNormBackwardOpTest.MetalLayerNormBw_OneTile",
        "LayerNormBackwardOpTest.BugRepro_Deterministic_256Tiles",
    )
    assert f.test_file_present and f.submodules == (
        "tt_metal/third_party/tt_llk",
        "tt_metal/third_party/umd",
    )
    assert f.sfpi_version_file == "tt_metal/sfpi-version"
    assert not TreeFacts.parse({}, frozenset()).test_file_present


def test_cache_facts_and_toolchain_comparison() -> None:
    c = CacheFacts.parse(
        "# comment\nCMAKE_TOOLCHAIN_FILE:UNINITIALIZED=cmake/x86_64-linux-clang-17-libstdcpp-toolchain.cmake\n"
        "BUILD_TT_TRAIN:BOOL=ON\nCMAKE_CXX_COMPILER:STRING=/usr/bin/clang++-17\n"
    )
    assert c.configured and c.build_tt_train is True and c.cxx_compiler == "/usr/bin/clang++-17"
    assert (
        c.where is None
        and CacheFacts.parse("X:BOOL=ON\n", "docker:i@default\n").where == "docker:i@default"
    )
    assert same_toolchain(c.toolchain, CLANG17) and not same_toolchain(c.toolchain, CLANG20)
    assert same_toolchain(f"/abs/path/{CLANG20}", CLANG20)
    assert not CacheFacts.parse(None).configured


def test_in_tree_plan_configures_once_then_builds_only_the_target() -> None:
    f = facts()
    fresh = plan_in_tree(f, CacheFacts())
    assert [" ".join(c) for c in fresh.commands] == [
        "./build_metal.sh --debug --build-tt-train --enable-ccache --configure-only",
        "cmake --build build_Debug --target ttml_tests",
    ]
    assert fresh.reconfigure and fresh.binary == "build_Debug/tt-train/tests/ttml_tests"
    assert not any("--build-tests" in a for c in fresh.commands for a in c)
    assert fresh.stamps == ((0, "build_Debug"),)  # stamped once the configure succeeded
    warm = plan_in_tree(
        f, CacheFacts(toolchain=CLANG20, build_tt_train=True, configured=True, where="local")
    )
    assert [" ".join(c) for c in warm.commands] == ["cmake --build build_Debug --target ttml_tests"]
    assert not warm.reconfigure and warm.notes == () and warm.stamps == ()
    # the commit's toolchain changed (clang-17 -> clang-20): the cache goes (objects stay)
    switched = plan_in_tree(
        f, CacheFacts(toolchain=CLANG17, build_tt_train=True, configured=True, where="local")
    )
    assert switched.commands[0] == (
        "cmake",
        "-E",
        "rm",
        "-rf",
        "build_Debug/CMakeCache.txt",
        "build_Debug/CMakeFiles",
    )
    assert switched.reconfigure and switched.stamps == ((1, "build_Debug"),)
    assert "clang-17" in switched.notes[0] and "clang-20" in switched.notes[0]
    # configured on this host, built now in a container (or by hand): its compiler paths are
    # the host's, so the cache goes
    moved = plan_in_tree(
        f,
        CacheFacts(toolchain=CLANG20, build_tt_train=True, configured=True, where="local"),
        "docker:img@default",
    )
    assert moved.reconfigure and moved.commands[0][:3] == ("cmake", "-E", "rm")
    assert "on local" in moved.notes[0] and "docker:img@default" in moved.notes[0]
    by_hand = plan_in_tree(f, CacheFacts(toolchain=CLANG20, build_tt_train=True, configured=True))
    assert by_hand.reconfigure and "outside lnrepro" in by_hand.notes[0]
    # configured without tt-train: configured again, nothing removed
    no_train = plan_in_tree(
        f, CacheFacts(toolchain=CLANG20, build_tt_train=False, configured=True, where="local")
    )
    assert no_train.commands[0][0] == "./build_metal.sh" and no_train.reconfigure


def test_in_tree_plan_without_configure_only_runs_the_whole_script() -> None:
    f = facts({BUILD_METAL: build_metal(CLANG17, configure_only=False)})
    plan = plan_in_tree(f, CacheFacts())
    assert [" ".join(c) for c in plan.commands] == [
        "./build_metal.sh --debug --build-tt-train --enable-ccache"
    ]
    assert any("no --configure-only" in n for n in plan.notes)


def test_standalone_plan_builds_this_commits_tt_metal_and_passes_the_toolchain() -> None:
    f = facts({TRAIN_CMAKE: "project(x)\n"})  # picks nothing: GCC would fail
    plan = plan_standalone(f, CacheFacts(), CacheFacts(), Path("/co"))
    lines = [" ".join(c) for c in plan.commands]
    assert lines[0] == "./build_metal.sh --debug --enable-ccache"
    assert lines[1].startswith("cmake -S tt-train -B tt-train/build -G Ninja")
    assert lines[1].endswith(f"-DCMAKE_TOOLCHAIN_FILE=/co/{CLANG20}")
    assert lines[2] == "cmake --build tt-train/build --target ttml_tests"
    assert plan.binary == "tt-train/build/tests/ttml_tests"
    assert any("#36993" in n for n in plan.notes)
    # configured tt-train build with the right toolchain: no configure, tt-metal still brought up to date
    warm = plan_standalone(
        f,
        CacheFacts(toolchain=CLANG20, build_tt_train=False, configured=True, where="local"),
        CacheFacts(toolchain=f"/co/{CLANG20}", build_tt_train=None, configured=True, where="local"),
        Path("/co"),
    )
    assert [c[0] for c in warm.commands] == ["./build_metal.sh", "cmake"] and warm.commands[1][
        1
    ] == "--build"


# ------------------------------------------------------------------ what a shared verdict covers
def test_doc_and_output_paths() -> None:
    assert (
        inp.is_doc("README.md")
        and inp.is_doc("docs/x.txt")
        and inp.is_doc(".github/workflows/a.yaml")
    )
    assert not inp.is_doc("tt_metal/third_party/tt_llk/tt_llk_wormhole_b0/llk_lib/x.h")
    assert not inp.is_doc("tt_metal/sfpi-version")
    for p in (
        "build/x",
        "build_Debug/lib/a.so",
        "tt-train/build/tests/t",
        "generated/watcher/watcher.log",
        ".lnrepro/runs/x",
    ):
        assert inp.is_output(p), p
    for p in ("tt_metal/build.cpp", "builder/x", "tt-train/sources/x.cpp", "build_metal.sh"):
        assert not inp.is_output(p), p
    assert inp.is_bookkeeping(Path("CMakeFiles/x.dir/a.cpp.o"))
    assert inp.is_bookkeeping(Path(".ninja_log")) and inp.is_bookkeeping(
        Path("tt-train/CMakeCache.txt")
    )
    assert not inp.is_bookkeeping(Path("tt-train/tests/ttml_tests")) and not inp.is_bookkeeping(
        Path("lib/libtt_metal.so")
    )


def test_tracked_digest_ignores_docs_and_sees_a_submodule_bump() -> None:
    base = b"100644 aaa 0\tREADME.md\x00160000 1111 0\ttt_metal/third_party/tt_llk\x00100644 bbb 0\ttt_metal/x.cpp\x00"
    docs = base.replace(b"aaa", b"ccc")
    bump = base.replace(b"1111", b"2222")
    assert inp.tracked_digest(base) == inp.tracked_digest(docs)
    assert inp.tracked_digest(base) != inp.tracked_digest(bump)


def test_changed_paths_from_porcelain() -> None:
    z = b" M tt_metal/a.cpp\x00?? notes.md\x00?? build_Debug/x\x00R  new.cpp\x00old.cpp\x00?? data/t.bin\x00"
    assert inp.changed_paths(z) == ["data/t.bin", "new.cpp", "old.cpp", "tt_metal/a.cpp"]


def test_a_worktrees_git_dirs_are_found_from_its_files(tmp_path: Path) -> None:
    from lnrepro.doors.gitops import git_dirs

    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "f").write_text("x")
    subprocess.run(["git", "-C", str(repo), "add", "f"], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "c"], check=True)
    assert git_dirs(repo) == ()  # an ordinary clone: everything is inside it
    wt = tmp_path / "elsewhere" / "wt"
    subprocess.run(
        ["git", "-C", str(repo), "worktree", "add", "-q", "--detach", str(wt)], check=True
    )
    assert git_dirs(wt) == ((repo / ".git").resolve(),)
    inner = repo / ".git" / "lnrepro" / "wt"  # where lnrepro's bisect keeps its worktree
    subprocess.run(
        ["git", "-C", str(repo), "worktree", "add", "-q", "--detach", str(inner)], check=True
    )
    assert git_dirs(inner) == ((repo / ".git").resolve(),)
