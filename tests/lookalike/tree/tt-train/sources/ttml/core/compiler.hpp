#pragma once
// ttml needs Clang: on tt-metal, GCC 11 rejects the constexpr lambdas of ttml's `reflect`
// dependency (tt-metal #36993). The look-alike's compilers are stand-ins named clang-17/clang-20
// that define LOOKALIKE_CLANG; the system's g++ (what CMake picks when nothing selects a
// compiler) does not, and fails here as GCC fails there.
#ifndef LOOKALIKE_CLANG
#error "ttml requires Clang (GCC fails on reflect's constexpr lambdas; see tt-metal #36993): pass a toolchain file"
#endif
