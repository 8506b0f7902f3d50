# tori-sim rejects bad input with exactly one line on stderr, "tori-sim: ...
# (expected ...)" or a dims/inject explanation, and exit status 2; a good
# invocation exits 0.  Run as: cmake -DSIM=<tori-sim> -P cli_errors.cmake
set(cases
  "--radix;4"
  "--dims;0x4"
  "--dims;4x4x;--radix;4"
  "--dims;4x4x4;--radix;3"
  "--dims;4x4x4;--radix;32"
  "--dims;4x4x4;--tree;heap"
  "--dims;4x4x4;--policy;maybe"
  "--dims;4x4x4;--hop-ns;-5"
  "--dims;4x4x4;--inject;explode 3 at 1ms"
  "--dims;4x4x4;--inject;kill 64 at 1ms"
  "--dims;4x4x4;--inject;kill 3 at soon"
  "--dims;4x4x4;--inject;link 0 5 off at 1ms"
  "--dims;4x4x4;--inject;partition q<2 at 1ms"
  "--dims;4x4x4;--inject;block 3 3 at 1ms for 1ms"
  "--dims;4x4x4;--inject;block 3 4 at 1ms"
  "--dims;4x4x4;--inject;hang 3 at 1ms"
  "--dims;4x4x4;--members;65"
  "--dims;4x4x4;--chaos;--rate;fast"
  "--dims;4x4x4;--frobnicate"
  "--dims"
  "--dims;1"
)
foreach(args IN LISTS cases)
  string(REPLACE "|" ";" argv "${args}")
  execute_process(COMMAND ${SIM} ${argv} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "tori-sim ${args}: exit ${rc}, expected 2 (stderr: ${err})")
  endif()
  if(NOT err MATCHES "^tori-sim: [^\n]+\n$")
    message(FATAL_ERROR "tori-sim ${args}: stderr is not one 'tori-sim: ...' line: [${err}]")
  endif()
  if(NOT out STREQUAL "")
    message(FATAL_ERROR "tori-sim ${args}: wrote to stdout on bad input: [${out}]")
  endif()
endforeach()
execute_process(COMMAND ${SIM} --dims 2x2x2 --inject "kill 3 at 1ms" RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "event=stable" OR NOT out MATCHES " ok\n")
  message(FATAL_ERROR "tori-sim on good input: exit ${rc}, output [${out}] [${err}]")
endif()
list(LENGTH cases n)
message(STATUS "sim.cli: ${n} bad inputs refused with one line and exit 2; good input ok")
