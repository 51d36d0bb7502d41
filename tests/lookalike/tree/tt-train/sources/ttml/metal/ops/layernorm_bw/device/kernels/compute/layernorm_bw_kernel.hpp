#pragma once
#include <cstdint>

// The compute kernel's arguments. Rows are padded to Wt*32 columns with zeros.
struct LayerNormBwKernelArgs {
    std::uint32_t rows;
    std::uint32_t features;
    std::uint32_t Wt;
    std::uint32_t block_size;
    std::uint32_t everything_fits_in_l1;
    const float* x;      // [rows, Wt*32], bf16 values
    const float* dy;     // [rows, Wt*32], bf16 values
    const float* gamma;  // [Wt*32], bf16 values
    const float* mean;   // [rows], fp32
    const float* rstd;   // [rows], fp32
    float* dx;           // [rows, Wt*32], written as bf16 values
    float* dgamma;       // [Wt*32], bf16 values
    float* dbeta;        // [Wt*32], bf16 values
    std::uint32_t llk_flags;  // from the LLK headers the JIT compiles against (tt_metal/jit_build/llk.hpp)
};

extern "C" void layernorm_bw_compute(const LayerNormBwKernelArgs* args);
