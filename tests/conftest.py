"""Shared fixtures. Tests that need a compiler, Docker or root skip only outside CI."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import leftovers

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
# real googletest output, read where the machine keeps it (never copied into the project):
# $LNREPRO_GTEST_CORPUS, else ../shared/corpus/googletest beside the checkout
CORPUS = Path(
    os.environ.get("LNREPRO_GTEST_CORPUS") or ROOT.parent / "shared" / "corpus" / "googletest"
)
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
# the look-alike's templates hold tt-metal's own pytest files (conftest.py, tests/ttnn/...):
# they run inside generated checkouts, never as lnrepro's tests
collect_ignore = ["lookalike/tree"]
# every run ends with the count of the processes it started (tests/process_count.py)
pytest_plugins = ["tests.process_count"]


def need(ok: bool, reason: str) -> None:
    """Skip outside CI; in CI a missing prerequisite is a failure, not a skip."""
    if ok:
        return
    if IN_CI:
        pytest.fail(f"CI must provide this: {reason}")
    pytest.skip(reason)


# Every JSON document lnrepro writes or prints during the session is kept (LNREPRO_JSON_CAPTURE,
# inherited by subprocesses) and validated against docs/schemas when the session ends.
_CAPTURE = Path(os.environ.get("LNREPRO_TEST_CAPTURE") or f"/tmp/lnrepro-json-{os.getpid()}")
_COMPILERS = pytest.StashKey[Path]()
_BUILDERS = pytest.StashKey[list["subprocess.Popen[bytes]"]]()  # tests/prebuild.py, controller's
_CHECK = pytest.StashKey[Any]()  # tests/consumers/capture.py, the controller's
# One ccache for every C++ build of the session, in every worker, on this host and in the
# containers (mounted at the same path; lnrepro's docker runner takes $CCACHE_DIR): each test's
# look-alike lives at its own path, so paths under /tmp are made relative (base_dir) and the build
# directory is left out of the hash, as a developer's warm cache serves every checkout. Builds
# that name no ccache (build_metal.sh without --enable-ccache) are cold as before. The stand-in
# compilers (tests/lookalike/build.py) are scripts each worker writes anew and the image has its
# own copies of: ccache knows them by content, not by mtime, so every worker and container shares
# the objects (the GCC behind them is Debian bookworm's on both sides).
_CCACHE = _CAPTURE.with_name(_CAPTURE.name.replace("json", "ccache"))
_BUILD_LOCK_FILE = _CAPTURE.with_name(_CAPTURE.name + "-build.lock")  # tests/lookalike/build.py


def _worker(config: pytest.Config) -> bool:
    """An xdist worker: the controller that started it owns the session's shared state."""
    return hasattr(config, "workerinput")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto``: two workers more than this machine has cores. The engine's tests spend much
    of their time waiting (on containers, on a hang's timeout, on the images being made); on two
    cores the fourth worker filled that (idle 45 -> 16 core-s of a run here, 309 -> 302 s; with
    the images to make, 383 -> 364 s), and --maxprocesses caps it."""
    return (os.cpu_count() or 1) + 2


def pytest_configure(config: pytest.Config) -> None:
    # one capture folder for the whole run: set by the controller (or a run without xdist)
    # before any worker starts, inherited by the workers, checked by the controller at the end
    if not _worker(config):
        shutil.rmtree(_CAPTURE, ignore_errors=True)
        os.environ["LNREPRO_JSON_CAPTURE"] = str(_CAPTURE)
        from tests.lookalike.build import BUILD_LOCK

        os.environ[BUILD_LOCK] = str(_BUILD_LOCK_FILE)
        _shared_ccache()
        from tests.consumers.capture import CaptureCheck

        config.stash[_CHECK] = CaptureCheck(_CAPTURE).start()
        if _whole_suite_in_workers(config) and _can_debootstrap():
            from tests import prebuild

            config.stash[_BUILDERS] = prebuild.start()
    if config.pluginmanager.hasplugin("xdist"):
        from tests import engine_group

        config.pluginmanager.register(engine_group, "lnrepro-engine-group")
        if not _worker(config):
            groups = _CAPTURE.with_name(_CAPTURE.name + "-groups")
            shutil.rmtree(groups, ignore_errors=True)
            groups.mkdir()
            os.environ[engine_group.ENV] = str(groups)
    # the compilers tt-metal's toolchain files name (tests/lookalike/build.py), on PATH for every
    # build on this host; readable by the non-root test user too
    from tests.lookalike.build import use_compilers

    config.stash[_COMPILERS] = use_compilers()


def pytest_unconfigure(config: pytest.Config) -> None:
    builders = config.stash.get(_BUILDERS, [])
    if builders:
        from tests import prebuild

        prebuild.stop(builders)


def _whole_suite_in_workers(config: pytest.Config) -> bool:
    """The whole suite (no paths, -k or -m named), in xdist workers: its container tests will
    need the debootstrapped images (tests/prebuild.py), and the controller is free to make them."""
    return (
        config.args_source == pytest.Config.ArgsSource.TESTPATHS
        and not config.getoption("keyword")
        and not config.getoption("markexpr")
        and bool(config.getoption("numprocesses", None))
    )


def _can_debootstrap() -> bool:
    return os.geteuid() == 0 and shutil.which("debootstrap") is not None and docker_ok()


def _shared_ccache() -> None:
    shutil.rmtree(_CCACHE, ignore_errors=True)
    _CCACHE.mkdir(mode=0o777)
    _CCACHE.chmod(0o777)  # the test user's builds write here too (umask 000 below)
    (_CCACHE / "ccache.conf").write_text(
        "base_dir = /tmp\nhash_dir = false\numask = 000\nmax_size = 4G\ncompiler_check = content\n"
    )
    os.environ["CCACHE_DIR"] = str(_CCACHE)


# Every test that starts a container, or needs this machine made to look like a card host, runs
# in one of three xdist workers, one test at a time in each: the bisects (tests/bisect) in one,
# the second engine's tests (a card host's engine, started per test or module) and the hang
# bisects (which wait on timeouts more than they compute, on a look-alike of their own) in
# another, the rest in the third. Without the hang bisects the second group ended at about 115 s
# of a 300 s run, and the rest was the longest chain whenever the images were made during the
# run. Each asks only about its own lnrepro's containers and processes (tests/leftovers.py), and
# they share the fake card host (_hold_card_host). The rest of the suite runs beside them.
_ENGINE_FIXTURES = frozenset(
    {
        "toolchain_image",
        "busybox_image",
        "engine_image",
        "fake_card_host",
        "card_host",
        "shell_less_image",
        "good_host",
    }
)


_REMOTE_AND_HANGS = (
    "tests/bisect/test_remote_engines.py",
    "tests/run/test_remote_runner.py",
    "tests/run/test_pytest_and_hangs.py::test_bisect_on_hang",
)


def _engine_group(nodeid: str) -> str:
    if nodeid.startswith(_REMOTE_AND_HANGS):
        return "engine-remote"
    return "engine-bisect" if nodeid.startswith("tests/bisect/") else "engine-run"


# and what builds C++ here is marked compiler: `-m "not docker and not compiler"` is the inner loop
_BUILD_FIXTURES = frozenset({"gtest_binary", "lookalike_builds"})


def _shared_scope(item: pytest.Item) -> str | None:
    """The module (or class) whose scoped fixture this test uses: its users are one xdist unit,
    so the fixture is made once, not once in every worker that runs one of them."""
    info = getattr(item, "_fixtureinfo", None)
    for defs in info.name2fixturedefs.values() if info is not None else ():
        if defs and defs[-1].scope in ("module", "class"):
            return f"{defs[-1].scope}:{item.nodeid.split('::')[0]}"
    return None


@pytest.hookimpl(tryfirst=True)  # the marks are there before -m deselects by them
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    engine = {
        i.nodeid: i
        for i in items
        if _ENGINE_FIXTURES & set(getattr(i, "fixturenames", ())) or i.get_closest_marker("docker")
    }
    # a module- or class-scoped fixture that engine tests use: its other users join their group
    engine_scopes = {
        scope: _engine_group(i.nodeid)
        for i in engine.values()
        if (scope := _shared_scope(i)) is not None
    }
    for item in items:
        uses = set(getattr(item, "fixturenames", ()))
        if item.nodeid in engine:
            if not item.get_closest_marker("docker"):
                item.add_marker(pytest.mark.docker)
            item.add_marker(pytest.mark.xdist_group(_engine_group(item.nodeid)))
        elif (scope := _shared_scope(item)) is not None:
            item.add_marker(pytest.mark.xdist_group(engine_scopes.get(scope, scope)))
        elif "lookalike_builds" in uses:  # three builds, a session's: made once, not per worker
            item.add_marker(pytest.mark.xdist_group("lookalike-builds"))
        if _BUILD_FIXTURES & uses and not item.get_closest_marker("compiler"):
            item.add_marker(pytest.mark.compiler)
    # the modules with no test that needs the toolchain image first (whole modules, so a module's
    # fixtures are made once): an engine worker has work while that image is being made
    needs = {
        i.nodeid.split("::")[0]
        for i in items
        if "toolchain_image" in getattr(i, "fixturenames", ())
    }
    items.sort(key=lambda i: i.nodeid.split("::")[0] in needs)
    if config.pluginmanager.hasplugin("xdist"):
        from tests import engine_group

        engine_group.order(items)
        engine_group.record(config, items)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    shutil.rmtree(session.config.stash.get(_COMPILERS, Path("/nonexistent")), ignore_errors=True)
    if _worker(session.config):
        return  # the controller checks every worker's documents once they are all done
    files, bad = session.config.stash[_CHECK].finish()
    if files and shutil.which("node"):  # and Node's JSON.parse, the strictest reader there is
        js = "const fs=require('fs');for(const f of process.argv.slice(1)){try{JSON.parse(fs.readFileSync(f,'utf8'))}catch(e){console.log(f+': '+e.message)}}"
        for i in range(0, len(files), 200):
            out = subprocess.run(
                ["node", "-e", js, *map(str, files[i : i + 200])], capture_output=True, text=True
            ).stdout
            bad += [
                (Path(line.split(": ", 1)[0]), "JSON.parse: " + line.split(": ", 1)[1])
                for line in out.splitlines()
                if ": " in line
            ]
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    if tr is not None and files:
        tr.write_line(
            f"json schemas: {len(files)} document(s) checked, {len({f for f, _ in bad})} invalid"
        )
    for f, e in bad[:20]:
        if tr is not None:
            tr.write_line(f"  {f.name}: {e}")
    if bad and session.exitstatus == 0:
        session.exitstatus = 1
    shutil.rmtree(_CAPTURE, ignore_errors=True)
    shutil.rmtree(_CAPTURE.with_name(_CAPTURE.name + "-groups"), ignore_errors=True)
    shutil.rmtree(_CCACHE, ignore_errors=True)
    with contextlib.suppress(OSError):
        os.unlink(_BUILD_LOCK_FILE)


@pytest.fixture(autouse=True)
def _no_home_writes(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every test gets a throw-away HOME, so none can touch the real one."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "lnrepro tests")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "tests@lnrepro.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "lnrepro tests")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "tests@lnrepro.invalid")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


@pytest.fixture(scope="session")
def gtest_binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/fixtures/gtest_fixture.cpp compiled against Debian's libgtest-dev."""
    cxx = shutil.which("g++")
    need(cxx is not None, "g++ is not installed")
    need(Path("/usr/include/gtest/gtest.h").exists(), "libgtest-dev is not installed")
    out = tmp_path_factory.mktemp("gtest") / "gtest_fixture"
    subprocess.run(
        [
            cxx or "g++",
            "-std=c++17",
            "-O0",
            str(FIXTURES / "gtest_fixture.cpp"),
            "-o",
            str(out),
            "-lgtest",
            "-lgtest_main",
            "-pthread",
        ],
        check=True,
    )
    return out


def run_binary(
    binary: Path,
    *args: str,
    timeout: float = 60,
    env: dict[str, str] | None = None,
    wrap: list[str] | None = None,
) -> tuple[int, bytes]:
    proc = subprocess.run(
        [*(wrap or []), str(binary), *args],
        capture_output=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )
    return proc.returncode, proc.stdout + proc.stderr


def run_gently(argv: list[str], *, timeout: float, **kw: Any) -> leftovers.Ran:
    """subprocess.run for lnrepro itself, stopped as a user would if the test fails while it runs;
    the result's ``owner`` names its containers (tests/leftovers.py)."""
    return leftovers.run(argv, timeout=timeout, **kw)


# ------------------------------------------------------------------ the tt-metal look-alike
def need_toolchain() -> None:
    for tool in ("g++", "cmake", "git"):
        need(shutil.which(tool) is not None, f"{tool} is not installed")
    need(Path("/usr/include/gtest/gtest.h").exists(), "libgtest-dev is not installed")


@pytest.fixture(scope="session")
def lookalike(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One look-alike checkout per test session; tests must not modify it. One generated unit in
    libtt_metal, as every other look-alike of the suite has: each commit that touches one is a
    real compile for every build that crosses it, and the tests need the churn, not its weight
    (the benchmarks under scripts/ choose their own)."""
    need(shutil.which("git") is not None, "git is not installed")
    from tests.lookalike import Spec, generate

    return generate(tmp_path_factory.mktemp("lookalike") / "tt-metal", Spec(tus=1))


def worktree(truth: Any, where: Path, rev: str, pick: str | None = None) -> Path:
    """A worktree of the look-alike at ``rev`` (plus ``pick`` applied, uncommitted), submodules in."""
    repo = truth.path
    subprocess.run(
        ["git", "-C", repo, "worktree", "add", "-q", "--detach", str(where), rev], check=True
    )
    if pick:
        subprocess.run(["git", "-C", str(where), "cherry-pick", "--no-commit", pick], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(where),
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "update",
            "--init",
            "-q",
        ],
        check=True,
    )
    return where


@pytest.fixture(scope="session")
def lookalike_builds(lookalike: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Built worktrees: ``good`` (the culprit's parent) and ``bad`` (the culprit), both with the
    BugRepro tests picked, and ``main`` (no BugRepro tests). Built once per session."""
    need_toolchain()
    from tests.lookalike import build

    base = tmp_path_factory.mktemp("lookalike-builds")
    trees = {
        "good": worktree(lookalike, base / "good", lookalike.culprit_parent, lookalike.bugrepro),
        "bad": worktree(lookalike, base / "bad", lookalike.culprit, lookalike.bugrepro),
        "main": worktree(lookalike, base / "main", lookalike.main),
    }
    for name, tree in trees.items():
        res = build(tree, "--debug", "--build-tt-train", "--enable-ccache")
        assert res.ok, f"look-alike build of {name} failed:\n{res.output[-3000:]}"
    return trees


# ------------------------------------------------------------------ Docker
def docker_ok() -> bool:
    return (
        shutil.which("docker") is not None
        and subprocess.run(["docker", "info"], capture_output=True).returncode == 0
    )


@pytest.fixture(scope="session")
def busybox_image(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from tests import rootfs

    need(docker_ok(), "no Docker engine answers (scripts/test.sh starts dockerd as root)")
    need(rootfs.busybox() is not None, "busybox-static is not installed")
    root = rootfs.busybox_root(
        tmp_path_factory.mktemp("bbroot"), ("sh", "id", "cat", "ls", "true", "sleep")
    )
    (root / "tmp").mkdir()
    name = rootfs.docker_import(root, f"lnrepro-test-busybox:{uuid.uuid4().hex[:8]}")
    yield name
    subprocess.run(["docker", "rmi", "-f", name], capture_output=True)


@pytest.fixture(scope="session")
def toolchain_image() -> str:
    """A Debian bookworm image with the look-alike's toolchain, made here (debootstrap, no
    registry), named by its package list and reused while it exists: a machine builds it once."""
    need(docker_ok(), "no Docker engine answers (scripts/test.sh starts dockerd as root)")
    need(shutil.which("debootstrap") is not None, "debootstrap is not installed")
    need(os.geteuid() == 0, "debootstrap needs root")
    from tests.lookalike import ensure_toolchain_image
    from tests.rootfs import one_builder

    with one_builder("toolchain-image"):
        return ensure_toolchain_image()


@pytest.fixture(scope="session")
def engine_image() -> str:
    """The second engine's image (tests/engines.py): the toolchain image with docker.io, made once."""
    need(docker_ok(), "no Docker engine answers (scripts/test.sh starts dockerd as root)")
    need(shutil.which("debootstrap") is not None, "debootstrap is not installed")
    need(os.geteuid() == 0, "debootstrap needs root")
    from tests.engines import ensure_image
    from tests.rootfs import one_builder

    with one_builder("engine-image"):
        return ensure_image()


# This machine made to look like a card host is shared by every test that needs it, in this
# session's workers and in any other pytest session on this machine (two checkouts tested side by
# side): the first holder makes it, the last one out takes it down. The holders are processes,
# kept in one machine-wide file under a lock and pruned when dead, so a killed run holds nothing.
_CARD_HOLDERS = Path("/tmp/lnrepro-test-card-holders")


def _process_id(pid: int) -> str | None:
    """``pid`` and its start time (a pid is reused; the pair is not), or None if it is gone."""
    try:
        return f"{pid} {Path(f'/proc/{pid}/stat').read_text().rsplit(')', 1)[1].split()[19]}"
    except (OSError, IndexError):
        return None


@contextlib.contextmanager
def _card_holders() -> Iterator[list[str]]:
    """The live processes holding the fake card host, under a lock (changes are written back)."""
    import fcntl

    with open(f"{_CARD_HOLDERS}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            lines = _CARD_HOLDERS.read_text().splitlines()
        except OSError:
            lines = []
        holders = [h for h in lines if _process_id(int(h.split()[0])) == h]
        yield holders
        _CARD_HOLDERS.write_text("".join(f"{h}\n" for h in holders))


@contextlib.contextmanager
def card_host_held_still() -> Iterator[bool]:
    """This machine's card-host state, held still: no test makes or takes down the fake card host
    (:func:`fake_card_host`, held by tests in other workers) until the block ends. Yields whether
    it is up."""
    with _card_holders() as holders:
        yield bool(holders)


def _hold_card_host(make: Any, unmake: Any) -> Iterator[None]:
    """Hold the card host as a fixture does: ``make()`` it if nobody holds it, ``unmake()`` it
    as the last one out."""
    me = _process_id(os.getpid())
    assert me is not None
    with _card_holders() as holders:
        if not holders:
            make()  # a failure (or need()) leaves the holders as they were
        holders.append(me)
    try:
        yield
    finally:
        with _card_holders() as holders:
            holders.remove(me)
            if not holders:
                unmake()


_DEV_DIR, _NODE, _HUGE_MNT = (
    Path("/dev/tenstorrent"),
    Path("/dev/tenstorrent/0"),
    Path("/dev/hugepages-1G"),
)


def _leftover_card() -> bool:
    """Whether /dev/tenstorrent/0 is a node this fixture made (/dev/null's numbers, which no
    card's driver uses), left behind by a test run that was killed."""
    try:
        node = _NODE.lstat()
    except OSError:
        return False
    return stat.S_ISCHR(node.st_mode) and node.st_rdev == os.stat("/dev/null").st_rdev


def _undo_card(mounted: bool) -> None:
    if mounted:
        subprocess.run(["umount", str(_HUGE_MNT)], check=False)
    for undo in (_HUGE_MNT.rmdir, _NODE.unlink, _DEV_DIR.rmdir):
        with contextlib.suppress(OSError):
            undo()


@pytest.fixture
def fake_card_host() -> Iterator[None]:
    """This machine made to look like a card host for real: a character device node at
    /dev/tenstorrent/0 (/dev/null's numbers) and a hugetlbfs mount at /dev/hugepages-1G, of
    1 GiB pages where the kernel has them (as tt-metal's hosts mount it)."""
    need(os.geteuid() == 0, "needs root (mknod, mount)")

    def make() -> None:
        if _leftover_card():
            _undo_card(True)  # from a run that was killed before it took its card host down
        need(
            not _DEV_DIR.exists() and not _HUGE_MNT.exists(),
            "a real card setup is present; not touching it",
        )
        _DEV_DIR.mkdir()
        mounted = False
        try:
            subprocess.run(["mknod", "-m", "666", str(_NODE), "c", "1", "3"], check=True)
            _HUGE_MNT.mkdir()
            gib = Path("/sys/kernel/mm/hugepages/hugepages-1048576kB").is_dir()
            subprocess.run(
                [
                    "mount",
                    "-t",
                    "hugetlbfs",
                    *(["-o", "pagesize=1G"] if gib else []),
                    "nodev",
                    str(_HUGE_MNT),
                ],
                check=True,
            )
            mounted = True
        finally:
            if not mounted:
                _undo_card(False)

    yield from _hold_card_host(make, lambda: _undo_card(True))


@pytest.fixture(scope="session")
def test_user() -> str:
    """A user who is not root (scripts/test.sh makes one, in the docker group) and can run the
    venv's lnrepro: what a real user is, where root would hide permission problems."""
    import pwd

    name = os.environ.get("LNREPRO_TEST_USER", "lnrepro-test")
    need(os.geteuid() == 0, "needs root to run lnrepro as another user")
    try:
        pwd.getpwnam(name)
    except KeyError:
        need(False, f"no user {name} (scripts/test.sh creates it)")
    ok = subprocess.run(
        ["runuser", "-u", name, "--", sys.executable, "-c", "import lnrepro"], capture_output=True
    )
    need(
        ok.returncode == 0,
        f"{name} cannot run {sys.executable} (scripts/test.sh makes it reachable)",
    )
    return name


def default_signals() -> None:
    """``preexec_fn`` for a child that must feel Ctrl-C: a shell that ran CI in the background
    (``cmd &``) starts it with SIGINT ignored, and Python then installs no KeyboardInterrupt."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)
