#pragma once
// expect_refused(read, part): `read` must throw InvalidArgumentError whose message contains
// `part` — a reader of outside input refusing bad input with a clear error.

#include <gtest/gtest.h>

#include <string>

#include "cudakit/core/error.hpp"

namespace cudakit::testing {

template <class Read>
void expect_refused(Read read, const std::string& part) {
  try {
    read();
    FAIL() << "accepted; expected an error containing: " << part;
  } catch (const InvalidArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << part;
  }
}

}  // namespace cudakit::testing
