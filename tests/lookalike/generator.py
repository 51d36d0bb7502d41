"""Generate a tt-metal look-alike: a real C++ checkout with a real, deterministic git history.

The tree (``tree/`` beside this file) is tt-metal's layout in miniature: ``build_metal.sh``,
CMake, ``libtt_metal`` with a UMD submodule, tt-train's fused LayerNorm backward kernel, and
``ttml_tests`` (GoogleTest). Files under ``tree/`` are templates: lines between ``//@if FLAG``
(or ``#@if``) and ``//@end`` exist only in commits where FLAG holds, so each defect is real code
that one commit adds and another removes.

The history is written in one ``git fast-import`` stream (hundreds of commits in well under a
second): a first-parent line with merges of short feature branches, several authors over months,
PR-style subjects, a culprit (on a merged branch by default), an optional fix, a stretch that does
not build, commits that change nothing the tests see, a UMD bump, and the BugRepro side branch.
:func:`generate` returns the ground truth, derived from the trees actually written.
"""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
TREE = HERE / "tree"
UMD = HERE / "umd"
LLK = HERE / "llk"
KERNEL = (
    "tt-train/sources/ttml/metal/ops/layernorm_bw/device/kernels/compute/layernorm_bw_kernel.cpp"
)
TEST_FILE = "tt-train/tests/ops/layernorm_bw_fused_op_test.cpp"
DEVICE = "tt_metal/impl/device.cpp"
UMD_PATH = "tt_metal/third_party/umd"
LLK_PATH = "tt_metal/third_party/tt_llk"
BUGREPRO_BRANCH = "ivoitovych/layernorm-bw-nightly-test-failure-bug-report-3"
DEFECTS = ("double-subtract", "drop-xhat-blocks", "overwrite-dy-gamma-sum")
# an LLK release whose zero_dst_reg skips the clear: a defect no tt-metal file shows, only the
# submodule's commit (the JIT reads the LLK headers at run time)
LLK_DEFECT = "llk-skips-zero-dst"
ALL_DEFECTS = (*DEFECTS, LLK_DEFECT)
LLK_ARCHES = ("wormhole_b0", "blackhole")
# ttnn's side: a PCC regression in LayerNorm's compute kernel (a main commit), and a hang of the
# fused row-major LayerNorm under development (a merged branch: its reader pushes 31 pages per
# block where compute waits for 32). Neither is the tt-train bug: they have their own culprits.
PCC_DEFECT = "pcc-ln"
HANG_DEFECT = "cb-short-read"
PY_TESTS = "tests/ttnn/unit_tests/operations"
PCC_TEST = f"{PY_TESTS}/test_layer_norm.py::test_layer_norm[64-1024]"
HANG_TEST = f"{PY_TESTS}/test_layernorm_fused_rm.py::test_layernorm_fused_rm[8x8]"
HANG_KERNEL = "ttnn/cpp/ttnn/operations/normalization/layernorm_fused_rm/device/kernels/compute/layernorm_fused_rm.cpp"
# the ops' device model, our own (the package lnrepro.emulator.cbmodel), shipped as ttnn's
CBSIM = HERE.parent.parent / "lnrepro" / "emulator" / "cbmodel"

# Eras of tt-metal's history the look-alike goes through, in their real order (flag, default
# position on main, flags it ends, subject). docs/compatibility.md names the source of each.
ERAS: tuple[tuple[str, float, tuple[str, ...], str], ...] = (
    ("configure-only", 0.08, (), "[build] build_metal.sh: add --configure-only"),
    (
        "runtime-root",
        0.2,
        (),
        "[tt-metal] Make TT_METAL_HOME optional: TT_METAL_RUNTIME_ROOT or the working directory",
    ),
    ("clang20", 0.47, (), "[CI] Upgrade default toolchain from Clang 17 to Clang 20"),
    (
        "no-clang17",
        0.5,
        (),
        "[CI] Remove the Clang 17 toolchain files; tt-train defaults to Clang 20",
    ),
    (
        "train-none",
        0.53,
        (),
        "[tt-train] Bump clang from 17 to 20: tt-train no longer picks a compiler",
    ),
    (
        "train-inherit",
        0.7,
        ("train-none",),
        "[tt-train] Inherit the compiler from tt-metal's build",
    ),
    # tt-triage as one script (scripts/debugging_scripts/tt-triage.py, mid-2025), then as a
    # framework of scripts (tools/tt-triage.py -> tools/triage/, about Oct 2025)
    (
        "triage-one-script",
        0.15,
        (),
        "[tools] Add tt-triage: health checks and running ops of a hung device",
    ),
    (
        "triage-framework",
        0.4,
        ("triage-one-script",),
        "[tools] tt-triage: a framework of scripts in tools/triage, run by tools/tt-triage.py",
    ),
)
ERA_FLAGS = tuple(e[0] for e in ERAS)

