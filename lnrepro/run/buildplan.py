"""A commit's build, planned from what its files say (:mod:`lnrepro.model.checkout`) and what its
build directories hold: configure once per directory, build only ``ttml_tests``, configure again
from a fresh cache when the toolchain or the place the build runs changed. Pure: facts in, commands
out (docs/compatibility.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from lnrepro.model.checkout import (
    BUILD_DIR,
    BUILD_TYPE,
    IN_TREE_BINARY,
    STANDALONE_BINARY,
    TARGET,
    TRAIN_BUILD_DIR,
    CacheFacts,
    TrainCompiler,
    TreeFacts,
    same_toolchain,
)


@dataclass(frozen=True)
class BuildPlan:
    """The commands for one commit, run at the checkout's root, and the binary they make."""

    commands: tuple[tuple[str, ...], ...]
    binary: str
    notes: tuple[str, ...] = field(default=())
    reconfigure: bool = False
    # (index of a command, build directory): once that command succeeds, the directory is
    # configured here and gets lnrepro's stamp
    stamps: tuple[tuple[int, str], ...] = ()


def fresh(build_dir: str) -> list[tuple[str, ...]]:
    """What ``cmake --fresh`` does (build_metal.sh cannot pass it): the cache goes, the objects
    stay, so Ninja rebuilds what the new compiler changes (ccache keeps it cheap). One command
    (in lnrepro's container, one container)."""
    return [("cmake", "-E", "rm", "-rf", f"{build_dir}/CMakeCache.txt", f"{build_dir}/CMakeFiles")]


def _configure_needed(
    facts: TreeFacts, cache: CacheFacts, build_dir: str, where: str, *, tt_train: bool
) -> tuple[bool, list[tuple[str, ...]], list[str]]:
    """Whether ``build_dir`` must be configured again, the commands that clear it, and why."""
    if not cache.configured:
        return True, [], [f"{build_dir} is not configured yet"]
    if not same_toolchain(cache.toolchain, facts.default_toolchain):
        why = (
            f"{build_dir} was configured with {cache.toolchain or 'no toolchain file'}; this "
            f"commit's build_metal.sh uses {facts.default_toolchain}: configured again from "
            "scratch (ccache keeps it cheap)"
        )
        return True, fresh(build_dir), [why]
    if cache.where != where:
        who = f"by lnrepro on {cache.where}" if cache.where else "outside lnrepro"
        why = (
            f"{build_dir} was configured {who}, and its compiler paths may not exist on "
            f"{where}: configured again from scratch"
        )
        return True, fresh(build_dir), [why]
    if tt_train and cache.build_tt_train is not True:
        return True, [], [f"{build_dir} was configured without tt-train"]
    return False, [], []


def plan_in_tree(facts: TreeFacts, cache: CacheFacts, where: str = "local") -> BuildPlan:
    """``ttml_tests`` and what it links, built by tt-metal's own CMake: configured once per
    build directory (``build_metal.sh --configure-only`` where the commit has it), then only
    the target. tt-train always adds its tests, so no ``--build-tests`` (which builds every
    tt-metal and ttnn test)."""
    again, clear, notes = _configure_needed(facts, cache, BUILD_DIR, where, tt_train=True)
    base = ("./build_metal.sh", "--debug", "--build-tt-train", "--enable-ccache")
    build = ("cmake", "--build", BUILD_DIR, "--target", TARGET)
    stamps: tuple[tuple[int, str], ...] = ()
    if not again:
        commands: list[tuple[str, ...]] = [build]
    elif facts.configure_only:
        commands = [*clear, (*base, "--configure-only"), build]
        stamps = ((len(clear), BUILD_DIR),)
    else:
        notes.append("this commit's build_metal.sh has no --configure-only: it builds everything")
        commands = [*clear, base]
        stamps = ((len(clear), BUILD_DIR),)
    if facts.default_toolchain and not facts.toolchain_present:
        notes.append(f"build_metal.sh names {facts.default_toolchain}, which is not in the tree")
    return BuildPlan(tuple(commands), IN_TREE_BINARY, tuple(notes), again, stamps)


def plan_standalone(
    facts: TreeFacts, metal: CacheFacts, train: CacheFacts, checkout: Path, where: str = "local"
) -> BuildPlan:
    """tt-train's standalone build, as its README has it, against tt-metal built at the same
    commit (``$TT_METAL_HOME/build/lib``, never another commit's libraries), with the compiler
    this commit's tt-metal uses: its default toolchain file, passed explicitly, since what
    tt-train picks by itself changed (and for a while was GCC, which fails)."""
    notes: list[str] = []
    again, clear, why = _configure_needed(facts, metal, BUILD_DIR, where, tt_train=False)
    commands: list[tuple[str, ...]] = [*clear]
    # the libraries tt-train links must be this commit's: tt-metal is built (incrementally) first
    commands.append(("./build_metal.sh", "--debug", "--enable-ccache"))
    stamps = [(len(commands) - 1, BUILD_DIR)]
    notes += why if again else []
    t_again, t_clear, t_why = _configure_needed(
        facts, train, TRAIN_BUILD_DIR, where, tt_train=False
    )
    if facts.train_compiler is TrainCompiler.NONE:
        notes.append(
            "tt-train picks no compiler at this commit (GCC would fail, tt-metal #36993): "
            "the toolchain file is passed"
        )
    if t_again:
        configure = [
            "cmake",
            "-S",
            "tt-train",
            "-B",
            TRAIN_BUILD_DIR,
            "-G",
            "Ninja",
            f"-DCMAKE_BUILD_TYPE={BUILD_TYPE}",
            "-DCMAKE_C_COMPILER_LAUNCHER=ccache",
            "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache",
        ]
        if facts.default_toolchain:
            configure.append(f"-DCMAKE_TOOLCHAIN_FILE={checkout / facts.default_toolchain}")
        commands += [*t_clear, tuple(configure)]
        stamps.append((len(commands) - 1, TRAIN_BUILD_DIR))
        notes += t_why
    commands.append(("cmake", "--build", TRAIN_BUILD_DIR, "--target", TARGET))
    return BuildPlan(
        tuple(commands), STANDALONE_BINARY, tuple(notes), again or t_again, tuple(stamps)
    )
