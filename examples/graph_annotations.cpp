// The seed's graph-annotation workflow as a program: graph_annotations [OUT_DIR]
#include <iostream>

#include "graph_annotations.hpp"

int main(int argc, char** argv) {
  if (!cudakit::is_available()) {
    std::cout << "no CUDA device: nothing to capture\n";
    return 0;
  }
  return cudakit::examples::run_graph_annotations(argc > 1 ? argv[1] : "cudakit-demo", std::cout);
}
