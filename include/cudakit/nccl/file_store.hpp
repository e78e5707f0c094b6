#pragma once
// Forwarding header, kept for the 0.1 releases only: the stores and the rendezvous moved to
// nccl/store/. Include "cudakit/nccl/store/file_store.hpp" instead.
// cudakit: forwarding header (See Note [Forwarding headers] in cmake/check_layer_includes.cmake)
#include "cudakit/nccl/store/file_store.hpp"
