# The version from git, before project() (look-alike of tt-metal's cmake/version.cmake, read at
# a5d0782c90 and 0731daca24). Git's errors are ignored there too: without usable git metadata
# (a worktree whose .git points at a directory that is not mounted, "dubious ownership") the
# describe and the hash come back empty, the tag cannot be parsed, a warning is printed and the
# version is left empty. The build goes on; only the version is lost.
function(ParseGitDescribe)
  set(version "")
  set(VERSION_HASH "")
  find_package(Git QUIET)
  if(Git_FOUND)
    execute_process(
      COMMAND ${GIT_EXECUTABLE} describe --abbrev=10 --first-parent --dirty=-dirty
      WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
      OUTPUT_VARIABLE version OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    execute_process(
      COMMAND ${GIT_EXECUTABLE} rev-parse --short=10 HEAD
      WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
      OUTPUT_VARIABLE VERSION_HASH OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  endif()
  if(NOT version)
    # no tag reachable (or no git at all): what a shallow clone gets
    set(version "0.0-alpha0-1-g${VERSION_HASH}-dirty")
  endif()
  string(REGEX REPLACE "-dirty$" "" version "${version}")
  if("${version}" MATCHES "^(.*)-([0-9]+)-g([0-9a-f]+)$")
    set(tagname "${CMAKE_MATCH_1}")
    set(count "${CMAKE_MATCH_2}")
  else()
    set(tagname "${version}")
    set(count "")
  endif()
  if(NOT "${tagname}" MATCHES "^[^0-9]*([0-9]+(\\.[0-9]+(\\.[0-9]+)?)?)(-[a-zA-Z]+[0-9]+)?$")
    message(WARNING "Cannot parse tag ${tagname}")
    return()
  endif()
  set(VERSION_NUMERIC "${CMAKE_MATCH_1}" PARENT_SCOPE)
  set(VERSION_HASH "${VERSION_HASH}" PARENT_SCOPE)
  message(STATUS "Version: ${CMAKE_MATCH_1}+${count}.${VERSION_HASH}")
endfunction()
