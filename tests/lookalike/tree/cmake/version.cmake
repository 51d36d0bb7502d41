# The version from git, before project() (look-alike of tt-metal's cmake/version.cmake, read at
# a5d0782c90 and 0731daca24). Git's errors are ignored there too: without usable git metadata
# (a worktree whose .git points at a directory that is not mounted, "dubious ownership") the
# describe and the hash come back empty. Then the placeholders below stand in: `git archive`
# fills them in (.gitattributes marks this file export-subst, as tt-metal's does at 07ddbf30b9),
# so a tree shipped as an archive keeps its version. Anything else gets "0.0-alpha0-1-g<hash>"
# (a shallow clone), whose tag cannot be parsed: a warning is printed and the version is left
# empty. The build goes on; only the version is lost.
function(ParseGitDescribe)
  set(version "")
  set(VERSION_HASH "")
  set(fallbackVersion "$Format:%(describe)$")
  set(fallbackHash "$Format:%h$")
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
  if(NOT VERSION_HASH)
    set(VERSION_HASH "${fallbackHash}")
  endif()
  if(VERSION_HASH MATCHES "Format")
    set(VERSION_HASH "")
  endif()
  if(NOT version)
    set(version "${fallbackVersion}")
    if(version MATCHES "Format")
      # not substituted: no tag reachable, no archive (what a shallow clone gets)
      set(version "0.0-alpha0-1-g${VERSION_HASH}-dirty")
    endif()
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
