"""The checkout probe's source: one gtest, ``LnreproShrinkProbe.LayerNormBackward``, that reads its
case from ``$LNREPRO_CASE_ARGS`` (``model.shrink.Case.args_value``), so that a checkout built once
with it tests every candidate with one run and no rebuild.

It fills the data as :func:`lnrepro.emulator.probe.inputs` does (random data: the tests'
distributions from ``std::mt19937(seed)``, not numpy's draws), runs the kernel, checks
``xt::allclose`` per tensor, prints ``<t> FAILED: max_diff=..., mean_diff=...`` as the BugRepro
helper does, and one line ``lnrepro-probe: margin=<m>`` (max over tensors of the smallest atol that
passes over the case's atol), which the evaluator reads. Without ``$LNREPRO_CASE_ARGS`` it is
skipped. Flavours as :mod:`.emit`'s: the look-alike's helpers, or tt-train's API as
``layernorm_bw_fused_op_test.cpp`` uses it at tenstorrent/tt-metal 16165972af (that one is not
compiled on this machine: no tt-metal build here).
"""

from __future__ import annotations

from lnrepro.shrink.emit import READ_AT, Flavour

SUITE = "LnreproShrinkProbe"
NAME = "LayerNormBackward"
FILTER = f"{SUITE}.{NAME}"
PATH = "tt-train/tests/ops/lnrepro_shrink_probe_test.cpp"  # tt-train's tests glob */*_test.cpp
MARGIN_LINE = "lnrepro-probe: margin="

_COMMON = r"""
namespace {

struct ProbeCase {
    std::uint32_t batch = 0, seq = 0, heads = 0, features = 0;
    int kind = 0, variant = 0;
    float dy = 1.0F, gamma = 1.0F, x = 0.5F;
    unsigned seed = 0;
    float tol[3][2] = {};
};

// $LNREPRO_CASE_ARGS: batch seq heads features kind variant dy gamma x seed, then rtol atol for
// dx, dgamma, dbeta (written by lnrepro shrink: model/shrink.py, Case.args_value)
bool read_case(ProbeCase& c) {
    const char* text = std::getenv("LNREPRO_CASE_ARGS");
    if (text == nullptr) return false;
    std::istringstream in(text);
    in >> c.batch >> c.seq >> c.heads >> c.features >> c.kind >> c.variant >> c.dy >> c.gamma >> c.x >> c.seed;
    for (auto& t : c.tol) in >> t[0] >> t[1];
    return !in.fail() && c.batch > 0 && c.seq > 0 && c.heads > 0 && c.features > 0;
}

// the data kinds as lnrepro's emulator fills them (lnrepro/emulator/probe.py, inputs)
template <typename V>
void fill(const ProbeCase& c, std::size_t total, V& x, V& dy, V& gamma) {
    const std::uint32_t n = c.features;
    const float step = n > 1 ? 1.0F / static_cast<float>(n - 1) : 0.0F;
    std::mt19937 rng(c.seed);
    std::uniform_real_distribution<float> sym(-1.0F, 1.0F), pos(0.0F, 1.0F);
    std::uniform_real_distribution<float> grad(c.variant == 1 ? 0.0F : -1.0F, 1.0F);
    for (std::size_t i = 0; i < total; ++i) {
        const auto f = static_cast<std::uint32_t>(i % n);
        if (c.kind == 0) {
            x[i] = c.x;
            dy[i] = c.dy;
        } else if (c.kind == 1) {
            x[i] = f % 2 ? 1.0F : -1.0F;
            dy[i] = f % 2 ? 0.5F : 1.0F;
        } else if (c.kind == 2) {
            x[i] = -1.0F + 2.0F * static_cast<float>(f) * step;
            dy[i] = static_cast<float>(f) * step;
        }
    }
    if (c.kind == 3) {
        for (std::size_t i = 0; i < total; ++i) x[i] = sym(rng);
        for (std::size_t i = 0; i < total; ++i) dy[i] = grad(rng);
    }
    for (std::uint32_t f = 0; f < n; ++f) gamma[f] = c.kind == 0 ? c.gamma : (c.kind == 3 ? pos(rng) : 1.0F);
}

}  // namespace
"""

