# SPDX-License-Identifier: Apache-2.0
# The Windows build (cross-built with cmake/mingw-w64-x86_64.cmake; scripts/windows build):
# the parts of iofleet that run on Windows so far, linked statically against the libuv,
# cJSON, OpenSSL and cmocka that scripts/windows deps built into IOF_WIN_PREFIX, and the
# unit tests that apply to them (ctest runs them under Wine). docs/windows.md says what
# is not there yet. Included from the top CMakeLists.txt instead of the Linux part.

# The C99 printf family of mingw-w64 (%zu, %lld, %j...), not msvcrt's. GCC for mingw reads
# __attribute__((format(printf))) as msvcrt's dialect, so it would warn on every %zu the
# program prints correctly: format strings are checked by the Linux build of the same
# sources instead.
add_compile_definitions(__USE_MINGW_ANSI_STDIO=1 WIN32_LEAN_AND_MEAN _WIN32_WINNT=0x0603)
add_compile_options(-Wno-format)
# common/os/os.h fills the C library's gaps (strndup...) in every file of this build.
add_compile_options("SHELL:-include ${PROJECT_SOURCE_DIR}/common/os/os.h")

# A new dependency folder (a new key: a Debian security update) must not keep the
# libraries found in the old one: CMake caches what find_* found.
if(NOT "${IOF_WIN_PREFIX}" STREQUAL "${IOF_WIN_PREFIX_SEARCHED}")
  foreach(var IOF_WIN_INCLUDE IOF_WIN_UV IOF_WIN_CJSON IOF_WIN_SSL IOF_WIN_CRYPTO IOF_WIN_CMOCKA)
    unset(${var} CACHE)
  endforeach()
  set(IOF_WIN_PREFIX_SEARCHED "${IOF_WIN_PREFIX}" CACHE INTERNAL "")
endif()
find_path(IOF_WIN_INCLUDE uv.h REQUIRED)
find_library(IOF_WIN_UV NAMES libuv_a.a uv_a libuv.a REQUIRED)
find_library(IOF_WIN_CJSON NAMES libcjson.a cjson REQUIRED)
find_library(IOF_WIN_SSL NAMES libssl.a REQUIRED)
find_library(IOF_WIN_CRYPTO NAMES libcrypto.a REQUIRED)
find_library(IOF_WIN_CMOCKA NAMES libcmocka-static.a libcmocka.a REQUIRED)

add_library(iof_win_deps INTERFACE)
target_include_directories(iof_win_deps INTERFACE ${IOF_WIN_INCLUDE})
target_link_libraries(iof_win_deps INTERFACE ${IOF_WIN_SSL} ${IOF_WIN_CRYPTO} ${IOF_WIN_CJSON}
                      ${IOF_WIN_UV} ws2_32 iphlpapi userenv psapi dbghelp ole32 shell32 crypt32
                      advapi32 user32 pthread) # pthread: winpthreads clock_gettime (iof_wall_ns)

