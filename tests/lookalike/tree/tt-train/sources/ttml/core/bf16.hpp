#pragma once
#include <cstdint>
#include <cstring>

namespace ttml::core {
// bfloat16 storage: round to nearest even, kept widened in a float.
inline float bf16(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        u = (u | 0x00400000u) & 0xffff0000u;  // quiet NaN
    } else {
        u += 0x7fffu + ((u >> 16) & 1u);
        u &= 0xffff0000u;
    }
    float out;
    std::memcpy(&out, &u, sizeof out);
    return out;
}
}  // namespace ttml::core