AUTHORS = (
    ("Daniil Yurshevich", "dyurshevich@tenstorrent.com"),
    ("Ivan Voitovych", "ivoitovych@tenstorrent.com"),
    ("Mariya Petrova", "mpetrova@tenstorrent.com"),
    ("Oleg Milyutin", "omilyutin@tenstorrent.com"),
    ("Sofija Jovic", "sjovic@tenstorrent.com"),
    ("Paul Keller", "pkeller@tenstorrent.com"),
    ("Akhmed Rakhmati", "arakhmati@tenstorrent.com"),
)
AREAS = ("[tt-train]", "[ttnn]", "[UMD]", "[CI]", "[tt-metal]", "[docs]", "[Fabric]", "[TT-Mesh]")
VERBS = ("Fix", "Add", "Refactor", "Speed up", "Clean up", "Update", "Remove unused", "Document")
THINGS = (
    "program cache lookups",
    "CB page size checks",
    "sharded tensor accessor",
    "watcher hang reporting",
    "matmul 1D config selection",
    "dispatch prefetcher queue",
    "profiler zone names",
    "host-side tilize for bf16",
    "reduce_scatter test timeouts",
    "ccache key for JIT builds",
    "fabric router init",
    "tt-train optimizer state",
    "softmax backward tests",
    "mesh device teardown",
)


@dataclass(frozen=True)
class Spec:
    """Every knob of a look-alike; the same spec always gives the same shas."""

    seed: int = 1
    commits: int = 200  # commits on main's first-parent line
    merge_every: int = 5  # about one feature-branch merge per this many main commits
    tus: int = 4  # generated translation units in libtt_metal (build-time knob)
    # functions per unit, the compile weight of each: 0 is one line (0.01 s), 2 about 0.8 s at
    # -O0 -g (the headers' share), 24 about 1.7 s. The tests need the churn (every commit bumps
    # a unit, so its build's outputs differ), not the weight; the benchmarks under scripts/ set 24
    tu_functions: int = 0
    bulk_files: int = 0  # extra static files, for checkout benchmarks (50_000 and up)
    lfs_pointers: int = 0  # un-pulled git-LFS pointer files
    culprit_defects: tuple[str, ...] = ("double-subtract", "drop-xhat-blocks")
    culprit_at: float = 0.6  # position on main, as a fraction
    culprit_on_branch: bool = True
    fix_at: float | None = 0.9
    unbuildable: tuple[float, float] | None = (0.3, 0.34)
    bugrepro_at: float = 0.8  # where the BugRepro side branch forks off main
    flake: str | None = None  # committed tests/flake.conf (see tree/.../support/flake.hpp)
    start: str = "2025-06-02"
    days: int = 180
    # era flag -> position on main (0: from the first commit); ERAS gives the defaults
    eras: tuple[tuple[str, float], ...] = tuple((e[0], e[1]) for e in ERAS)
    culprit_kind: str = "kernel"  # or "llk": the culprit only bumps the LLK submodule
    llk_bump_at: float = 0.4  # a harmless LLK bump
    test_tus: int = 2  # tt-metal's own tests (built only with --build-tests)
    pcc_at: float | None = 0.64  # the ttnn LayerNorm PCC regression (a main commit)
    hang_at: float | None = 0.75  # the merge of the branch whose reader hangs layernorm_fused_rm


@dataclass
class GroundTruth:
    """What the generator knows about the history it wrote (full shas)."""

    path: str
    main: str  # tip of main
    root: str
    culprit: str
    culprit_parent: str
    culprit_merge: str | None  # the merge that brought the culprit onto main
    fix: str | None
    fix_parent: str | None
    bugrepro: str  # the side-branch commit that adds the BugRepro tests
    good: str  # a main commit before the culprit that builds
    bad: str  # a main commit after the culprit, before the fix, that builds
    first_parent: list[str] = field(default_factory=list)  # main, oldest first
    unbuildable: list[str] = field(default_factory=list)
    noop: list[str] = field(default_factory=list)  # change nothing the tests see (docs, CI)
    defects: dict[str, list[str]] = field(default_factory=dict)  # sha -> defects present
    umd: list[str] = field(default_factory=list)
    llk: list[str] = field(default_factory=list)  # the LLK submodule's releases
    eras: dict[str, str] = field(default_factory=dict)  # era flag -> the main commit starting it
    tags: dict[str, str] = field(default_factory=dict)  # annotated release tags on main
    pcc_culprit: str | None = None  # ttnn's PCC regression
    hang_culprit: str | None = None  # the commit (on a branch) that makes layernorm_fused_rm hang
    hang_merge: str | None = None  # its merge into main
    spec: dict[str, object] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return asdict(self)

    def is_bad(self, sha: str) -> bool:
        return bool(self.defects.get(sha))


