# ctest bench_cpu_smoke: bench_cpu on a generated 48 MiB f32 series must
# measure every floatz codec and mode (no row left with an error) with no
# bound violation. 48 MiB is past the size at which falcon's table (1025
# values per chunk) outgrows a buffer sized for sleek's chunks.
# -DFZGEN=... -DBENCH=... -DWORK=...
file(MAKE_DIRECTORY ${WORK})
set(data ${WORK}/series.f32)
execute_process(COMMAND ${FZGEN} -k timeseries -n 12M -o ${data}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "fzgen failed: ${rc}")
endif()
execute_process(COMMAND ${BENCH} --threads 2 --reps 1 --no-peers
                        --data series:f32:12582912:${data}
                        --markdown ${WORK}/rows.md
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
file(REMOVE ${data})
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "bench_cpu exited with ${rc}: ${err}")
endif()
file(STRINGS ${WORK}/rows.md rows REGEX "^\\| series \\|")
list(LENGTH rows n)
if(n LESS 10)
  message(FATAL_ERROR "bench_cpu wrote ${n} floatz rows, expected 10 or more")
endif()
foreach(row IN LISTS rows)
  if(row MATCHES "error:|skipped")
    message(FATAL_ERROR "a floatz row was not measured: ${row}")
  endif()
endforeach()
foreach(codec sleek gfc falcon lorenzo auto)
  if(NOT rows MATCHES "floatz-${codec}")
    message(FATAL_ERROR "no row for floatz-${codec}")
  endif()
endforeach()
