# Issue 15 in the simulator: the launcher's RESTART carried out.  On a
# RESTART decision the simulator kills the node (if it still runs) and
# starts a new life; under REBUILD the survivors' rebuild waits for it, it
# takes its own rank back (retaken=1), and with --checkpoint-every the
# stencil resumes every rank from the newest checkpoint all of them saved
# (restores ... iteration=20 for a kill at iteration 25) and ends with the
# fault-free digest.  The allreduce (no state) resumes at its agreed
# iteration with its rank back.  --checkpoint-every takes only model and
# stencil.
# Run as: cmake -DSIM=<tori-sim> -P app_restart.cmake
include(${CMAKE_CURRENT_LIST_DIR}/sim_run.cmake)

set(job "--dims|2x2x2|--iterations|40|--comm-mode|rebuild|--quiet")
run(stencil_clean 0 "--app|stencil|--checkpoint-every|10|${job}")
expect(stencil_clean "restores ranks=0 iteration=0 retaken=0\n")
digest(stencil_clean clean)

run(stencil_restart 0 "--app|stencil|--checkpoint-every|10|--recovery|physical=restart|--inject|kill 3 at iteration 25|${job}")
expect(stencil_restart "restores ranks=8 iteration=20 retaken=1\n"
       "recovery mode=rebuild msg=nop survivors=8 "
       "app name=stencil ranks=8 finished=8 ok=8 digests=1 [^\n]* ok\n")
digest(stencil_restart got)
if(NOT got STREQUAL clean)
  message(FATAL_ERROR "stencil_restart: digest ${got}, the fault-free one is ${clean}")
endif()

# Without checkpoints the rank still comes back to its node, from iteration 0.
run(stencil_restart_nockpt 0 "--app|stencil|--recovery|physical=restart|--inject|kill 3 at iteration 25|${job}")
expect(stencil_restart_nockpt "restores ranks=0 iteration=0 retaken=1\n"
       "app name=stencil ranks=8 finished=8 ok=8 digests=1 [^\n]* ok\n")
digest(stencil_restart_nockpt got)
if(NOT got STREQUAL clean)
  message(FATAL_ERROR "stencil_restart_nockpt: digest ${got}, the fault-free one is ${clean}")
endif()

run(allreduce_clean 0 "--app|allreduce|${job}")
digest(allreduce_clean clean)
foreach(fault "physical|kill" "process|appkill")
  string(REPLACE "|" ";" parts "${fault}")
  list(GET parts 0 model)
  list(GET parts 1 kind)
  run(allreduce_${kind} 0 "--app|allreduce|--recovery|${model}=restart|--inject|${kind} 3 at iteration 25|${job}")
  expect(allreduce_${kind} "restores ranks=0 iteration=0 retaken=1\n"
         "app name=allreduce ranks=8 finished=8 ok=8 digests=1 [^\n]* ok\n")
  digest(allreduce_${kind} got)
  if(NOT got STREQUAL clean)
    message(FATAL_ERROR "allreduce_${kind}: digest ${got}, the fault-free one is ${clean}")
  endif()
endforeach()

run(allreduce_checkpoints 2 "--app|allreduce|--checkpoint-every|10|${job}")
