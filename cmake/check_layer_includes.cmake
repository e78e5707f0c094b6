cmake_minimum_required(VERSION 3.25)
# cmake -DROOT=<source tree> -DGRAPH=<cudakit_layers.txt> -P check_layer_includes.cmake
#
# Fails, naming each file, include and rule broken, when a layer's code includes
#  - a public header (cudakit/<other>/...) of a layer that is not below it in the declared
#    graph (a sibling or a higher layer), or of a folder that is no declared layer;
#  - another layer's private header (<other>/detail/... from src/), which only <other> may use.
# A layer's public `include/cudakit/<layer>/detail/` headers are its interface to the layers
# above (host/device code shared with their kernels) and follow the first rule.
# Every folder under src/ and include/cudakit/ must be a declared layer. See Note [Layers as
# targets] in CudakitLayers.cmake.
#
# Note [Parts of a layer]
# A layer may keep a concern apart in a sub-folder, a part, declared in its line
# (`cudakit_layer(memory DEPENDS core PARTS ipc host viewer)`): include/cudakit/<layer>/<part>/
# and src/<layer>/<part>/ (private headers in <part>/detail/). A part uses its layer's other
# files and the layers below; the rest of its layer, and its sibling parts, do not use it, so
# that the layer's core (the allocator, for memory) builds and reads without it and a part can
# become a layer of its own by moving its folders. The check below enforces both. A sub-folder
# that is not declared a part only groups files (nccl's store/, which the communicators use).
#
# Note [Forwarding headers]
# When a header moves to another layer, its old path stays for the 0.1 releases as a forwarding
# header, so that programs that include it keep building: a public header holding the line
# "// cudakit: forwarding header" and exactly one #include, of the header's new path. It is the
# one file that may include a header of a higher layer (core/nccl_error.hpp includes
# nccl/nccl_error.hpp): no code of the library includes it, which this check enforces, so the
# build graph never sees the edge. Delete the forwarding headers when the 0.2 release is made.
if(NOT ROOT OR NOT GRAPH)
  message(FATAL_ERROR "usage: cmake -DROOT=<tree> -DGRAPH=<layers file> -P check_layer_includes.cmake")
endif()
file(STRINGS ${GRAPH} lines)
set(layers "")
foreach(line IN LISTS lines)
  if(line MATCHES "^([a-z_0-9]+)/parts:(.*)$")
    string(STRIP "${CMAKE_MATCH_2}" parts)
    separate_arguments(parts)
    set(parts_${CMAKE_MATCH_1} ${parts})
  elseif(line MATCHES "^([a-z_0-9]+):(.*)$")
    set(layer ${CMAKE_MATCH_1})
    string(STRIP "${CMAKE_MATCH_2}" depends)
    separate_arguments(depends)
    list(APPEND layers ${layer})
    # What a layer may use: its declared dependencies and everything below them.
    set(below_${layer} "")
    foreach(dependency IN LISTS depends)
      list(APPEND below_${layer} ${dependency} ${below_${dependency}})
    endforeach()
    list(REMOVE_DUPLICATES below_${layer})
    string(REPLACE ";" ", " declared_${layer} "${depends}")
    if(declared_${layer} STREQUAL "")
      set(declared_${layer} "nothing")
    endif()
  endif()
endforeach()

