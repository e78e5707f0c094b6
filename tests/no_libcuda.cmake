# Fails if the library records a dependency on the driver library: every binary must start on a
# machine with no driver (See Note [Driver entry points]).
execute_process(COMMAND readelf -d ${LIBRARY} OUTPUT_VARIABLE dynamic RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "readelf failed on ${LIBRARY}")
endif()
if(dynamic MATCHES "libcuda\\.so")
  message(FATAL_ERROR "${LIBRARY} needs libcuda:\n${dynamic}")
endif()
message(STATUS "${LIBRARY}: no libcuda dependency")
