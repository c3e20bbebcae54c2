# Sanitizer and fuzzer instrumentation, applied to every target in the build.
#
# TPUSIM_SANITIZE: AddressSanitizer + UndefinedBehaviorSanitizer; any report aborts.
# TPUSIM_FUZZ: libFuzzer builds (clang only). All code is instrumented with
#   -fsanitize=fuzzer-no-link plus ASan/UBSan; fuzz targets add -fsanitize=fuzzer
#   through tpusim_add_fuzzer(), which links libFuzzer's main.
include_guard(GLOBAL)

set(TPUSIM_SANITIZER_FLAGS -fsanitize=address,undefined -fno-omit-frame-pointer
                           -fno-sanitize-recover=all)

macro(tpusim_enable_sanitizers)
  if(TPUSIM_FUZZ)
    if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
      message(FATAL_ERROR "TPUSIM_FUZZ needs clang (libFuzzer); configure a fresh build "
                          "directory with CC=clang CXX=clang++")
    endif()
    add_compile_options(-fsanitize=fuzzer-no-link ${TPUSIM_SANITIZER_FLAGS})
    add_link_options(-fsanitize=address,undefined)
  elseif(TPUSIM_SANITIZE)
    add_compile_options(${TPUSIM_SANITIZER_FLAGS})
    # Position-dependent executables: a 140 MB instrumented PIE spends most of
    # its start-up applying relative relocations (0.3 s against 0.12 s), and
    # this build starts thousands of processes (one per test case, and the
    # tpusim runs of the integration tests).
    add_compile_options(-fno-pie)
    add_link_options(-fsanitize=address,undefined -no-pie)
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      # GCC documents that sanitizers cause false -Wmaybe-uninitialized reports
      # (e.g. inside <regex>); the Release build still checks this warning.
      add_compile_options(-Wno-maybe-uninitialized)
    endif()
  endif()
endmacro()

# tpusim_add_fuzzer(NAME SOURCES src... LIBS lib... [DEFINITIONS def...]): a libFuzzer
# executable in <build>/bin.
function(tpusim_add_fuzzer name)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "" "SOURCES;LIBS;DEFINITIONS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tpusim_add_fuzzer(${name}): unexpected arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(${name} PRIVATE ${ARG_LIBS})
  target_compile_definitions(${name} PRIVATE ${ARG_DEFINITIONS})
endfunction()
