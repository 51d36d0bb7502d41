"""`lnrepro explain`: the reports' numbers against every model, for real (the emulator runs).

The log is written here from the lines the seeds printed (seed 001's table and seed 002's
log): 1000 with mean 1004.21 (256Tiles), 1000 with mean 994.62 (128Tiles), 988 (8462Features),
1000 for the others; NIGHTLY passed; the tight-tolerance tests failed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lnrepro.model.jsonio import Reader
from tests.harness import assert_one_line_error, lnrepro

SUITE = "LayerNormBackwardOpTest"
SEED_LINES = [
    ("NIGHTLY_MetalLayerNormBw_LargeFeatures_NoL1Fit", None),
    ("BugRepro_Deterministic_256Tiles", "dx FAILED: max_diff=1000, mean_diff=1004.21"),
    ("BugRepro_Deterministic_128Tiles", "dx FAILED: max_diff=1000, mean_diff=994.62"),
    ("BugRepro_Deterministic_DifferentValues", "dx FAILED: max_diff=1000"),
    ("BugRepro_Deterministic_8462Features", "dx FAILED: max_diff=988"),
    ("BugRepro_Deterministic_2048Features", "dx FAILED: max_diff=1000"),
    ("BugRepro_TightTolerance_8462Features", ""),
    ("BugRepro_TightTolerance_8192Features", ""),
]


def seed_log(path: Path) -> Path:
    lines = [f"[==========] Running {len(SEED_LINES)} tests from 1 test suite."]
    for name, printed in SEED_LINES:
        lines.append(f"[ RUN      ] {SUITE}.{name}")
        if printed is None:
            lines.append(f"[       OK ] {SUITE}.{name} (30102 ms)")
            continue
        if printed:
            lines.append(printed)
        lines.append(f"[  FAILED  ] {SUITE}.{name} (1523 ms)")
    lines.append(f"[==========] {len(SEED_LINES)} tests from 1 test suite ran. (47000 ms total)")
    path.write_text("\n".join(lines) + "\n")
    return path


def explain(*args: str, cwd: Path) -> dict[str, Any]:
    p = lnrepro("explain", *args, "--json", cwd=cwd)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    return json.loads(p.stdout)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def seed_fit(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("explain")
    return explain(str(seed_log(tmp / "seed.log")), cwd=tmp)


def test_the_double_subtraction_model_of_the_reports_era_comes_first(
    seed_fit: dict[str, Any],
) -> None:
    models = seed_fit["models"]
    best = models[0]
    assert "double-subtract" in best["defects"] and "drop-partial-tile" in best["defects"]
    assert best["era"] == "2025-12" and best["arch"] == "wormhole_b0"
    assert best["cost"] < 1e-4 and best["verdicts_matched"] == 8  # printed to 6 digits
    ranks = {i: m for i, m in enumerate(models)}
    overwrite = min(i for i, m in ranks.items() if m["defects"].startswith("overwrite"))
    double = max(i for i, m in ranks.items() if m["defects"].startswith("double-subtract"))
    assert double < overwrite  # every double-subtraction model above the reporters' model
    assert seed_fit["tests"] and len(seed_fit["tests"]) == 8 and seed_fit["seconds"] < 120


def test_residuals_show_where_a_model_falls_short(seed_fit: dict[str, Any]) -> None:
    by = {(m["defects"], m["era"], m["arch"]): m for m in seed_fit["models"]}
    best = seed_fit["models"][0]
    res = {t["test"].split(".")[1]: t["residuals"] for t in best["tests"]}
    assert res["BugRepro_Deterministic_256Tiles"]["dx.mean_diff"]["model"] == pytest.approx(
        1004.21, abs=0.005
    )
    assert res["BugRepro_Deterministic_128Tiles"]["dx.mean_diff"]["model"] == pytest.approx(
        994.62, abs=0.005
    )
    assert res["BugRepro_Deterministic_8462Features"]["dx.max_diff"]["model"] == 988.0
    # without the partial-tile hypothesis 8462 features give 992: 0.4% off, and only there
    shipped = by[("double-subtract + drop-xhat-blocks (shipped)", "2025-12", "wormhole_b0")]
    off = {t["test"].split(".")[1]: t["cost"] for t in shipped["tests"] if t["cost"] > 1e-4}
    assert list(off) == ["BugRepro_Deterministic_8462Features"]
    assert off["BugRepro_Deterministic_8462Features"] == pytest.approx(4 / 988, rel=1e-3)
    fixed = by[("none (fixed kernel)", "fixed", "wormhole_b0")]
    assert fixed["verdicts_matched"] == 1  # only NIGHTLY passes both ways


def test_explain_a_saved_run_names_the_model_that_made_it(tmp_path: Path) -> None:
    argv = ["--kernel-era", "2025-11", "--defect", "overwrite-dy-gamma-sum"]
    run = lnrepro("run", *argv, "--filter", "*Deterministic*", "--json", cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    fit = explain("last", cwd=tmp_path)
    best = fit["models"][0]
    assert (
        best["defects"].startswith("overwrite") and best["era"] == "2025-11" and best["cost"] < 1e-4
    )
    p = lnrepro("explain", "last", cwd=tmp_path)
    assert p.returncode == 0 and "best: overwrite" in p.stdout


def test_explain_says_what_it_cannot_use(tmp_path: Path) -> None:
    log = tmp_path / "other.log"
    log.write_text("[ RUN      ] Other.Test\n[       OK ] Other.Test (1 ms)\n")
    assert_one_line_error(lnrepro("explain", log, cwd=tmp_path), 4, "none of the observed tests")


def fit(defects: str, era: str, arch: str, cost: float) -> Any:
    from lnrepro.studies.model_fit import ModelFit, Residual, TestFit

    residual = {"dx.max_diff": Residual(observed=1000.0, model=1000.0 * (1 + cost), relative=cost)}
    test = TestFit(test="S.T", observed="FAIL", model="FAIL", residuals=residual)
    return ModelFit(defects=defects, era=era, arch=arch, tests=(test,))


def test_a_tie_says_what_the_tests_cannot_tell_apart() -> None:
    from lnrepro.studies.model_fit import best_tie, tie_note

    shipped, ds = "double-subtract + drop-xhat-blocks (shipped)", "double-subtract"
    fits = [
        fit(shipped, "2025-12", "wormhole_b0", 0.0),
        fit(ds, "2025-11", "blackhole", 0.0),
        fit("none (fixed kernel)", "fixed", "wormhole_b0", 0.5),
    ]
    assert len(best_tie(fits)) == 2
    note = tie_note(fits)
    assert note is not None and note.startswith("2 models tie for best")
    assert "all have double-subtract" in note and "drop-xhat-blocks is there too" in note
    assert "(2025-12, 2025-11)" in note and "(wormhole_b0, blackhole)" in note
    assert tie_note(fits[1:]) is None  # one best model: nothing to say


def test_explain_of_a_shipped_kernel_run_says_the_best_models_tie(tmp_path: Path) -> None:
    """The emulated shipped kernel: 10 of 30 models fit it exactly (both eras, both arches)."""
    run = lnrepro("run", cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    doc = explain("last", cwd=tmp_path)
    best = [m for m in doc["models"] if m["cost"] == doc["models"][0]["cost"]]
    p = lnrepro("explain", "last", cwd=tmp_path)
    assert p.returncode == 0
    assert f"one of {len(best)} models that fit equally well" in " ".join(p.stdout.split())
    last = p.stdout.strip().splitlines()[-1]  # piped: one line
    assert last.startswith(f"{len(best)} models tie for best") and "cannot tell apart" in last
    assert len(best) > 1 and {m["arch"] for m in best} == {"wormhole_b0", "blackhole"}
    # --json says what the console says: the tie note, and how many tie on each of them
    assert doc["tie"] == last and all(m["tied"] == len(best) for m in best)
    assert doc["models"][len(best)]["tied"] == 1 and doc["undiagnosed"] is None


def test_explain_json_of_an_undiagnosed_hang_says_so_as_the_console_does() -> None:
    """A run whose hang kept nothing to place it: the console says so and exits 0; --json used
    to refuse (its document had no place for the text), now it carries it."""
    from lnrepro.model import codec
    from lnrepro.studies.explain_doc import ExplainDoc, Explanation

    why = "attempt 1 hung in S.T — no watcher log — for a diagnosis: run with --watcher 1"
    found = Explanation(source="run-1", observed=[], hangs=[], left_out=[], undiagnosed=why)
    doc = json.loads(json.dumps(found.to_json()))
    assert doc["undiagnosed"] == why and doc["models"] == []
    assert doc["schema"] == "lnrepro.explain/2" and doc["tie"] is None and doc["scope"] is None
    back = codec.decode(Reader(doc, "t"), ExplainDoc)
    assert back == found.document()
