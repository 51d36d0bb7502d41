"""The found case as a gtest file for tt-train, to pick onto a checkout.

Two flavours of one test, each written against the helpers its tree has:

``tt-metal``
    tt-train's ``tests/ops/layernorm_bw_fused_op_test.cpp`` as read at tenstorrent/tt-metal
    16165972af (the BugRepro branch): the device through ``ttml::autograd::ctx()``, tensors
    through ``ttml::core::from_xtensor``/``to_xtensor``, the op through
    ``ttml::metal::ops::layernorm_bw::LayerNormBackwardOperation::invoke(x, gamma, mean, rstd,
    dy)`` with x, dy as ``{batch, heads, seq, features}``, and ``xt::allclose(metal, ref, rtol,
    atol)`` per tensor, printing ``<t> FAILED: max_diff=..., mean_diff=...`` as that branch's
    ``CompareKernelVsXArrayDeterministic`` does. Its helpers are ``static`` in that file, so the
    emitted file carries its own float32 reference (the same formulas; written here).
``lookalike``
    the test look-alike's tree (``tests/lookalike``): ``ttml::metal::layernorm_bw`` and
    ``ttml::test::reference``/``allclose``/``diff`` from its ``tests/support``.

Both use their own fixture, ``LayerNormBackwardShrunkTest``, so the file builds next to the
existing test file (tt-train's tests glob ``*/*_test.cpp`` into one binary). Random data is the
tests' own distributions from ``std::mt19937`` (the emulator's numpy draws are not reproduced).
"""

from __future__ import annotations

import re
import shlex
from enum import Enum
from pathlib import Path

from lnrepro import options
from lnrepro.model.case import Case, DataKind, case_text
from lnrepro.model.shrink import ShrinkRequest

SUITE = "LayerNormBackwardShrunkTest"
READ_AT = "tenstorrent/tt-metal@16165972af"


class Flavour(str, Enum):
    TT_METAL = "tt-metal"
    LOOKALIKE = "lookalike"


def test_name(case: Case) -> str:
    """``Shrunk_<the test it came from>_<shape>_<data kind>_<digest of the case>``: the files of
    two shrinks (of two tests, or of one test's two cases) link into one binary side by side."""
    import hashlib

    s = case.shape
    kind = re.sub(r"[^A-Za-z0-9]", "", case.data.kind.value.title())
    origin = re.sub(r"[^A-Za-z0-9]+", "_", case.origin.rsplit(".", 1)[-1]).strip("_")
    digest = hashlib.sha256(case.env_value().encode()).hexdigest()[:6]
    parts = ["Shrunk", origin, f"{s.batch}x{s.seq}x{s.heads}x{s.features}", kind, digest]
    return "_".join(p for p in parts if p)


def spdx(comment: str) -> list[str]:
    """The SPDX lines tt-metal's license check requires of a source file (espressif's
    check_copyright with tt-metal's check_copyright_config.yaml, run by
    .github/workflows/all-static-checks.yaml at 0022138026c1: an SPDX-FileCopyrightText line and
    an SPDX-License-Identifier of Apache-2.0), in the form tt-train's test files open with
    (tt-train/tests/ops/layernorm_bw_fused_op_test.cpp at 16165972af). The file goes into
    tt-metal, so its notice is tt-metal's."""
    import datetime

    year = datetime.datetime.now(datetime.timezone.utc).year
    return [
        f"{comment} SPDX-FileCopyrightText: © {year} Tenstorrent AI ULC",
        comment,
        f"{comment} SPDX-License-Identifier: Apache-2.0",
        "",
    ]


def smaller_line(smaller: str | None) -> str:
    """The header's sentence on the case and its neighbours (``smaller``: what the shrink found
    of them; None: not known here)."""
    head = "The smallest, loudest case that failed every time"
    return f"{head}; {smaller}." if smaller else f"{head}."


def full_name(case: Case) -> str:
    return f"{SUITE}.{test_name(case)}"


def _f(v: float) -> str:
    return f"{v:.9g}F" if "." in f"{v:.9g}" or "e" in f"{v:.9g}" else f"{v:.9g}.0F"


