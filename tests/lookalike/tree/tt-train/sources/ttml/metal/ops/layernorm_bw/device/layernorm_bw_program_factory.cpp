#include "ttml/metal/ops/layernorm_bw/device/layernorm_bw_program_factory.hpp"

#include <cstdlib>
#include <string>

namespace ttml::metal::ops::layernorm_bw::device {

namespace {
constexpr std::uint32_t kTileWidth = 32;
constexpr std::uint32_t kBlockSize = 2;
// Widest row (in tiles) whose buffers all fit in a core's L1.
constexpr std::uint32_t kL1MaxTiles = 32;

std::uint32_t env_u32(const char* name, std::uint32_t fallback) {
    const char* v = std::getenv(name);
    return (v && *v) ? static_cast<std::uint32_t>(std::stoul(v)) : fallback;
}
}  // namespace

ProgramConfig make_program_config(std::uint32_t features) {
    const std::uint32_t Wt = (features + kTileWidth - 1) / kTileWidth;
    // The look-alike lets tests move the boundaries (the real factory derives them from L1).
    const std::uint32_t l1_max = env_u32("TT_LOOKALIKE_L1_MAX_TILES", kL1MaxTiles);
    const std::uint32_t block = env_u32("TT_LOOKALIKE_BLOCK_SIZE", kBlockSize);
    return ProgramConfig{Wt, block, Wt <= l1_max};
}

}  // namespace ttml::metal::ops::layernorm_bw::device
