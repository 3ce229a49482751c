# MemprofManPages.cmake: writes the man pages memprof(1) and memprof-COMMAND(1) with help2man
# from the built program's own --help, so that they cannot say anything else (run at build
# time by cmake/MemprofInstall.cmake):
#   cmake -DMEMPROF=path/to/memprof -DHELP2MAN=help2man -DOUT=dir -DVERSION=x.y.z -P this
# The commands are those `memprof --help` lists, each page named by the summary printed there;
# pages of commands that no longer exist are removed.
cmake_minimum_required(VERSION 3.25)
foreach(v MEMPROF HELP2MAN OUT VERSION)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "MemprofManPages.cmake: -D${v}=... is required")
  endif()
endforeach()

execute_process(COMMAND ${MEMPROF} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${MEMPROF} --help exited ${rc}")
endif()
# "Commands:" then one "  NAME   summary" line per command, up to a blank line
string(REGEX MATCH "\nCommands:\n(  [^\n]+\n)+" table "${help}")
string(REGEX MATCHALL "\n  [a-z][a-z0-9_-]*  +[^\n]+" rows "${table}")
if(NOT rows)
  message(FATAL_ERROR "${MEMPROF} --help lists no commands")
endif()
set(names)
set(see_also)
foreach(row IN LISTS rows)
  string(REGEX MATCH "^\n  ([a-z][a-z0-9_-]*)  +(.+)$" _ "${row}")
  list(APPEND names ${CMAKE_MATCH_1})
  set(summary_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
  list(APPEND see_also "\\%\\fBmemprof\\-${CMAKE_MATCH_1}\\fR(1)")
endforeach()
string(REGEX MATCH "^memprof: ([^\n]+)" _ "${help}")
set(summary_top "${CMAKE_MATCH_1}")

file(MAKE_DIRECTORY ${OUT})
list(JOIN see_also ",\n" see_also)
file(WRITE ${OUT}/see-also-top.h2m "[SEE ALSO]\n${see_also}\n")
file(WRITE ${OUT}/see-also-command.h2m "[SEE ALSO]\n\\fBmemprof\\fR(1)\n")

# help2man's EXAMPLES paragraph joins the example lines into one: kept one per line here.
function(mp_man page name help_option summary include)
  execute_process(COMMAND ${HELP2MAN} --no-info "--version-string=${name} ${VERSION}"
                          "--help-option=${help_option}" "--name=${summary}" --section=1
                          --include=${include}
                          --output=${OUT}/${page}.tmp ${MEMPROF}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "help2man for ${page}: ${err}")
  endif()
  file(READ ${OUT}/${page}.tmp man)
  # the examples as --help prints them: one command per line, continuation lines indented
  string(REGEX MATCH "\n\\.SH EXAMPLES\n(\\.[IH]P\n|[^.\n][^\n]*\n)+" block "${man}")
  if(block)
    string(REGEX REPLACE "^\n\\.SH EXAMPLES" "" body "${block}")
    string(REGEX REPLACE "\n\\.[IH]P" "" body "${body}")
    string(REGEX REPLACE "\n([^\n])" "\n    \\1" body "${body}")
    string(REPLACE "\n    memprof " "\nmemprof " body "${body}")
    string(REPLACE "${block}" "\n.SH EXAMPLES\n.nf${body}.fi\n" man "${man}")
  endif()
  file(WRITE ${OUT}/${page} "${man}")
  file(REMOVE ${OUT}/${page}.tmp)
endfunction()

mp_man(memprof.1 memprof --help "${summary_top}" ${OUT}/see-also-top.h2m)
set(pages memprof.1)
foreach(name IN LISTS names)
  mp_man(memprof-${name}.1 memprof-${name} "${name} --help" "${summary_${name}}"
         ${OUT}/see-also-command.h2m)
  list(APPEND pages memprof-${name}.1)
endforeach()

file(GLOB old RELATIVE ${OUT} ${OUT}/*.1)
foreach(page IN LISTS old)
  if(NOT page IN_LIST pages)
    file(REMOVE ${OUT}/${page})
  endif()
endforeach()
