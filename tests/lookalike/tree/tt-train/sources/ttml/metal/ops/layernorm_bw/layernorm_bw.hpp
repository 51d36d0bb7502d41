#pragma once
#include <cstdint>
#include <vector>

namespace ttml::metal {

struct LayerNormBwResult {
    std::vector<float> dx;      // [rows, features]
    std::vector<float> dgamma;  // [features]
    std::vector<float> dbeta;   // [features]
};

// LayerNorm backward on the device. x, dy: [rows, features]; gamma: [features]. Inputs are
// sent to the device in bf16; mean and rstd come from the forward pass (fp32).
LayerNormBwResult layernorm_bw(const std::vector<float>& x, const std::vector<float>& dy,
                               const std::vector<float>& gamma, std::uint32_t rows,
                               std::uint32_t features);

}  // namespace ttml::metal
