#pragma once
// What the real test takes from xtensor: allclose and a float64 reference of LayerNorm backward.
#include <cstdint>
#include <random>
#include <vector>

namespace xt {
// |a - b| <= atol + rtol * |b| everywhere; NaN is never close.
bool allclose(const std::vector<float>& a, const std::vector<double>& b, float rtol, float atol);
}  // namespace xt

namespace ttml::test {

struct Inputs {
    std::vector<float> x, dy, gamma;
};
// x, dy ~ U(-1, 1), then gamma ~ U(0, 1), drawn from rng in that order. Here, compiled with
// optimisation: the NIGHTLY test's draws (three times 14M) took 2.5 s at the tests' -O0.
Inputs random_inputs(std::mt19937 rng, std::uint32_t rows, std::uint32_t features);

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
