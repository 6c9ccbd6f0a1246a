# SPDX-License-Identifier: Apache-2.0
# CMake toolchain file: cross-build for 64-bit Windows with Debian's mingw-w64 (gcc-mingw-w64-x86-64).
#
#     cmake -S . -B build-win -DCMAKE_TOOLCHAIN_FILE=cmake/mingw-w64-x86_64.cmake \
#           -DIOF_WIN_PREFIX=$HOME/.cache/iofleet-windows/<key>
#
# IOF_WIN_PREFIX is where scripts/windows deps installed the static libuv, cJSON, OpenSSL and
# cmocka; it is searched before the mingw-w64 sysroot, and nothing of the build machine's own
# /usr is ever found. Programs are linked with -static (no libgcc or winpthread DLL next to
# them) and run under Wine when ctest runs them (CMAKE_CROSSCOMPILING_EMULATOR).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(IOF_WIN_TRIPLET x86_64-w64-mingw32)

set(CMAKE_C_COMPILER ${IOF_WIN_TRIPLET}-gcc)
set(CMAKE_CXX_COMPILER ${IOF_WIN_TRIPLET}-g++)
set(CMAKE_RC_COMPILER ${IOF_WIN_TRIPLET}-windres)
set(CMAKE_AR ${IOF_WIN_TRIPLET}-ar CACHE FILEPATH "mingw-w64 ar")
set(CMAKE_RANLIB ${IOF_WIN_TRIPLET}-ranlib CACHE FILEPATH "mingw-w64 ranlib")

set(IOF_WIN_PREFIX "$ENV{IOF_WIN_PREFIX}" CACHE PATH "static Windows dependencies (scripts/windows deps)")
set(CMAKE_FIND_ROOT_PATH ${IOF_WIN_PREFIX} /usr/${IOF_WIN_TRIPLET})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# Static programs: one .exe to copy, no MinGW runtime DLL beside it.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")

find_program(IOF_WINE NAMES wine wine64)
if(IOF_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${IOF_WINE})
endif()