def _fill(case: Case, x: str, dy: str, gamma: str, index: str) -> list[str]:
    """C++ lines that fill ``x``, ``dy`` (flat, ``index`` the element) and ``gamma``."""
    d = case.data
    if d.kind is DataKind.CONSTANT:
        return [
            f"    for (std::size_t i = 0; i < total; ++i) {{ {x}{index.format('i')} = {_f(d.x)}; "
            f"{dy}{index.format('i')} = {_f(d.dy)}; }}",
            f"    for (std::uint32_t f = 0; f < features; ++f) {gamma}{index.format('f')} = {_f(d.gamma)};",
        ]
    if d.kind is DataKind.FEW_VALUED:  # two-valued, alternating along the features
        return [
            "    for (std::size_t i = 0; i < total; ++i) {",
            "        const bool odd = (i % features) % 2 == 1;",
            f"        {x}{index.format('i')} = odd ? 1.0F : -1.0F;",
            f"        {dy}{index.format('i')} = odd ? 0.5F : 1.0F;",
            "    }",
            f"    for (std::uint32_t f = 0; f < features; ++f) {gamma}{index.format('f')} = 1.0F;",
        ]
    if d.kind is DataKind.STRUCTURED:  # ramp: linspace(-1, 1, F) and linspace(0, 1, F)
        return [
            "    const float step = features > 1 ? 1.0F / static_cast<float>(features - 1) : 0.0F;",
            "    for (std::size_t i = 0; i < total; ++i) {",
            "        const auto f = static_cast<float>(i % features);",
            f"        {x}{index.format('i')} = -1.0F + 2.0F * f * step;",
            f"        {dy}{index.format('i')} = f * step;",
            "    }",
            f"    for (std::uint32_t f = 0; f < features; ++f) {gamma}{index.format('f')} = 1.0F;",
        ]
    lo = "0.0F" if d.variant == "mean-shifted" else "-1.0F"
    return [
        f"    std::mt19937 rng({d.seed}U);",
        "    std::uniform_real_distribution<float> sym(-1.0F, 1.0F), pos(0.0F, 1.0F);",
        f"    std::uniform_real_distribution<float> grad({lo}, 1.0F);",
        f"    for (std::size_t i = 0; i < total; ++i) {x}{index.format('i')} = sym(rng);",
        f"    for (std::size_t i = 0; i < total; ++i) {dy}{index.format('i')} = grad(rng);",
        f"    for (std::uint32_t f = 0; f < features; ++f) {gamma}{index.format('f')} = pos(rng);",
    ]


def _header(
    case: Case, req: ShrinkRequest | None, flavour: Flavour, smaller: str | None = None
) -> list[str]:
    origin = case.origin or "a LayerNorm backward test"
    lines = [
        *spdx("//"),
        f"// Generated by `lnrepro shrink` from {origin}:",
        f"// {case_text(case)}.",
        f"// {smaller_line(smaller)}",
    ]
    if req is not None:
        lines.append(f"// Found with: {shlex.join(options.argv(req))}")
    if flavour is Flavour.TT_METAL:
        lines.append(
            f"// Helpers and assertions in the style of tt-train/tests/ops/"
            f"layernorm_bw_fused_op_test.cpp at {READ_AT}."
        )
    return lines


def _checks(case: Case, metal: str, ref: str, diff: str) -> list[str]:
    out = []
    for t, tol in case.tolerance:
        out.append(
            f"    const bool {t}_close = xt::allclose({metal.format(t)}, {ref.format(t)}, "
            f"{_f(tol.rtol)}, {_f(tol.atol)});"
        )
    for t, _ in case.tolerance:
        out += [
            f"    if (!{t}_close) {{",
            *[f"        {ln}" for ln in diff.format(t=t).splitlines()],
            f'        std::cout << "{t} FAILED: max_diff=" << max_diff << ", mean_diff=" << mean_diff << std::endl;',
            "    }",
        ]
    what = "deterministic inputs" if case.data.same_every_draw else "random inputs"
    for t, _ in case.tolerance:
        out.append(
            f'    EXPECT_TRUE({t}_close) << "{t} mismatch with {what} (features=" << features << ")";'
        )
    return out


def _margins(case: Case, used: str) -> list[str]:
    """Each tensor's margin recorded with googletest's ``RecordProperty``, on a pass too (issue
    47): its ``max_diff``, its tolerance and the share of the tolerance used (``max |metal - ref|
    / (atol + rtol·|ref|)``, 1 at the edge of failing), under the keys lnrepro reads from the JSON
    and XML reports (``dx.used``...), the ones the emulator's tests record. The values go through
    ``testing::Message``, which streams with double's ``digits10 + 2`` digits (googletest
    1.12.1 gtest.cc, ``Message::Message``; its ``RecordProperty`` takes strings and ints only). ``used`` computes ``max_diff`` and ``used`` for
    ``{t}`` with ``{rtol}`` and ``{atol}``."""
    out = ["    // each tensor's margin, passing or not: the reports keep it (RecordProperty)"]
    for t, tol in case.tolerance:
        rtol, atol = _f(tol.rtol), _f(tol.atol)
        record = [
            f'RecordProperty("{t}.max_diff", (::testing::Message() << max_diff).GetString());',
            f'RecordProperty("{t}.rtol", "{tol.rtol:g}");',
            f'RecordProperty("{t}.atol", "{tol.atol:g}");',
            f'RecordProperty("{t}.used", (::testing::Message() << used).GetString());',
        ]
        code = used.format(t=t, rtol=rtol, atol=atol).splitlines()
        out += ["    {", *[f"        {ln}" for ln in [*code, *record]], "    }"]
    return out


