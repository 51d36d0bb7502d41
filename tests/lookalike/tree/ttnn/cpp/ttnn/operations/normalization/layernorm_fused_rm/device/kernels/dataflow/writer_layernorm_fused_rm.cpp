// SPDX-License-Identifier: Apache-2.0
// Writer of the fused row-major LayerNorm (look-alike): NOC writes of one block of output pages.
#include <cstdint>

constexpr uint32_t pages_per_block = 32;

void kernel_main() {
    for (uint32_t b = 0; b < blocks_per_core; ++b) {
        cb_wait_front(cb_out, pages_per_block);
        // noc_async_write_page(...) x pages_per_block; noc_async_write_barrier();
        cb_pop_front(cb_out, pages_per_block);
    }
}
