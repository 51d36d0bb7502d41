"""Every command in a real terminal (a pty read by pyte) at 60, 80 and 200 columns, and piped:
every id, sha, test name and number of the command's own JSON appears whole, each printed
rerun line pastes back as the argv the JSON holds, tables fit the screen, and piped output has
no box drawing. The emulator backend and one-test filters keep it cheap:
two runs shared by the tests that read records, a bisect of a small generated history."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import need
from tests.terminal.screen import BOX, lnrepro, on_screen, piped, whole

WIDTHS = [60, 80, 200, None]  # None: piped
FILTER = "*BugRepro_Deterministic_256Tiles:*BugRepro_TightTolerance_8192Features"


def num(v: float) -> str:
    return f"{v:.6g}"


def as_json(cwd: Path, *args: str) -> Any:
    """The command's own JSON (``--json``)."""
    p = subprocess.run(
        [lnrepro(), *args, "--json"], cwd=cwd, capture_output=True, text=True, timeout=120
    )
    assert p.stdout, p.stderr
    return json.loads(p.stdout)


@dataclass
class World:
    """Two runs shared by the tests that read saved records (one xdist group, made once)."""

    root: Path
    runs: Path
    a: str  # the shipped kernel's run
    b: str  # the fixed kernel's run
    log: Path  # a's console log

    def json(self, *args: str) -> Any:
        return as_json(self.root, *args)


def make_history(where: Path) -> Path:
    """Eight commits; the sixth switches the emulated kernel from fixed to shipped."""
    repo = where / "history"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    for i in range(1, 9):
        (repo / "kernel-defect").write_text("shipped\n" if i >= 6 else "none\n")
        with (repo / "CHANGES").open("a") as f:
            f.write(f"change {i}\n")
        subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
        subprocess.run(
            [
                "git",
                "-C",
                str(repo),
                "commit",
                "-q",
                "-m",
                f"[tt-train] LayerNorm backward: change {i} (#3000{i})",
            ],
            check=True,
        )
    return repo


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    root = tmp_path_factory.mktemp("terminal")
    runs = root / "runs"
    ids = []
    for defect in ("shipped", "none"):
        p = subprocess.run(
            [
                lnrepro(),
                "run",
                "--defect",
                defect,
                "--filter",
                FILTER,
                "--seed",
                "1",
                "--record-dir",
                str(runs),
                "--json",
            ],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=300,
        )
        ids.append(json.loads(p.stdout)["id"])
    return World(root, runs, ids[0], ids[1], runs / ids[0] / "attempt-1.log")


def show(argv: list[str], width: int | None, cwd: Path) -> tuple[int, list[str]]:
    if width is None:
        code, lines = piped([lnrepro(), *argv], cwd=cwd)
        assert not BOX & set("".join(lines)), "\n".join(lines)  # plain text for logs
    else:
        code, lines = on_screen([lnrepro(), *argv], width, cwd=cwd)
        for line in lines:  # a table row wider than the screen would have been folded by it
            assert not (BOX & set(line)) or len(line) <= width, "\n".join(lines)
    return code, lines


def check(lines: list[str], tokens: list[str], rerun: list[str] | None = None) -> None:
    text = "\n".join(lines)
    missing = [t for t in dict.fromkeys(tokens) if t and not whole(t, text)]
    assert not missing, f"not whole on screen: {missing}\n{text}"
    printed = [ln.split("rerun:", 1)[1] for ln in lines if ln.startswith("rerun:")]
    if rerun is not None:
        assert printed, text
    for line in printed:  # pasted back, it is the same command
        assert shlex.split(line) == rerun, line


def run_tokens(doc: dict[str, Any]) -> list[str]:
    out = [doc["id"]]
    for t in doc["tests"]:
        out += [t["name"], t["verdict"], f"{t['passed']}/{t['runs']}"]
        for vals in (t.get("worst_metrics") or {}).values():
            out += [num(v) for v in vals.values()]
    return out


@pytest.mark.parametrize("width", WIDTHS)
def test_run(tmp_path: Path, width: int | None) -> None:
    runs = tmp_path / "runs"
    code, lines = show(
        ["run", "--filter", FILTER, "--seed", "1", "--record-dir", str(runs)], width, tmp_path
    )
    assert code == 1
    doc = as_json(tmp_path, "show", "last", "--record-dir", str(runs))
    check(lines, run_tokens(doc), doc["rerun"])


@pytest.mark.parametrize("width", WIDTHS)
def test_show(world: World, width: int | None) -> None:
    argv = ["show", world.a, "--record-dir", str(world.runs)]
    code, lines = show(argv, width, world.root)
    doc = world.json(*argv)
    assert code == 0
    check(lines, run_tokens(doc), doc["rerun"])


@pytest.mark.parametrize("width", WIDTHS)
def test_runs(world: World, width: int | None) -> None:
    argv = ["runs", "--record-dir", str(world.runs)]
    code, lines = show(argv, width, world.root)
    doc = world.json(*argv)
    assert code == 0
    check(
        lines,
        [r["id"] for r in doc["records"]]
        + [w.strip(",") for r in doc["records"] for w in r["headline"].split()],
    )
    if width is None:  # a header line, then one record per line, its id first
        assert [ln.split("\t")[0] for ln in lines] == ["id"] + [r["id"] for r in doc["records"]]
    assert whole("defect shipped", "\n".join(lines)) and whole("seed 1", "\n".join(lines))


