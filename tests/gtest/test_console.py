"""Properties of the streaming parser that must hold for any input whatsoever."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lnrepro.gtest.console import parse_bytes, parse_chunks

MARKERS = [
    b"[ RUN      ] S.T\n",
    b"[       OK ] S.T (1 ms)\n",
    b"[  FAILED  ] S.T (2 ms)\n",
    b"[  SKIPPED ] S.T (0 ms)\n",
    b"[ RUN      ] P/S.T/0\n",
    b"[  FAILED  ] P/S.T/0, where GetParam() = 1 (3 ms)\n",
    b"x.cc:12: Failure\n",
    b"unknown file: Failure\n",
    b"dx FAILED: max_diff=1000, mean_diff=3\n",
    b"Value of: xt::allclose(metal_dx_flat, dx_ref, 1.0e-3F, 5e-1F)\n",
    b"[==========] Running 2 tests from 1 test suite.\n",
    b"[==========] 2 tests from 1 test suite ran. (5 ms total)\n",
    b"[----------] 2 tests from S\n",
    b"[  PASSED  ] 1 test.\n",
    b"[  FAILED  ] 1 test, listed below:\n",
    b"Repeating all tests (iteration 2) . . .\n",
    b"Note: Google Test filter = S.*\n",
    b"\x1b[0;32m",
    b"\x1b[m",
    b"\xff\xfe",
    b"\r\n",
    b"\n",
    b"noise | info | Metal | x=1\n",
    b"2025-12-16 13:55:34.215 | info | Metal | DPRINT\n",
    b"[ DISABLED ] S.DISABLED_x\n",
]

pieces = st.lists(st.one_of(st.sampled_from(MARKERS), st.binary(max_size=40)), max_size=60)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(pieces, st.one_of(st.none(), st.integers(-64, 300)))
def test_no_input_makes_the_parser_raise(parts: list[bytes], code: int | None) -> None:
    run = parse_bytes(b"".join(parts), exit_code=code)
    run.to_json()
    for t in run.tests:
        assert t.name


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    pieces,
    st.lists(st.integers(1, 50), min_size=1, max_size=30),
    st.one_of(st.none(), st.integers(0, 200)),
)
def test_chunking_never_changes_the_result(
    parts: list[bytes], cuts: list[int], code: int | None
) -> None:
    data = b"".join(parts)
    chunks, i, k = [], 0, 0
    while i < len(data):
        step = cuts[k % len(cuts)]
        chunks.append(data[i : i + step])
        i += step
        k += 1
    assert (
        parse_chunks(chunks, exit_code=code).to_json()
        == parse_bytes(data, exit_code=code).to_json()
    )


@given(st.binary(max_size=2000))
def test_arbitrary_bytes(data: bytes) -> None:
    parse_bytes(data, exit_code=139).to_json()


def test_glued_run_marker_is_recovered_and_count_mismatch_warned() -> None:
    from lnrepro.gtest.console import parse_bytes

    log = (
        b"[==========] Running 3 tests from 1 test suite.\n"
        b"[ RUN      ] S.A\n[       OK ] S.A (0 ms)\n"
        b"chatter[ RUN      ] S.B\n[       OK ] S.B (0 ms)\n"
        b"\xff\xfe[ RUN      ] S.C\n[       OK ] S.C (0 ms)\n"
        b"[==========] 3 tests from 1 test suite ran. (0 ms total)\n[  PASSED  ] 3 tests.\n"
    )
    run = parse_bytes(log, exit_code=0)
    assert [t.name for t in run.tests] == ["S.A", "S.B", "S.C"]
    assert any("glued" in w for w in run.warnings)
    short = parse_bytes(
        log.replace(b"3 tests from 1 test suite ran", b"4 tests from 1 test suite ran")
    )
    assert any("googletest says 4 test(s) ran, but the log shows 3" in w for w in short.warnings)
