"""`lnrepro tolerance`: the tail estimate against brute force, a band derived by hand, the
seed-004 reference variants, and the CLI's verdicts on the seeds' tests (the emulator, for real)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from lnrepro.studies import tolerance as tl
from tests.model.strategies import same

LNREPRO = [sys.executable, "-m", "lnrepro"]


def test_needed_atol_and_a_band_derived_by_hand() -> None:
    metal, ref = np.array([1.0, 2.0], np.float32), np.array([1.1, 1.0], np.float32)
    # |diff| - rtol*|ref| = [0.1 - 0.11, 1.0 - 0.1] = [-0.01, 0.9]
    assert tl.needed_atol(metal, ref, 0.1) == pytest.approx(0.9, abs=1e-6)
    assert tl.needed_atol(metal, metal, 0.0) == 0.0
    # Gumbel by moments on {0, 1}: beta = s*sqrt(6)/pi with s = 1/sqrt(2), mu = 0.5 - gamma*beta
    g = tl.Gumbel.fit([0.0, 1.0])
    beta = (1 / math.sqrt(2)) * math.sqrt(6) / math.pi
    assert g.beta == pytest.approx(beta) and g.mu == pytest.approx(0.5 - 0.5772156649 * beta)
    q = g.quantile(1 - 1e-6)
    assert q == pytest.approx(g.mu - beta * math.log(-math.log(1 - 1e-6)))
    assert g.exceed(q) == pytest.approx(1e-6, rel=1e-3)
    # a band over hand-made samples: the correct kernel's atol, and the power of a defect there
    s = tl.Samples()
    for v in (0.1, 0.2, 0.3, 0.2, 0.1):
        for t in tl.TENSORS:
            for r in tl.RTOLS:
                s.add("correct", "test", t, r, v)
    for v in (0.05, 5.0, 6.0, 7.0, 8.0):
        for t in tl.TENSORS:
            for r in tl.RTOLS:
                s.add("bug", "test", t, r, v)
    band = next(b for b in tl.bands(s, kind="test", alpha=1e-6) if b.tensor == "dx" and b.rtol == 0)
    want = tl.Gumbel.fit([0.1, 0.2, 0.3, 0.2, 0.1]).quantile(1 - 1e-6)
    assert band.atol == pytest.approx(want) and 0.3 < band.atol < 5.0
    assert band.power == {"bug": 0.8}  # four of its five draws need more than the band


def test_the_tail_estimate_agrees_with_brute_force_on_a_small_shape() -> None:
    fit_on = tl.sample(4, 64, trials=200, models=(), kinds=("test",), seed=1)
    g = tl.Gumbel.fit(fit_on.get("correct", "test", "dx", 0.0))
    brute = np.asarray(
        tl.sample(4, 64, trials=3000, models=(), kinds=("test",), seed=2).get(
            "correct", "test", "dx", 0.0
        )
    )
    for p in (0.9, 0.99):
        q = g.quantile(p)
        seen = float(np.mean(brute > q))
        assert 0.3 * (1 - p) < seen < 3 * (1 - p), (p, seen)


def test_seed_004_reference_variants_differ_as_the_seed_reports() -> None:
    """Two correct statistics algorithms differ by ~1e-7 in fp32 and flip a tiny share of bf16
    roundings (the seed: up to 7e-7, ~0.001% of elements)."""
    x = np.random.default_rng(4).standard_normal((256, 1024)).astype(np.float32)
    spread = tl.variant_spread(x)
    bf16 = spread.pop("Welford, stored in bf16")
    assert set(spread) == {
        "two-pass (pairwise sums)",
        "two-pass (sequential sums)",
        "one-pass E[x²]-E[x]²",
    }
    # storing the statistics in bf16 (as the device's buffers do) moves far more than the algorithm
    assert bf16.rstd_rel > 100 * max(v.rstd_rel for v in spread.values())
    assert bf16.bf16_flips > 100 * max(v.bf16_flips for v in spread.values())
    for name, v in spread.items():
        assert 1e-9 < v.mean < 1e-5, (name, v)
        assert 0 < v.rstd_rel < 1e-4 and v.xhat < 1e-4
        assert 1e-7 < v.bf16_flips < 1e-3, (name, v)  # a few elements in a million to a thousand


def test_the_seeds_tests_own_tolerances_judged(tmp_path: Path) -> None:
    p = subprocess.run(
        [
            *LNREPRO,
            "tolerance",
            "--test",
            "*NIGHTLY*",
            "--test",
            "*TightTolerance_8192*",
            "--test",
            "*Deterministic_8462*",
            "--trials",
            "6",
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr
    suite = "LayerNormBackwardOpTest."  # whole names: what --filter takes
    rows = {r["test"].removeprefix(suite): r for r in json.loads(p.stdout)["tests"]}
    assert all(r["test"].startswith(suite) for r in rows.values())
    nightly = rows["NIGHTLY_MetalLayerNormBw_LargeFeatures_NoL1Fit"]
    assert nightly["correct_pass"] > 1 - 1e-6 and nightly["shipped_fail"] == 0.0  # catches nothing
    tight = rows["BugRepro_TightTolerance_8192Features"]
    assert tight["correct_pass"] < 0.01 and tight["shipped_fail"] == 1.0  # rejects the fixed kernel
    for r in (nightly, tight):  # the band does both jobs
        assert r["band_power"] == 1.0 and r["band_atol_rtol0"]["dx"] < 0.5
    det = rows["BugRepro_Deterministic_8462Features"]
    assert det["correct_pass"] == 0.0 and det["band_atol_rtol0"]["dx"] == pytest.approx(
        3.359, abs=0.01
    )


def test_shape_study_writes_an_svg_and_json(tmp_path: Path) -> None:
    svg = tmp_path / "dx.svg"
    p = subprocess.run(
        [
            *LNREPRO,
            "tolerance",
            "--shape",
            "1,8,1,4096",
            "--trials",
            "8",
            "--plot",
            str(svg),
            "--reference-variants",
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    dx0 = next(b for b in doc["bands"] if b["tensor"] == "dx" and b["rtol"] == 0)
    assert dx0["power"]["double-subtract"] == 1.0 and dx0["atol"] < 0.1
    assert doc["best_kind"]["double-subtract"]["kind"] in ("constant", "mean-shifted")
    shipped = doc["quantiles"]["shipped"]["constant"]["dx"]
    assert (
        shipped["p50"] > 100 * doc["quantiles"]["correct"]["constant"]["dx"]["max"]
    )  # its distribution, too
    assert "Welford, stored in bf16" in doc["reference_variants"]
    root = ET.fromstring(svg.read_text())
    texts = " ".join(t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text"))
    assert root.tag.endswith("svg") and "share of draws per bin" in texts  # a y axis, labelled
    assert all(m in texts for m in ("correct", "shipped", "double-subtract", "drop-xhat-blocks"))
    assert "NIGHTLY atol 0.5" in texts and "atol needed to pass" in texts
    png = tmp_path / "dx.png"
    p = subprocess.run(
        [*LNREPRO, "tolerance", "--shape", "1,8,1,4096", "--trials", "4", "--plot", str(png)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad_ext = subprocess.run(
        [*LNREPRO, "tolerance", "--shape", "1,8,1,64", "--plot", str(tmp_path / "x.pdf")],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert bad_ext.returncode == 2 and ".svg or .png" in bad_ext.stderr
    bad = subprocess.run(
        [*LNREPRO, "tolerance", "--shape", "1,2,3"], capture_output=True, text=True, cwd=tmp_path
    )
    assert bad.returncode == 2 and "B,S,H,F" in bad.stderr


def test_both_tolerance_documents_read_back_as_their_own_type_and_a_wrong_one_names_its_place() -> (
    None
):
    """tolerance --json writes one of two documents under one schema (derived from
    tl.ToleranceDoc = TestsDoc | ShapeDoc): each reads back as its own type, told apart by its
    fields, and a wrong value is refused at its place in the document it is closest to."""
    from lnrepro.errors import MalformedRecord
    from lnrepro.model import codec
    from lnrepro.model.jsonio import Reader

    verdict = tl.TestVerdict(
        test="S.T",
        tolerance={"dx": (0.01, 0.5)},
        correct_pass=1.0,
        shipped_fail=0.25,
        band_atol_rtol0={"dx": math.inf},
        band_power=0.5,
        draws=4,
    )
    tests = tl.TestsDoc(trials=4, alpha=1e-6, tests=(verdict,))
    band = tl.Band(tensor="dx", rtol=0.0, atol=0.01, power={"shipped": 1.0}, kind="test")
    q = tl.Quantiles(p50=0.1, p90=0.2, p99=0.3, max=0.4)
    shape = tl.ShapeDoc(
        shape="1,32,1,64",
        trials=3,
        alpha=1e-6,
        quantiles={"correct": {"test": {"dx": q}}},
        bands=(band,),
        best_kind={"shipped": tl.BestKind(kind="constant", ratio=12.5)},
        reference_variants=None,
    )
    for doc in (tests, shape):
        text = json.dumps(codec.encode(doc))
        back = codec.decode(Reader(json.loads(text), "t.json"), tl.ToleranceDoc)
        assert type(back) is type(doc) and same(back, doc)
    bad = json.loads(json.dumps(codec.encode(tests)))
    bad["tests"][0]["band_power"] = 2.0
    with pytest.raises(MalformedRecord, match=r"t\.json: tests\[0\]\.band_power"):
        codec.decode(Reader(bad, "t.json"), tl.ToleranceDoc)


def test_the_correct_kernel_is_no_defect_to_compare() -> None:
    """Was: ``tolerance --defect none`` compared the correct kernel with itself (power 0% on
    every row, "none separates best"); it is the study's reference, so it is refused."""
    from lnrepro.api import tolerance_model
    from lnrepro.errors import UsageError

    with pytest.raises(UsageError, match="--defect none is the correct kernel") as exc:
        tolerance_model("none")
    assert "--defect shipped" in (exc.value.fix or "")
    assert tolerance_model("shipped")  # a defect still names its model
