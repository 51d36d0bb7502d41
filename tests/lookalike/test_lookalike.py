"""The tt-metal look-alike, built with the real toolchain and run for real.

Everything the container and bisect work tests on is checked here first: the history is what
the generator says it is, the culprit's parent passes and the culprit fails the way the bug
reports describe, the unbuildable stretch does not build, the BugRepro tests exist only once
picked, the environment fails like tt-metal's, and the C++ kernel agrees with the emulator.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from lnrepro.doors.gitops import lfs_pointers, submodules
from lnrepro.emulator.defects import Defect, parse_defects
from lnrepro.emulator.kernel import KernelConfig
from lnrepro.emulator.kernel import kernel as emulated_kernel
from lnrepro.gtest.console import parse_bytes
from lnrepro.model.gtest import TestStatus
from tests.conftest import ROOT, need, need_toolchain, worktree
from tests.lookalike import (
    KERNEL,
    GroundTruth,
    Spec,
    build,
    device_env,
    generate,
    run_tests,
)
from tests.lookalike.generator import TREE, render

BIN = Path("build/tt-train/tests/ttml_tests")
SUITE = "LayerNormBackwardOpTest"
BUGREPRO_DETERMINISTIC = [
    "BugRepro_Deterministic_256Tiles",
    "BugRepro_Deterministic_128Tiles",
    "BugRepro_Deterministic_DifferentValues",
    "BugRepro_Deterministic_8462Features",
    "BugRepro_Deterministic_2048Features",
]
BUGREPRO = [
    *BUGREPRO_DETERMINISTIC,
    "BugRepro_TightTolerance_8462Features",
    "BugRepro_TightTolerance_8192Features",
]


def git(repo: str | Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


# ------------------------------------------------------------------ history (no compiler)
def test_history_has_the_shape_of_tt_metals(lookalike: GroundTruth) -> None:
    repo = lookalike.path
    fp = git(repo, "rev-list", "--first-parent", "main").split()
    assert fp[::-1] == lookalike.first_parent and len(fp) == 200
    assert len(git(repo, "rev-list", "main").split()) > 250  # branch commits beyond main's line
    merges = git(repo, "rev-list", "--merges", "main").split()
    assert len(merges) >= 20
    authors = Counter(git(repo, "log", "--format=%an", "main").splitlines())
    assert len(authors) >= 5
    dates = [int(t) for t in git(repo, "log", "--format=%at", "main").split()]
    assert (max(dates) - min(dates)) / 86400 > 150
    for line in git(
        repo, "log", "--first-parent", "--no-merges", "--format=%s", "main"
    ).splitlines():
        assert re.search(r"^\[[\w-]+\] .+ \(#\d+\)$", line), line
    # the culprit sits on a merged branch: reachable from main, not on its first-parent line
    assert lookalike.culprit not in fp
    git(repo, "merge-base", "--is-ancestor", lookalike.culprit, "main")
    assert lookalike.culprit_merge in fp
    assert lookalike.fix in fp and lookalike.fix_parent in fp
    assert lookalike.good in fp and lookalike.bad in fp
    assert fp.index(lookalike.good) > fp.index(lookalike.bad) > fp.index(lookalike.fix)


def test_defects_are_code_that_commits_add_and_remove(lookalike: GroundTruth) -> None:
    introduced = git(lookalike.path, "show", "--format=", lookalike.culprit, "--", KERNEL)
    removed = [
        ln[1:].strip()
        for ln in introduced.splitlines()
        if ln.startswith("-") and not ln.startswith("---")
    ]
    added = [
        ln[1:].strip()
        for ln in introduced.splitlines()
        if ln.startswith("+") and not ln.startswith("+++")
    ]
    assert removed == ["zero_dst_reg(dest, kMeanDyGamma);"]  # double subtraction: DEST not zeroed
    assert added == ["tile_regs_acquire(dest);  // DEST acquired again for this block"]
    fixed = git(lookalike.path, "show", "--format=", lookalike.fix, "--", KERNEL)
    assert "+        zero_dst_reg(dest, kMeanDyGamma);" in fixed
    assert "-                tile_regs_acquire(dest);" in fixed
    # the truth agrees with the trees: exactly the culprit's descendants before the fix are bad
    assert lookalike.defects[lookalike.culprit] == ["double-subtract", "drop-xhat-blocks"]
    assert lookalike.defects[lookalike.culprit_parent] == []
    assert lookalike.defects[lookalike.fix] == [] and lookalike.defects[lookalike.fix_parent]


def test_unbuildable_stretch_and_noop_commits(lookalike: GroundTruth) -> None:
    fp = lookalike.first_parent
    on_main = sorted(fp.index(s) for s in lookalike.unbuildable if s in fp)
    assert len(on_main) >= 5 and on_main == list(range(on_main[0], on_main[-1] + 1))
    for sha in lookalike.noop:
        changed = git(
            lookalike.path, "diff-tree", "--no-commit-id", "--name-only", "-r", sha
        ).split()
        assert changed and all(p in ("README.md", ".github/workflows/build.yaml") for p in changed)
    assert len(lookalike.noop) >= 10


def test_same_seed_same_history_other_seed_other_history(tmp_path: Path) -> None:
    spec = Spec(commits=40, tus=1)
    a = generate(tmp_path / "a", spec)
    b = generate(tmp_path / "b", spec)
    c = generate(tmp_path / "c", Spec(commits=40, tus=1, seed=2))
    # the submodule's url names the checkout's own path, so compare what does not
    assert git(a.path, "log", "--format=%an %at %s", "--all") == git(
        b.path, "log", "--format=%an %at %s", "--all"
    )
    assert git(a.path, "rev-parse", f"{a.culprit}^{{tree}}:{KERNEL}") == git(
        b.path, "rev-parse", f"{b.culprit}^{{tree}}:{KERNEL}"
    )
    assert git(a.path, "log", "--format=%s", "--all") != git(c.path, "log", "--format=%s", "--all")


def test_culprit_on_first_parent_line_and_no_fix(tmp_path: Path) -> None:
    t = generate(tmp_path / "x", Spec(commits=60, tus=1, culprit_on_branch=False, fix_at=None))
    assert t.culprit in t.first_parent and t.culprit_merge is None and t.fix is None
    assert t.defects[t.main]


def test_submodule_lfs_pointers_and_bulk_files(tmp_path: Path) -> None:
    t = generate(tmp_path / "x", Spec(commits=20, tus=1, lfs_pointers=3, bulk_files=1500))
    repo = Path(t.path)
    states = submodules(repo)
    assert [(s.path, s.state) for s in states] == [
        ("tt_metal/third_party/tt_llk", "ok"),
        ("tt_metal/third_party/umd", "ok"),
    ]
    assert len(lfs_pointers(repo)) == 3
    assert len(git(repo, "ls-files").split()) > 1500


def test_template_markers() -> None:
    text = "a\n//@if x\nb\n//@else\nc\n//@end\n#@if !y\nd\n#@end\n"
    assert render(text, {"x"}) == "a\nb\nd\n"
    assert render(text, {"y"}) == "a\nc\n"
    kernel_src = (TREE / KERNEL).read_text()
    assert "zero_dst_reg(dest, kMeanDyGamma);" in render(kernel_src, set())
    assert "zero_dst_reg(dest, kMeanDyGamma);" not in render(kernel_src, {"double-subtract"})


# ------------------------------------------------------------------ built and run
def parsed(out: str, code: int) -> dict[str, Any]:
    run = parse_bytes(out.encode(), exit_code=code)
    return {t.test: t for t in run.tests}


def test_culprit_parent_passes_culprit_fails_like_the_reports(
    lookalike_builds: dict[str, Path], tmp_path: Path
) -> None:
    good, bad = lookalike_builds["good"], lookalike_builds["bad"]
    code, out = run_tests(good / BIN, env=device_env(tmp_path / "g", good))
    assert code == 0, out[-2000:]
    results = parsed(out, code)
    assert len(results) == 12 and all(r.status is TestStatus.PASSED for r in results.values())

    code, out = run_tests(bad / BIN, env=device_env(tmp_path / "b", bad))
    assert code == 1
    results = parsed(out, code)
    failed = sorted(n for n, r in results.items() if r.status is TestStatus.FAILED)
    assert failed == sorted(BUGREPRO)
    assert results["NIGHTLY_MetalLayerNormBw_LargeFeatures_NoL1Fit"].status is TestStatus.PASSED
    for name in BUGREPRO_DETERMINISTIC:
        # constant inputs: rstd = 1000 and an extra mean(dy*gamma) = 1 in every element
        assert results[name].metrics["dx"]["max_diff"] == 1000.0, name
    assert "dx mismatch with deterministic inputs (features=8192)" in out
    # and the CLI reads the log as it reads the emulator's
    log = tmp_path / "bad.log"
    log.write_text(out)
    cli = subprocess.run(
        [sys.executable, "-m", "lnrepro", "parse", str(log), "--exit-code", "1", "--json"],
        capture_output=True,
        text=True,
    )
    assert cli.returncode == 1
    doc = json.loads(cli.stdout)
    assert doc["totals"]["FAILED"] == 7 and doc["totals"]["PASSED"] == 5
    assert "Value of: xt::allclose(metal_dx_flat, dx_ref, 1.0e-2F, 1.0e-2F)" in out


def test_bugrepro_tests_exist_only_when_picked(
    lookalike_builds: dict[str, Path], tmp_path: Path
) -> None:
    tree = lookalike_builds["main"]
    code, out = run_tests(tree / BIN, "--gtest_list_tests", env=device_env(tmp_path, tree))
    assert code == 0 and "NIGHTLY_MetalLayerNormBw_LargeFeatures_NoL1Fit" in out
    assert "BugRepro" not in out
    code, out = run_tests(tree / BIN, "--gtest_filter=*BugRepro_*", env=device_env(tmp_path, tree))
    assert code == 0 and "0 tests from 0 test suites ran" in out


@pytest.mark.parametrize(
    ("change", "message"),
    [
        # since TT_METAL_RUNTIME_ROOT (tt-metal PR #30502) TT_METAL_HOME is not read: still set,
        # from a directory without tt_metal/ the runtime has no root
        ({"TT_METAL_RUNTIME_ROOT": ""}, "Root Directory is not set."),
        ({"device": False}, "No chips detected"),
        (
            {"hugepages": False},
            "no huge page mount found in /proc/mounts for path: /dev/hugepages-1G",
        ),
    ],
)
def test_broken_environment_aborts_with_the_driver_message(
    lookalike_builds: dict[str, Path], tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    tree = lookalike_builds["good"]
    env = device_env(
        tmp_path, tree, device=change.get("device", True), hugepages=change.get("hugepages", True)
    )
    env.update({k: v for k, v in change.items() if isinstance(v, str)})
    code, out = run_tests(tree / BIN, "--gtest_filter=*OneTile", env=env)
    assert code == 134
    assert re.search(r"\| critical \|\s+Always \| " + re.escape(message), out)
    result = parsed(out, code)["MetalLayerNormBw_OneTile"]
    assert result.status is TestStatus.CRASHED


def test_stale_jit_cache_gives_stale_results(
    lookalike_builds: dict[str, Path], tmp_path: Path
) -> None:
    good, bad = lookalike_builds["good"], lookalike_builds["bad"]
    flt = "--gtest_filter=*Deterministic_2048Features"
    env_bad = device_env(tmp_path, bad)
    assert run_tests(bad / BIN, flt, env=env_bad)[0] == 1
    env_good = {**device_env(tmp_path, good), "TT_METAL_CACHE": env_bad["TT_METAL_CACHE"]}
    code, out = run_tests(good / BIN, flt, env=env_good)
    assert code == 1 and "Using cached kernel" in out  # the fixed kernel's build, the old kernel
    subprocess.run(["rm", "-rf", env_bad["TT_METAL_CACHE"]], check=True)
    code, out = run_tests(good / BIN, flt, env=env_good)
    assert code == 0 and "Compiled kernel layernorm_bw" in out


@pytest.mark.compiler
def test_an_archived_tree_keeps_its_version_as_tt_metals_does(
    lookalike: GroundTruth, tmp_path: Path
) -> None:
    """tt-metal's .gitattributes marks cmake/version.cmake export-subst (07ddbf30b9), whose
    placeholders are its fallback when git cannot describe the tree (0731daca24): a tree made by
    `git archive` (submodules archived into it) configures with its version; a copy of the
    checkout without .git has none. lnrepro ships sources to a remote engine that way."""
    need_toolchain()
    tag = next(iter(lookalike.tags))
    wt = worktree(lookalike, tmp_path / "wt", lookalike.tags[tag])

    def export(dest: Path, subst: bool) -> str:
        dest.mkdir()
        mods = git(wt, "submodule", "foreach", "--quiet", "echo $sm_path").split()
        for repo, prefix in [(wt, ""), *((wt / m, m + "/") for m in mods)]:
            if subst:
                tar = subprocess.run(
                    ["git", "-C", str(repo), "archive", f"--prefix={prefix}", "HEAD"],
                    capture_output=True,
                    check=True,
                ).stdout
                subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
            else:
                for f in git(repo, "ls-files", "-z").split("\0"):
                    if f and (repo / f).is_file():
                        (dest / prefix / f).parent.mkdir(parents=True, exist_ok=True)
                        (dest / prefix / f).write_bytes((repo / f).read_bytes())
        res = subprocess.run(
            ["cmake", "-S", str(dest), "-B", str(dest / "build"), "-G", "Ninja"],
            capture_output=True,
            text=True,
        )
        assert res.returncode == 0, res.stderr[-2000:]
        return res.stdout + res.stderr

    archived = export(tmp_path / "archived", subst=True)
    copied = export(tmp_path / "copied", subst=False)
    version = tag.lstrip("v").split("-")[0]
    assert f"-- Version: {version}+" in archived and "Cannot parse tag" not in archived
    assert "Cannot parse tag" in copied and "-- Version:" not in copied


@pytest.mark.compiler
def test_unbuildable_commit_fails_to_build(lookalike: GroundTruth, tmp_path: Path) -> None:
    need_toolchain()
    sha = next(s for s in lookalike.unbuildable if s in lookalike.first_parent)
    tree = worktree(lookalike, tmp_path / "broken", sha)
    res = build(tree)
    assert not res.ok
    assert "check_cluster" in res.output and "error" in res.output


def test_standalone_tt_train_build_with_ccache(
    lookalike: GroundTruth, lookalike_builds: dict[str, Path], tmp_path: Path
) -> None:
    """At the culprit, tt-train picks no compiler of its own (tt-metal #36568): a plain standalone
    configure gets the system's GCC and fails as tt-metal #36993 reports; with tt-metal's
    default toolchain file it builds, through ccache, against tt-metal's build/lib."""
    need(
        subprocess.run(["which", "ccache"], capture_output=True).returncode == 0,
        "ccache is not installed",
    )
    fp = lookalike.first_parent
    assert fp.index(lookalike.eras["train-none"]) < fp.index(lookalike.culprit_merge)
    assert fp.index(lookalike.culprit_merge) < fp.index(lookalike.eras["train-inherit"])
    tree = lookalike_builds["good"]
    assert not (tree / "tt-train/cmake/compilers.cmake").exists()
    env = {**os.environ, "TT_METAL_HOME": str(tree), "CCACHE_DIR": str(tmp_path / "ccache")}

    def standalone(out_dir: Path, *extra: str) -> subprocess.CompletedProcess[str]:
        for argv in (
            [
                "cmake",
                "-S",
                str(tree / "tt-train"),
                "-B",
                str(out_dir),
                "-G",
                "Ninja",
                "-DCMAKE_BUILD_TYPE=Debug",
                "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache",
                *extra,
            ],
            ["cmake", "--build", str(out_dir)],
        ):
            res = subprocess.run(argv, env=env, capture_output=True, text=True)
            if res.returncode != 0:
                return res
        return res

    res = standalone(tmp_path / "gcc")
    assert res.returncode != 0 and "#36993" in res.stdout + res.stderr
    toolchain = tree / "cmake/x86_64-linux-clang-20-libstdcpp-toolchain.cmake"
    out_dir = tmp_path / "tt-train-build"
    res = standalone(out_dir, f"-DCMAKE_TOOLCHAIN_FILE={toolchain}")
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert any((tmp_path / "ccache").rglob("*")), "ccache was not used"
    code, out = run_tests(
        out_dir / "tests" / "ttml_tests",
        "--gtest_filter=*Deterministic_2048Features",
        env=device_env(tmp_path, tree),
    )
    assert code == 0, out[-2000:]


def test_a_second_checkout_compiles_only_its_generated_paths(
    lookalike: GroundTruth, lookalike_builds: dict[str, Path], tmp_path: Path
) -> None:
    """Two checkouts of one commit at two paths, one ccache with a ``base_dir`` over both (as a
    developer's cache, or a bisect's worktrees): the second build compiles only the sources CMake
    generates to hold this build's paths. Every source of the checkout is served by the cache,
    so no compile definition names a path of a checkout or build tree."""
    need(shutil.which("ccache") is not None, "ccache is not installed")
    cache = tmp_path / "ccache"
    cache.mkdir()
    log = tmp_path / "ccache.log"
    (cache / "ccache.conf").write_text(
        f"base_dir = {tmp_path}\nhash_dir = false\nlog_file = {log}\n"
    )
    tree = lookalike_builds["good"]  # its build/lib is the tt-metal the standalone builds link
    env = {**os.environ, "TT_METAL_HOME": str(tree), "CCACHE_DIR": str(cache)}
    toolchain = tree / "cmake/x86_64-linux-clang-20-libstdcpp-toolchain.cmake"

    def build(name: str) -> None:
        src = worktree(lookalike, tmp_path / name, lookalike.culprit_parent, lookalike.bugrepro)
        for argv in (
            [
                "cmake",
                "-S",
                str(src / "tt-train"),
                "-B",
                str(src / "tt-train/build"),
                "-G",
                "Ninja",
                "-DCMAKE_BUILD_TYPE=Debug",
                "-DCMAKE_CXX_COMPILER_LAUNCHER=ccache",
                f"-DCMAKE_TOOLCHAIN_FILE={toolchain}",
            ],
            ["cmake", "--build", str(src / "tt-train/build")],
        ):
            res = subprocess.run(argv, env=env, capture_output=True, text=True)
            assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]

    build("a")
    log.unlink()
    build("b")
    source: dict[str, str] = {}
    missed, hit = [], []
    for line in log.read_text(errors="replace").splitlines():
        m = re.match(r"\[[^\]]*?(\d+)\s*\] (Source file: |Result: )(\S+)", line)
        if m and m[2] == "Source file: ":
            source[m[1]] = m[3]
        elif m and m[3] in ("cache_miss", "direct_cache_hit", "preprocessed_cache_hit"):
            (missed if m[3] == "cache_miss" else hit).append(source[m[1]])
    assert hit, "the second checkout's build was not served by the cache at all"
    assert sorted(Path(s).name for s in missed) == [
        "flake_conf_path.cpp",
        "layernorm_bw_kernel_path.cpp",
    ], missed


