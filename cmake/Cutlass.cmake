# The CUDAKIT_CUTLASS option: CUTLASS's Hopper GEMM kernels as TunableOp candidates (See Note
# [CUTLASS candidates] in src/tunable/cutlass_gemm.cpp). CUTLASS is header-only; its headers come
# from the `nvidia-cutlass` wheel, which scripts/fetch-cutlass.sh (run by scripts/setup.sh) unpacks
# into ~/.cache/cudakit/cutlass-<version> (or CUDAKIT_CUTLASS_DIR). Nothing of CUTLASS is in the
# repository.
#
# On by default where the kernels build in bounded time and can run: a Release build whose CUDA
# architectures include 9.0 (the kernels are sm_90a code) and that finds the headers; off in the
# sanitizer and fuzz builds (their CUDA code is not what they test) and elsewhere. Setting it ON
# without the headers is an error that says how to get them.
set(CUDAKIT_CUTLASS_VERSION 4.2.0.0 CACHE STRING "nvidia-cutlass version scripts/fetch-cutlass.sh fetches")
if(DEFINED ENV{CUDAKIT_CUTLASS_DIR})
  set(cudakit_cutlass_home "$ENV{CUDAKIT_CUTLASS_DIR}")
else()
  set(cudakit_cutlass_home "$ENV{HOME}/.cache/cudakit/cutlass-${CUDAKIT_CUTLASS_VERSION}")
endif()
find_path(CUDAKIT_CUTLASS_INCLUDE_DIR NAMES cutlass/cutlass.h cute/tensor.hpp
          HINTS "${cudakit_cutlass_home}/include" NO_DEFAULT_PATH
          DOC "CUTLASS's include/ (holding cutlass/ and cute/)")

set(cudakit_cutlass_default OFF)
set(cudakit_cutlass_why "")
set(cudakit_has_sm90 OFF)
foreach(arch IN LISTS CUDAKIT_CUDA_ARCHITECTURES)
  if(arch MATCHES "^90")
    set(cudakit_has_sm90 ON)
  endif()
endforeach()
if(NOT CUDAKIT_CUTLASS_INCLUDE_DIR)
  set(cudakit_cutlass_why "no headers in ${cudakit_cutlass_home}/include: run scripts/fetch-cutlass.sh")
elseif(NOT cudakit_has_sm90)
  set(cudakit_cutlass_why "CUDAKIT_CUDA_ARCHITECTURES (${CUDAKIT_CUDA_ARCHITECTURES}) has no 90")
elseif(CUDAKIT_SANITIZE OR CUDAKIT_BUILD_FUZZERS)
  set(cudakit_cutlass_why "a sanitizer or fuzz build")
elseif(NOT CMAKE_BUILD_TYPE STREQUAL "Release")
  set(cudakit_cutlass_why "CMAKE_BUILD_TYPE is ${CMAKE_BUILD_TYPE}, not Release")
else()
  set(cudakit_cutlass_default ON)
endif()
option(CUDAKIT_CUTLASS "Build CUTLASS's Hopper GEMM kernels as TunableOp candidates (sm_90a)" ${cudakit_cutlass_default})
if(CUDAKIT_CUTLASS AND NOT CUDAKIT_CUTLASS_INCLUDE_DIR)
  message(FATAL_ERROR "CUDAKIT_CUTLASS is ON and CUTLASS's headers are not in ${cudakit_cutlass_home}/include: "
                      "run scripts/fetch-cutlass.sh (or set CUDAKIT_CUTLASS_DIR, or -DCUDAKIT_CUTLASS=OFF)")
endif()
if(CUDAKIT_CUTLASS)
  message(STATUS "CUTLASS GEMM candidates: on (${CUDAKIT_CUTLASS_INCLUDE_DIR})")
elseif(cudakit_cutlass_why)
  message(STATUS "CUTLASS GEMM candidates: off (${cudakit_cutlass_why})")
else()
  message(STATUS "CUTLASS GEMM candidates: off (CUDAKIT_CUTLASS=OFF)")
endif()
