# The ABARIS policy study (tori-sim --app model --policy-study) for its
# fixed seeds: every gain versus PROC'nPHY is positive, REPEATED under
# frequent process faults and SWITCH with a faulty group, as the paper's
# (its sizes are printed), and every run of the protocol keeps its
# invariants (exit 0, no VIOLATION line).
# Run as: cmake -DSIM=<tori-sim> -P policy_study.cmake
execute_process(COMMAND ${SIM} --app model --policy-study
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE status)
message("${out}")
if(NOT status EQUAL 0 OR out MATCHES "VIOLATION")
  message(FATAL_ERROR "tori-sim --policy-study exited ${status}: ${err}")
endif()
string(REGEX MATCHALL "gain=[-+][0-9.]+%" gains "${out}")
list(LENGTH gains count)
if(NOT count EQUAL 6)
  message(FATAL_ERROR "expected 6 gains (3 rates x 2 studies), got ${count}")
endif()
foreach(gain IN LISTS gains)
  if(NOT gain MATCHES "^gain=\\+[0-9]")
    message(FATAL_ERROR "a policy is not better than PROC'nPHY: ${gain}")
  endif()
endforeach()
foreach(name "REPEATED versus PROC'nPHY" "SWITCH versus PROC'nPHY" "paper: 3-30%"
        "paper: 9-25%" "policy PROC'nPHY = --recovery 'process=restart; physical=migrate; network=migrate'")
  string(FIND "${out}" "${name}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "missing from the output: ${name}")
  endif()
endforeach()
