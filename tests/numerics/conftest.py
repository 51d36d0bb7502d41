"""The image of ``--image``'s tests: a local image whose python3 has pytest and numpy, no registry.

It is the look-alike's toolchain image (Debian bookworm's python3, python3-pytest and
python3-numpy; debootstrapped once per machine, in the background by scripts/test.sh through
tests/prebuild.py) with one ``ENV`` line of a variable that changes numbers: a metadata-only layer,
made in about a second, so the record's freeze is seen to be taken inside the container.
"""

from __future__ import annotations

import hashlib
import subprocess

import pytest

IMAGE_ENV = ("MKL_CBWR", "COMPATIBLE")  # the image's own, as a user's image may set it


@pytest.fixture(scope="session")
def python_image(toolchain_image: str) -> str:
    from tests.rootfs import have_image, one_builder

    dockerfile = f"FROM {toolchain_image}\nENV {IMAGE_ENV[0]}={IMAGE_ENV[1]}\n"
    name = "lnrepro-test-python:" + hashlib.sha256(dockerfile.encode()).hexdigest()[:12]
    with one_builder("python-image"):
        if not have_image(name):
            subprocess.run(
                ["docker", "build", "-q", "-t", name, "-"],
                input=dockerfile.encode(),
                check=True,
                capture_output=True,
                timeout=300,
            )
    return name
