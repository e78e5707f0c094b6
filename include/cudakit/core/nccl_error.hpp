#pragma once
// Forwarding header, kept for the 0.1 releases only: NcclError moved to the nccl layer, which
// makes the calls that throw it. Include "cudakit/nccl/nccl_error.hpp" instead.
// cudakit: forwarding header (See Note [Forwarding headers] in cmake/check_layer_includes.cmake)
#include "cudakit/nccl/nccl_error.hpp"
