#pragma once
// Wall-clock timing of operations too long or too stateful for Google Benchmark's loops
// (driver allocations, page locking): a few repetitions, the median reported; and the median
// every benchmark here reports.

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

namespace cudakit::bench {

// Microseconds one call of f() takes.
template <class F>
double elapsed_us(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
}

// The median of `samples` (the upper one of an even count). `samples` must not be empty.
inline double median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

// Median over `reps` calls of f(), in microseconds.
template <class F>
double median_us(int reps, F&& f) {
  std::vector<double> t;
  t.reserve(static_cast<std::size_t>(reps));
  for (int i = 0; i < reps; ++i) t.push_back(elapsed_us(f));
  return median(std::move(t));
}

}  // namespace cudakit::bench
