# MemprofInstall.cmake: what `cmake --install` and `cpack -G DEB` put where (included by the
# top-level CMakeLists.txt; docs/install.md shows the commands and their output):
#   bin/memprof
#   share/man/man1/memprof.1, memprof-COMMAND.1   (help2man, from --help at build time)
#   share/bash-completion/completions/memprof    (completion/memprof.bash)
#   share/cmake/memprof/memprofConfig.cmake, memprofConfigVersion.cmake, MemprofCheck.cmake
#                                                 (find_package(memprof) in users' projects)
# and the version `memprof --version` prints with the XNNPACK it is built against.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# ---- memprof --version: our version and the XNNPACK build (its Debian package when dpkg
# knows the library found above; the file it runs with is asked at run time, cli/main.c).
set(mp_xnnpack_build "from ${XNNPACK_LIB}")
get_filename_component(mp_xnnpack_real "${XNNPACK_LIB}" REALPATH)
execute_process(COMMAND dpkg-query -S "${mp_xnnpack_real}" OUTPUT_VARIABLE mp_owner
                ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE mp_rc)
if(mp_rc EQUAL 0 AND mp_owner MATCHES "^([^:, ]+)(:[^:]+)?: ")
  set(mp_xnnpack_pkg "${CMAKE_MATCH_1}")
  execute_process(COMMAND dpkg-query -W -f=\${Version} "${mp_xnnpack_pkg}"
                  OUTPUT_VARIABLE mp_xnnpack_version ERROR_QUIET RESULT_VARIABLE mp_rc)
  if(mp_rc EQUAL 0 AND mp_xnnpack_version)
    set(mp_xnnpack_build "${mp_xnnpack_version} (Debian package ${mp_xnnpack_pkg})")
  endif()
endif()
target_compile_definitions(memprof PRIVATE MP_VERSION="${PROJECT_VERSION}"
                           MP_XNNPACK_BUILD="${mp_xnnpack_build}")

# ---- the program and its bash completion -------------------------------------------------
install(TARGETS memprof RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${CMAKE_SOURCE_DIR}/completion/memprof.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME memprof)

# ---- man pages: memprof(1) and memprof-COMMAND(1), written by help2man from the built
# program's --help whenever it is rebuilt, so that they say what --help says.
find_program(HELP2MAN_EXECUTABLE help2man DOC "help2man (Debian package help2man): man pages")
if(HELP2MAN_EXECUTABLE)
  set(mp_man_dir ${CMAKE_BINARY_DIR}/man)
  add_custom_command(OUTPUT ${mp_man_dir}/memprof.1
                     COMMAND ${CMAKE_COMMAND} -DMEMPROF=$<TARGET_FILE:memprof>
                             -DHELP2MAN=${HELP2MAN_EXECUTABLE} -DOUT=${mp_man_dir}
                             -DVERSION=${PROJECT_VERSION}
                             -P ${CMAKE_SOURCE_DIR}/cmake/MemprofManPages.cmake
                     DEPENDS memprof ${CMAKE_SOURCE_DIR}/cmake/MemprofManPages.cmake
                     COMMENT "help2man: man pages from memprof --help"
                     VERBATIM)
  add_custom_target(memprof_man ALL DEPENDS ${mp_man_dir}/memprof.1)
  install(DIRECTORY ${mp_man_dir}/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
          FILES_MATCHING PATTERN "*.1")
else()
  message(WARNING "help2man not found (Debian package help2man; scripts/deps.sh installs it): "
                  "memprof is built and installed without its man pages")
endif()

# ---- find_package(memprof): the imported executable memprof::memprof, MEMPROF_EXECUTABLE
# and the MemprofCheck module (memprof_add_memory_check), relocatable with the prefix.
set(mp_cmake_dir ${CMAKE_INSTALL_DATADIR}/cmake/memprof)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/memprofConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/memprofConfig.cmake
                              INSTALL_DESTINATION ${mp_cmake_dir}
                              PATH_VARS CMAKE_INSTALL_BINDIR)
# A program, not a library: a 32-bit project may use a 64-bit memprof (ARCH_INDEPENDENT).
write_basic_package_version_file(${CMAKE_BINARY_DIR}/memprofConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES ${CMAKE_BINARY_DIR}/memprofConfig.cmake ${CMAKE_BINARY_DIR}/memprofConfigVersion.cmake
        ${CMAKE_SOURCE_DIR}/cmake/MemprofCheck.cmake DESTINATION ${mp_cmake_dir})

# ---- cpack -G DEB (scripts/package.sh): installed under /usr; Depends from dpkg-shlibdeps
# on the binary (libxnnpack0, libpthreadpool0, libjansson4, libncurses6, libtinfo6, libc6
# with their minimum versions), so it needs dpkg-dev.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME memprof)
set(CPACK_PACKAGE_VENDOR memprof)
set(CPACK_PACKAGE_CONTACT "memprof maintainers <memprof@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "memory profiler for neural-network inference (TensorFlow Lite models on XNNPACK)")
set(CPACK_PACKAGE_DESCRIPTION "memprof runs TensorFlow Lite models on its own XNNPACK-based engine and
tells where every byte goes: per kind of memory, per tensor and per operator.
It compares arena planners, gates CI on peak memory against limits and
baselines, and reports as text, JSON, SVG, HTML or a Chrome trace.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bash-completion, cmake")
include(CPack)
