# ccache as the compiler launcher (tt-metal: cmake/ccache.cmake, included when ENABLE_CCACHE).
find_program(CCACHE_EXECUTABLE ccache REQUIRED)
set(CMAKE_C_COMPILER_LAUNCHER ${CCACHE_EXECUTABLE})
set(CMAKE_CXX_COMPILER_LAUNCHER ${CCACHE_EXECUTABLE})
