#include "support/xt_reference.hpp"

#include <cmath>

#include "ttml/core/bf16.hpp"

namespace xt {
bool allclose(const std::vector<float>& a, const std::vector<double>& b, float rtol, float atol) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double d = std::fabs(static_cast<double>(a[i]) - b[i]);
        if (!(d <= atol + rtol * std::fabs(b[i]))) return false;
    }
    return true;
}
}  // namespace xt

namespace ttml::test {

Grads reference(const std::vector<float>& x, const std::vector<float>& dy,
                const std::vector<float>& gamma, std::uint32_t rows, std::uint32_t features) {
    const double eps = 1e-6;
    Grads g;
    g.dx.assign(static_cast<std::size_t>(rows) * features, 0.0);
    g.dgamma.assign(features, 0.0);
    g.dbeta.assign(features, 0.0);
    std::vector<double> xh(features), dyg(features);
    for (std::uint32_t r = 0; r < rows; ++r) {
        const std::size_t o = static_cast<std::size_t>(r) * features;
        double mean = 0.0;
        for (std::uint32_t c = 0; c < features; ++c) mean += core::bf16(x[o + c]);
        mean /= features;
        double var = 0.0;
        for (std::uint32_t c = 0; c < features; ++c) {
            xh[c] = core::bf16(x[o + c]) - mean;
            var += xh[c] * xh[c];
        }
        const double rstd = 1.0 / std::sqrt(var / features + eps);
        double s1 = 0.0, s2 = 0.0;
        for (std::uint32_t c = 0; c < features; ++c) {
            xh[c] *= rstd;
            const double d = core::bf16(dy[o + c]);
            g.dgamma[c] += d * xh[c];
            g.dbeta[c] += d;
            dyg[c] = d * core::bf16(gamma[c]);
            s1 += dyg[c];
            s2 += dyg[c] * xh[c];
        }
        const double m1 = s1 / features, m2 = s2 / features;
        for (std::uint32_t c = 0; c < features; ++c) g.dx[o + c] = rstd * (dyg[c] - m1 - xh[c] * m2);
    }
    return g;
}

Diff diff(const std::vector<float>& metal, const std::vector<double>& ref) {
    double mx = 0.0, sum = 0.0;
    for (std::size_t i = 0; i < metal.size(); ++i) {
        const double d = std::fabs(static_cast<double>(metal[i]) - ref[i]);
        if (d > mx || std::isnan(d)) mx = d;
        sum += d;
    }
    return Diff{mx, metal.empty() ? 0.0 : sum / metal.size()};
}

Inputs random_inputs(std::mt19937 rng, std::uint32_t rows, std::uint32_t features) {
    std::uniform_real_distribution<float> sym(-1.0F, 1.0F), pos(0.0F, 1.0F);
    Inputs in{std::vector<float>(static_cast<std::size_t>(rows) * features), {}, std::vector<float>(features)};
    in.dy.resize(in.x.size());
    for (auto& v : in.x) v = sym(rng);
    for (auto& v : in.dy) v = sym(rng);
    for (auto& v : in.gamma) v = pos(rng);
    return in;
}

}  // namespace ttml::test
