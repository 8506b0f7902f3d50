# tori-sim --comm-mode blank|shrink|rebuild (issue 14): the model
# applications recover as the shipped ones do, and issue 14's invariants
# (sim/sim_ft.h) hold after every step: for each mode, allreduce and
# stencil, a crash, a root crash, two crashes in one view change, a crash
# inside the recovery from another ("kill 5 at recovery": node 5 dies as
# its model starts rebuilding), a crash while a rebuild runs
# (--recovery-kills), under NOP and CONT.  Every
# survivor ends ok with one digest; under REBUILD with a spare per failed
# rank the digest is the fault-free one (the same job without faults).
# Run as: cmake -DSIM=<tori-sim> -P app_recovery.cmake
include(${CMAKE_CURRENT_LIST_DIR}/sim_run.cmake)

set(faults
  "crash|kill 3 at iteration 10"
  "root|kill 0 at iteration 10"
  "two|kill 3 at 2ms%kill 5 at 2ms"
  "recovery|kill 3 at iteration 10%kill 5 at recovery")
foreach(app allreduce stencil)
  foreach(mode shrink blank rebuild)
    mode_args(${mode} 2 modeargs)
    run(${app}_${mode}_clean 0 "--dims|2x2x2|--app|${app}|--iterations|30|${modeargs}|--quiet")
    digest(${app}_${mode}_clean clean)
    foreach(fault IN LISTS faults)
      string(REPLACE "|" ";" parts "${fault}")
      list(GET parts 0 what)
      list(GET parts 1 script)
      foreach(msg nop cont)
        set(name ${app}_${mode}_${what}_${msg})
        run(${name} 0 "--dims|2x2x2|--app|${app}|--iterations|30|${modeargs}|--msg-mode|${msg}|--inject|${script}|--quiet")
        expect(${name} "recovery mode=${mode} msg=${msg} survivors=[1-9]"
               "app name=${app} [^\n]* ok\n")
        if(what STREQUAL "recovery")
          # 5 died inside its recovery; the others recovered again, without it.
          expect(${name} "node=5 event=inject what=kill at=recovery\n"
                 "recovery mode=${mode} msg=${msg} survivors=6 "
                 "app name=${app} ranks=8 finished=6 ok=6 digests=1 ")
        endif()
        if(mode STREQUAL "rebuild")
          digest(${name} got)
          if(NOT got STREQUAL clean)
            message(FATAL_ERROR "${name}: digest ${got}, the fault-free one is ${clean}")
          endif()
        endif()
      endforeach()
    endforeach()
  endforeach()
endforeach()

# A second crash drawn while the first one's rebuild runs, on 64 ranks.
foreach(mode shrink blank)
  run(during_${mode} 0 "--dims|4x4x4|--app|allreduce|--iterations|20|--comm-mode|${mode}|--inject|kill 3 at iteration 5|--recovery-kills|1|--quiet")
  expect(during_${mode} "recovery mode=${mode} msg=nop survivors=62 " "app name=allreduce [^\n]* ok\n")
endforeach()

# A crash some time into the recovery (its rebuild or the resume after
# it), on 64 ranks: every survivor ends on one digest without both.
foreach(mode shrink blank)
  run(into_${mode} 0 "--dims|4x4x4|--app|allreduce|--iterations|20|--comm-mode|${mode}|--inject|kill 3 at iteration 5%kill 40 at recovery + 50us|--quiet")
  expect(into_${mode} "node=40 event=inject what=kill at=recovery\n"
         "recovery mode=${mode} msg=nop survivors=62 " "app name=allreduce [^\n]* ok=62 digests=1 [^\n]* ok\n")
endforeach()

# 1,024 ranks: two crashes at different iterations in each mode (about 0.6 s
# each), and the stencil shrunk.
foreach(mode shrink blank rebuild)
  mode_args(${mode} 2 modeargs)
  run(big_${mode} 0 "--dims|16x8x8|--app|allreduce|--iterations|10|${modeargs}|--inject|kill 3 at iteration 4%kill 700 at iteration 7|--quiet")
  expect(big_${mode} "recovery mode=${mode} msg=nop survivors=1022 " "app name=allreduce [^\n]* ok\n")
endforeach()
run(big_stencil 0 "--dims|16x8x8|--app|stencil|--iterations|10|--comm-mode|shrink|--inject|kill 3 at iteration 4|--quiet")
expect(big_stencil "recovery mode=shrink msg=nop survivors=1023 " "app name=stencil [^\n]* ok\n")

# SHRINK and BLANK give the stencil the same answer: the live ranks, packed.
run(stencil_shrink_64 0 "--dims|4x4x4|--app|stencil|--iterations|20|--comm-mode|shrink|--inject|kill 3 at iteration 12|--quiet")
run(stencil_blank_64 0 "--dims|4x4x4|--app|stencil|--iterations|20|--comm-mode|blank|--inject|kill 3 at iteration 12|--quiet")
digest(stencil_shrink_64 shrunk)
digest(stencil_blank_64 blanked)
if(NOT shrunk STREQUAL blanked)
  message(FATAL_ERROR "stencil: shrink gave ${shrunk}, blank ${blanked}")
endif()

# More recoveries than a node has communicator slots (CONFIG_COMM_MAX_COMMS,
# 8 with WORLD): ten kills one after another on 64 ranks; each recovery
# frees the communicator it replaced (its late frames never match a later
# one on the same context id).  Keeping them, the 8th recovery found no
# slot and every rank failed.
set(many "kill 3 at iteration 5%kill 10 at iteration 10%kill 17 at iteration 15%kill 22 at iteration 20%kill 29 at iteration 25%kill 36 at iteration 30%kill 41 at iteration 35%kill 45 at iteration 40%kill 47 at iteration 45%kill 50 at iteration 50")
foreach(app allreduce stencil)
  foreach(mode shrink blank)
    foreach(msg nop cont)
      run(many_${app}_${mode}_${msg} 0 "--dims|4x4x4|--app|${app}|--iterations|60|--comm-mode|${mode}|--msg-mode|${msg}|--inject|${many}|--quiet")
      expect(many_${app}_${mode}_${msg} "recovery mode=${mode} msg=${msg} survivors=54 [^\n]*comm_epochs=11 "
             "app name=${app} ranks=64 finished=54 ok=54 digests=1 [^\n]* ok\n")
    endforeach()
  endforeach()
  # a spare for each: the fault-free answer
  run(many_${app}_clean 0 "--dims|4x4x4|--app|${app}|--iterations|60|--comm-mode|rebuild|--spares|10|--quiet")
  digest(many_${app}_clean clean)
  run(many_${app}_rebuild 0 "--dims|4x4x4|--app|${app}|--iterations|60|--comm-mode|rebuild|--spares|10|--inject|${many}|--quiet")
  expect(many_${app}_rebuild "recovery mode=rebuild msg=nop survivors=54 [^\n]*adopted=10 "
         "app name=${app} ranks=64 finished=54 ok=54 digests=1 [^\n]* ok\n")
  digest(many_${app}_rebuild got)
  if(NOT got STREQUAL clean)
    message(FATAL_ERROR "many_${app}_rebuild: digest ${got}, the fault-free one is ${clean}")
  endif()
endforeach()

# A bad mode: one line, exit 2, before any work.
run(bad_mode 2 "--dims|2x2x2|--app|allreduce|--comm-mode|sideways")
run(no_app 2 "--dims|2x2x2|--comm-mode|shrink")
message(STATUS "sim.app_recovery: every mode recovers from each crash, rebuild gives the fault-free answer")
