// SPDX-License-Identifier: Apache-2.0
// LayerNorm compute kernel (look-alike): per tile row, reduce x and x^2, then normalize.
#include <cstdint>

namespace NAMESPACE {

//@if pcc-ln
// one mean/rstd per tile row: reduce once, broadcast to the tile's 32 rows
constexpr uint32_t rows_per_stat = 32;
//@else
constexpr uint32_t rows_per_stat = 1;
//@end

void MAIN() {
    // reduce_tile(...) per row group of rows_per_stat; bcast sub/mul
}

}  // namespace NAMESPACE
