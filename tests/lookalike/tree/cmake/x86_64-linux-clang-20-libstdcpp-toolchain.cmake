# Clang 20 with libstdc++ (tt-metal's cmake/x86_64-linux-clang-20-libstdcpp-toolchain.cmake,
# read at 173c1d066d; build_metal.sh's default since tt-metal PR #35887).
set(CMAKE_C_COMPILER clang-20 CACHE INTERNAL "C compiler")
set(CMAKE_CXX_COMPILER clang++-20 CACHE INTERNAL "C++ compiler")
set(ENABLE_LIBCXX FALSE CACHE INTERNAL "Use libc++")
