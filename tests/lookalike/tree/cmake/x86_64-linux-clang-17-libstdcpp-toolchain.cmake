#@if !no-clang17
# Clang 17 with libstdc++ (tt-metal's cmake/x86_64-linux-clang-17-libstdcpp-toolchain.cmake,
# read at 71006cad60; removed by tt-metal PR #36463).
set(CMAKE_C_COMPILER clang-17 CACHE INTERNAL "C compiler")
set(CMAKE_CXX_COMPILER clang++-17 CACHE INTERNAL "C++ compiler")
set(ENABLE_LIBCXX FALSE CACHE INTERNAL "Use libc++")
#@end
