#pragma once
// Forwarding header, kept for the 0.1 releases only: the header moved to memory's viewer/
// part. Include "cudakit/memory/viewer/memviz.hpp" instead.
// cudakit: forwarding header (See Note [Forwarding headers] in cmake/check_layer_includes.cmake)
#include "cudakit/memory/viewer/memviz.hpp"