_LOOKALIKE = r"""
TEST(LnreproShrinkProbe, LayerNormBackward) {
    ProbeCase c;
    if (!read_case(c)) GTEST_SKIP() << "no case: LNREPRO_CASE_ARGS is not set (lnrepro shrink sets it)";
    tt::tt_metal::open_device();
    const std::uint32_t rows = c.batch * c.seq * c.heads;
    const std::size_t total = static_cast<std::size_t>(rows) * c.features;
    std::vector<float> x(total), dy(total), gamma(c.features);
    fill(c, total, x, dy, gamma);
    const auto metal = ttml::metal::layernorm_bw(x, dy, gamma, rows, c.features);
    const auto ref = ttml::test::reference(x, dy, gamma, rows, c.features);
    const std::vector<float>* got[3] = {&metal.dx, &metal.dgamma, &metal.dbeta};
    const std::vector<double>* want[3] = {&ref.dx, &ref.dgamma, &ref.dbeta};
    const char* names[3] = {"dx", "dgamma", "dbeta"};
    double margin = 0.0;
    bool ok = true;
    for (int t = 0; t < 3; ++t) {
        const float rtol = c.tol[t][0], atol = c.tol[t][1];
        double need = 0.0;
        for (std::size_t i = 0; i < got[t]->size(); ++i) {
            const double r = (*want[t])[i];
            const double slack = std::abs(static_cast<double>((*got[t])[i]) - r) - rtol * std::abs(r);
            need = std::isnan(slack) ? INFINITY : std::max(need, slack);
        }
        margin = std::max(margin, atol > 0 ? need / atol : INFINITY);
        const bool close = xt::allclose(*got[t], *want[t], rtol, atol);
        if (!close) {
            const auto d = ttml::test::diff(*got[t], *want[t]);
            std::cout << names[t] << " FAILED: max_diff=" << d.max_diff << ", mean_diff=" << d.mean_diff << std::endl;
        }
        ok = ok && close;
    }
    std::cout << "lnrepro-probe: margin=" << margin << std::endl;
    EXPECT_TRUE(ok) << "mismatch for lnrepro's case (features=" << c.features << ")";
}
"""

