// Device probe (not part of the build): how lock kinds behave with 16 threads taking one lock
// around a critical section that writes `lines` shared cache lines, as the allocator's shard does
// when many threads allocate on one stream. Prints acquisitions per second per lock kind.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

static inline void cpu_pause() { __builtin_ia32_pause(); }

template <unsigned MaxPauses, bool Yield>
struct Backoff {
  std::atomic<bool> locked{false};
  void lock() {
    if (!locked.exchange(true, std::memory_order_acquire)) return;
    unsigned pauses = 1;
    for (;;) {
      while (locked.load(std::memory_order_relaxed)) {
        if (pauses > MaxPauses) {
          if (Yield) std::this_thread::yield(); else for (unsigned i = 0; i < MaxPauses; ++i) cpu_pause();
          continue;
        }
        for (unsigned i = 0; i < pauses; ++i) cpu_pause();
        pauses *= 2;
      }
      if (!locked.exchange(true, std::memory_order_acquire)) return;
    }
  }
  void unlock() { locked.store(false, std::memory_order_release); }
};

struct Ticket {
  alignas(64) std::atomic<unsigned> next{0};
  alignas(64) std::atomic<unsigned> serving{0};
  void lock() {
    unsigned me = next.fetch_add(1, std::memory_order_relaxed);
    unsigned spins = 0;
    while (serving.load(std::memory_order_acquire) != me) {
      cpu_pause();
      if (++spins > 4096) { std::this_thread::yield(); spins = 0; }
    }
  }
  void unlock() { serving.store(serving.load(std::memory_order_relaxed) + 1, std::memory_order_release); }
};

struct Mcs {
  struct alignas(64) Node { std::atomic<Node*> next{nullptr}; std::atomic<bool> wait{false}; };
  std::atomic<Node*> tail{nullptr};
  static thread_local Node node;
  void lock() {
    Node* me = &node;
    me->next.store(nullptr, std::memory_order_relaxed);
    me->wait.store(true, std::memory_order_relaxed);
    Node* prev = tail.exchange(me, std::memory_order_acq_rel);
    if (!prev) return;
    prev->next.store(me, std::memory_order_release);
    unsigned spins = 0;
    while (me->wait.load(std::memory_order_acquire)) {
      cpu_pause();
      if (++spins > 4096) { std::this_thread::yield(); spins = 0; }
    }
  }
  void unlock() {
    Node* me = &node;
    Node* succ = me->next.load(std::memory_order_acquire);
    if (!succ) {
      Node* expected = me;
      if (tail.compare_exchange_strong(expected, nullptr, std::memory_order_acq_rel)) return;
      while (!(succ = me->next.load(std::memory_order_acquire))) cpu_pause();
    }
    succ->wait.store(false, std::memory_order_release);
  }
};
thread_local Mcs::Node Mcs::node;

struct alignas(64) Line { long v[8]; };

template <class Lock>
double run(int threads, int lines, double seconds) {
  Lock lock;
  std::vector<Line> shared(lines);
  std::atomic<bool> go{false}, stop{false};
  std::vector<long> counts(threads * 16);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      while (!go.load()) {}
      long n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        for (int k = 0; k < 64; ++k) {
          lock.lock();
          for (int i = 0; i < lines; ++i) shared[i].v[0] += 1;
          lock.unlock();
        }
        n += 64;
      }
      counts[t * 16] = n;
    });
  }
  auto start = std::chrono::steady_clock::now();
  go = true;
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& th : pool) th.join();
  double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  long total = 0;
  for (int t = 0; t < threads; ++t) total += counts[t * 16];
  return total / el;
}

int main(int argc, char** argv) {
  int threads = argc > 1 ? std::atoi(argv[1]) : 16;
  for (int lines : {4, 16, 32}) {
    for (int rep = 0; rep < 3; ++rep) {
      std::printf("threads=%d lines=%2d  backoff64+yield %6.2f  backoff8+yield %6.2f  backoff4 %6.2f  ticket %6.2f  mcs %6.2f  mutex %6.2f  (M/s)\n",
                  threads, lines, run<Backoff<64, true>>(threads, lines, 0.2) / 1e6,
                  run<Backoff<8, true>>(threads, lines, 0.2) / 1e6, run<Backoff<4, false>>(threads, lines, 0.2) / 1e6,
                  run<Ticket>(threads, lines, 0.2) / 1e6, run<Mcs>(threads, lines, 0.2) / 1e6,
                  run<std::mutex>(threads, lines, 0.2) / 1e6);
    }
  }
}
