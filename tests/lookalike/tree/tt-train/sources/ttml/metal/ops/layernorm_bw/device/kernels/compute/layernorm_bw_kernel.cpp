// Fused LayerNorm backward compute kernel (look-alike: CPU code, same algorithm).
//   dx = rstd * (dy*gamma - mean(dy*gamma) - x_hat * mean(dy*gamma*x_hat))
// Rows are cut into 32-wide tiles, the last one masked; both row sums are fp32 and scaled by
// the 1/N scaler. EVERYTHING_FITS_IN_L1 walks the whole row at once; the block path walks it
// in blocks of block_size tiles, carrying the sums between blocks.
#include "ttml/metal/ops/layernorm_bw/device/kernels/compute/layernorm_bw_kernel.hpp"

#include <algorithm>
#include <vector>

#include "ttml/core/bf16.hpp"

namespace {

constexpr std::uint32_t TILE_W = 32;

// DEST: the math engine's tile registers. They keep their contents until zeroed, and ELWMUL
// (mul_tiles, mul_tiles_bcast_*) accumulates into DEST rather than overwriting it.
struct Dest {
    float reg[4] = {};
};
constexpr std::uint32_t kSumDyGamma = 0;
constexpr std::uint32_t kSumDyGammaXhat = 1;
constexpr std::uint32_t kMeanDyGamma = 2;

void tile_regs_acquire(Dest& dest) {
    for (float& r : dest.reg) r = 0.0f;
}
// An LLK whose zero_dst_reg skips the clear (LLK_ZERO_DST_SKIPS_CLEAR) leaves the register as
// it was: the accumulating mul_tiles that follows then adds to a stale value.
constexpr std::uint32_t kLlkZeroDstSkipsClear = 1u;
std::uint32_t g_llk_flags = 0;
void zero_dst_reg(Dest& dest, std::uint32_t i) {
    if (g_llk_flags & kLlkZeroDstSkipsClear) return;
    dest.reg[i] = 0.0f;
}
void mul_tiles(Dest& dest, std::uint32_t i, float a, float b) { dest.reg[i] += a * b; }

float tile_row_sum(const float* row, std::uint32_t tile) {
    float s = 0.0f;
    for (std::uint32_t c = 0; c < TILE_W; ++c) s += row[tile * TILE_W + c];
    return s;
}

}  // namespace

extern "C" void layernorm_bw_compute(const LayerNormBwKernelArgs* a) {
    const std::uint32_t width = a->Wt * TILE_W;
    g_llk_flags = a->llk_flags;
    const float scaler = static_cast<float>(1.0 / static_cast<double>(a->features));
    std::vector<float> x_hat(width), dyg(width), dyg_xhat(width);
    std::fill(a->dgamma, a->dgamma + width, 0.0f);
    std::fill(a->dbeta, a->dbeta + width, 0.0f);
    for (std::uint32_t r = 0; r < a->rows; ++r) {
        const float* x = a->x + static_cast<std::size_t>(r) * width;
        const float* dy = a->dy + static_cast<std::size_t>(r) * width;
        float* dx = a->dx + static_cast<std::size_t>(r) * width;
        const float mean = a->mean[r];
        const float rstd = a->rstd[r];
        for (std::uint32_t c = 0; c < width; ++c) {
            const float mask = c < a->features ? 1.0f : 0.0f;  // the last tile's padding
            x_hat[c] = (x[c] - mean) * rstd * mask;
            dyg[c] = dy[c] * a->gamma[c];
            dyg_xhat[c] = dyg[c] * x_hat[c];
        }

        Dest dest;
        tile_regs_acquire(dest);
        if (a->everything_fits_in_l1) {
            for (std::uint32_t t = 0; t < a->Wt; ++t) {
                dest.reg[kSumDyGamma] += tile_row_sum(dyg.data(), t);
                dest.reg[kSumDyGammaXhat] += tile_row_sum(dyg_xhat.data(), t);
            }
        } else {
            float cb_dy_gamma_sum = 0.0f;  // fp32 circular buffer carried between blocks
            for (std::uint32_t b = 0; b < a->Wt; b += a->block_size) {
                const std::uint32_t end = std::min(b + a->block_size, a->Wt);
                float block_sum = 0.0f;
                for (std::uint32_t t = b; t < end; ++t) block_sum += tile_row_sum(dyg.data(), t);
//@if overwrite-dy-gamma-sum
                cb_dy_gamma_sum = block_sum;  // packed over the earlier blocks' partial sum
//@else
                cb_dy_gamma_sum += block_sum;  // reload, add, pack back
//@end
//@if drop-xhat-blocks
                tile_regs_acquire(dest);  // DEST acquired again for this block
//@end
                for (std::uint32_t t = b; t < end; ++t)
                    dest.reg[kSumDyGammaXhat] += tile_row_sum(dyg_xhat.data(), t);
            }
            dest.reg[kSumDyGamma] = cb_dy_gamma_sum;
        }
        const float mean_dyg = dest.reg[kSumDyGamma] * scaler;
        const float mean_dyg_xhat = dest.reg[kSumDyGammaXhat] * scaler;
        dest.reg[kMeanDyGamma] = mean_dyg;  // broadcast tile, still in DEST

        // compute_dx
//@if !double-subtract
        zero_dst_reg(dest, kMeanDyGamma);
//@end
        mul_tiles(dest, kMeanDyGamma, mean_dyg, 1.0f);
        for (std::uint32_t c = 0; c < width; ++c) {
            const float inner = dyg[c] - dest.reg[kMeanDyGamma] - x_hat[c] * mean_dyg_xhat;
            dx[c] = ttml::core::bf16(rstd * inner);
            a->dgamma[c] += dy[c] * x_hat[c];
            a->dbeta[c] += dy[c];
        }
    }
    for (std::uint32_t c = 0; c < width; ++c) {
        a->dgamma[c] = ttml::core::bf16(a->dgamma[c]);
        a->dbeta[c] = ttml::core::bf16(a->dbeta[c]);
    }
}
