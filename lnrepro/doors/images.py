"""lnrepro's build image: ``docker/Dockerfile`` on top of a base (tt-metal's dev image by default).

Found by its tag, ``lnrepro-build:<hash of the Dockerfile and the base>``, or built once with
progress. The base must already be on this machine: pulling several GB is the user's call, and
the message says exactly how (or how to do without: ``--image`` with a ready image).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from lnrepro.errors import EnvironmentProblem
from lnrepro.model.events import Events

DOCKERFILE = Path(__file__).resolve().parents[2] / "docker" / "Dockerfile"


def build_tag(base: str, dockerfile: Path = DOCKERFILE) -> str:
    text = dockerfile.read_bytes() if dockerfile.is_file() else b""
    return "lnrepro-build:" + hashlib.sha256(text + b"\0" + base.encode()).hexdigest()[:12]


def ensure_build_image(
    base: str, events: Events, dockerfile: Path = DOCKERFILE, host: str | None = None
) -> str:
    """The tag of lnrepro's image on ``base``, building it if it is not there yet."""
    from lnrepro.doors import container  # before the SDK: its paramiko is loaded lazily

    from docker.errors import APIError, BuildError, ImageNotFound  # isort: skip

    if not dockerfile.is_file():
        raise EnvironmentProblem(
            f"lnrepro's Dockerfile is not at {dockerfile} (an installed package ships none)",
            "pass --image with a ready image that has the tt-metal toolchain",
        )
    tag = build_tag(base, dockerfile)
    client = container.client(host)
    try:
        client.images.get(tag)
        return tag
    except ImageNotFound:
        pass
    try:
        client.images.get(base)
    except (ImageNotFound, APIError):
        raise EnvironmentProblem(
            f"the base image {base} is not on this machine",
            f"docker pull {base} (it needs access to its registry), or pass --image with a ready "
            "image that has the toolchain",
        ) from None
    events.build_started(f"image {tag} from {base}")
    try:
        for chunk in client.api.build(
            path=str(dockerfile.parent),
            dockerfile=dockerfile.name,
            tag=tag,
            buildargs={"BASE": base},
            rm=True,
            decode=True,
        ):
            if "stream" in chunk:
                events.build_output(str(chunk["stream"]).encode())
            if "error" in chunk:
                raise BuildError(str(chunk["error"]), [])
    except (BuildError, APIError) as exc:
        events.build_finished(False, 0.0)
        raise EnvironmentProblem(
            f"building lnrepro's image on {base} failed: {str(exc)[:200]}",
            "check the base image (it needs a shell, and apt if it lacks ccache or ninja), "
            "or pass --image with a ready image",
        ) from None
    events.build_finished(True, 0.0)
    return tag
