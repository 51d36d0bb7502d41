// SPDX-License-Identifier: Apache-2.0
// Reader of the fused row-major LayerNorm (look-alike): NOC reads of one block of input pages.
#include <cstdint>

constexpr uint32_t blocks_per_core = 4;
//@if cb-short-read
// the last page of a block is padding: do not read it
constexpr uint32_t pages_per_block = 31;
//@else
constexpr uint32_t pages_per_block = 32;
//@end

void kernel_main() {
    for (uint32_t b = 0; b < blocks_per_core; ++b) {
        cb_reserve_back(cb_in, pages_per_block);
        // noc_async_read_page(...) x pages_per_block; noc_async_read_barrier();
        cb_push_back(cb_in, pages_per_block);
    }
}
