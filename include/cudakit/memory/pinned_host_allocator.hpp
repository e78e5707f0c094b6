#pragma once
// Forwarding header, kept for the 0.1 releases only: the header moved to memory's host/
// part. Include "cudakit/memory/host/pinned_host_allocator.hpp" instead.
// cudakit: forwarding header (See Note [Forwarding headers] in cmake/check_layer_includes.cmake)
#include "cudakit/memory/host/pinned_host_allocator.hpp"
