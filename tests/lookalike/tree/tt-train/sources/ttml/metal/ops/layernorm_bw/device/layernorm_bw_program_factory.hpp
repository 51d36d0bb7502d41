#pragma once
#include <cstdint>

namespace ttml::metal::ops::layernorm_bw::device {

struct ProgramConfig {
    std::uint32_t Wt;
    std::uint32_t block_size;
    bool everything_fits_in_l1;
};

// Which path the kernel takes for a row of `features` values.
ProgramConfig make_program_config(std::uint32_t features);

}  // namespace ttml::metal::ops::layernorm_bw::device
