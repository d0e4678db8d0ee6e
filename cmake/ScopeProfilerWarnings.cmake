# scope_profiler_warnings(<target>): the project's warning set, applied per
# target (never through global flags), as errors when SCOPE_PROFILER_WERROR.
function(scope_profiler_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:C,CXX>:-Wall -Wextra -Wshadow -Wformat=2>
    $<$<COMPILE_LANGUAGE:Fortran>:-Wall -Wextra>)
  if(SCOPE_PROFILER_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
