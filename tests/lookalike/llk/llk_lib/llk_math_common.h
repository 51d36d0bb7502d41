// LLK (look-alike): the low-level kernel library tt-metal's JIT compiles compute kernels against,
// from tt_metal/third_party/tt_llk/tt_llk_<arch>/ (one submodule, per-arch directories).
#pragma once

// zero_dst_reg clears a DEST register before an accumulating mul_tiles.
//@if skips-zero-dst
// Release 3 "skips redundant DEST clears": the clear is skipped.
#define LLK_ZERO_DST_SKIPS_CLEAR 1
//@else
#define LLK_ZERO_DST_SKIPS_CLEAR 0
//@end
