#!/usr/bin/env bash
# tt-metal's build entry point (look-alike). What lnrepro relies on is what tt-metal's own
# build_metal.sh does (read at 03019bebff and 5cd3a453f1): the flags below, build_<Type> with a
# `build` symlink made before configuring, Ninja, ccache through -DENABLE_CCACHE, the default
# toolchain file passed unless --cxx-compiler-path is given (clang-17 until tt-metal PR #35887,
# clang-20 after), --configure-only, and --build-tests building every tt-metal/ttnn test.
set -eo pipefail

show_help() {
    cat <<HELP
Usage: build_metal.sh [options]
  -h, --help                 Show this help
  -b, --build-type TYPE      Debug, Release, RelWithDebInfo, ASan, TSan (default Release)
  --debug                    Same as --build-type Debug
  --release                  Same as --build-type Release
  --development              Same as --build-type RelWithDebInfo
  --build-dir DIR            Build directory (default build_<Type>)
  --build-tests              Build tt-metal's and ttnn's tests
  --build-tt-train           Build tt-train
  --build-all                Build everything
  -c, --enable-ccache        Use ccache
  --toolchain-path FILE      CMake toolchain file
  --cxx-compiler-path PATH   C++ compiler (the toolchain file is then not used)
  --c-compiler-path PATH     C compiler
#@if configure-only
  --configure-only           Configure, do not build
#@end
  --clean                    Remove build directories and exit
HELP
}

build_type="Release"
build_dir=""
build_tests="OFF"
build_tt_train="OFF"
ccache="OFF"
clean="OFF"
configure_only="OFF"
cxx_compiler_path=""
c_compiler_path=""
#@if clang20
toolchain_path="cmake/x86_64-linux-clang-20-libstdcpp-toolchain.cmake"
#@else
toolchain_path="cmake/x86_64-linux-clang-17-libstdcpp-toolchain.cmake"
#@end
while [ $# -gt 0 ]; do
    case "$1" in
        -h|--help) show_help; exit 0 ;;
        -b|--build-type) build_type="$2"; shift ;;
        --debug) build_type="Debug" ;;
        --release) build_type="Release" ;;
        --development) build_type="RelWithDebInfo" ;;
        --build-dir) build_dir="$2"; shift ;;
        --build-tests) build_tests="ON" ;;
        --build-tt-train) build_tt_train="ON" ;;
        --build-all) build_tests="ON"; build_tt_train="ON" ;;
        -c|--enable-ccache) ccache="ON" ;;
        --toolchain-path) toolchain_path="$2"; shift ;;
        --cxx-compiler-path) cxx_compiler_path="$2"; shift ;;
        --c-compiler-path) c_compiler_path="$2"; shift ;;
#@if configure-only
        --configure-only) configure_only="ON" ;;
#@end
        --clean) clean="ON" ;;
        *) echo "build_metal.sh: unknown option $1" >&2; show_help >&2; exit 2 ;;
    esac
    shift
done

cd "$(dirname "$0")"
if [ "$clean" = "ON" ]; then
    rm -rf build build_Debug build_Release build_RelWithDebInfo build_ASan build_TSan tt-train/build
    echo "INFO: Removed build directories"
    exit 0
fi
[ -n "$build_dir" ] || build_dir="build_${build_type}"
mkdir -p "$build_dir"
ln -nsf "$build_dir" build

cmake_args=(-B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="$build_type"
            -DBUILD_TT_TRAIN="$build_tt_train" -DTT_METAL_BUILD_TESTS="$build_tests"
            -DTTNN_BUILD_TESTS="$build_tests")
[ "$ccache" = "ON" ] && cmake_args+=(-DENABLE_CCACHE=TRUE)
[ -n "$c_compiler_path" ] && cmake_args+=(-DCMAKE_C_COMPILER="$c_compiler_path")
if [ -n "$cxx_compiler_path" ]; then
    cmake_args+=(-DCMAKE_CXX_COMPILER="$cxx_compiler_path")
else
    cmake_args+=(-DCMAKE_TOOLCHAIN_FILE="$toolchain_path")
fi
echo "INFO: Build type: $build_type, build directory: $build_dir, toolchain: ${cxx_compiler_path:-$toolchain_path}"
cmake "${cmake_args[@]}"
if [ "$configure_only" = "ON" ]; then
    exit 0
fi
cmake --build "$build_dir" -j "$(nproc)"