def test_lnrepro_reads_the_lookalike_as_it_reads_the_emulator(
    lookalike_builds: dict[str, Path], tmp_path: Path
) -> None:
    """Same verdicts per test from `lnrepro run --backend local` on the C++ build and from the
    emulator with the same defects (the default BugRepro + NIGHTLY filter): the culprit against the
    shipped kernel, the fixed tree against the fixed era (whose tolerances the emulator's bf16
    formats need; the look-alike's fp32 ones pass the old tolerances too)."""
    for tree, defect in ((lookalike_builds["bad"], "2025-12"), (lookalike_builds["good"], "fixed")):
        env = {**os.environ, **device_env(tmp_path / defect, tree)}
        local = subprocess.run(
            [
                sys.executable,
                "-m",
                "lnrepro",
                "run",
                "--backend",
                "local",
                "--binary",
                str(tree / BIN),
                "--record-dir",
                str(tmp_path / "runs"),
                "--json",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        emu = subprocess.run(
            [
                sys.executable,
                "-m",
                "lnrepro",
                "run",
                "--kernel-era",
                defect,
                "--record-dir",
                str(tmp_path / "runs"),
                "--json",
            ],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=ROOT,
        )
        assert local.returncode == emu.returncode == (1 if defect == "2025-12" else 0), local.stderr
        verdicts = [
            {t["name"]: t["verdict"] for t in json.loads(p.stdout)["tests"]} for p in (local, emu)
        ]
        assert verdicts[0] == verdicts[1] and len(verdicts[0]) == 8


def lookalike_formats(defects: frozenset[Defect]) -> KernelConfig:
    """The emulator's knobs set to what the look-alike's C++ kernel implements: fp32 x_hat and
    statistics, an exact 1/N, fp32 dgamma/dbeta sums, a 32-tile L1 rule and blocks of 2 (the
    first-pass formats; the real factory's bf16 buffers and truncated scaler are not in it yet)."""
    return KernelConfig(
        defects=defects,
        l1_max_tiles=32,
        block_size=2,
        bf16_stats=False,
        scaler_bf16=False,
        dgamma_rows_bf16=False,
    )


def _bf16_ulp(v: np.ndarray) -> np.ndarray:
    mag = np.maximum(np.abs(v), np.float32(1e-30))
    return np.exp2(np.floor(np.log2(mag)) - 7).astype(np.float32)


@pytest.mark.parametrize(
    "defects",
    ["none", "double-subtract", "drop-xhat-blocks", "overwrite-dy-gamma-sum", "shipped"],
)
def test_cpp_kernel_agrees_with_the_emulator(
    defects: str, lookalike_builds: dict[str, Path], tmp_path: Path
) -> None:
    """The kernel's C++ source, rendered with the defects and compiled, against the numpy model
    on the same data: every output within one bf16 ulp (plus 1e-6 for values near zero)."""
    tree = lookalike_builds["good"]
    flags = {d.value for d in parse_defects(defects)}
    src = tmp_path / "kernel.cpp"
    src.write_text(render((TREE / KERNEL).read_text(), flags))
    env = device_env(tmp_path, tree)
    cached = (
        Path(env["TT_METAL_CACHE"]) / "wormhole_b0" / "kernels" / "layernorm_bw" / "layernorm_bw.so"
    )
    cached.parent.mkdir(parents=True)
    subprocess.run(
        [
            "g++",
            "-std=c++17",
            "-O2",
            "-shared",
            "-fPIC",
            f"-I{tree / 'tt-train/sources'}",
            str(src),
            "-o",
            str(cached),
        ],
        check=True,
    )
    rng = np.random.default_rng(7)
    io = tree / "build/tt-train/tests/ttml_layernorm_bw_io"
    for rows, features in ((5, 20), (4, 33), (3, 213), (3, 2048), (2, 8462)):
        data = tmp_path / f"io-{features}"
        data.mkdir()
        x = rng.uniform(-1, 1, (rows, features)).astype(np.float32)
        dy = rng.uniform(-1, 1, (rows, features)).astype(np.float32)
        gamma = rng.uniform(0, 1, (1, features)).astype(np.float32)
        x, dy, gamma = (a.astype(ml_dtypes.bfloat16).astype(np.float32) for a in (x, dy, gamma))
        (data / "shape.txt").write_text(f"{rows} {features}\n")
        for name, arr in (("x", x), ("dy", dy), ("gamma", gamma)):
            arr.tofile(data / f"{name}.f32")
        code, out = run_tests(io, str(data), env=env)
        assert code == 0, out
        emu = emulated_kernel(x, dy, gamma, lookalike_formats(parse_defects(defects)))
        for name, shape in (
            ("dx", (rows, features)),
            ("dgamma", (features,)),
            ("dbeta", (features,)),
        ):
            cpp = np.fromfile(data / f"{name}.f32", dtype=np.float32).reshape(shape)
            ref = np.asarray(getattr(emu, name), dtype=np.float32).reshape(shape)
            err = np.abs(cpp - ref)
            bound = _bf16_ulp(np.maximum(np.abs(cpp), np.abs(ref))) + 1e-6
            assert (err <= bound).all(), (defects, features, name, float(err.max()))


def test_flaky_modes_repeat_from_their_seed(
    lookalike_builds: dict[str, Path], tmp_path: Path
) -> None:
    tree = lookalike_builds["good"]
    flt = "--gtest_filter=*OneTile"

    def outcomes(flake: str, n: int) -> list[int]:
        env = {**device_env(tmp_path, tree), "TT_LOOKALIKE_FLAKE": flake}
        return [run_tests(tree / BIN, flt, env=env)[0] for _ in range(n)]

    state = tmp_path / "state"
    first = outcomes(f"p=0.4,seed=3,state={state}", 30)
    state.unlink()
    again = outcomes(f"p=0.4,seed=3,state={state}", 30)
    assert first == again  # a seeded trial repeats exactly
    fails = first.count(1)
    assert set(first) <= {0, 1} and 4 <= fails <= 20  # Binomial(30, 0.4): P(outside) < 0.3%
    assert outcomes("crash=1,seed=1", 1) == [134]
    env = {**device_env(tmp_path, tree), "TT_LOOKALIKE_FLAKE": "infra=1,seed=1"}
    code, out = run_tests(tree / BIN, flt, env=env)
    assert code == 134 and "Failed to pin pages for DMA" in out
    env["TT_LOOKALIKE_FLAKE"] = "hang=1,seed=1"
    with pytest.raises(subprocess.TimeoutExpired):
        run_tests(tree / BIN, flt, env=env, timeout=3)


def test_flaky_bad_commit_masks_the_bug_at_rate_one_minus_q(
    lookalike_builds: dict[str, Path], tmp_path: Path
) -> None:
    tree = lookalike_builds["bad"]
    env = {
        **device_env(tmp_path, tree),
        "TT_LOOKALIKE_FLAKE": f"q=0.5,seed=9,state={tmp_path / 's'}",
    }
    codes = [
        run_tests(tree / BIN, "--gtest_filter=*Deterministic_2048Features", env=env)[0]
        for _ in range(24)
    ]
    assert set(codes) == {0, 1}  # Binomial(24, 0.5): both outcomes, P(miss) < 1e-7


def test_build_metal_clean_removes_build_trees_only(tmp_path: Path) -> None:
    t = generate(tmp_path / "x", Spec(commits=20, tus=1))
    repo = Path(t.path)
    for d in ("build_Debug", "build_Release", "tt-train/build"):
        (repo / d).mkdir()
    (repo / "build").symlink_to("build_Debug")
    res = subprocess.run([str(repo / "build_metal.sh"), "--clean"], capture_output=True, text=True)
    assert res.returncode == 0
    assert not any(
        (repo / d).exists() for d in ("build", "build_Debug", "build_Release", "tt-train/build")
    )
    # build_metal.sh itself and the sources are still there
    assert git(repo, "status", "--porcelain") == ""