def lookalike_source(
    case: Case, req: ShrinkRequest | None = None, smaller: str | None = None
) -> str:
    s = case.shape
    body = [
        *_header(case, req, Flavour.LOOKALIKE, smaller),
        "#include <gtest/gtest.h>",
        "",
        "#include <algorithm>",
        "#include <cmath>",
        "#include <cstddef>",
        "#include <cstdint>",
        "#include <iostream>",
        "#include <random>",
        "#include <vector>",
        "",
        '#include "support/xt_reference.hpp"',
        '#include "tt_metal/impl/device.hpp"',
        '#include "ttml/metal/ops/layernorm_bw/layernorm_bw.hpp"',
        "",
        f"class {SUITE} : public ::testing::Test {{",
        "protected:",
        "    void SetUp() override { tt::tt_metal::open_device(); }",
        "};",
        "",
        f"TEST_F({SUITE}, {test_name(case)}) {{",
        f"    const std::uint32_t batch = {s.batch}, seq = {s.seq}, heads = {s.heads}, features = {s.features};",
        "    const std::uint32_t rows = batch * seq * heads;",
        "    const std::size_t total = static_cast<std::size_t>(rows) * features;",
        "    std::vector<float> x(total), dy(total), gamma(features);",
        *_fill(case, "x", "dy", "gamma", "[{}]"),
        "    const auto metal = ttml::metal::layernorm_bw(x, dy, gamma, rows, features);",
        "    const auto ref = ttml::test::reference(x, dy, gamma, rows, features);",
        *_checks(
            case,
            "metal.{}",
            "ref.{}",
            "const auto d = ttml::test::diff(metal.{t}, ref.{t});\n"
            "const auto max_diff = d.max_diff;\nconst auto mean_diff = d.mean_diff;",
        ),
        *_margins(
            case,
            "double max_diff = 0, used = 0;\n"
            "for (std::size_t i = 0; i < metal.{t}.size(); ++i) {{\n"
            "    const double d = std::abs(metal.{t}[i] - ref.{t}[i]);\n"
            "    max_diff = std::max(max_diff, d);\n"
            "    used = std::max(used, d / ({atol} + {rtol} * std::abs(ref.{t}[i])));\n"
            "}}",
        ),
        "}",
        "",
    ]
    return "\n".join(body)