# ----------------------------------------------------------------------------- templates
def render(text: str, flags: set[str] | frozenset[str]) -> str:
    """Keep the lines whose ``@if`` conditions hold; drop the marker lines themselves."""
    out: list[str] = []
    stack: list[bool] = []
    for line in text.splitlines(keepends=True):
        s = line.strip()
        marker = s[3:] if s.startswith("//@") else s[2:] if s.startswith("#@") else None
        if marker is not None:
            word, _, arg = marker.partition(" ")
            if word == "if":
                stack.append((arg.lstrip("!") in flags) != arg.startswith("!"))
                continue
            if word == "else":
                stack[-1] = not stack[-1]
                continue
            if word == "end":
                stack.pop()
                continue
        if all(stack):
            out.append(line)
    return "".join(out)


def render_file(text: str, flags: set[str] | frozenset[str]) -> str | None:
    """A template file as a commit has it; None when nothing of it is left (the file is absent
    in that commit, e.g. a toolchain file an era removed)."""
    out = render(text, flags)
    return out if out.strip() else None


def _templates(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): p.read_text(encoding="utf-8")
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def filler_unit(index: int, revision: int, functions: int) -> str:
    """A translation unit with real template work, so builds cost what they would; with no
    functions, one line whose object code still differs by revision."""
    if not functions:
        return (
            f"// Generated: unit {index}, revision {revision}.\n"
            f'extern "C" double tt_gen_unit_{index}() {{ return {revision} + 1.0; }}\n'
        )
    body = [
        f"// Generated: unit {index}, revision {revision}.",
        "#include <algorithm>",
        "#include <map>",
        "#include <numeric>",
        "#include <sstream>",
        "#include <string>",
        "#include <vector>",
        "",
        f"namespace tt::tt_metal::gen_u{index} {{",
        "template <typename T, int N>",
        "struct Stage {",
        "    static T run(std::vector<T> v) {",
        "        std::sort(v.begin(), v.end());",
        "        T s{};",
        "        for (int i = 0; i < N; ++i) s += std::accumulate(v.begin(), v.end(), T{}) * T(i + 1);",
        "        return s;",
        "    }",
        "};",
    ]
    for f in range(functions):
        body += [
            f"double f{f}(int n) {{",
            "    std::map<std::string, std::vector<double>> m;",
            "    for (int i = 0; i < n; ++i) {",
            "        std::ostringstream key;",
            f"        key << 'k' << (i % {f % 7 + 2});",
            "        m[key.str()].push_back(i * 0.5);",
            "    }",
            "    double s = 0;",
            "    for (auto& kv : m) {",
            f"        s += Stage<double, {f + 1}>::run(kv.second);",
            f"        s += Stage<float, {f + 2}>::run(std::vector<float>(kv.second.begin(), kv.second.end()));",
            f"        s += Stage<long, {f + 3}>::run(std::vector<long>(kv.second.size(), {revision}));",
            "    }",
            "    return s;",
            "}",
        ]
    body += [
        "}  // namespace",
        "",
        f'extern "C" double tt_gen_unit_{index}() {{',
        "    return "
        + " + ".join(f"tt::tt_metal::gen_u{index}::f{f}(8)" for f in range(min(functions, 4)))
        + ";",
        "}",
        "",
    ]
    return "\n".join(body)


def test_unit(index: int, functions: int) -> str:
    """One of tt-metal's own test files: a gtest over a generated unit's worth of code."""
    return filler_unit(1000 + index, 0, functions) + (
        "\n#include <gtest/gtest.h>\n"
        f'extern "C" double tt_gen_unit_{1000 + index}();\n'
        f"TEST(GeneratedApiTest, Unit{index}) {{ EXPECT_GT(tt_gen_unit_{1000 + index}(), 0.0); }}\n"
    )


def lfs_pointer(index: int) -> str:
    oid = hashlib.sha256(f"weights-{index}".encode()).hexdigest()
    return (
        f"version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize {1_000_000 + index}\n"
    )


