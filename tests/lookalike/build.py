"""Build and run a look-alike checkout the way a tt-metal developer would."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

# A test session's lock file for its look-alike builds on this host (set by tests/conftest.py for
# every worker). Each build is parallel inside (Ninja: every core), and two at once in different
# workers compiled the same sources twice before either stored them in the shared ccache: 21 of a
# run's 175 distinct compiles, at its start, when every worker builds its first look-alike.
BUILD_LOCK = "LNREPRO_TEST_BUILD_LOCK"


@dataclass(frozen=True)
class BuildResult:
    returncode: int
    seconds: float
    output: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def build(
    checkout: Path,
    *flags: str,
    env: dict[str, str] | None = None,
    timeout: float = 900,
) -> BuildResult:
    """``./build_metal.sh FLAGS`` (default: --debug --build-tt-train; tt-train adds its tests)."""
    argv = [str(checkout / "build_metal.sh"), *(flags or ("--debug", "--build-tt-train"))]
    with _one_build_at_a_time():
        start = time.monotonic()
        res = subprocess.run(
            argv,
            cwd=checkout,
            env={**os.environ, **(env or {})},
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    out = (res.stdout + res.stderr).decode(errors="replace")
    return BuildResult(res.returncode, time.monotonic() - start, out)


@contextlib.contextmanager
def _one_build_at_a_time() -> Iterator[None]:
    """The session's build lock (:data:`BUILD_LOCK`), where one is set; else nothing."""
    path = os.environ.get(BUILD_LOCK)
    if not path:
        yield
        return
    import fcntl

    with open(path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def device_env(
    root: Path, checkout: Path, *, hugepages: bool = True, device: bool = True
) -> dict[str, str]:
    """Environment under which the look-alike sees a card: a device node and a hugepage mount
    made of plain files under ``root`` (so no root or real card is needed), its own JIT cache."""
    dev = root / "dev-tenstorrent"
    dev.mkdir(parents=True, exist_ok=True)
    node = dev / "0"
    if device:
        node.touch()
    elif node.exists():
        node.unlink()
    mounts = root / "mounts"
    hp = "/dev/hugepages-1G"
    mounts.write_text(
        "proc /proc proc rw 0 0\n"
        + (f"hugetlbfs {hp} hugetlbfs rw,pagesize=1G 0 0\n" if hugepages else "")
    )
    return {
        "TT_METAL_HOME": str(checkout),  # the runtime's root before TT_METAL_RUNTIME_ROOT
        "TT_METAL_RUNTIME_ROOT": str(checkout),  # and after
        "ARCH_NAME": "wormhole_b0",
        "TT_METAL_CACHE": str(root / "tt-metal-cache"),
        "TT_LOOKALIKE_DEV_ROOT": str(dev),
        "TT_LOOKALIKE_PROC_MOUNTS": str(mounts),
        "TT_LOOKALIKE_HUGEPAGE_DIR": hp,
    }


def run_tests(
    binary: Path, *args: str, env: dict[str, str], timeout: float = 300
) -> tuple[int, str]:
    res = subprocess.run(
        [str(binary), *args],
        env={**os.environ, **env},
        capture_output=True,
        timeout=timeout,
        check=False,
    )
    code = 128 - res.returncode if res.returncode < 0 else res.returncode  # as a shell reports it
    return code, (res.stdout + res.stderr).decode(errors="replace")


# tt-metal's dev image carries Python with pytest and numpy for ttnn's tests (its venv, first on
# PATH); the look-alike's image has Debian's.
TOOLCHAIN_PACKAGES = (
    "g++",
    "make",
    "cmake",
    "ninja-build",
    "libgtest-dev",
    "ccache",
    "git",
    "python3",
    "python3-pytest",
    "python3-numpy",
)

# The compilers tt-metal's toolchain files name (clang-17/clang++-17, clang-20/clang++-20), stood
# in for by the system's GCC under those names: each defines LOOKALIKE_CLANG, which tt-train's
# sources require (as tt-train needs Clang), so a build that gets plain GCC fails as on tt-metal.
COMPILERS = {"clang-17": "gcc", "clang++-17": "g++", "clang-20": "gcc", "clang++-20": "g++"}


def compiler_wrapper(name: str) -> str:
    version = name.rsplit("-", 1)[1]
    return (
        "#!/bin/bash\n"
        f"# {name} (look-alike): {COMPILERS[name]} under Clang's name. ccache takes a compiler named\n"
        "# clang* for Clang and may add Clang's spelling of the colour flag; GCC's is passed instead.\n"
        "args=()\n"
        'for a in "$@"; do\n'
        '  case "$a" in\n'
        "    -fcolor-diagnostics) args+=(-fdiagnostics-color=always) ;;\n"
        "    -fno-color-diagnostics) args+=(-fdiagnostics-color=never) ;;\n"
        '    *) args+=("$a") ;;\n'
        "  esac\n"
        "done\n"
        f'exec {COMPILERS[name]} -DLOOKALIKE_CLANG={version} "${{args[@]}}"\n'
    )


def install_compilers(bin_dir: Path) -> Path:
    """Write the stand-in compilers into ``bin_dir`` (put it on PATH); returns ``bin_dir``."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name in COMPILERS:
        f = bin_dir / name
        f.write_text(compiler_wrapper(name))
        f.chmod(0o755)
    return bin_dir


def use_compilers() -> Path:
    """Put the stand-in compilers first on this process's PATH (children inherit it); returns
    their directory (readable by everyone, for tests that run as another user)."""
    import tempfile

    bin_dir = Path(tempfile.mkdtemp(prefix="lnrepro-compilers-"))
    bin_dir.chmod(0o755)
    install_compilers(bin_dir)
    os.environ["PATH"] = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    return bin_dir


# tt-metal's dev image starts sshd in its ENTRYPOINT under `set -e` before running the command
# (dockerfile/Dockerfile's dev stage, dockerfile/entrypoint.sh@47ad2f56a9): as anyone but root the
# container exits there. The look-alike's image does the same with a directory only root may make.
ENTRYPOINT = (
    "#!/bin/sh\n"
    "# Like tt-metal's dev image: start a service that needs root, then run the command.\n"
    "set -e\n"
    "mkdir -p /run/sshd\n"
    'exec "$@"\n'
)


def toolchain_image_name() -> str:
    import hashlib

    from tests.rootfs import APT_INSTALL, BASE

    tag = f"{BASE}:{APT_INSTALL}:" + ",".join(TOOLCHAIN_PACKAGES) + ENTRYPOINT
    tag += "".join(compiler_wrapper(n) for n in COMPILERS)
    return "lnrepro-test-toolchain:" + hashlib.sha256(tag.encode()).hexdigest()[:12]


def ensure_toolchain_image() -> str:
    """A Debian bookworm image with the look-alike's toolchain, its stand-in compilers and a
    dev-image-like entrypoint that needs root (debootstrap, then apt in ``docker build``, as
    root, no registry); reused while an image of that name exists."""
    from tests.rootfs import debian_image

    files = {f"/usr/local/bin/{n}": compiler_wrapper(n) for n in COMPILERS}
    files["/usr/local/bin/entrypoint.sh"] = ENTRYPOINT
    return debian_image(
        toolchain_image_name(),
        TOOLCHAIN_PACKAGES,
        files,
        'ENTRYPOINT ["/usr/local/bin/entrypoint.sh"]',
    )