# common/ and proto/, with Windows' own parts from common/os/: the clock and the C library's
# gaps (win.c), unix-domain sockets refused (net_win.c), the safe output file (outfile_win.c
# instead of outfile.c: O_NOFOLLOW, renameat2).
file(GLOB IOF_COMMON_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/common/*.c
     ${PROJECT_SOURCE_DIR}/common/os/*_win.c ${PROJECT_SOURCE_DIR}/common/os/win.c)
list(REMOVE_ITEM IOF_COMMON_SOURCES ${PROJECT_SOURCE_DIR}/common/outfile.c)
add_library(iof_common STATIC ${IOF_COMMON_SOURCES})
target_include_directories(iof_common PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(iof_common PUBLIC iof_win_deps)

file(GLOB IOF_PROTO_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/proto/*.c)
add_library(iof_proto STATIC ${IOF_PROTO_SOURCES})
target_link_libraries(iof_proto PUBLIC iof_common)

# The engines that build on Windows.
add_library(iof_win_engines STATIC ${PROJECT_SOURCE_DIR}/dynamo/engines/windows.c
                                   ${PROJECT_SOURCE_DIR}/dynamo/engines/null.c)
target_link_libraries(iof_win_engines PUBLIC iof_common)

# The agent, dynamo.exe: dynamo/ with its Windows platform layer (dynamo/os/windows/), whose
# posix.h (force-included) stands in for the POSIX file calls of the portable part, and the
# engines of the Windows registry (windows, sync, null). 64-bit file offsets (off_t).
file(GLOB IOF_DYNAMO_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/dynamo/*.c
     ${PROJECT_SOURCE_DIR}/dynamo/os/windows/*.c)
list(REMOVE_ITEM IOF_DYNAMO_SOURCES ${PROJECT_SOURCE_DIR}/dynamo/main.c)
add_library(iof_dynamo STATIC ${IOF_DYNAMO_SOURCES} ${PROJECT_SOURCE_DIR}/dynamo/engines/registry.c
                              ${PROJECT_SOURCE_DIR}/dynamo/engines/sync.c)
target_include_directories(iof_dynamo PUBLIC ${PROJECT_SOURCE_DIR}/dynamo/os/windows/include)
target_compile_definitions(iof_dynamo PUBLIC _FILE_OFFSET_BITS=64)
target_compile_options(iof_dynamo PUBLIC
                       "SHELL:-include ${PROJECT_SOURCE_DIR}/dynamo/os/windows/posix.h")
target_link_libraries(iof_dynamo PUBLIC iof_win_engines iof_proto iof_common bcrypt)
add_executable(dynamo ${PROJECT_SOURCE_DIR}/dynamo/main.c)
target_link_libraries(dynamo PRIVATE iof_dynamo)
set_target_properties(dynamo PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)

if(IOF_TESTS)
  enable_testing()
  # Not here: the tests of what is not built for Windows (the manager: test_statsbin
  # drives the manager's aggregation too), those of the agent written for Linux (its
  # files and devices: tests/windows/test_win_os.c is Windows'), those of the Linux-only parts
  # (test_link and test_net_*: socketpairs, unix sockets; tests/windows/ has Windows' own)
  # and those that make their files with POSIX calls (tests/unit/lib/tmpdir.h: mkdtemp, nftw).
  set(IOF_WIN_UNIT_TESTS
      test_backoff test_buf test_clock test_clock_sleep test_cliopt test_devguard_mark
      test_engine_facts test_frame test_hist test_import_fio test_import_icf test_msg test_msg_run
      test_name test_plan test_ratecycle test_text)
  # tests/windows/test_*.c: Windows-only tests (the engine), not in the Linux build.
  file(GLOB IOF_WIN_ONLY_TESTS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/tests/windows/test_*.c)
  set(IOF_WIN_TEST_SOURCES)
  foreach(name ${IOF_WIN_UNIT_TESTS})
    file(GLOB src ${PROJECT_SOURCE_DIR}/tests/unit/*/${name}.c)
    list(APPEND IOF_WIN_TEST_SOURCES ${src})
  endforeach()
  foreach(src ${IOF_WIN_TEST_SOURCES} ${IOF_WIN_ONLY_TESTS})
    get_filename_component(name ${src} NAME_WE)
    add_executable(${name} ${src})
    target_link_libraries(${name} PRIVATE iof_win_engines iof_proto iof_common
                          ${IOF_WIN_CMOCKA})
    # open_memstream, fmemopen, setenv for the tests only (tests/windows/posix_shim.h).
    target_compile_options(${name} PRIVATE
                           "SHELL:-include ${PROJECT_SOURCE_DIR}/tests/windows/posix_shim.h")
    # ctest runs it with CMAKE_CROSSCOMPILING_EMULATOR (wine).
    add_test(NAME unit.${name} COMMAND ${name})
    set_tests_properties(unit.${name} PROPERTIES LABELS "unit;windows" TIMEOUT 300
                         ENVIRONMENT "IOF_TEST_TMPDIR=${CMAKE_BINARY_DIR}/testtmp")
  endforeach()
  # The agent's platform layer (tests/windows/test_win_os.c) needs the agent.
  target_link_libraries(test_win_os PRIVATE iof_dynamo)
  # The engine table against the Windows registry (windows, sync, null).
  target_link_libraries(test_engine_facts PRIVATE iof_dynamo)
  # The marker record both systems' device guards share (dynamo/devguard_mark.c).
  target_link_libraries(test_devguard_mark PRIVATE iof_dynamo)
  # The workdir's owner and DACL (dynamo/os/windows/acl.c).
  target_link_libraries(test_win_acl PRIVATE iof_dynamo)
  # Each test file's owner, DACL, links and kind (dynamo/os/windows/acl.c).
  target_link_libraries(test_win_filecheck PRIVATE iof_dynamo)
  # The service's log in the event log (dynamo/os/windows/eventlog.c).
  target_link_libraries(test_win_eventlog PRIVATE iof_dynamo)
  # The Linux iofleet drives dynamo.exe under Wine (skipped, 77, without a Linux build).
  add_test(NAME windows.agent_e2e COMMAND bash ${PROJECT_SOURCE_DIR}/tests/windows/agent_e2e.sh
                                          $<TARGET_FILE:dynamo>)
  set_tests_properties(windows.agent_e2e PROPERTIES LABELS "integration;windows" TIMEOUT 600
                       SKIP_RETURN_CODE 77 ENVIRONMENT "IOF_TEST_TMPDIR=${CMAKE_BINARY_DIR}/testtmp")
  # Stopping dynamo.exe mid-test: Ctrl-C, Ctrl-Break and the console's close (sent by
  # win_ctrl_event.exe, tests/windows/ctrl_event.c), and the service's stop.
  add_executable(win_ctrl_event ${PROJECT_SOURCE_DIR}/tests/windows/ctrl_event.c)
  target_link_options(win_ctrl_event PRIVATE -municode)
  add_test(NAME windows.agent_stop COMMAND bash ${PROJECT_SOURCE_DIR}/tests/windows/agent_stop.sh
                                           $<TARGET_FILE:dynamo> $<TARGET_FILE:win_ctrl_event>)
  set_tests_properties(windows.agent_stop PROPERTIES LABELS "integration;windows" TIMEOUT 600
                       SKIP_RETURN_CODE 77 ENVIRONMENT "IOF_TEST_TMPDIR=${CMAKE_BINARY_DIR}/testtmp")
  # dynamo.exe as a Windows service under Wine's service manager.
  add_test(NAME windows.service COMMAND bash ${PROJECT_SOURCE_DIR}/tests/windows/service.sh
                                        $<TARGET_FILE:dynamo>)
  set_tests_properties(windows.service PROPERTIES LABELS "integration;windows" TIMEOUT 300
                       SKIP_RETURN_CODE 77 ENVIRONMENT "IOF_TEST_TMPDIR=${CMAKE_BINARY_DIR}/testtmp")
  # scripts/windows package: the zip with dynamo.exe, one static program.
  add_test(NAME windows.package_zip COMMAND bash ${PROJECT_SOURCE_DIR}/tests/windows/package_zip.sh
                                            $<TARGET_FILE:dynamo>)
  set_tests_properties(windows.package_zip PROPERTIES LABELS "integration;windows" TIMEOUT 300
                       ENVIRONMENT "IOF_TEST_TMPDIR=${CMAKE_BINARY_DIR}/testtmp")
  target_compile_definitions(test_import_icf PRIVATE IOF_SRC_DIR="${PROJECT_SOURCE_DIR}")
  target_link_options(test_buf PRIVATE -Wl,--wrap=realloc)
endif()
