# The simulator's scripted-run helpers for the cmake -P tests of tests/sim
# (include()d; SIM is the tori-sim binary).

# run(NAME STATUS ARGS): tori-sim ARGS ("|" between arguments, "%" for a
# script's ";") must exit STATUS; its output in out_NAME.
function(run name status args)
  string(REPLACE "%" "\\;" args "${args}")
  string(REPLACE "|" ";" argv "${args}")
  execute_process(COMMAND ${SIM} ${argv} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL status)
    message(FATAL_ERROR "tori-sim ${args}: exit ${rc}, expected ${status}\n${out}\n${err}")
  endif()
  set(out_${name} "${out}" PARENT_SCOPE)
endfunction()

# mode_args(MODE SPARES VAR): "--comm-mode|MODE" in VAR, with "|--spares|SPARES"
# under rebuild (its spares wait to adopt).
function(mode_args mode spares var)
  set(args "--comm-mode|${mode}")
  if(mode STREQUAL "rebuild")
    set(args "${args}|--spares|${spares}")
  endif()
  set(${var} "${args}" PARENT_SCOPE)
endfunction()

# cut_allreduce(MODE DIMS): issue 14's recovery timing job, allreduce with
# kill 3 at iteration 2 under MODE (one spare under rebuild), which must
# end with every survivor's answer right; its output in out_MODE.
macro(cut_allreduce mode dims)
  mode_args(${mode} 1 modeargs)
  run(${mode} 0 "--dims|${dims}|--app|allreduce|--iterations|10|${modeargs}|--inject|kill 3 at iteration 2")
  expect(${mode} "app name=allreduce [^\n]* ok\n")
endmacro()

# capture(NAME REGEX WHAT VAR): the first group of REGEX in NAME's output,
# which must match (else "no WHAT").
function(capture name regex what var)
  string(REGEX MATCH "${regex}" match "${out_${name}}")
  if(match STREQUAL "")
    message(FATAL_ERROR "${name}: no ${what} in:\n${out_${name}}")
  endif()
  set(${var} "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()

# field(NAME KEY VAR): KEY=<digits> of NAME's recovery line.
function(field name key var)
  capture(${name} "\nrecovery [^\n]* ${key}=([0-9]+)" "${key} on the recovery line" value)
  set(${var} "${value}" PARENT_SCOPE)
endfunction()

# digest(NAME VAR): the digest of NAME's app line (with digests=1).
function(digest name var)
  capture(${name} "digests=1 digest=([0-9a-f]+)" "single digest" value)
  set(${var} "${value}" PARENT_SCOPE)
endfunction()

# expect(NAME REGEX...): each must match NAME's output.
function(expect name)
  foreach(regex IN LISTS ARGN)
    if(NOT out_${name} MATCHES "${regex}")
      message(FATAL_ERROR "${name}: no match for [${regex}] in:\n${out_${name}}")
    endif()
  endforeach()
endfunction()
