# cmake -DFUSIM=build/fusim -DMPIEXEC=... -DWORK=dir -P sweep_cli.cmake
# End to end on the real simulator (a small MLP on a CPU preset, block fidelity):
#  1. a bad --set value or path fails with exit code 2 naming it, before any file is written;
#  2. --jobs 1 and --jobs 2 write the same bytes, with a hit_rate column per cache level;
#  3. a file cut mid-row (what a kill leaves) is completed by --resume to the same bytes;
#  4. with MPI: 2 ranks write the same bytes as one process.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
# A 4-core cut of the Xeon 8380 keeps the simulations short (about 20 s of CPU a sweep).
set(SWEEP ${FUSIM} sweep --trace mlp --batch 8 --machine xeon-8380-ddr4 --quiet
    --set compute.cores=4 --set compute.threads_per_op=4
    --set caches.LLC.size=3MiB,48MiB --set dram.channels=2,8
    --ordering eager,backward-fused --optimizer sgd)

function(expect_error what needle)
  execute_process(COMMAND ${ARGN} -o ${WORK}/bad.csv RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "${needle}")
    message(FATAL_ERROR "${what}: expected exit 2 and '${needle}', got ${rc}: ${err}")
  endif()
  if(EXISTS ${WORK}/bad.csv)
    message(FATAL_ERROR "${what}: a results file was written before the error")
  endif()
  message(STATUS "${what}: ${err}")
endfunction()
expect_error("unknown path" "caches\\.L9" ${SWEEP} --set caches.L9.size=1MiB)
expect_error("bad scheduler" "dram\\.scheduler=sideways" ${SWEEP} --set dram.scheduler=frfcfs,sideways)
expect_error("negative size" "a size >= 0" ${SWEEP} --set caches.L2.size=-1MiB)

execute_process(COMMAND ${SWEEP} --jobs 1 -o ${WORK}/one.csv RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "--jobs 1 failed: ${rc}")
endif()
execute_process(COMMAND ${SWEEP} --jobs 2 -o ${WORK}/two.csv RESULT_VARIABLE rc)
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK}/one.csv ${WORK}/two.csv
                RESULT_VARIABLE differ)
if(NOT rc EQUAL 0 OR NOT differ EQUAL 0)
  message(FATAL_ERROR "--jobs 2 differs from --jobs 1 (rc ${rc})")
endif()
file(STRINGS ${WORK}/one.csv lines)
list(LENGTH lines n)
if(NOT n EQUAL 9)  # header + 4 points x 1 optimizer x 2 orderings
  message(FATAL_ERROR "expected 9 lines, got ${n}")
endif()
list(GET lines 0 header)
if(NOT header MATCHES ",peak_memory_bytes,hit_rate\\.L1,hit_rate\\.L2,hit_rate\\.LLC$")
  message(FATAL_ERROR "expected a hit_rate column per cache level of the Xeon, got ${header}")
endif()

# A kill in the middle of the 5th row: keep the header, 4 rows and part of the next.
list(SUBLIST lines 0 5 head)
list(GET lines 5 fifth_row)
string(JOIN "\n" partial ${head})
string(SUBSTRING "${fifth_row}" 0 12 half)
file(WRITE ${WORK}/resumed.csv "${partial}\n${half}")
execute_process(COMMAND ${SWEEP} --jobs 2 --resume -o ${WORK}/resumed.csv RESULT_VARIABLE rc)
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK}/one.csv ${WORK}/resumed.csv
                RESULT_VARIABLE differ)
if(NOT rc EQUAL 0 OR NOT differ EQUAL 0)
  message(FATAL_ERROR "--resume did not complete the cut file to the same bytes (rc ${rc})")
endif()

if(MPIEXEC)
  set(ENV{OMPI_ALLOW_RUN_AS_ROOT} 1)
  set(ENV{OMPI_ALLOW_RUN_AS_ROOT_CONFIRM} 1)
  execute_process(COMMAND ${MPIEXEC} --allow-run-as-root --oversubscribe -np 2
                          ${SWEEP} --jobs 1 -o ${WORK}/mpi.json RESULT_VARIABLE rc)
  execute_process(COMMAND ${SWEEP} --jobs 1 -o ${WORK}/one.json)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK}/one.json ${WORK}/mpi.json
                  RESULT_VARIABLE differ)
  if(NOT rc EQUAL 0 OR NOT differ EQUAL 0)
    message(FATAL_ERROR "mpirun -np 2 differs from one process (rc ${rc})")
  endif()
endif()
message(STATUS "sweep CLI: errors, --jobs, --resume${MPIEXEC} all byte-identical")
