# Runs an mpirun command that must fail (cmake -P, from ctest): passes when
# it exits non-zero within MAX_SECONDS and its output matches EXPECT and does
# not match FORBID. ctest alone cannot ask for both a non-zero exit and a
# message (PASS_REGULAR_EXPRESSION ignores the exit status).
#   -DCOMMAND=<the command, its arguments separated by |>
#   -DEXPECT=<regex> [-DFORBID=<regex>] -DMAX_SECONDS=<n>
string(REPLACE "|" ";" command "${COMMAND}")
string(TIMESTAMP start "%s")
execute_process(COMMAND ${command}
  RESULT_VARIABLE status
  OUTPUT_VARIABLE output
  ERROR_VARIABLE output
  TIMEOUT ${MAX_SECONDS})
string(TIMESTAMP end "%s")
math(EXPR elapsed "${end} - ${start}")
message("${output}")
message("-- exit status: ${status}, ${elapsed} s")
if("${status}" STREQUAL "0")
  message(FATAL_ERROR "the run succeeded; it must fail")
endif()
if("${status}" MATCHES "timeout")
  message(FATAL_ERROR "the run did not end by itself within ${MAX_SECONDS} s (${status})")
endif()
# Any other status that is not a number: the launcher did not exit by
# itself (a signal, or it could not be started). Open MPI 4.1's mpiexec once
# crashed in its own teardown (PMIx_server_finalize) after two ranks called
# MPI_Abort at the same moment (MpiComm's finalize waits longer than a
# collective since, so that this is rare). The run has then ended and
# failed, as it must; the expected message decides (a launcher that could
# not start prints none).
if(NOT "${status}" MATCHES "^[0-9]+$")
  message("-- the launcher did not exit by itself (${status}); the run failed, as it must")
endif()
if(NOT output MATCHES "${EXPECT}")
  message(FATAL_ERROR "the output does not match: ${EXPECT}")
endif()
if(DEFINED FORBID AND NOT "${FORBID}" STREQUAL "" AND output MATCHES "${FORBID}")
  message(FATAL_ERROR "the output matches what it must not: ${FORBID}")
endif()
