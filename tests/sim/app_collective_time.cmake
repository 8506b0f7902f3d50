# Three allreduces (one iteration of the model application) on 64 ranks of a
# 4x4x4 torus finish within twice the tree's critical path in virtual time:
# 94.8 us per allreduce with the default hop (4.6 us) and handling (2 us)
# costs (the radix-4 runs tree's deepest leaf-root-leaf path in torus hops),
# so 569 us for three, the sessions' opening included.  A tree step that
# waits for an ack sent only on the ack-delay timer (200 us) misses it.
# Run as: cmake -DSIM=<tori-sim> -P app_collective_time.cmake
set(argv --dims 4x4x4 --app allreduce --iterations 1 --quiet)
execute_process(COMMAND ${SIM} ${argv} RESULT_VARIABLE rc OUTPUT_VARIABLE out)
if(NOT rc EQUAL 0 OR NOT out MATCHES "app name=allreduce ranks=64 finished=64 ok=64 [^\n]* done_ns=([0-9]+) ")
  message(FATAL_ERROR "tori-sim ${argv}: exit ${rc}:\n${out}")
endif()
set(done_ns ${CMAKE_MATCH_1})
set(bound_ns 568800)
if(done_ns GREATER bound_ns)
  message(FATAL_ERROR "three allreduces took ${done_ns} ns of virtual time, over ${bound_ns} (2 x the tree model)")
endif()
message(STATUS "three allreduces: ${done_ns} ns of virtual time (bound ${bound_ns})")