# ----------------------------------------------------------------------------- git
def _git(repo: Path, *args: str, input: bytes | None = None) -> str:
    res = subprocess.run(
        ["git", "-C", str(repo), *args],
        input=input,
        capture_output=True,
        check=False,
    )
    if res.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {res.stderr.decode(errors='replace')}")
    return res.stdout.decode()


class _Stream:
    """A git fast-import stream, with marks for every commit."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.mark = 0

    def commit(
        self,
        ref: str,
        author: tuple[str, str],
        when: int,
        message: str,
        parents: list[int],
        changes: dict[str, tuple[str, bytes | str]],
        deletes: tuple[str, ...] = (),
    ) -> int:
        self.mark += 1
        msg = message.encode()
        who = f"{author[0]} <{author[1]}> {when} +0000"
        head = [f"commit {ref}", f"mark :{self.mark}", f"author {who}", f"committer {who}"]
        self.parts.append(("\n".join(head) + f"\ndata {len(msg)}\n").encode() + msg + b"\n")
        if parents:
            self.parts.append(f"from :{parents[0]}\n".encode())
        for p in parents[1:]:
            self.parts.append(f"merge :{p}\n".encode())
        for path in deletes:
            self.parts.append(f"D {path}\n".encode())
        for path, (mode, content) in sorted(changes.items()):
            if mode == "160000":
                self.parts.append(f"M 160000 {content!s} {path}\n".encode())
                continue
            data = content if isinstance(content, bytes) else content.encode()
            self.parts.append(f"M {mode} inline {path}\ndata {len(data)}\n".encode() + data + b"\n")
        self.parts.append(b"\n")
        return self.mark

    def run(self, repo: Path) -> dict[int, str]:
        marks = repo / ".git" / "lookalike-marks" if (repo / ".git").is_dir() else repo / "marks"
        marks.parent.mkdir(parents=True, exist_ok=True)
        _git(repo, "fast-import", "--quiet", f"--export-marks={marks}", input=b"".join(self.parts))
        out = {}
        for line in marks.read_text().splitlines():
            m, sha = line.split()
            out[int(m[1:])] = sha
        marks.unlink()
        return out


# ----------------------------------------------------------------------------- generate
Files = dict[str, tuple[str, "bytes | str"]]


@dataclass
class _Commit:
    mark: int
    flags: frozenset[str]  # defects present, "broken", "bugrepro"
    revs: dict[int, int]  # revision of each generated unit
    files: Files  # the tree's generated files (static ones are added once, in the root)


def _umd(dest: Path, start: int) -> list[str]:
    """The UMD submodule's origin (bare, inside the superproject's .git) with a few commits."""
    origin = dest / ".git" / "lookalike" / "umd.git"
    origin.mkdir(parents=True)
    _git(origin, "init", "-q", "--bare", "-b", "main")
    files: Files = {
        f"device/{p.name}": ("100644", p.read_text(encoding="utf-8"))
        for p in sorted((UMD / "device").iterdir())
    }
    s = _Stream()
    marks = []
    parent: list[int] = []
    for i in range(3):
        changes = dict(files) if i == 0 else {}
        changes["README.md"] = (
            "100644",
            f"# UMD (look-alike)\n\nUser-mode driver, release {i + 1}.\n",
        )
        m = s.commit(
            "refs/heads/main",
            AUTHORS[(i + 3) % len(AUTHORS)],
            start + i * 86400 * 20,
            f"Release umd 0.{i + 1}.0\n",
            parent,
            changes,
        )
        marks.append(m)
        parent = [m]
    got = s.run(origin)
    return [got[m] for m in marks]


def _llk(dest: Path, start: int) -> list[str]:
    """The LLK submodule's origin: release 1 (pinned first), 2 (a harmless bump), 3 (its
    zero_dst_reg skips the clear) and 4 (the clear is back)."""
    origin = dest / ".git" / "lookalike" / "tt_llk.git"
    origin.mkdir(parents=True)
    _git(origin, "init", "-q", "--bare", "-b", "main")
    header = (LLK / "llk_lib" / "llk_math_common.h").read_text(encoding="utf-8")
    s = _Stream()
    marks: list[int] = []
    parent: list[int] = []
    for i in range(4):
        flags = {"skips-zero-dst"} if i == 2 else set()
        changes: Files = {
            f"tt_llk_{arch}/llk_lib/llk_math_common.h": ("100644", render(header, flags))
            for arch in LLK_ARCHES
        }
        changes["README.md"] = ("100644", f"# tt-llk (look-alike)\n\nRelease {i + 1}.\n")
        m = s.commit(
            "refs/heads/main",
            AUTHORS[(i + 5) % len(AUTHORS)],
            start + i * 86400 * 30,
            f"Release tt-llk 1.{i + 1}.0\n",
            parent,
            changes,
        )
        marks.append(m)
        parent = [m]
    got = s.run(origin)
    return [got[m] for m in marks]


class _History:
    """Builds the commit graph; each commit's tree is a pure function of (flags, revs)."""

    def __init__(self, dest: Path, spec: Spec) -> None:
        self.dest, self.spec = dest, spec
        self.rng = random.Random(spec.seed)
        self.templates = _templates(TREE)
        self.stream = _Stream()
        self.commits: dict[int, _Commit] = {}
        self.start = int(
            datetime.fromisoformat(spec.start).replace(tzinfo=timezone.utc).timestamp()
        )
        self.pr = 30400
        self.docs_rev = 0
        self._cache: dict[tuple[frozenset[str], tuple[tuple[int, int], ...]], Files] = {}

    def files(self, flags: frozenset[str], revs: dict[int, int]) -> Files:
        key = (flags, tuple(sorted(revs.items())))
        if key not in self._cache:
            out: Files = {}
            for path, text in self.templates.items():
                rendered = render_file(text, flags)
                if rendered is not None:
                    out[path] = (
                        "100755" if path.endswith((".sh", "tt-triage.py")) else "100644",
                        rendered,
                    )
            for k in range(self.spec.tus):
                out[f"tt_metal/impl/gen/unit_{k:03d}.cpp"] = (
                    "100644",
                    filler_unit(k, revs.get(k, 0), self.spec.tu_functions),
                )
            self._cache[key] = out
        return self._cache[key]

    def when(self, p: float) -> int:
        return (
            self.start
            + int(p * self.spec.days * 86400 / self.spec.commits)
            + self.rng.randrange(0, 3600 * 6)
        )

    def pr_number(self) -> int:
        self.pr += self.rng.randrange(15, 120)
        return self.pr

    def subject(self) -> str:
        return f"{self.rng.choice(AREAS)} {self.rng.choice(VERBS)} {self.rng.choice(THINGS)}"

    def docs(self, extra: str) -> str:
        self.docs_rev += 1
        return f"# tt-metal (look-alike)\n\nRevision {self.docs_rev}: {extra}\n"

    def commit(
        self,
        ref: str,
        author: tuple[str, str],
        when: int,
        message: str,
        parents: list[_Commit],
        flags: frozenset[str],
        revs: dict[int, int],
        extra: Files | None = None,
    ) -> _Commit:
        files = self.files(flags, revs)
        base = parents[0].files if parents else {}
        changes = {p: v for p, v in files.items() if base.get(p) != v}
        deletes = tuple(p for p in base if p not in files) if parents else ()
        m = self.stream.commit(
            ref,
            author,
            when,
            message,
            [p.mark for p in parents],
            {**changes, **(extra or {})},
            deletes,
        )
        c = _Commit(m, flags, dict(revs), files)
        self.commits[m] = c
        return c

    def bump(self, revs: dict[int, int]) -> dict[int, int]:
        out = dict(revs)
        if self.spec.tus:
            unit = self.rng.randrange(self.spec.tus)
            out[unit] = out.get(unit, 0) + 1
        return out


