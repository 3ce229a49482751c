# MemprofCheck.cmake: register memory checks of TensorFlow Lite models as CTest tests, so that
# a project's `ctest` fails when a model starts to use more memory (memprof check,
# docs/check.md).
#
#   list(APPEND CMAKE_MODULE_PATH /path/to/memprof/cmake)
#   include(MemprofCheck)
#   enable_testing()
#   memprof_add_memory_check(NAME <test name> MODEL <model.tflite | zoo:NAME | trace.json>
#                            [BASELINE <file>]        # compare with a committed baseline
#                            [TOLERANCE <5% | 64KiB>] # allowance over the baseline
#                            [MAX_TENSORS <size>]     # limit for tensors (tensor memory)
#                            [MAX_HEAP <size>]        # limit for heap (memprof run's Heap peak)
#                            [MAX_RSS <size>]         # limit for rss (peak resident set)
#                            [MAX <figure=size> ...]  # limits for any figure (backprop=1MiB)
#                            [MAX_PEAK <size>]        # deprecated: as MAX_TENSORS
#                            [JUNIT <file>]           # JUnit XML report
#                            [ARGS <args> ...]        # more arguments (--shape, --memory...)
#                            [LABELS <label> ...])    # CTest labels (default: memprof)
#   memprof_add_check(...)                            # the same, under a shorter name
#
# Relative MODEL and BASELINE paths are taken from the calling CMakeLists.txt's folder, a
# relative JUNIT path from its build folder. With a BASELINE, a target <test name>_baseline
# (not built by default) writes the baseline afresh: `cmake --build . --target
# <test name>_baseline`, then commit the file.
#
# memprof is the MEMPROF_EXECUTABLE cache variable when set, else the `memprof` target when
# the project builds it, else found on the PATH.

function(_memprof_find_executable out)
  if(MEMPROF_EXECUTABLE)
    set(${out} "${MEMPROF_EXECUTABLE}" PARENT_SCOPE)
  elseif(TARGET memprof)
    set(${out} "$<TARGET_FILE:memprof>" PARENT_SCOPE)
  else()
    find_program(MEMPROF_EXECUTABLE memprof DOC "The memprof program (memory checks)")
    if(NOT MEMPROF_EXECUTABLE)
      message(FATAL_ERROR "memprof_add_memory_check: memprof not found; set MEMPROF_EXECUTABLE")
    endif()
    set(${out} "${MEMPROF_EXECUTABLE}" PARENT_SCOPE)
  endif()
endfunction()

function(memprof_add_memory_check)
  cmake_parse_arguments(MC ""
                        "NAME;MODEL;BASELINE;TOLERANCE;MAX_TENSORS;MAX_HEAP;MAX_RSS;MAX_PEAK;JUNIT"
                        "MAX;ARGS;LABELS" ${ARGN})
  if(MC_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "memprof_add_memory_check: unknown arguments ${MC_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT MC_NAME OR NOT MC_MODEL)
    message(FATAL_ERROR "memprof_add_memory_check: NAME and MODEL are required")
  endif()
  if(NOT MC_BASELINE AND NOT MC_MAX_TENSORS AND NOT MC_MAX_HEAP AND NOT MC_MAX_RSS
     AND NOT MC_MAX_PEAK AND NOT MC_MAX)
    message(FATAL_ERROR "memprof_add_memory_check(${MC_NAME}): give BASELINE, MAX_TENSORS, "
                        "MAX_HEAP, MAX_RSS or MAX")
  endif()
  if(MC_MAX_PEAK)
    message(DEPRECATION "memprof_add_memory_check(${MC_NAME}): MAX_PEAK is deprecated: "
                        "MAX_TENSORS limits tensor memory, MAX_HEAP the heap peak")
  endif()
  _memprof_find_executable(memprof)

  set(model "${MC_MODEL}")
  if(NOT model MATCHES "^zoo:" AND NOT IS_ABSOLUTE "${model}")
    set(model "${CMAKE_CURRENT_SOURCE_DIR}/${model}")
  endif()
  set(args check "${model}")
  if(MC_BASELINE)
    set(baseline "${MC_BASELINE}")
    if(NOT IS_ABSOLUTE "${baseline}")
      set(baseline "${CMAKE_CURRENT_SOURCE_DIR}/${baseline}")
    endif()
    list(APPEND args --baseline "${baseline}")
  endif()
  if(DEFINED MC_TOLERANCE)
    list(APPEND args --tolerance "${MC_TOLERANCE}")
  endif()
  foreach(kind IN ITEMS TENSORS HEAP RSS PEAK)
    if(MC_MAX_${kind})
      string(TOLOWER "${kind}" option)
      list(APPEND args --max-${option} "${MC_MAX_${kind}}")
    endif()
  endforeach()
  foreach(limit IN LISTS MC_MAX)
    list(APPEND args --max "${limit}")
  endforeach()
  if(MC_JUNIT)
    set(junit "${MC_JUNIT}")
    if(NOT IS_ABSOLUTE "${junit}")
      set(junit "${CMAKE_CURRENT_BINARY_DIR}/${junit}")
    endif()
    list(APPEND args --junit "${junit}")
  endif()
  list(APPEND args ${MC_ARGS})

  add_test(NAME ${MC_NAME} COMMAND "${memprof}" ${args})
  if(NOT MC_LABELS)
    set(MC_LABELS memprof)
  endif()
  # exit 1: a limit or the baseline exceeded; 2: an error. Both fail the test.
  set_tests_properties(${MC_NAME} PROPERTIES LABELS "${MC_LABELS}")

  if(MC_BASELINE AND NOT TARGET ${MC_NAME}_baseline)
    add_custom_target(${MC_NAME}_baseline
                      COMMAND "${memprof}" check "${model}" ${MC_ARGS}
                              --save-baseline "${baseline}"
                      COMMENT "memprof: writing the baseline ${baseline}"
                      VERBATIM)
  endif()
endfunction()

# memprof_add_check(...): the same function under the shorter name the installed package's
# documentation (and issue 20) uses; arguments as memprof_add_memory_check.
function(memprof_add_check)
  memprof_add_memory_check(${ARGN})
endfunction()
