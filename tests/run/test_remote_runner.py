"""The remote runner against a real second engine that cannot see this machine's paths.

A small busybox image keeps these fast: what is tested is the Docker API path — the image sent
there, the checkout shipped into a volume (only what changed, deletions included, git archive's
placeholders filled in), the record directory coming back — over tcp:// and over ssh://.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from lnrepro.run.runners import remote
from lnrepro.run.runners.base import Place, TimeLimit
from lnrepro.run.runners.docker import DockerRunner
from lnrepro.run.runners.remote import RemoteDockerRunner
from tests import rootfs
from tests.conftest import need
from tests.engines import Engine, running

pytestmark = pytest.mark.docker
APPLETS = ("sh", "cat", "ls", "rm", "true", "find", "sha256sum", "mkdir", "echo", "id", "stat")


@pytest.fixture(scope="module")
def small_image(tmp_path_factory: pytest.TempPathFactory, engine_image: str) -> Iterator[str]:
    """busybox with the applets lnrepro's helpers use (rm, find, sha256sum), imported here."""
    need(rootfs.busybox() is not None, "busybox-static is not installed")
    root = rootfs.busybox_root(tmp_path_factory.mktemp("small-root"), APPLETS)
    (root / "tmp").mkdir(mode=0o1777)
    name = rootfs.docker_import(root, f"lnrepro-test-small:{uuid.uuid4().hex[:8]}", "ENV PATH=/bin")
    yield name
    subprocess.run(["docker", "rmi", "-f", name], capture_output=True)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


def checkout(tmp_path: Path) -> Path:
    r = tmp_path / "checkout"
    (r / "sub").mkdir(parents=True)
    git(r, "init", "-q", "-b", "main")
    git(r, "config", "user.email", "t@example.com")
    git(r, "config", "user.name", "t")
    (r / "a.txt").write_text("one\n")
    (r / "sub" / "b.txt").write_text("bee\n")
    (r / "version.txt").write_text("$Format:%H$\n")
    (r / ".gitattributes").write_text("/version.txt export-subst\n")
    git(r, "add", "-A")
    git(r, "commit", "-qm", "one")
    return r


def runner(image: str, host: str) -> RemoteDockerRunner:
    return RemoteDockerRunner(DockerRunner(image, mount_set="tt-metal", docker_host=host))


def run(r: RemoteDockerRunner, repo: Path, record: Path, *argv: str) -> str:
    record.mkdir(parents=True, exist_ok=True)
    out: list[bytes] = []
    res = r.run(
        list(argv), out.append, Place(repo, {"REC": str(record)}, (repo, record)), TimeLimit(120)
    )
    text = b"".join(out).decode()
    assert res.exit_code == 0, text
    return text


@pytest.fixture(scope="module")
def card_host(engine_image: str) -> Iterator[Engine]:
    """One card host for the module (it starts in ~17 s); the ssh test starts its own."""
    with running(engine_image) as eng:
        yield eng


