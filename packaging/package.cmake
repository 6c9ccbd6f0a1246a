# SPDX-License-Identifier: Apache-2.0
# packaging/package.cmake - what a system installation adds to the programs, and
# the CPack packages (.deb, and .rpm where rpmbuild exists). Included from the
# top-level CMakeLists.txt after GNUInstallDirs; scripts/package builds the
# packages (Release, prefix /usr, Debian's build flags).

# The service: dynamo.service (paths from the configured prefix) and its
# settings file, which Debian keeps in /etc/default (a conffile in the .deb).
set(IOF_BINDIR ${CMAKE_INSTALL_FULL_BINDIR})
set(IOF_SYSCONFDIR ${CMAKE_INSTALL_FULL_SYSCONFDIR})
configure_file(${CMAKE_CURRENT_LIST_DIR}/systemd/dynamo.service.in
               ${CMAKE_BINARY_DIR}/packaging/dynamo.service @ONLY)
# lib/systemd/system under the prefix: /usr/lib/systemd/system for /usr (the
# same directory as /lib/systemd/system on Debian 12's merged /usr), and
# /usr/local/lib/systemd/system, which systemd also reads, for /usr/local.
install(FILES ${CMAKE_BINARY_DIR}/packaging/dynamo.service DESTINATION lib/systemd/system)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/systemd/dynamo.default
        DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/default RENAME dynamo)
# iofleet-serve.service, the long-running manager: installed, not enabled.
configure_file(${CMAKE_CURRENT_LIST_DIR}/systemd/iofleet-serve.service.in
               ${CMAKE_BINARY_DIR}/packaging/iofleet-serve.service @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/packaging/iofleet-serve.service DESTINATION lib/systemd/system)
install(FILES ${CMAKE_CURRENT_LIST_DIR}/systemd/iofleet-serve.default
        DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/default RENAME iofleet-serve)

# Debian's copyright file and (native package) changelog.gz in the doc dir.
set(IOF_CHANGELOG_GZ ${CMAKE_BINARY_DIR}/packaging/changelog.gz)
add_custom_command(OUTPUT ${IOF_CHANGELOG_GZ}
                   COMMAND gzip -9nc ${CMAKE_CURRENT_LIST_DIR}/deb/changelog > ${IOF_CHANGELOG_GZ}
                   DEPENDS ${CMAKE_CURRENT_LIST_DIR}/deb/changelog VERBATIM)
add_custom_target(iof_changelog ALL DEPENDS ${IOF_CHANGELOG_GZ})
install(FILES ${CMAKE_CURRENT_LIST_DIR}/deb/copyright ${IOF_CHANGELOG_GZ}
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

# ---- CPack ----------------------------------------------------------------
set(CPACK_PACKAGE_NAME iofleet)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "iofleet")
set(CPACK_PACKAGE_CONTACT "iofleet developers <dev@iofleet.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "distributed storage load generator, Iometer-style")
set(CPACK_PACKAGE_DESCRIPTION
    "iofleet pushes access specifications (transfer size, read/write and
random/sequential mix, alignment, burst and delay) to dynamo agents on many
nodes, starts every test on every node at the same moment, and merges their
latency histograms into honest cluster figures: percentiles from merged
histograms, exact sums, live lines, CSV, Iometer's results.csv layout, JSON.
.
This package holds the manager (iofleet), the agent (dynamo) with a hardened
dynamo.service, the manager as iofleet-serve.service (not enabled), man pages,
bash completion and example plans.")
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_STRIP_FILES ON)
set(CPACK_GENERATOR DEB)
find_program(IOF_RPMBUILD rpmbuild)
if(IOF_RPMBUILD)
  list(APPEND CPACK_GENERATOR RPM)
endif()

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# deb-systemd-helper and deb-systemd-invoke, called by the maintainer scripts.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "init-system-helpers (>= 1.52)")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "bash-completion")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${CMAKE_CURRENT_LIST_DIR}/deb/conffiles ${CMAKE_CURRENT_LIST_DIR}/deb/postinst
    ${CMAKE_CURRENT_LIST_DIR}/deb/prerm ${CMAKE_CURRENT_LIST_DIR}/deb/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_RPM_FILE_NAME RPM-DEFAULT)
set(CPACK_RPM_PACKAGE_LICENSE "Apache-2.0")
set(CPACK_RPM_PACKAGE_GROUP "Applications/System")
set(CPACK_RPM_PACKAGE_AUTOREQ ON)
set(CPACK_RPM_USER_FILELIST "%config(noreplace) ${CMAKE_INSTALL_FULL_SYSCONFDIR}/default/dynamo"
                            "%config(noreplace) ${CMAKE_INSTALL_FULL_SYSCONFDIR}/default/iofleet-serve")
set(CPACK_RPM_EXCLUDE_FROM_AUTO_FILELIST_ADDITION
    ${CMAKE_INSTALL_PREFIX}/lib/systemd ${CMAKE_INSTALL_PREFIX}/lib/systemd/system
    ${CMAKE_INSTALL_FULL_SYSCONFDIR}/default ${CMAKE_INSTALL_DATADIR}/bash-completion
    ${CMAKE_INSTALL_PREFIX}/share/bash-completion/completions)
include(CPack)
