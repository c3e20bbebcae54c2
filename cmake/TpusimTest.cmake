# tpusim_add_test(NAME SOURCES src... [LIBS lib...] [DEFINITIONS def...] [COST seconds])
#
# Builds a GoogleTest executable <build>/bin/NAME linked with gtest_main and
# gmock, and registers each TEST with CTest through gtest_discover_tests, so
# every test runs in its own process (SystemC cannot restart its kernel).
# COST: about how long its slowest test takes. A fresh build directory (CI's)
# has no timings from an earlier run, and `ctest -j` starts the costliest
# tests first only when told: left to the end, a minute-long test runs alone.
include_guard(GLOBAL)
include(GoogleTest)

function(tpusim_add_test name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "COST" "SOURCES;LIBS;DEFINITIONS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tpusim_add_test(${name}): unexpected arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_SOURCES)
    message(FATAL_ERROR "tpusim_add_test(${name}): SOURCES is required")
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gmock GTest::gtest_main)
  # The test sources themselves unoptimised, in every build: GoogleTest's
  # macros make optimised compiles of them slow (at -O2 they were 41% of the
  # Release build's compile time, and -O0 takes a fifth off them; at -O1 under
  # the sanitizers, half the build), while the work a test does runs in the
  # libraries, which keep the build's optimisation.
  target_compile_options(${name} PRIVATE -O0)
  if(ARG_DEFINITIONS)
    target_compile_definitions(${name} PRIVATE ${ARG_DEFINITIONS})
  endif()
  if(ARG_COST)
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES COST ${ARG_COST})
  else()
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60)
  endif()
endfunction()
