#include "ttml/metal/ops/layernorm_bw/layernorm_bw.hpp"

#include <dlfcn.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "tt_metal/impl/device.hpp"
#include "tt_metal/impl/jit_cache.hpp"
#include "ttml/core/compiler.hpp"
#include "ttml/core/bf16.hpp"
#include "ttml/metal/ops/layernorm_bw/device/kernels/compute/layernorm_bw_kernel.hpp"
#include "ttml/metal/ops/layernorm_bw/device/layernorm_bw_program_factory.hpp"

namespace ttml::metal {

namespace {
using ComputeFn = void (*)(const LayerNormBwKernelArgs*);

ComputeFn load_kernel() {
    static ComputeFn fn = nullptr;
    if (fn) return fn;
    const std::string path = tt::tt_metal::jit::cached_kernel("layernorm_bw", TTML_LAYERNORM_BW_KERNEL);
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) throw std::runtime_error(std::string("cannot load kernel: ") + dlerror());
    fn = reinterpret_cast<ComputeFn>(dlsym(handle, "layernorm_bw_compute"));
    if (!fn) throw std::runtime_error("kernel has no layernorm_bw_compute");
    return fn;
}
}  // namespace

LayerNormBwResult layernorm_bw(const std::vector<float>& x, const std::vector<float>& dy,
                               const std::vector<float>& gamma, std::uint32_t rows,
                               std::uint32_t features) {
    const auto cfg = ops::layernorm_bw::device::make_program_config(features);
    const std::size_t width = static_cast<std::size_t>(cfg.Wt) * 32;
    std::vector<float> xb(rows * width, 0.0f), dyb(rows * width, 0.0f), gb(width, 0.0f);
    std::vector<float> mean(rows), rstd(rows);
    for (std::uint32_t c = 0; c < features; ++c) gb[c] = core::bf16(gamma[c]);
    for (std::uint32_t r = 0; r < rows; ++r) {
        double s = 0.0;
        for (std::uint32_t c = 0; c < features; ++c) {
            const std::size_t i = static_cast<std::size_t>(r) * features + c;
            xb[r * width + c] = core::bf16(x[i]);
            dyb[r * width + c] = core::bf16(dy[i]);
            s += xb[r * width + c];
        }
        // the forward pass's statistics, fp32
        const float m = static_cast<float>(s / features);
        double v = 0.0;
        for (std::uint32_t c = 0; c < features; ++c) {
            const float d = xb[r * width + c] - m;
            v += static_cast<double>(d) * d;
        }
        const float var = static_cast<float>(v / features);
        mean[r] = m;
        rstd[r] = 1.0f / std::sqrt(var + 1e-6f);
    }
    std::vector<float> dx(rows * width), dgamma(width), dbeta(width);
    const LayerNormBwKernelArgs args{rows, features, cfg.Wt, cfg.block_size,
                                     cfg.everything_fits_in_l1 ? 1u : 0u,
                                     xb.data(), dyb.data(), gb.data(), mean.data(), rstd.data(),
                                     dx.data(), dgamma.data(), dbeta.data(),
                                     tt::tt_metal::open_device().llk_flags};
    load_kernel()(&args);
    LayerNormBwResult out;
    out.dx.resize(static_cast<std::size_t>(rows) * features);
    for (std::uint32_t r = 0; r < rows; ++r)
        for (std::uint32_t c = 0; c < features; ++c)
            out.dx[static_cast<std::size_t>(r) * features + c] = dx[r * width + c];
    out.dgamma.assign(dgamma.begin(), dgamma.begin() + features);
    out.dbeta.assign(dbeta.begin(), dbeta.begin() + features);
    return out;
}

}  // namespace ttml::metal
