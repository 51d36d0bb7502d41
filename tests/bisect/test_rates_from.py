"""``--rates-from`` as a person meets it: ``last`` resolved in the rerun line, a
record of other tests refused, a ``--command`` bisect told what works there, and ``show`` and
``report`` naming the prior and its records."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from lnrepro import options
from lnrepro.bisect.rates import endpoint_runs, named
from lnrepro.errors import UsageError
from lnrepro.model.requests import BisectRequest
from tests.bisect.test_rates import BAD, FILTER, OTHER, F, P, request, run_record
from tests.bisect.test_resume_and_repeat_flags import tiny_repo
from tests.harness import lnrepro


def resolve(req: BisectRequest) -> BisectRequest:
    rates_from, counted = endpoint_runs(req)
    return replace(req, rates_from=rates_from, endpoint_runs=counted)


def test_last_is_resolved_to_the_records_id_for_the_rerun_line(tmp_path: Path) -> None:
    run_record(tmp_path, "run-20261129-000001", BAD, [F] * 7 + [P] * 3)
    got = resolve(request(tmp_path, "last"))
    assert got.rates_from == ("run-20261129-000001",)
    argv = options.argv(got)
    assert "last" not in argv and "run-20261129-000001" in argv
    # a path stays a path (absolute: the rerun line may run elsewhere)
    rec = tmp_path / "run-20261129-000001"
    got = resolve(request(tmp_path, os.path.relpath(rec)))
    assert got.rates_from == (str(rec),)


def test_a_record_of_other_tests_is_refused(tmp_path: Path) -> None:
    run_record(tmp_path, "run-1", BAD, [F] * 5, filt="*Other*")
    with pytest.raises(UsageError, match=r"ran other tests \(\*Other\*\)") as exc:
        named(request(tmp_path, "run-1"))
    assert FILTER in str(exc.value) and "--filter" in (exc.value.fix or "")


def test_a_command_bisect_is_told_a_fix_that_works_there(tmp_path: Path) -> None:
    run_record(tmp_path, "run-1", OTHER, [F])
    with pytest.raises(UsageError, match="neither --bad") as exc:
        named(request(tmp_path, "run-1", command=True))
    fix = exc.value.fix or ""
    assert "--tt-metal" not in fix and "--fail-rates" in fix


def test_the_help_says_rates_from_takes_lnrepros_own_runs() -> None:
    out = lnrepro("bisect", "--help", width=200).out
    text = " ".join(out.split())
    rates = text[text.index("--rates-from RUN") : text.index("--no-confirm")]
    assert "lnrepro's own" in rates and "--command" in rates and "--fail-rates" in rates


def test_show_and_report_name_the_prior_and_its_records(tmp_path: Path) -> None:
    repo, runs = tmp_path / "repo", tmp_path / "runs"
    shas = tiny_repo(repo)
    run_record(runs, "run-bad", shas[-1], [F] * 18 + [P] * 2)
    run_record(runs, "run-good", shas[0], [P] * 20)
    argv = ["bisect", "--repo", str(repo), "--good", shas[0], "--bad", shas[-1]]
    argv += ["--command", "grep -q 0 bug", "--confidence", "0.9", "--record-dir", str(runs)]
    code, out, err = lnrepro(*argv, "--rates-from", "run-bad", "--rates-from", "run-good", "--json")
    assert code == 0, err
    bisect_id = json.loads(out)["id"]
    code, out, err = lnrepro("show", bisect_id, "--record-dir", runs)
    assert code == 0, err
    shown = " ".join(out.split())
    assert "prior: 18/20 failed at --bad, 0/20 at --good (--rates-from: run-bad, run-good)" in (
        shown
    ), shown
    code, md, err = lnrepro("report", bisect_id, "--record-dir", runs)
    assert code == 0, err
    assert "Prior: 18/20 failed at --bad, 0/20 at --good (--rates-from: run-bad, run-good)" in md
