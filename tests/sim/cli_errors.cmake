# tori-sim rejects bad input with exactly one line on stderr, "tori-sim: ...
# (expected ...)" or a dims/inject explanation, and exit status 2; a good
# invocation exits 0.  Run as: cmake -DSIM=<tori-sim> -P cli_errors.cmake
# In a case, "|" separates arguments and "%" stands for the ";" of a script.
set(cases
  "--radix|4"
  "--dims|0x4"
  "--dims|4x4x|--radix|4"
  "--dims|4x4x4|--radix|3"
  "--dims|4x4x4|--radix|32"
  "--dims|4x4x4|--tree|heap"
  "--dims|4x4x4|--policy|maybe"
  "--dims|4x4x4|--hop-ns|-5"
  "--dims|4x4x4|--inject|explode 3 at 1ms"
  "--dims|4x4x4|--inject|kill 64 at 1ms"
  "--dims|4x4x4|--inject|kill 3 at soon"
  "--dims|4x4x4|--inject|link 0 5 off at 1ms"
  "--dims|4x4x4|--inject|partition q<2 at 1ms"
  "--dims|4x4x4|--inject|block 3 3 at 1ms for 1ms"
  "--dims|4x4x4|--inject|block 3 4 at 1ms"
  "--dims|4x4x4|--inject|hang 3 at 1ms"
  "--dims|4x4x4|--recovery|proc=restart"
  "--dims|4x4x4|--recovery|repeated(0 in 60s)=migrate"
  "--dims|4x4x4|--recovery"
  "--dims|4x4x4|--inject|appkill 64 at 1ms"
  "--dims|4x4x4|--inject|leave 64 at 1ms"
  "--dims|4x4x4|--inject|kill x>=4 at 1ms"
  "--dims|4x4x4|--inject|cut x=1 at 1ms"
  "--dims|4x4x4|--inject|ping 3 at 1ms"
  "--dims|4x4x4|--seed-nodes|0,64"
  "--dims|4x4x4|--seed-nodes|0,1,2,3,4"
  "--dims|4x4x4|--members|65"
  "--dims|4x4x4|--chaos|--rate|fast"
  "--dims|4x4x4|--frobnicate"
  "--dims|4x4x4|--routing|dsdv"
  "--dims|4x4x4|--routing"
  "--dims|4x4x4|--routing|table|--reach|soon"
  "--dims|4x4x4|--routing|table|--reach|0"
  "--dims|4x4x4|--routing|table|--reach|2h"
  "--dims|4x4x4|--routing|table|--reach|1ms,0"
  "--dims|4x4x4|--routing|table|--reach|1ms,many"
  "--dims|4x4x4|--routing|table|--reach|,5"
  "--dims|4x4x4|--routing|table|--reach"
  "--dims|4x4x4|--reach|1ms"
  "--dims|4x4x4|--routes|--chaos|--reach|1ms"
  "--dims|4x4x4|--app|model|--fault-rates|x<2 process=1"
  "--dims|4x4x4|--app|model|--fault-rates|x<2: disk=1"
  "--dims|4x4x4|--app|model|--fault-rates|w<2: process=1"
  "--dims|4x4x4|--app|model|--fault-rates|x<4: process=1"
  "--dims|4x4x4|--fault-rates|x<2: process=1"
  "--dims|4x4x4|--app|model|--checkpoint-every|2000"
  "--dims|4x4x4|--app|model|--comm-mode|shrink"
  "--dims|4x4x4|--policy-study"
  "--app|model|--policy-study|--dims|4x4x4"
  "--dims"
  "--dims|1"
  "--dims|2x2x2|--app|bogus"
  "--dims|2x2x2|--app"
  "--dims|2x2x2|--app|allreduce|--iterations|0"
  "--dims|16x16x8|--app|stencil"
  "--dims|2x2x2|--chaos|--seeds|2|--pcap|/tmp"
  "--dims|2x2x2|--pcap|/nonexistent/tori-sim-pcap"
  "--dims|2x2x2|--pcap"
  "--dims|2x2x2|--chaos|--out|/tmp/tori-sim-cli-out"
  "--dims|2x2x2|--out|/nonexistent/tori-sim-out"
  "--dims|2x2x2|--out"
  "--dims|2x2x2|--timeout-ceiling"
)
foreach(args IN LISTS cases)
  string(REPLACE "%" "\\;" args "${args}")
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
# Bad input whose line must also say what is wrong: "args" then the text.
set(named_cases
  "--dims|2x2|--trace-node|99"
  "--trace-node 99 is not a node of the 2x2 torus (expected 0..3)"
  "--dims|2x2|--inject|kill 1 at iteration 20"
  "'kill 1 at iteration 20': the simulator runs no application to time a fault by"
  "--dims|2x2|--inject|kill 9 at 1ms"
  "'kill 9 at 1ms': node 9 does not exist (expected 0..3)"
  "--dims|2x2|--inject|suspect 0 4 at 1ms"
  "'suspect 0 4 at 1ms': node 4 does not exist (expected 0..3)"
  "--dims|2x2|--inject|join 0 at 1ms"
  "'join 0 at 1ms': node 0 is a running member then (expected a node killed earlier"
  "--dims|2x2|--inject|kill 1 at 1ms%join 1 at 2ms%join 1 at 3ms"
  "'join 1 at 3ms': node 1 is running then, joined earlier"
  "--dims|2x2|--inject|kill 1 at 2ms%kill 1 at 1ms"
  "'kill 1 at 2ms': node 1 is down then, killed earlier (expected a running node)"
  "--dims|2x2|--members|3|--inject|hang 3 at 1ms for 1ms"
  "'hang 3 at 1ms for 1ms': node 3 is a spare that has not joined then"
  "--dims|2x2|--inject|hang 1 at 1ms for 2ms%hang 1 at 2ms for 1ms"
  "'hang 1 at 2ms for 1ms': node 1 is still hung then"
  "--dims|2x2|--heartbeat-us|1|--inject|kill 1 at 1ms"
  "--heartbeat-us '1' is too short for this torus (expected at least 26us: the 4 silent heartbeats"
  "--dims|4x4x4|--heartbeat-ns|15us|--chaos"
  "--heartbeat-ns '15us' is too short for this torus (expected at least"
  "--dims|2x2|--link-detect-ns|0|--inject|kill 1 at 1ms"
  "--link-detect-ns '0' leaves 'kill 1 at 1ms' unnoticed: heartbeats are off"
  "--dims|2x2|--link-detect-ns|0.5s|--inject|kill 1 at 1ms"
  "--link-detect-ns '0.5s' leaves 'kill 1 at 1ms' unnoticed"
  "--dims|2x2|--heartbeat-us|0|--link-detect-ns|0|--inject|hang 2 at 1ms for 1ms%kill 1 at 1ms"
  "--link-detect-ns '0' leaves 'kill 1 at 1ms' unnoticed"
  "--dims|2x2|--inject|kill 1 at 5"
  "'kill 1 at 5': '5' is not a time (expected a time like 250us, 1.5ms, 2s or 2m, 0, iteration N or recovery)"
  "--dims|2x2|--app|stencil|--app-args|9"
  "--app-args '9' is invalid for the stencil (expected a block edge of 1..8"
  "--dims|2x2|--app|allreduce|--app-args|1,x"
  "--app-args '1,x' is invalid (expected comma-separated signed 64-bit integers"
  "--dims|2x2|--app|allreduce|--app-args|1,2,3,4,5"
  "--app-args '1,2,3,4,5' is invalid (expected at most 4 integers)"
  "--dims|2x2|--app-args|4"
  "--app-args without --app (expected --app allreduce|stencil)"
  "--dims|2x2|--app|allreduce|--iterations|10|--inject|kill 1 at iteration 11"
  "'kill 1 at iteration 11': the job has 10 iterations (expected iteration 1..10)"
  "--dims|2x2|--inject|kill 1 at recovery"
  "'kill 1 at recovery': the simulator runs no application to time a fault by"
  "--dims|2x2|--app|allreduce|--inject|kill 1 at recovery + 1ms"
  "'kill 1 at recovery + 1ms': nothing recovers under --comm-mode abort (expected --comm-mode shrink, blank or rebuild)"
  "--dims|2x2|--app|allreduce|--comm-mode|shrink|--inject|kill 1 at recovery 1ms"
  "'kill 1 at recovery 1ms': '1ms' after 'at recovery' (expected '+ D', 'for D' or the end"
  "--dims|2x2|--hop-ns|4.6xs"
  "--hop-ns '4.6xs' is invalid (expected nanoseconds, or a time like 250us, 1.5ms, 2s or 2m"
  "--dims|2x2|--timeout-ceiling|0"
  "--timeout-ceiling '0' is invalid (expected a whole number in 1..64: the detector's timeouts"
  "--dims|2x2|--timeout-ceiling|65"
  "--timeout-ceiling '65' is invalid (expected a whole number in 1..64"
)
list(LENGTH named_cases named_length)
math(EXPR last "${named_length} - 1")
foreach(i RANGE 0 ${last} 2)
  math(EXPR j "${i} + 1")
  list(GET named_cases ${i} args)
  list(GET named_cases ${j} expected)
  string(REPLACE "%" "\\;" args "${args}")
  string(REPLACE "|" ";" argv "${args}")
  execute_process(COMMAND ${SIM} ${argv} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(FIND "${err}" "${expected}" at)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "^tori-sim: [^\n]+\n$" OR at EQUAL -1 OR
     NOT out STREQUAL "")
    message(FATAL_ERROR "tori-sim ${args}: exit ${rc}, expected 2 and one line with "
                        "[${expected}]: stderr [${err}] stdout [${out}]")
  endif()