@pytest.mark.parametrize("width", WIDTHS)
def test_compare(world: World, width: int | None) -> None:
    argv = ["compare", world.a, world.b, "--record-dir", str(world.runs)]
    code, lines = show(argv, width, world.root)
    doc = world.json(*argv)
    assert code == 0
    tokens = [doc["a"], doc["b"], "defect shipped", "defect none", "seed 1"]
    for r in doc["tests"]:
        # the change is a sentence: it may wrap between its words, never inside one
        tokens += [r["test"], r["verdict_a"], r["verdict_b"], *r["change"].split()]
        tokens += [num(r[k]) for k in ("max_diff_a", "max_diff_b") if r[k] is not None]
        tokens += [f"{100 * r[k]:.0f}%" for k in ("pass_rate_a", "pass_rate_b") if r[k] is not None]
    check(lines, tokens)


@pytest.mark.parametrize("width", WIDTHS)
def test_explain(world: World, width: int | None) -> None:
    argv = ["explain", world.a, "--record-dir", str(world.runs)]
    code, lines = show(argv, width, world.root)
    doc = world.json(*argv)
    assert code == 0
    best = doc["models"][0]
    tokens = [doc["source"]]
    for m in doc["models"][:8]:
        tokens += [f"{m['cost']:.6f}", m["era"], m["arch"]]
    for t in best["tests"]:
        tokens += [t["test"], t["observed"], t["model"]]
        for k, r in t["residuals"].items():
            tokens += [k, num(r["observed"]), num(r["model"])]
    check(lines, tokens)


@pytest.mark.parametrize("width", WIDTHS)
def test_tolerance(tmp_path: Path, width: int | None) -> None:
    argv = ["tolerance", "--trials", "2", "--test", "*2048Features"]
    code, lines = show(argv, width, tmp_path)
    doc = as_json(tmp_path, *argv)
    assert code == 0
    tokens = []
    for t in doc["tests"]:
        tokens += [t["test"], str(t["draws"])]
        tokens += [f"{v[0]:g}, {v[1]:g}" for v in t["tolerance"].values()]
    check(lines, tokens)


@pytest.mark.parametrize("width", WIDTHS)
def test_env_check(tmp_path: Path, width: int | None) -> None:
    sysroot = tmp_path / "sysroot"
    sysroot.mkdir()
    argv = ["env-check", "--sysroot", str(sysroot)]
    code, lines = show(argv, width, tmp_path)
    doc = as_json(tmp_path, *argv)
    assert code == 1
    tokens = []
    for c in doc["checks"]:
        tokens += [c["id"], c["status"].upper()]
        tokens += [w for w in f"{c['detail']} {c['fix']}".split() if "/" in w]  # paths
    check(lines, [t.strip("(),;:`'") for t in tokens])


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("every", [False, True])
def test_parse(world: World, width: int | None, every: bool) -> None:
    argv = ["parse", str(world.log), *(["--all"] if every else [])]
    code, lines = show(argv, width, world.root)
    doc = world.json("parse", str(world.log))
    assert code == 1
    tokens = []
    for t in doc["tests"]:
        if every or t["status"] in ("FAILED", "CRASHED", "TIMEOUT"):
            tokens += [t["name"], t["status"]]
            for vals in (t.get("metrics") or {}).values():
                tokens += [num(v) for v in vals.values()]
    tokens += [f"{v} {k.lower()}" for k, v in doc["totals"].items() if v]  # the summary
    check(lines, tokens)


@pytest.mark.parametrize("width", WIDTHS)
def test_every_failed_test_is_on_its_status_line(world: World, width: int | None) -> None:
    """Was: at 60 columns ``grep FAIL`` lost the names wrapped under their status."""
    argv = ["show", world.a, "--record-dir", str(world.runs)]
    _, lines = show(argv, width, world.root)
    failing = [t["name"] for t in world.json(*argv)["tests"] if t["verdict"] == "FAIL"]
    grepped = [ln for ln in lines if "FAIL" in ln.split()]
    assert failing and all(any(whole(n, ln) for ln in grepped) for n in failing), lines


@pytest.mark.parametrize("width", [60, None])
def test_run_list_names_tests_whole(tmp_path: Path, width: int | None) -> None:
    """Was: piped, ``run --list`` printed gtest's two-level listing."""
    _, lines = show(["run", "--list"], width, tmp_path)
    assert "LayerNormBackwardOpTest.BugRepro_Deterministic_256Tiles" in lines
    assert all(ln.startswith("LayerNormBackwardOpTest.") for ln in lines), lines


@pytest.mark.parametrize("width", WIDTHS)
def test_report(world: World, width: int | None) -> None:
    argv = ["report", world.a, "--record-dir", str(world.runs)]
    code, lines = show(argv, width, world.root)
    doc = world.json("show", world.a, "--record-dir", str(world.runs))
    assert code == 0
    check(lines, [doc["id"], *(t["name"] for t in doc["tests"])])


def bisect_tokens(doc: dict[str, Any]) -> list[str]:
    r = doc["result"]
    out = [r["first_bad"], r["last_good"]]
    for s in doc["steps"]:  # a subject is free text: it may wrap, at spaces only
        out += [s["sha"][:12], *s["subject"].split()]
    return out


@pytest.mark.parametrize("width", WIDTHS)
def test_bisect_and_its_log(tmp_path: Path, width: int | None) -> None:
    need(shutil.which("git") is not None, "git is not installed")
    repo = make_history(tmp_path)
    argv = [
        "bisect",
        "--repo",
        str(repo),
        "--good",
        "main~7",
        "--bad",
        "main",
        "--command",
        "grep -q none kernel-defect",
    ]
    code, lines = show(argv, width, tmp_path)
    assert code == 0
    doc = as_json(tmp_path, "bisect", "--log", "--repo", str(repo))
    check(lines, bisect_tokens(doc), doc["rerun"])
    code, lines = show(["bisect", "--log", "--repo", str(repo)], width, tmp_path)
    assert code == 0
    check(lines, bisect_tokens(doc), doc["rerun"])
