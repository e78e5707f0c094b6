# cmake -DCHECKER=... -DGRAPH=... -DWORK_DIR=... -P planted_includes.cmake
# The layer check must fail on a tree with the project's layers where one layer includes a
# sibling's public header and another a lower layer's private header, and name both.
file(REMOVE_RECURSE ${WORK_DIR})
file(STRINGS ${GRAPH} lines)
foreach(line IN LISTS lines)
  if(line MATCHES "^([a-z_0-9]+):")
    file(MAKE_DIRECTORY ${WORK_DIR}/src/${CMAKE_MATCH_1} ${WORK_DIR}/include/cudakit/${CMAKE_MATCH_1})
  endif()
endforeach()
# Allowed: a lower layer's public header, the layer's own private one.
file(WRITE ${WORK_DIR}/src/random/fine.cpp
     "#include \"cudakit/tensor/tensor.hpp\"\n#include \"random/detail/draw.hpp\"\n")
# Planted: random -> graphs (siblings), tensor -> memory's private detail.
file(WRITE ${WORK_DIR}/src/random/sideways.cpp "#include <vector>\n#include \"cudakit/graphs/graph.hpp\"\n")
file(WRITE ${WORK_DIR}/src/tensor/private.cpp "#include \"memory/detail/spin_lock.hpp\"\n")
execute_process(COMMAND ${CMAKE_COMMAND} -DROOT=${WORK_DIR} -DGRAPH=${GRAPH} -P ${CHECKER}
                RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(text "${out}${err}")
string(REGEX REPLACE "[ \n]+" " " text "${text}")
if(result EQUAL 0)
  message(FATAL_ERROR "the layer check passed a tree with planted includes:\n${text}")
endif()
foreach(expected
    "src/random/sideways.cpp: #include \"cudakit/graphs/graph.hpp\": random may not use graphs"
    "src/tensor/private.cpp: #include \"memory/detail/spin_lock.hpp\": src/memory/detail/ is private to memory")
  string(FIND "${text}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the layer check's report lacks '${expected}':\n${text}")
  endif()
endforeach()
foreach(unexpected "fine.cpp")
  string(FIND "${text}" "${unexpected}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "the layer check refused an allowed include (${unexpected}):\n${text}")
  endif()
endforeach()
message(STATUS "the layer check refuses both planted includes and names them")