endforeach()

# One time syntax for options and scripts: decimals and units everywhere.
execute_process(COMMAND ${SIM} --dims 2x2 --hop-ns 4.6us --settle-ms 0.5s --heartbeat-us 0.05ms
                        --inject "kill 3 at 1.5ms" --quiet
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "hop_ns=4600 " OR NOT out MATCHES "heartbeat_ns=50000 " OR
   NOT out MATCHES " ok\n")
  message(FATAL_ERROR "tori-sim with decimal times: exit ${rc}, output [${out}] [${err}]")
endif()
# --timeout-ceiling (issue 20): the detector's bound reaches the nodes'
# configuration (shown in the header line; 4 by default) and the replay line.
foreach(ceiling 4 1 64)
  set(args --dims 2x2 --heartbeat-us 50 --inject "kill 3 at 1ms" --quiet)
  if(NOT ceiling EQUAL 4)
    list(APPEND args --timeout-ceiling ${ceiling})
  endif()
  execute_process(COMMAND ${SIM} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES " timeout_ceiling=${ceiling} " OR NOT out MATCHES " ok\n")
    message(FATAL_ERROR "tori-sim ${args}: exit ${rc}, expected timeout_ceiling=${ceiling} "
                        "and ok: [${out}] [${err}]")
  endif()
endforeach()
# A run ends a settle window after the last fault ends: a hang longer than
# the window is waited for, not reported as still hung.
execute_process(COMMAND ${SIM} --dims 4x4 --inject "hang 3 at 1ms for 100ms" --quiet
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES " ok\n")
  message(FATAL_ERROR "tori-sim with a long hang: exit ${rc}, output [${out}] [${err}]")
endif()
list(LENGTH cases n)
math(EXPR named "${named_length} / 2")
message(STATUS "sim.cli: ${n} + ${named} bad inputs refused with one line and exit 2; good input ok")
