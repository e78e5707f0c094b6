# One CMake target per layer of DESIGN.md's diagram, combined into the one libcudakit.
#
# Note [Layers as targets]
# Each src/<layer>/CMakeLists.txt declares its layer in one line,
#   cudakit_layer(random DEPENDS core memory tensor)
# which builds src/<layer>/**/*.{cpp,cu} as an OBJECT library `cudakit_<layer>` whose usage
# requirements (include paths, compile features, link libraries) come from the layers it names
# and nothing else. libcudakit is the union of the layers' objects, so programs see one library,
# as before, while the build knows the graph. What the compiler cannot enforce — an #include of a
# header from a sibling or higher layer, or of another layer's private src/<layer>/detail header
# — the `layer_includes_follow_the_diagram` test does (cmake/check_layer_includes.cmake), from
# the dependency lines recorded here. A layer must be declared after the layers it depends on.

set_property(GLOBAL PROPERTY CUDAKIT_LAYERS "")

# cudakit_layer(<name> [DEPENDS <layer>...] [PARTS <part>...] [LIBRARIES <library>...])
#   PARTS: sub-folders that keep a concern apart inside the layer (See Note [Parts of a layer] in
#   check_layer_includes.cmake).
#   LIBRARIES: outside libraries the layer's sources call (linked into libcudakit privately).
function(cudakit_layer name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "DEPENDS;PARTS;LIBRARIES")
  get_property(declared GLOBAL PROPERTY CUDAKIT_LAYERS)
  foreach(dependency IN LISTS arg_DEPENDS)
    if(NOT dependency IN_LIST declared)
      message(FATAL_ERROR "layer '${name}' depends on '${dependency}', which is not declared "
                          "before it (declared so far: ${declared}); see src/CMakeLists.txt")
    endif()
  endforeach()
  set(dir ${PROJECT_SOURCE_DIR}/src/${name})
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${dir}/*.cpp ${dir}/*.cu)
  cudakit_filter_sources(sources)
  set(target cudakit_${name})
  add_library(${target} OBJECT ${sources} ${arg_UNPARSED_ARGUMENTS})
  target_include_directories(${target} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>)
  # Private headers (src/<layer>/detail) are reached as "<layer>/detail/x.hpp"; the include test
  # allows only a layer's own.
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${target} PUBLIC CUDA::cudart Threads::Threads)
  foreach(dependency IN LISTS arg_DEPENDS)
    target_link_libraries(${target} PUBLIC cudakit_${dependency})
  endforeach()
  if(arg_LIBRARIES)
    target_link_libraries(${target} PRIVATE ${arg_LIBRARIES})
  endif()
  target_compile_features(${target} PUBLIC cxx_std_20)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wno-missing-field-initializers>
    $<$<COMPILE_LANGUAGE:CUDA>:--expt-relaxed-constexpr -Xcompiler=-Wall>)
  set_target_properties(${target} PROPERTIES CUDA_SEPARABLE_COMPILATION OFF)
  set_property(GLOBAL APPEND PROPERTY CUDAKIT_LAYERS ${name})
  set_property(GLOBAL PROPERTY CUDAKIT_LAYER_DEPENDS_${name} "${arg_DEPENDS}")
  set_property(GLOBAL PROPERTY CUDAKIT_LAYER_PARTS_${name} "${arg_PARTS}")
  set_property(GLOBAL APPEND PROPERTY CUDAKIT_LAYER_LIBRARIES ${arg_LIBRARIES})
endfunction()

# cudakit_layer_objects(<layer> <object library>): objects built with options of their own (other
# CUDA architectures: tunable's CUTLASS kernels) that belong to <layer> and go into libcudakit
# with its objects. The library links <layer>'s target for its usage requirements.
function(cudakit_layer_objects layer target)
  target_link_libraries(${target} PRIVATE cudakit_${layer})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  set_property(GLOBAL APPEND PROPERTY CUDAKIT_LAYER_OBJECT_LIBRARIES ${target})
endfunction()

# Writes the declared graph, one "layer: dependency..." line per layer and a "layer/parts:
# part..." line per layer with parts, for the include test.
function(cudakit_write_layer_graph path)
  get_property(layers GLOBAL PROPERTY CUDAKIT_LAYERS)
  set(text "")
  foreach(layer IN LISTS layers)
    get_property(depends GLOBAL PROPERTY CUDAKIT_LAYER_DEPENDS_${layer})
    string(REPLACE ";" " " depends "${depends}")
    string(APPEND text "${layer}: ${depends}\n")
    get_property(parts GLOBAL PROPERTY CUDAKIT_LAYER_PARTS_${layer})
    if(parts)
      string(REPLACE ";" " " parts "${parts}")
      string(APPEND text "${layer}/parts: ${parts}\n")
    endif()
  endforeach()
  file(GENERATE OUTPUT ${path} CONTENT "${text}")
endfunction()
