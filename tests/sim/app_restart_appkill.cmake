# Issues 14/15: an `appkill` under REBUILD with a spare and
# process=restart.  The survivors hold the rank for the restarted node
# (node/tori.c's await_restarts); a survivor that has nothing to receive
# while it waits must still be woken when the wait ends, or the others'
# rebuild waits for it for ever (it did: "rank 0 of stencil did not finish
# (iteration 61, rebuilding)", adopted=0).  Each run must end with the
# fault-free digest and node 3 taking its own rank back (retaken=1), the
# spare left unused.
# Run as: cmake -DSIM=<tori-sim> -P app_restart_appkill.cmake
include(${CMAKE_CURRENT_LIST_DIR}/sim_run.cmake)

set(job "--dims|2x2x2|--spares|1|--iterations|100|--comm-mode|rebuild|--quiet")
set(fault "--recovery|process=restart|--inject|appkill 3 at iteration 60")
foreach(variant "stencil" "stencil|--checkpoint-every|10" "allreduce")
  string(REGEX REPLACE "[|-]+" "_" name "${variant}")
  run(${name}_clean 0 "--app|${variant}|${job}")
  digest(${name}_clean clean)
  run(${name}_appkill 0 "--app|${variant}|${fault}|${job}")
  expect(${name}_appkill "retaken=1\n"
         "recovery mode=rebuild msg=nop survivors=7 [^\n]*adopted=1 "
         "app name=[a-z]+ ranks=7 finished=7 ok=7 digests=1 [^\n]* ok\n")
  digest(${name}_appkill got)
  if(NOT got STREQUAL clean)
    message(FATAL_ERROR "${name}_appkill: digest ${got}, the fault-free one is ${clean}")
  endif()
endforeach()
# With checkpoints every rank resumes from the one taken at iteration 60.
expect(stencil_checkpoint_every_10_appkill "restores ranks=7 iteration=60 retaken=1\n")
