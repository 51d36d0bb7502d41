#@if !no-clang17
# Clang 17 with libstdc++ (tt-metal's cmake/x86_64-linux-clang-17-libstdcpp-toolchain.cmake,
# read at 71006cad60; removed by tt-metal PR #36463).
set(CMAKE_C_COMPILER clang-17 CACHE INTERNAL "C compiler")
set(CMAKE_CXX_COMPILER clang++-17 CACHE INTERNAL "C++ compiler")
set(ENABLE_LIBCXX FALSE CACHE INTERNAL "Use libc++")
# As tt-metal's, a linker that copes better when there is one: tt-metal's (read at 173c1d066d)
# sets CMAKE_LINKER_TYPE to mold or lld, which needs CMake 3.29; the look-alike's CMake (3.25)
# takes GCC's flag, with binutils' gold.
find_program(GOLD ld.gold)
if(GOLD)
  foreach(kind EXE SHARED MODULE)
    set(CMAKE_${kind}_LINKER_FLAGS_INIT "-fuse-ld=gold")
  endforeach()
endif()
#@end
