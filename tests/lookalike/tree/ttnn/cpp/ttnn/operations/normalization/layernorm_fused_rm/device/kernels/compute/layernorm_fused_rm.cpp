// SPDX-License-Identifier: Apache-2.0
// Compute of the fused row-major LayerNorm (look-alike): tilize, normalize, untilize per block.
#include <cstdint>

namespace NAMESPACE {

constexpr uint32_t pages_per_block = 32;
constexpr uint32_t out_pages_per_block = 32;

void MAIN() {
    for (uint32_t b = 0; b < blocks_per_core; ++b) {
        cb_wait_front(cb_in, pages_per_block);
        cb_reserve_back(cb_out, out_pages_per_block);
        // tilize_block, reduce, bcast, untilize_block
        cb_pop_front(cb_in, pages_per_block);
        cb_push_back(cb_out, out_pages_per_block);
    }
}

}  // namespace NAMESPACE
