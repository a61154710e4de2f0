# cmake -DMPIEXEC=... -DDRIVER=... -DWORK=dir -P compare.cmake
# One process with one thread, then 2 ranks with 2 threads each: same bytes (CSV and JSON).
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
# Open MPI refuses root unless told; CI runs as root on 2 cores (hence --oversubscribe).
set(ENV{OMPI_ALLOW_RUN_AS_ROOT} 1)
set(ENV{OMPI_ALLOW_RUN_AS_ROOT_CONFIRM} 1)
foreach(ext csv json)
  execute_process(COMMAND ${DRIVER} ${WORK}/one.${ext} 1 RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "single-process run failed: ${rc}")
  endif()
  execute_process(COMMAND ${MPIEXEC} --allow-run-as-root --oversubscribe -np 2
                          ${DRIVER} ${WORK}/two.${ext} 2
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  message(STATUS "${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "mpirun -np 2 failed: ${rc}")
  endif()
  if(NOT err MATCHES "driver: 2 rank\\(s\\), wrote")
    message(FATAL_ERROR "the run did not use 2 ranks")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${WORK}/one.${ext} ${WORK}/two.${ext}
                  RESULT_VARIABLE differ)
  if(NOT differ EQUAL 0)
    message(FATAL_ERROR "2 ranks wrote other bytes than 1 process (${ext})")
  endif()
  file(SIZE ${WORK}/two.${ext} bytes)
  message(STATUS "${ext}: ${bytes} bytes identical")
endforeach()