def tt_metal_source(
    case: Case, req: ShrinkRequest | None = None, smaller: str | None = None
) -> str:
    s = case.shape
    body = [
        *_header(case, req, Flavour.TT_METAL, smaller),
        "#include <gtest/gtest.h>",
        "",
        "#include <cmath>",
        "#include <core/ttnn_all_includes.hpp>",
        "#include <iostream>",
        "#include <random>",
        "",
        '#include "autograd/auto_context.hpp"',
        '#include "core/tt_tensor_utils.hpp"',
        '#include "metal/ops/layernorm_bw/layernorm_bw.hpp"',
        "",
        f"class {SUITE} : public ::testing::Test {{",
        "protected:",
        "    void SetUp() override { ttml::autograd::ctx().open_device(); }",
        "    void TearDown() override { ttml::autograd::ctx().close_device(); }",
        "};",
        "",
        f"TEST_F({SUITE}, {test_name(case)}) {{",
        "    using namespace ttml;",
        f"    const uint32_t batch = {s.batch}, seq = {s.seq}, heads = {s.heads}, features = {s.features};",
        "    const uint32_t rows = batch * seq * heads;",
        "    const std::size_t total = static_cast<std::size_t>(rows) * features;",
        "    xt::xarray<float> x = xt::zeros<float>({total});",
        "    xt::xarray<float> dy = xt::zeros<float>({total});",
        "    xt::xarray<float> gamma = xt::zeros<float>({features});",
        *_fill(case, "x", "dy", "gamma", "({})"),
        "",
        "    // float32 reference: x_hat = (x - mean) * rstd, rstd = 1 / sqrt(var + 1e-6);",
        "    // dx = rstd * (dy*gamma - mean(dy*gamma) - x_hat * mean(dy*gamma*x_hat))",
        "    auto x2 = xt::reshape_view(x, {rows, features});",
        "    auto dy2 = xt::reshape_view(dy, {rows, features});",
        "    xt::xarray<float> mean = xt::mean(x2, {1});",
        "    xt::xarray<float> centred = x2 - xt::view(mean, xt::all(), xt::newaxis());",
        "    xt::xarray<float> rstd = 1.0F / xt::sqrt(xt::mean(xt::square(centred), {1}) + 1e-6F);",
        "    xt::xarray<float> x_hat = centred * xt::view(rstd, xt::all(), xt::newaxis());",
        "    xt::xarray<float> dyg = dy2 * xt::view(gamma, xt::newaxis(), xt::all());",
        "    xt::xarray<float> m1 = xt::mean(dyg, {1});",
        "    xt::xarray<float> m2 = xt::mean(dyg * x_hat, {1});",
        "    xt::xarray<float> dx_ref = xt::flatten(xt::eval(xt::view(rstd, xt::all(), xt::newaxis()) *",
        "        (dyg - xt::view(m1, xt::all(), xt::newaxis()) - x_hat * xt::view(m2, xt::all(), xt::newaxis()))));",
        "    xt::xarray<float> dgamma_ref = xt::sum(dy2 * x_hat, {0});",
        "    xt::xarray<float> dbeta_ref = xt::sum(dy2, {0});",
        "",
        "    xt::xarray<float> x_4d = x;",
        "    x_4d.reshape({batch, heads, seq, features});",
        "    xt::xarray<float> dy_4d = dy;",
        "    dy_4d.reshape({batch, heads, seq, features});",
        "    xt::xarray<float> gamma_4d = gamma;",
        "    gamma_4d.reshape({1, 1, 1, features});",
        "    xt::xarray<float> mean_4d = mean;",
        "    mean_4d.reshape({batch, heads, seq, 1});",
        "    xt::xarray<float> rstd_4d = rstd;",
        "    rstd_4d.reshape({batch, heads, seq, 1});",
        "    auto* device = &autograd::ctx().get_device();",
        "    auto out = metal::ops::layernorm_bw::LayerNormBackwardOperation::invoke(",
        "        core::from_xtensor(x_4d, device), core::from_xtensor(gamma_4d, device),",
        "        core::from_xtensor(mean_4d, device), core::from_xtensor(rstd_4d, device),",
        "        core::from_xtensor(dy_4d, device));",
        "    xt::xarray<float> metal_dx = xt::flatten(core::to_xtensor(out[0].value()));",
        "    xt::xarray<float> metal_dgamma = xt::flatten(core::to_xtensor(out[1].value()));",
        "    xt::xarray<float> metal_dbeta = xt::flatten(core::to_xtensor(out[2].value()));",
        "    ASSERT_EQ(dx_ref.shape(), metal_dx.shape());",
        *_checks(
            case,
            "metal_{}",
            "{}_ref",
            "const float max_diff = xt::amax(xt::abs(metal_{t} - {t}_ref))();\n"
            "const float mean_diff = xt::mean(xt::abs(metal_{t} - {t}_ref))();",
        ),
        *_margins(
            case,
            "const float max_diff = xt::amax(xt::abs(metal_{t} - {t}_ref))();\n"
            "const float used = xt::amax(\n"
            "    xt::abs(metal_{t} - {t}_ref) / ({atol} + {rtol} * xt::abs({t}_ref)))();",
        ),
        "}",
        "",
    ]
    return "\n".join(body)


def source(
    case: Case, flavour: Flavour, req: ShrinkRequest | None = None, smaller: str | None = None
) -> str:
    make = lookalike_source if flavour is Flavour.LOOKALIKE else tt_metal_source
    return make(case, req, smaller)


def write_source(path: Path, case: Case, req: ShrinkRequest, smaller: str | None = None) -> Path:
    """The gtest file; its path."""
    return write_text(path, source(case, Flavour(req.source_flavour), req, smaller))


def write_text(path: Path, text: str) -> Path:
    """An emitted test file, written atomically through the one write door; its path."""
    from lnrepro.doors.fsio import atomic_write_text, write_error

    try:
        atomic_write_text(path, text)
    except OSError as exc:
        raise write_error(path, exc) from None
    return path
