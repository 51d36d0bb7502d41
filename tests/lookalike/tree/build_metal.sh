#!/usr/bin/env bash
# tt-metal's build entry point (look-alike): the same flags, build_<Type> with a `build` symlink.
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
  --build-tests              Build the tests
  --build-tt-train           Build tt-train
  --build-all                Build everything
  -c, --enable-ccache        Use ccache as the compiler launcher
  --clean                    Remove build directories and exit
HELP
}

build_type="Release"
build_dir=""
build_tests="OFF"
build_tt_train="OFF"
ccache="OFF"
clean="OFF"
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

generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake_args=(-B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE="$build_type"
            -DBUILD_TT_TRAIN="$build_tt_train" -DTT_METAL_BUILD_TESTS="$build_tests")
if [ "$ccache" = "ON" ]; then
    cmake_args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
echo "INFO: Build type: $build_type, build directory: $build_dir"
cmake "${cmake_args[@]}"
cmake --build "$build_dir" -j "$(nproc)"
if [ "$build_dir" != "build" ]; then
    ln -nsf "$build_dir" build
fi
