# cmake -DCHECKER=... -DGRAPH=... -DWORK_DIR=... -P planted_includes.cmake
# The layer check must fail on a tree with the project's layers where one layer includes a
# sibling's public header, another a lower layer's private header, a third a forwarding header,
# and memory's own files and one of its parts a part of memory, and name each; a forwarding
# header that points up and a part that uses its layer pass.
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
# Allowed: a forwarding header in core that points up (See Note [Forwarding headers]).
file(WRITE ${WORK_DIR}/include/cudakit/core/moved.hpp
     "#pragma once\n// cudakit: forwarding header\n#include \"cudakit/tensor/moved.hpp\"\n")
# Planted: random -> graphs (siblings), tensor -> memory's private detail, the library's own
# code through a forwarding header.
file(WRITE ${WORK_DIR}/src/tensor/forwarded.cpp "#include \"cudakit/core/moved.hpp\"\n")
# Parts of a layer (See Note [Parts of a layer]): a part uses its layer (allowed); the layer's own
# files and a sibling part may not use it.
file(WRITE ${WORK_DIR}/src/memory/ipc/uses_layer.cpp "#include \"cudakit/memory/mem_pool.hpp\"\n#include \"memory/ipc/detail/x.hpp\"\n")
file(WRITE ${WORK_DIR}/src/memory/uses_part.cpp "#include \"cudakit/memory/ipc/ipc_memory.hpp\"\n")
file(WRITE ${WORK_DIR}/src/memory/host/uses_sibling.cpp "#include \"memory/ipc/detail/fd_passing.hpp\"\n")
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
    "src/tensor/private.cpp: #include \"memory/detail/spin_lock.hpp\": src/memory/detail/ is private to memory"
    "src/tensor/forwarded.cpp: #include \"cudakit/core/moved.hpp\": a forwarding header"
    "src/memory/uses_part.cpp: #include \"cudakit/memory/ipc/ipc_memory.hpp\": memory's own files may not use its part ipc/"
    "src/memory/host/uses_sibling.cpp: #include \"memory/ipc/detail/fd_passing.hpp\": memory's part host/ may not use its sibling part ipc/")
  string(FIND "${text}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the layer check's report lacks '${expected}':\n${text}")
  endif()
endforeach()
foreach(unexpected "fine.cpp" "include/cudakit/core/moved.hpp" "uses_layer.cpp")
  string(FIND "${text}" "${unexpected}" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "the layer check refused an allowed include (${unexpected}):\n${text}")
  endif()
endforeach()
message(STATUS "the layer check refuses the planted includes and names them")
