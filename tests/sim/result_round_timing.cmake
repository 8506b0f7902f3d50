# Issue 14's cut strict allreduce at 64 ranks (4x4x4): kill 3 at iteration 2
# cuts allreduce 6 after its result came down to node 2 (3's parent in its
# tree), whose send to 3 then failed.  Every survivor must notice (its cut
# allreduce 7 returns PROC_FAILED from the result round) within one
# allreduce's time (0.118 ms at 64 ranks, tori-bench-recovery) of the
# view's stable line: a single traversal.  Node 2 once waited for allreduce
# 6's result round to tell it the result it held, and only then joined
# allreduce 7's: two traversals in a row, 0.160 ms after the stable line
# (comm/DESIGN.md, "Strict collectives"); 0.100-0.102 ms since.
# Run as: cmake -DSIM=<tori-sim> -P result_round_timing.cmake
include(${CMAKE_CURRENT_LIST_DIR}/sim_run.cmake)

set(bound 118000)
foreach(mode shrink blank rebuild)
  cut_allreduce(${mode} 4x4x4)
  field(${mode} noticed_ns noticed)
  capture(${mode} "event=failure-detected who=3 .*\nt_ns=([0-9]+) node=[0-9]+ event=stable "
          "stable line after the detection" stable)
  math(EXPR took "${noticed} - ${stable}")
  message(STATUS "${mode}: the last survivor noticed ${took} ns after the stable line")
  if(took GREATER bound)
    message(FATAL_ERROR "${mode}: the last survivor noticed the failure ${took} ns after the "
                        "view's stable line, over one allreduce (${bound} ns)")
  endif()
endforeach()
