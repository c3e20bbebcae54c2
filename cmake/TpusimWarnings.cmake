# Compiler warnings for every tpusim target. The code base builds with zero
# warnings; CI configures with -DTPUSIM_WERROR=ON so a new one fails the build.
include_guard(GLOBAL)

macro(tpusim_enable_warnings)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    add_compile_options(-Wall -Wextra)
    if(TPUSIM_WERROR)
      add_compile_options(-Werror)
    endif()
  else()
    message(WARNING "tpusim: unknown compiler ${CMAKE_CXX_COMPILER_ID}; no warning flags set")
  endif()
endmacro()