def generate(dest: Path, spec: Spec = Spec()) -> GroundTruth:
    """Write the look-alike checkout at ``dest`` (which must not exist) and return its truth."""
    if dest.exists():
        raise FileExistsError(dest)
    dest.mkdir(parents=True)
    _git(dest, "init", "-q", "-b", "main")
    _git(dest, "config", "protocol.file.allow", "always")  # the submodule's origin is a path
    h = _History(dest, spec)
    rng = h.rng
    umd_shas = _umd(dest, h.start - 86400 * 60)
    llk_shas = _llk(dest, h.start - 86400 * 90)
    n = spec.commits
    llk_culprit = spec.culprit_kind == "llk"
    if spec.culprit_kind not in ("kernel", "llk"):
        raise ValueError(f"culprit_kind {spec.culprit_kind!r}")

    def pos(frac: float) -> int:
        return max(2, min(n - 2, round(frac * n)))

    taken: set[int] = set()

    def place(frac: float) -> int:
        """The nearest free position on main at or around ``frac`` (special commits never share)."""
        want = pos(frac)
        for d in range(n):
            for j in (want + d, want - d):
                if 2 <= j <= n - 2 and j not in taken:
                    taken.add(j)
                    return j
        raise ValueError("the history is too short for its special commits")

    culprit_pos = place(spec.culprit_at)
    bugrepro_pos = place(spec.bugrepro_at)
    fix_pos = place(spec.fix_at) if spec.fix_at is not None else None
    u0, u1 = (
        (place(spec.unbuildable[0]), place(spec.unbuildable[1])) if spec.unbuildable else (-1, -1)
    )
    umd_bump_pos = place(0.42)
    llk_bump_pos = place(spec.llk_bump_at)
    if llk_culprit and not llk_bump_pos < culprit_pos:
        raise ValueError("an LLK culprit needs llk_bump_at < culprit_at")
    era_ends = {e[0]: e[2] for e in ERAS}
    era_subject = {e[0]: e[3] for e in ERAS}
    root_flags = frozenset(name for name, at in spec.eras if at <= 0)
    era_at = {place(at): name for name, at in sorted(spec.eras, key=lambda e: e[1]) if at > 0}
    if not culprit_pos < bugrepro_pos or (fix_pos is not None and not bugrepro_pos < fix_pos):
        raise ValueError("need culprit_at < bugrepro_at < fix_at")
    pcc_pos = place(spec.pcc_at) if spec.pcc_at is not None else None
    hang_pos = place(spec.hang_at) if spec.hang_at is not None else None
    special = {
        culprit_pos,
        fix_pos,
        u0,
        u1,
        umd_bump_pos,
        llk_bump_pos,
        bugrepro_pos,
        *era_at,
        pcc_pos,
        hang_pos,
    }

    llk_url = dest / ".git" / "lookalike" / "tt_llk.git"
    static: Files = {
        ".gitmodules": (
            "100644",
            f'[submodule "{LLK_PATH}"]\n\tpath = {LLK_PATH}\n\turl = {llk_url}\n\tbranch = main\n'
            f'[submodule "{UMD_PATH}"]\n\tpath = {UMD_PATH}\n\turl = {dest / ".git" / "lookalike" / "umd.git"}\n',
        ),
        UMD_PATH: ("160000", umd_shas[1]),
        LLK_PATH: ("160000", llk_shas[0]),
        "README.md": ("100644", h.docs("imported")),
        ".github/workflows/build.yaml": ("100644", "name: build\non: [push]\n"),
        **{
            f"ttnn/ttnn/_cbsim/{p.name}": ("100644", p.read_text(encoding="utf-8"))
            for p in sorted(CBSIM.glob("*.py"))
        },
    }
    for k in range(spec.test_tus):
        static[f"tests/tt_metal/gen/test_unit_{k:03d}.cpp"] = (
            "100644",
            test_unit(k, spec.tu_functions),
        )
    if spec.flake:
        static["tt-train/tests/flake.conf"] = ("100644", spec.flake + "\n")
    # as tt-metal's .gitattributes (read at 07ddbf30b9): `git archive` fills in version.cmake's
    # placeholders, so a tree shipped without git metadata still has its version
    attributes = "/cmake/version.cmake export-subst\n"
    if spec.lfs_pointers:
        attributes += "*.bin filter=lfs diff=lfs merge=lfs -text\n"
    static[".gitattributes"] = ("100644", attributes)
    if spec.lfs_pointers:
        for i in range(spec.lfs_pointers):
            static[f"tt_metal/third_party/lfs/weights_{i:03d}.bin"] = ("100644", lfs_pointer(i))
    for i in range(spec.bulk_files):
        static[f"models/generated/d{i // 500:03d}/f{i:06d}.txt"] = ("100644", f"file {i}\n")

    tip = h.commit(
        "refs/heads/main",
        AUTHORS[0],
        h.when(0),
        "[tt-train] LayerNorm forward + backward (#30389)\n",
        [],
        root_flags,
        {},
        static,
    )
    first_parent = [tip]
    era_commits: dict[str, _Commit | None] = {name: None for name in root_flags}
    noop: list[_Commit] = []
    culprit = culprit_merge = fix = bugrepro = None
    hang_culprit = hang_merge = None
    culprit_defects = frozenset(() if llk_culprit else spec.culprit_defects)
    for i in range(1, n):
        author = rng.choice(AUTHORS)
        if i == culprit_pos and llk_culprit:
            culprit = tip = h.commit(
                "refs/heads/main",
                AUTHORS[3],
                h.when(i),
                f"[LLK] Bump tt_llk to 1.3.0: skip redundant DEST clears (#{h.pr_number()})\n",
                [tip],
                tip.flags | {LLK_DEFECT},
                tip.revs,
                {LLK_PATH: ("160000", llk_shas[2])},
            )
        elif i == culprit_pos and not spec.culprit_on_branch:
            culprit = tip = h.commit(
                "refs/heads/main",
                AUTHORS[0],
                h.when(i),
                f"[tt-train] LayerNorm backward: fuse mean(dy*gamma) into compute_dx, carry sums per block (#{h.pr_number()})\n",
                [tip],
                tip.flags | culprit_defects,
                tip.revs,
            )
        elif i == pcc_pos:
            tip = h.commit(
                "refs/heads/main",
                AUTHORS[6],
                h.when(i),
                f"[ttnn] LayerNorm: reduce mean and variance once per tile row (#{h.pr_number()})\n",
                [tip],
                tip.flags | {PCC_DEFECT},
                tip.revs,
            )
        elif i in (culprit_pos, hang_pos) or (
            i not in special and rng.random() < 1 / spec.merge_every
        ):
            # a short feature branch, forked a few commits back, merged here
            is_culprit = i == culprit_pos
            is_hang = i == hang_pos
            k = rng.randint(1, min(4, len(first_parent)))
            fork = first_parent[-k]
            b_author = AUTHORS[0] if is_culprit else AUTHORS[4] if is_hang else rng.choice(AUTHORS)
            parent = fork
            n_branch = 3 if is_culprit or is_hang else rng.randint(1, 3)
            for j in range(n_branch):
                when = h.when(i - k + (j + 1) * k / (n_branch + 1))
                if is_culprit and j == 1:
                    parent = culprit = h.commit(
                        "refs/lookalike/branch",
                        b_author,
                        when,
                        "[tt-train] LayerNorm backward: fuse mean(dy*gamma) into compute_dx, carry sums per block\n",
                        [parent],
                        parent.flags | culprit_defects,
                        parent.revs,
                    )
                elif is_hang and j == 1:
                    parent = hang_culprit = h.commit(
                        "refs/lookalike/branch",
                        b_author,
                        when,
                        "[ttnn] layernorm_fused_rm: reader skips the padding page of each block\n",
                        [parent],
                        parent.flags | {HANG_DEFECT},
                        parent.revs,
                    )
                else:
                    parent = h.commit(
                        "refs/lookalike/branch",
                        b_author,
                        when,
                        h.subject() + "\n",
                        [parent],
                        parent.flags,
                        h.bump(parent.revs),
                    )
            revs = dict(tip.revs)
            revs.update({u: r for u, r in parent.revs.items() if r != fork.revs.get(u, 0)})
            flags = tip.flags | (parent.flags - fork.flags)
            tip = h.commit(
                "refs/heads/main",
                b_author,
                h.when(i),
                f"Merge pull request #{h.pr_number()} from {b_author[1].split('@')[0]}/feature-{i}\n",
                [tip, parent],
                flags,
                revs,
            )
            if is_culprit:
                culprit_merge = tip
            if is_hang:
                hang_merge = tip
        else:
            msg, flags, revs, extra = h.subject(), tip.flags, tip.revs, {}
            kind = "code"
            if i == u0:
                flags, msg = flags | {"broken"}, "[UMD] Retry cluster discovery on transient errors"
            elif i == u1:
                flags, msg = (
                    flags - {"broken"},
                    "[tt-metal] Fix build: update check_cluster call after UMD API change",
                )
            elif fix_pos is not None and i == fix_pos and llk_culprit:
                flags = flags - set(ALL_DEFECTS)
                extra = {LLK_PATH: ("160000", llk_shas[3])}
                msg = "[LLK] Bump tt_llk to 1.4.0: clear DEST again"
            elif fix_pos is not None and i == fix_pos:
                flags = flags - set(ALL_DEFECTS)
                msg = "[tt-train] Fix LayerNorm backward double subtraction and block accumulation"
            elif i in era_at:
                era = era_at[i]
                flags = (flags | {era}) - set(era_ends[era])
                msg = era_subject[era]
            elif i == llk_bump_pos:
                extra = {LLK_PATH: ("160000", llk_shas[1])}
                msg = "[LLK] Bump tt_llk to 1.2.0"
            elif i == umd_bump_pos:
                extra = {UMD_PATH: ("160000", umd_shas[2])}
                msg = "[UMD] Bump umd to 0.3.0"
            elif rng.random() < 0.35:
                kind = "noop"
                msg = f"{rng.choice(('[docs]', '[CI]'))} {rng.choice(VERBS)} {rng.choice(THINGS)}"
                if rng.random() < 0.5:
                    extra = {"README.md": ("100644", h.docs(msg))}
                else:
                    extra = {
                        ".github/workflows/build.yaml": (
                            "100644",
                            f"name: build\non: [push]\n# tuned {i}\n",
                        )
                    }
            else:
                revs = h.bump(revs)
            tip = h.commit(
                "refs/heads/main",
                author,
                h.when(i),
                f"{msg} (#{h.pr_number()})\n",
                [tip],
                flags,
                revs,
                extra,
            )
            if kind == "noop":
                noop.append(tip)
            if i in era_at:
                era_commits[era_at[i]] = tip
            if fix_pos is not None and i == fix_pos:
                fix = tip
        first_parent.append(tip)
        if i == bugrepro_pos:
            bugrepro = h.commit(
                f"refs/heads/{BUGREPRO_BRANCH}",
                AUTHORS[1],
                h.when(i) + 3600,
                "[tt-train] Add bug reproduction tests for LayerNorm backward accumulation bug\n",
                [tip],
                tip.flags | {"bugrepro"},
                tip.revs,
            )
    assert culprit is not None and bugrepro is not None
    shas = h.stream.run(dest)
    _git(dest, "update-ref", "-d", "refs/lookalike/branch")
    # annotated release tags along main, as tt-metal's (git describe, hence the version, uses them)
    tags: dict[str, str] = {}
    for k, c in enumerate(first_parent[:: max(1, n // 4)]):
        name = f"v0.{60 + k}.0"
        _git(
            dest,
            "-c",
            f"user.name={AUTHORS[0][0]}",
            "-c",
            f"user.email={AUTHORS[0][1]}",
            "tag",
            "-a",
            name,
            "-m",
            f"Release {name}",
            shas[c.mark],
        )
        tags[name] = shas[c.mark]
    _git(dest, "checkout", "-q", "-f", "main")
    _git(dest, "-c", "protocol.file.allow=always", "submodule", "update", "--init", "--quiet")

    def sha(c: _Commit) -> str:
        return shas[c.mark]

    defects = {shas[m]: sorted(c.flags & set(ALL_DEFECTS)) for m, c in h.commits.items()}
    parents: dict[str, list[str]] = {}
    for line in _git(dest, "rev-list", "--parents", "--all").splitlines():
        c, *ps = line.split()
        parents[c] = ps
    culprits = [c for c, d in defects.items() if d and all(not defects[p] for p in parents[c])]
    assert culprits == [sha(culprit)], (culprits, sha(culprit))
    flags = {shas[m]: c.flags for m, c in h.commits.items()}

    def introduced(flag: str) -> list[str]:
        return [
            c
            for c, f in flags.items()
            if flag in f and all(flag not in flags[p] for p in parents[c])
        ]

    assert introduced(HANG_DEFECT) == ([sha(hang_culprit)] if hang_culprit else [])
    fp = [sha(c) for c in first_parent]
    unbuildable = [shas[m] for m, c in h.commits.items() if "broken" in c.flags]
    bad_from = next(i for i, s in enumerate(fp) if defects[s])
    bad_to = fp.index(sha(fix)) if fix else len(fp)
    good = next(s for s in reversed(fp[: bad_from - 1]) if s not in unbuildable)
    bad = next(s for s in reversed(fp[bad_from:bad_to]) if s not in unbuildable)
    truth = GroundTruth(
        path=str(dest),
        main=fp[-1],
        root=fp[0],
        culprit=sha(culprit),
        culprit_parent=parents[sha(culprit)][0],
        culprit_merge=sha(culprit_merge) if culprit_merge else None,
        fix=sha(fix) if fix else None,
        fix_parent=parents[sha(fix)][0] if fix else None,
        bugrepro=sha(bugrepro),
        good=good,
        bad=bad,
        first_parent=fp,
        unbuildable=unbuildable,
        noop=[sha(c) for c in noop],
        defects=defects,
        umd=umd_shas,
        llk=llk_shas,
        eras={name: (shas[c.mark] if c is not None else "") for name, c in era_commits.items()},
        tags=tags,
        pcc_culprit=(introduced(PCC_DEFECT) or [None])[0],
        hang_culprit=sha(hang_culprit) if hang_culprit else None,
        hang_merge=sha(hang_merge) if hang_merge else None,
        spec={k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(spec).items()},
    )
    (dest / ".git" / "lookalike.json").write_text(json.dumps(truth.to_json(), indent=1))
    return truth


def load_truth(checkout: Path) -> GroundTruth:
    data = json.loads((checkout / ".git" / "lookalike.json").read_text())
    return GroundTruth(**data)
