# check_no_symbols.cmake - fail when a binary defines or references any
# profiler symbol: a C API name (sp_...) or anything in namespace
# scope_profiler. Used on the SCOPE_PROFILER_DISABLE_MACROS build.
#
#   cmake -DNM=<nm> -DBINARY=<file> -P check_no_symbols.cmake
# Exit 77 (skip) when nm is unavailable.

if(NOT NM OR NOT EXISTS "${NM}")
  message("SKIP: nm not found")
  cmake_language(EXIT 77)
endif()
execute_process(COMMAND "${NM}" -C "${BINARY}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE symbols ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm ${BINARY} failed (${rc}): ${err}")
endif()
string(REPLACE "\n" ";" lines "${symbols}")
set(bad "")
foreach(line IN LISTS lines)
  # nm lines are "<address> <type> <name>" or "<spaces> U <name>".
  if(line MATCHES "^[0-9a-fA-F ]* [A-Za-z] (.*)$")
    set(name "${CMAKE_MATCH_1}")
    if(name MATCHES "^_?sp_" OR name MATCHES "scope_profiler::")
      list(APPEND bad "${line}")
    endif()
  endif()
endforeach()
if(bad)
  list(JOIN bad "\n  " bad)
  message(FATAL_ERROR "profiler symbols in ${BINARY}:\n  ${bad}")
endif()
list(LENGTH lines count)
message(STATUS "ok: no sp_ or scope_profiler:: symbol among ${count} nm lines of ${BINARY}")
