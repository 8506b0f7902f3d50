# tori-sim --app with faults, in the one fault language: "at iteration N"
# fires when the named node's model has done N iterations, as tori-emu fires
# it on app-progress; a job a fault ends is aborted as on the nodes (ABORT:
# exit 3, the reason, the faults that never came), not a violation; a
# restarted node runs no model (as node_job_init); what finished is right.
# Run as: cmake -DSIM=<tori-sim> -P app_faults.cmake

include(${CMAKE_CURRENT_LIST_DIR}/sim_run.cmake)

# A hang at iteration 20 shorter than the detector: the job goes on, ok.
run(hang 0 "--dims|2x2x2|--app|allreduce|--iterations|60|--inject|hang 3 at iteration 20 for 100us")
expect(hang "node=3 event=inject what=hang iteration=20\n"
       "app name=allreduce ranks=8 finished=8 ok=8 digests=1 [^\n]* failed=0 ok\n")

# A kill at iteration 20 aborts the job there; the hang due at 40 never comes.
run(kill 3 "--dims|2x2x2|--app|allreduce|--iterations|60|--inject|kill 3 at iteration 20%hang 5 at iteration 40 for 1ms")
expect(kill "node=3 event=inject what=kill iteration=20\n"
       "node=5 event=not-fired what=hang iteration=40\n"
       "app-aborted t_ns=[0-9]+ node 3 was killed after 20 iterations, before its result: the job cannot complete [(]faults timed by iteration not fired: 1, not done: 0[)]\n"
       "app name=allreduce ranks=8 finished=0 ok=0 [^\n]* aborted\n")

# A restarted node rejoins the torus but runs no model: the job stays
# aborted (before: its model started again and the run failed).
run(restart 3 "--dims|2x2x2|--app|stencil|--iterations|60|--inject|kill 3 at iteration 20%restart 3 at 10ms")
expect(restart "node=3 event=inject what=restart\n" "node=3 event=joined "
       "app-aborted [^\n]* node 3 was killed after 20 iterations"
       "app name=stencil ranks=8 [^\n]* aborted\n")
# The same kill timed by time: the run that failed as a violation before.
run(restart_by_time 3 "--dims|2x2x2|--app|allreduce|--iterations|10|--inject|kill 3 at 1ms%restart 3 at 5ms|--quiet")

# A restart whose node is running when it comes is reported, not done.
run(not_done 3 "--dims|2x2x2|--app|stencil|--iterations|60|--inject|kill 3 at iteration 20%restart 3 at 1ms")
expect(not_done "t_ns=1000000 node=3 event=not-done what=restart why=not-killed\n"
       "not done: 1[)]")

# A link cut for 2 ms from iteration 10 (and mended): the job completes
# with the digest of the run without faults.
run(clean 0 "--dims|4x4x4|--app|stencil|--iterations|30|--quiet")
run(link 0 "--dims|4x4x4|--app|stencil|--iterations|30|--routes|--inject|link 9 x+ off at iteration 10 for 2ms|--quiet")
string(REGEX MATCH "digests=1 digest=[0-9a-f]+" clean "${out_clean}")
string(REGEX MATCH "digests=1 digest=[0-9a-f]+" link "${out_link}")
if(clean STREQUAL "" OR NOT clean STREQUAL link)
  message(FATAL_ERROR "a mended link changed the answer: [${clean}] and [${link}]")
endif()

# The same faulty run twice: byte-identical.
run(again 3 "--dims|2x2x2|--app|allreduce|--iterations|60|--inject|kill 3 at iteration 20%hang 5 at iteration 40 for 1ms")
if(NOT out_again STREQUAL out_kill)
  message(FATAL_ERROR "two runs of the same faults differ")
endif()
message(STATUS "sim.app_faults: hang ok, kill aborted, restart runs no model, not-done and "
               "not-fired reported, a mended link keeps the digest")
