# in_tree_consumers.cmake - shared by the add_subdirectory and fetchcontent
# consumers, included after the scope-profiler SOURCE tree was added to the
# including project. It builds the very programs the installed-package
# consumers build (../c, ../cxx, ../fortran), linked through the same
# ScopeProfiler:: names, so the only difference under test is how the
# library got into the project.
#
# Input: SCOPE_PROFILER_EXPECT_TARGETS, the ScopeProfiler:: names (without
# the namespace) that the installed package of the same build provides.

# Every name the installed package has must exist in-tree too, as an ALIAS
# of a real target: a differently named in-tree target would make a project
# that switches between find_package and add_subdirectory/FetchContent fail.
foreach(name IN LISTS SCOPE_PROFILER_EXPECT_TARGETS)
  if(NOT TARGET ScopeProfiler::${name})
    message(FATAL_ERROR "in-tree build has no target ScopeProfiler::${name}, "
      "although the installed package of the same build provides it")
  endif()
  get_target_property(aliased ScopeProfiler::${name} ALIASED_TARGET)
  if(NOT aliased)
    message(FATAL_ERROR "ScopeProfiler::${name} is not an ALIAS target")
  endif()
  message(STATUS "consumer: ScopeProfiler::${name} -> ${aliased}")
endforeach()

set(_consumers "${CMAKE_CURRENT_LIST_DIR}")

# The C program compares its header's version with the one the build
# reports; in-tree that is the library target's VERSION (the package's
# ScopeProfiler_VERSION variable does not reach the parent scope).
get_target_property(_sp_version ScopeProfiler::scopeprofiler VERSION)
if(NOT _sp_version)
  message(FATAL_ERROR "ScopeProfiler::scopeprofiler has no VERSION property")
endif()
add_executable(c_consumer "${_consumers}/c/main.c")
target_link_libraries(c_consumer PRIVATE ScopeProfiler::scopeprofiler)
target_compile_definitions(c_consumer PRIVATE EXPECTED_VERSION="${_sp_version}")
set_target_properties(c_consumer PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
# The source-tree headers must be as clean under a user's strict flags as
# the installed ones.
target_compile_options(c_consumer PRIVATE -Wall -Wextra -Wpedantic -Werror)

if(TARGET ScopeProfiler::scopeprofiler_cxx)
  add_executable(cxx_consumer "${_consumers}/cxx/main.cpp")
  target_link_libraries(cxx_consumer PRIVATE ScopeProfiler::scopeprofiler_cxx)
  set_target_properties(cxx_consumer PROPERTIES
    CXX_STANDARD 11 CXX_STANDARD_REQUIRED ON CXX_EXTENSIONS OFF)
  target_compile_options(cxx_consumer PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Werror)
endif()

if(TARGET ScopeProfiler::scopeprofiler_fortran)
  # The library enabled Fortran in its own directory only; a program of
  # this directory needs the language (and its link rules) here too.
  enable_language(Fortran)
  add_executable(fortran_consumer "${_consumers}/fortran/main.f90")
  target_link_libraries(fortran_consumer PRIVATE ScopeProfiler::scopeprofiler_fortran)
  # Its own module directory, so the program's .mod files never mix with
  # the library's.
  set_target_properties(fortran_consumer PROPERTIES
    Fortran_MODULE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/consumer_mod")
  target_compile_options(fortran_consumer PRIVATE -Wall -Wextra -Werror)
endif()