_TT_METAL = r"""
TEST(LnreproShrinkProbe, LayerNormBackward) {
    using namespace ttml;
    ProbeCase c;
    if (!read_case(c)) GTEST_SKIP() << "no case: LNREPRO_CASE_ARGS is not set (lnrepro shrink sets it)";
    autograd::ctx().open_device();
    const uint32_t rows = c.batch * c.seq * c.heads, features = c.features;
    const std::size_t total = static_cast<std::size_t>(rows) * features;
    xt::xarray<float> x = xt::zeros<float>({total});
    xt::xarray<float> dy = xt::zeros<float>({total});
    xt::xarray<float> gamma = xt::zeros<float>({features});
    fill(c, total, x, dy, gamma);

    // float32 reference: x_hat = (x - mean) * rstd, rstd = 1 / sqrt(var + 1e-6);
    // dx = rstd * (dy*gamma - mean(dy*gamma) - x_hat * mean(dy*gamma*x_hat))
    auto x2 = xt::reshape_view(x, {rows, features});
    auto dy2 = xt::reshape_view(dy, {rows, features});
    xt::xarray<float> mean = xt::mean(x2, {1});
    xt::xarray<float> centred = x2 - xt::view(mean, xt::all(), xt::newaxis());
    xt::xarray<float> rstd = 1.0F / xt::sqrt(xt::mean(xt::square(centred), {1}) + 1e-6F);
    xt::xarray<float> x_hat = centred * xt::view(rstd, xt::all(), xt::newaxis());
    xt::xarray<float> dyg = dy2 * xt::view(gamma, xt::newaxis(), xt::all());
    xt::xarray<float> m1 = xt::mean(dyg, {1});
    xt::xarray<float> m2 = xt::mean(dyg * x_hat, {1});
    xt::xarray<float> ref[3] = {
        xt::flatten(xt::eval(xt::view(rstd, xt::all(), xt::newaxis()) *
            (dyg - xt::view(m1, xt::all(), xt::newaxis()) - x_hat * xt::view(m2, xt::all(), xt::newaxis())))),
        xt::sum(dy2 * x_hat, {0}), xt::sum(dy2, {0})};

    xt::xarray<float> x_4d = x, dy_4d = dy, gamma_4d = gamma, mean_4d = mean, rstd_4d = rstd;
    x_4d.reshape({c.batch, c.heads, c.seq, features});
    dy_4d.reshape({c.batch, c.heads, c.seq, features});
    gamma_4d.reshape({1, 1, 1, features});
    mean_4d.reshape({c.batch, c.heads, c.seq, 1});
    rstd_4d.reshape({c.batch, c.heads, c.seq, 1});
    auto* device = &autograd::ctx().get_device();
    auto out = metal::ops::layernorm_bw::LayerNormBackwardOperation::invoke(
        core::from_xtensor(x_4d, device), core::from_xtensor(gamma_4d, device),
        core::from_xtensor(mean_4d, device), core::from_xtensor(rstd_4d, device),
        core::from_xtensor(dy_4d, device));
    const char* names[3] = {"dx", "dgamma", "dbeta"};
    double margin = 0.0;
    bool ok = true;
    for (int t = 0; t < 3; ++t) {
        xt::xarray<float> got = xt::flatten(core::to_xtensor(out[t].value()));
        const float rtol = c.tol[t][0], atol = c.tol[t][1];
        const float need = xt::amax(xt::abs(got - ref[t]) - rtol * xt::abs(ref[t]))();
        margin = std::max(margin, std::isnan(need) ? INFINITY : std::max(0.0, static_cast<double>(need)) / atol);
        const bool close = xt::allclose(got, ref[t], rtol, atol);
        if (!close) {
            const float max_diff = xt::amax(xt::abs(got - ref[t]))();
            const float mean_diff = xt::mean(xt::abs(got - ref[t]))();
            std::cout << names[t] << " FAILED: max_diff=" << max_diff << ", mean_diff=" << mean_diff << std::endl;
        }
        ok = ok && close;
    }
    std::cout << "lnrepro-probe: margin=" << margin << std::endl;
    autograd::ctx().close_device();
    EXPECT_TRUE(ok) << "mismatch for lnrepro's case (features=" << features << ")";
}
"""


def probe_source(flavour: Flavour) -> str:
    head = [
        "// SPDX-License-Identifier: Apache-2.0",
        "// lnrepro shrink's probe: one LayerNorm backward case per run, read from $LNREPRO_CASE_ARGS.",
        "// Patched onto the checkout by `lnrepro shrink --tt-metal DIR`; delete it when done.",
        "#include <gtest/gtest.h>",
        "",
        *[
            f"#include <{h}>"
            for h in (
                "algorithm",
                "cmath",
                "cstdint",
                "cstdlib",
                "iostream",
                "random",
                "sstream",
                "vector",
            )
        ],
    ]
    if flavour is Flavour.LOOKALIKE:
        head += [
            '#include "support/xt_reference.hpp"',
            '#include "tt_metal/impl/device.hpp"',
            '#include "ttml/metal/ops/layernorm_bw/layernorm_bw.hpp"',
        ]
        body = _LOOKALIKE
    else:
        head[2:2] = [f"// tt-train's API as layernorm_bw_fused_op_test.cpp uses it at {READ_AT}."]
        head += [
            "#include <core/ttnn_all_includes.hpp>",
            '#include "autograd/auto_context.hpp"',
            '#include "core/tt_tensor_utils.hpp"',
            '#include "metal/ops/layernorm_bw/layernorm_bw.hpp"',
        ]
        body = _TT_METAL
    return "\n".join(head) + "\n" + _COMMON + body