set(problems "")
foreach(base src include/cudakit)
  file(GLOB entries LIST_DIRECTORIES true RELATIVE ${ROOT}/${base} ${ROOT}/${base}/*)
  foreach(entry IN LISTS entries)
    if(IS_DIRECTORY ${ROOT}/${base}/${entry} AND NOT entry IN_LIST layers)
      string(APPEND problems "${base}/${entry}/: not a declared layer (declared: ${layers}); "
                             "give it src/${entry}/CMakeLists.txt with cudakit_layer(${entry} DEPENDS ...) "
                             "and list it in src/CMakeLists.txt\n")
    endif()
  endforeach()
endforeach()

# Forwarding headers (See Note [Forwarding headers]): each forwards to one header, and nothing
# in the library includes one.
set(forwarding "")
file(GLOB_RECURSE public_headers RELATIVE ${ROOT}/include
     ${ROOT}/include/cudakit/*.hpp ${ROOT}/include/cudakit/*.cuh)
foreach(header IN LISTS public_headers)
  file(STRINGS ${ROOT}/include/${header} marker REGEX "^// cudakit: forwarding header")
  if(NOT marker)
    continue()
  endif()
  file(STRINGS ${ROOT}/include/${header} includes REGEX "^[ \t]*#[ \t]*include")
  list(LENGTH includes count)
  if(NOT count EQUAL 1 OR NOT includes MATCHES "^#include \"cudakit/[a-z_0-9/]+\\.(hpp|cuh)\"$")
    string(APPEND problems "include/${header}: a forwarding header holds exactly one #include, of "
                           "the header's new path (\"cudakit/<layer>/...\"); it has: ${includes}\n")
  endif()
  list(APPEND forwarding ${header})
endforeach()

foreach(layer IN LISTS layers)
  file(GLOB_RECURSE files RELATIVE ${ROOT}
       ${ROOT}/src/${layer}/*.hpp ${ROOT}/src/${layer}/*.cpp ${ROOT}/src/${layer}/*.cu
       ${ROOT}/src/${layer}/*.cuh ${ROOT}/include/cudakit/${layer}/*.hpp
       ${ROOT}/include/cudakit/${layer}/*.cuh)
  string(REPLACE ";" ", " allowed_text "${below_${layer}}")
  if(allowed_text STREQUAL "")
    set(allowed_text "no other layer")
  endif()
  foreach(file IN LISTS files)
    string(REGEX REPLACE "^include/" "" as_included "${file}")
    if(as_included IN_LIST forwarding)
      continue()
    endif()
    # The part the file belongs to, or "" for the layer's own files (See Note [Parts of a layer]).
    set(part "")
    if(file MATCHES "^(src|include/cudakit)/${layer}/([a-z_0-9]+)/" AND CMAKE_MATCH_2 IN_LIST parts_${layer})
      set(part ${CMAKE_MATCH_2})
    endif()
    file(STRINGS ${ROOT}/${file} includes REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
    foreach(include IN LISTS includes)
      if(NOT include MATCHES "#[ \t]*include[ \t]*[\"<]([^\">]+)[\">]")
        continue()
      endif()
      set(path ${CMAKE_MATCH_1})
      if(path IN_LIST forwarding)
        file(STRINGS ${ROOT}/include/${path} target REGEX "^[ \t]*#[ \t]*include")
        string(APPEND problems "${file}: #include \"${path}\": a forwarding header, kept for "
                               "programs only; include what it forwards to (${target})\n")
        continue()
      endif()
      if(path MATCHES "^(cudakit/)?${layer}/([a-z_0-9]+)/" AND CMAKE_MATCH_2 IN_LIST parts_${layer}
         AND NOT CMAKE_MATCH_2 STREQUAL part)
        if(part STREQUAL "")
          string(APPEND problems "${file}: #include \"${path}\": ${layer}'s own files may not use its "
                                 "part ${CMAKE_MATCH_2}/ (See Note [Parts of a layer])\n")
        else()
          string(APPEND problems "${file}: #include \"${path}\": ${layer}'s part ${part}/ may not use "
                                 "its sibling part ${CMAKE_MATCH_2}/ (See Note [Parts of a layer])\n")
        endif()
        continue()
      endif()
      if(path MATCHES "^cudakit/([a-z_0-9]+)/")
        set(other ${CMAKE_MATCH_1})
        if(other STREQUAL layer OR other IN_LIST below_${layer})
          continue()
        endif()
        if(other IN_LIST layers)
          string(APPEND problems "${file}: #include \"${path}\": ${layer} may not use ${other} "
                 "(a sibling or a higher layer); ${layer} uses ${allowed_text} "
                 "(src/${layer}/CMakeLists.txt declares: ${declared_${layer}})\n")
        else()
          string(APPEND problems "${file}: #include \"${path}\": ${other} is not a declared layer\n")
        endif()
      elseif(path MATCHES "^([a-z_0-9]+)/([a-z_0-9]+/)?detail/")
        set(other ${CMAKE_MATCH_1})
        if(other IN_LIST layers AND NOT other STREQUAL layer)
          string(APPEND problems "${file}: #include \"${path}\": src/${other}/detail/ is private "
                 "to ${other}; ${layer} may use only its public headers (include/cudakit/${other}/)\n")
        endif()
      endif()
    endforeach()
  endforeach()
endforeach()

if(problems)
  message(FATAL_ERROR "includes that break the layer diagram:\n${problems}")
endif()
list(LENGTH layers count)
message(STATUS "layer includes follow the diagram (${count} layers: ${layers})")
