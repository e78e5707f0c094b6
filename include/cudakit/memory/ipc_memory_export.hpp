#pragma once
// Forwarding header, kept for the 0.1 releases only: the header moved to memory's ipc/
// part. Include "cudakit/memory/ipc/ipc_memory_export.hpp" instead.
// cudakit: forwarding header (See Note [Forwarding headers] in cmake/check_layer_includes.cmake)
#include "cudakit/memory/ipc/ipc_memory_export.hpp"
