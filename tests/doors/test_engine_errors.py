"""What breaks on an engine of another machine, as lnrepro's errors (``container.engine_errors``):
the Docker SDK's and requests' exceptions are OSErrors, and one that leaked out read as "cannot
write build.log" (a flaky CI failure of the two-engine bisect)."""

from __future__ import annotations

import pytest
import requests
from docker.errors import APIError

from lnrepro.doors import container
from lnrepro.errors import EngineLost, EnvironmentProblem
from tests.conftest import docker_ok, need

NOBODY = "tcp://127.0.0.1:9"  # the discard port: no engine answers there


@pytest.mark.parametrize(
    "exc",
    [requests.exceptions.ReadTimeout("read timed out"), APIError("500 Server Error")],
    ids=["timeout", "api-error"],
)
def test_anything_that_breaks_on_an_engine_that_stopped_answering_is_lost(exc: Exception) -> None:
    with (
        pytest.raises(EngineLost, match=r"stopped answering") as err,
        container.engine_errors(NOBODY),
    ):
        raise exc
    assert err.value.fix and "--resume" in err.value.fix


@pytest.mark.docker
def test_on_an_engine_that_answers_a_dropped_request_is_lost_and_a_refusal_is_its_answer() -> None:
    need(docker_ok(), "no Docker engine answers (scripts/test.sh starts dockerd as root)")
    # one request timed out on a loaded engine: the step is lost, not a write error or a verdict
    lost = pytest.raises(
        EngineLost, match=r"a request to the Docker engine .* failed \(.*timed out"
    )
    with lost, container.engine_errors(None):
        raise requests.exceptions.ReadTimeout("read timed out")
    # the engine said no: its explanation, as an environment problem that is not retried
    refused = APIError("500 Server Error", explanation="no space left on device")
    answer = pytest.raises(EnvironmentProblem, match=r"refused: no space left on device")
    with answer as err, container.engine_errors(None):
        raise refused
    assert not isinstance(err.value, EngineLost) and not isinstance(err.value, OSError)


def test_bulk_transfers_wait_longer_and_only_while_they_run() -> None:
    """An image or a tree in transit may take an engine longer than one request's wait to
    answer; the longer wait ends with the transfer, failed or not."""
    from docker import DockerClient

    def made() -> DockerClient:  # an API version given: it never connects
        return DockerClient(base_url=NOBODY, version="1.41", timeout=container.REQUEST_TIMEOUT_S)

    here, there = made(), made()
    with pytest.raises(requests.exceptions.ReadTimeout), container.patient(here, there):
        assert here.api.timeout == there.api.timeout == container.BULK_TIMEOUT_S
        raise requests.exceptions.ReadTimeout("the image did not come")
    assert here.api.timeout == there.api.timeout == container.REQUEST_TIMEOUT_S > 10
