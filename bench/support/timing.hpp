#pragma once
// Wall-clock timing of operations too long or too stateful for Google Benchmark's loops
// (driver allocations, page locking): a few repetitions, the median reported.

#include <algorithm>
#include <chrono>
#include <vector>

namespace cudakit::bench {

// Median over `reps` calls of f(), in microseconds.
template <class F>
double median_us(int reps, F&& f) {
  std::vector<double> t;
  t.reserve(static_cast<std::size_t>(reps));
  for (int i = 0; i < reps; ++i) {
    const auto start = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace cudakit::bench
