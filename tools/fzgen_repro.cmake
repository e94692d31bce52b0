# Reproducibility check for one fzgen family (run by CTest):
#   cmake -DFZGEN=<fzgen> -DKIND=<kind> -DWORK=<dir> -P fzgen_repro.cmake
# Generates the same small data set twice (1 and 3 threads) and compares
# the files byte for byte, for f32 and f64 and two shapes.
foreach(var FZGEN KIND WORK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "fzgen_repro.cmake: -D${var}=... is required")
  endif()
endforeach()
file(MAKE_DIRECTORY "${WORK}")

function(run_fzgen)
  execute_process(COMMAND "${FZGEN}" ${ARGN} RESULT_VARIABLE rc
    OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "fzgen ${ARGN} failed (${rc}): ${err}")
  endif()
  if(NOT out STREQUAL "" OR NOT err STREQUAL "")
    message(FATAL_ERROR "fzgen ${ARGN} printed output without -v")
  endif()
endfunction()

function(expect_same a b)
  execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${a}" "${b}"
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${a} and ${b} differ")
  endif()
endfunction()

if(KIND STREQUAL "particles")
  set(shapes "-n 300" "-n 2500")
  set(counts 1800 15000)
else()
  set(shapes "-3 300 7 5" "-n 5000")
  set(counts 10500 5000)
endif()

set(i 0)
foreach(shape_text IN LISTS shapes)
  separate_arguments(shape UNIX_COMMAND "${shape_text}")
  list(GET counts ${i} count)
  math(EXPR i "${i} + 1")
  foreach(type f32 f64)
    set(base "${WORK}/${KIND}_${type}_${i}")
    file(REMOVE "${base}_a.bin" "${base}_b.bin" "${base}_c.bin")
    run_fzgen(-k ${KIND} -t ${type} ${shape} -s 7 -j 1 -o "${base}_a.bin")
    run_fzgen(-k ${KIND} -t ${type} ${shape} -s 7 -j 3 -o "${base}_b.bin")
    expect_same("${base}_a.bin" "${base}_b.bin")

    file(SIZE "${base}_a.bin" size)
    if(type STREQUAL "f32")
      math(EXPR want "${count} * 4")
    else()
      math(EXPR want "${count} * 8")
    endif()
    if(NOT size EQUAL want)
      message(FATAL_ERROR "${base}_a.bin has ${size} bytes, want ${want}")
    endif()

    # An existing file is kept without -f and replaced with it.
    execute_process(COMMAND "${FZGEN}" -k ${KIND} -t ${type} ${shape} -s 8
      -o "${base}_b.bin" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
    if(rc EQUAL 0)
      message(FATAL_ERROR "fzgen replaced ${base}_b.bin without -f")
    endif()
    expect_same("${base}_a.bin" "${base}_b.bin")
    run_fzgen(-k ${KIND} -t ${type} ${shape} -s 8 -f -o "${base}_b.bin")
    if(NOT KIND STREQUAL "constant")
      execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files
        "${base}_a.bin" "${base}_b.bin" RESULT_VARIABLE rc)
      if(rc EQUAL 0)
        message(FATAL_ERROR "seeds 7 and 8 gave the same ${KIND} data")
      endif()
    endif()
    file(REMOVE "${base}_a.bin" "${base}_b.bin")
  endforeach()
endforeach()