def test_only_what_changed_is_shipped_and_the_record_comes_back(
    small_image: str, card_host: Engine, tmp_path: Path
) -> None:
    repo = checkout(tmp_path)
    r = runner(small_image, card_host.tcp)
    head = git(repo, "rev-parse", "HEAD").strip()

    first = run(
        r, repo, tmp_path / "rec1", "sh", "-c", 'cat a.txt sub/b.txt version.txt > "$REC/out.txt"'
    )
    assert f"sending image {small_image}" in first  # the engine had no image: it was sent
    assert "shipping 4 changed file(s)" in first
    # written there, in the record's volume; here now
    assert (tmp_path / "rec1" / "out.txt").read_text() == f"one\nbee\n{head}\n"

    (repo / "a.txt").write_text("two\n")
    (repo / "sub" / "b.txt").unlink()
    second = run(r, repo, tmp_path / "rec2", "sh", "-c", 'ls -A sub > "$REC/ls.txt"; cat a.txt')
    assert "shipping 1 changed file(s)" in second and "1 to delete there" in second
    assert second.rstrip().endswith("two")
    assert (tmp_path / "rec2" / "ls.txt").read_text() == ""

    # another process (nothing known here) finds the engine's tree as it left it: nothing to send
    remote._shipped.clear()
    third = run(r, repo, tmp_path / "rec3", "cat", "a.txt")
    assert "shipping" not in third and third.rstrip().endswith("two")
    # the engine sees none of this machine's files: a bind mount of the checkout is empty there
    seen = card_host.docker("run", "--rm", "-v", f"{repo}:/x", small_image, "ls", "-A", "/x")
    assert seen.stdout.strip() == ""
    assert r.read_text(repo, "a.txt") == "two\n" and r.exists(repo, "sub") is True
    assert r.read_text(repo, "sub/b.txt") is None
    vols = card_host.docker("volume", "ls", "-q").stdout.split()
    assert r._tree(repo).name in vols and r._ccache().name in vols


def test_an_ssh_context_reaches_the_card_host(
    small_image: str, engine_image: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ssh://root@host:port``, as a card host is reached: the ssh command (the SDK runs the
    ``ssh`` on PATH, as the docker CLI does), running ``docker system dial-stdio`` there. The
    user's ssh configuration is stood in for by ``ssh -F`` with a key and known hosts made here,
    so the real home is never touched; the host key is checked strictly."""
    real_ssh = shutil.which("ssh")
    need(
        real_ssh is not None and shutil.which("ssh-keyscan") is not None,
        "openssh-client is not installed",
    )
    key = tmp_path / "id_ed25519"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    with running(engine_image, authorized_key=(tmp_path / "id_ed25519.pub").read_text()) as eng:
        scan = subprocess.run(
            ["ssh-keyscan", "-p", str(eng.ssh_port), "127.0.0.1"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert scan.stdout.strip(), scan.stderr
        (tmp_path / "known_hosts").write_text(scan.stdout)
        config = tmp_path / "ssh_config"
        config.write_text(
            f"Host 127.0.0.1\n  IdentityFile {key}\n  IdentitiesOnly yes\n"
            f"  UserKnownHostsFile {tmp_path / 'known_hosts'}\n"
            "  StrictHostKeyChecking yes\n  BatchMode yes\n"
        )
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        (bin_dir / "ssh").write_text(f'#!/bin/sh\nexec {real_ssh} -F {config} "$@"\n')
        (bin_dir / "ssh").chmod(0o755)
        monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
        repo = checkout(tmp_path)
        r = runner(small_image, f"ssh://root@127.0.0.1:{eng.ssh_port}")
        out = run(r, repo, tmp_path / "rec", "sh", "-c", 'cat a.txt > "$REC/out.txt"')
        assert "shipping 4 changed file(s)" in out
        assert (tmp_path / "rec" / "out.txt").read_text() == "one\n"
        # the same engine, seen over tcp: the tree is in its volume there
        assert r._tree(repo).name in eng.docker("volume", "ls", "-q").stdout.split()


def test_a_context_for_this_machines_engine_binds_paths_another_engine_is_shipped_to(
    card_host: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether paths bind is the engine's identity, not the context's name: a context made for
    this machine's socket under another address is this engine; the card host is not."""
    from lnrepro.doors import container

    cfg = tmp_path / "docker-config"
    monkeypatch.setenv("DOCKER_CONFIG", str(cfg))
    for name, host in (("here", "unix:///run/docker.sock"), ("there", card_host.tcp)):
        subprocess.run(
            ["docker", "context", "create", name, "--docker", f"host={host}"],
            check=True,
            capture_output=True,
        )
    container._same_engine.clear()
    assert container.is_local_engine(container.context_host("here")) is True
    assert container.is_local_engine(container.context_host("there")) is False
    assert container.is_local_engine("tcp://127.0.0.1:9") is False  # nothing answers: not ours
