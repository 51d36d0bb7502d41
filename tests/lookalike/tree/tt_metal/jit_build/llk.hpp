#pragma once
#include <cstdint>
#include <string>

namespace tt::tt_metal::jit {

// Behaviour the compute kernels get from the LLK headers they are JIT-compiled against: read at
// run time from <root>/tt_metal/third_party/tt_llk/tt_llk_<arch>/, as tt-metal's JIT reads them
// (tt_metal/llrt/hal/tt-1xx/blackhole/bh_hal.cpp@42bfdec046 lists those include paths).
constexpr std::uint32_t kLlkZeroDstSkipsClear = 1u;

// The flags, or an empty ``problem`` saying why the headers could not be read.
std::uint32_t llk_flags(const std::string& root, std::string& problem);

}  // namespace tt::tt_metal::jit
