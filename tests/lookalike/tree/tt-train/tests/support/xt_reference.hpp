#pragma once
// What the real test takes from xtensor: allclose and a float64 reference of LayerNorm backward.
#include <cstdint>
#include <vector>

namespace xt {
// |a - b| <= atol + rtol * |b| everywhere; NaN is never close.
bool allclose(const std::vector<float>& a, const std::vector<double>& b, float rtol, float atol);
}  // namespace xt

namespace ttml::test {

struct Grads {
    std::vector<double> dx, dgamma, dbeta;
};
// The reference sees the bf16-rounded data the device sees (lnrepro's emulator does the same).
Grads reference(const std::vector<float>& x, const std::vector<float>& dy,
                const std::vector<float>& gamma, std::uint32_t rows, std::uint32_t features);

struct Diff {
    double max_diff;
    double mean_diff;
};
Diff diff(const std::vector<float>& metal, const std::vector<double>& ref);

}  // namespace ttml::test
