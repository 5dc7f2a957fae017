#include "runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <memory>

namespace dflow {
namespace {

thread_local const ThreadPool* current_pool = nullptr;

// Below this much work (cycles) a shard is not worth a thread hand-off (~5 us).
constexpr int64_t kMinCyclesPerShard = 20000;

// How long a worker that just ran a task watches for more before sleeping.
constexpr auto kSpinBudget = std::chrono::microseconds(50);

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Shared by the caller and the helper tasks of one ParallelFor.
struct ParallelForState {
  int64_t total = 0;
  int64_t block = 0;
  int64_t num_blocks = 0;
  std::function<void(int64_t, int64_t)> fn;
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> done{0};
  std::mutex mu;
  std::condition_variable all_done;
  std::exception_ptr error;  // the first exception a block threw (guarded by mu)

  // Claims and runs blocks until none are left. A block that throws (a kernel's
  // container asking for too much memory) is counted as done and its exception kept for
  // the caller: on a pool thread it would end the process (std::terminate).
  void Drain() {
    for (int64_t b; (b = next.fetch_add(1)) < num_blocks;) {
      const int64_t begin = b * block;
      try {
        fn(begin, std::min(total, begin + block));
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
      }
      if (done.fetch_add(1) + 1 == num_blocks) {
        std::lock_guard<std::mutex> lock(mu);
        all_done.notify_all();
      }
    }
  }
};

}  // namespace

ThreadPool::ThreadPool(int num_threads, std::string name) : name_(std::move(name)) {
  num_threads = std::max(1, num_threads);
  threads_.reserve(num_threads);
  for (int i = 0; i < num_threads; ++i) threads_.emplace_back([this] { WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ThreadPool::Schedule(std::function<void()> fn) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(fn));
    queued_.fetch_add(1, std::memory_order_release);
    // Spinning workers will pick tasks up; wake a sleeper only for tasks beyond them.
    wake = sleeping_ > 0 && queued_.load(std::memory_order_relaxed) >
                                spinning_.load(std::memory_order_acquire);
  }
  if (wake) work_ready_.notify_one();
}

bool ThreadPool::SpinForWork() {
  spinning_.fetch_add(1, std::memory_order_acq_rel);
  const auto deadline = std::chrono::steady_clock::now() + kSpinBudget;
  bool found = false;
  for (int i = 0; !found; ++i) {
    found = queued_.load(std::memory_order_acquire) > 0;
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > deadline) break;
    CpuRelax();
  }
  spinning_.fetch_sub(1, std::memory_order_acq_rel);
  return found;
}

bool ThreadPool::IsPoolThread() const { return current_pool == this; }

void ThreadPool::WorkerLoop() {
  current_pool = this;
  bool just_worked = false;
  for (;;) {
    if (just_worked) SpinForWork();
    std::function<void()> fn;
    {
      std::unique_lock<std::mutex> lock(mu_);
      ++sleeping_;
      work_ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      --sleeping_;
      if (queue_.empty()) return;  // stopping and drained
      fn = std::move(queue_.front());
      queue_.pop_front();
      queued_.fetch_sub(1, std::memory_order_release);
      running_.fetch_add(1, std::memory_order_seq_cst);
    }
    fn();
    fn = nullptr;  // the task's captures count as part of the task
    // seq_cst pairs with WaitUntilIdle: either it sees running_ drop, or this sees it
    // waiting. A waiter on a pool thread waits for 1 (itself), hence <= 2.
    if (running_.fetch_sub(1, std::memory_order_seq_cst) <= 2 &&
        idle_waiters_.load(std::memory_order_seq_cst) > 0) {
      std::lock_guard<std::mutex> lock(mu_);
      idle_.notify_all();
    }
    just_worked = true;
  }
}

void ThreadPool::WaitUntilIdle() {
  // From one of the pool's own tasks, "idle" means every other task is done.
  const int self = IsPoolThread() ? 1 : 0;
  std::unique_lock<std::mutex> lock(mu_);
  idle_waiters_.fetch_add(1, std::memory_order_seq_cst);
  idle_.wait(lock, [this, self] {
    return queue_.empty() && running_.load(std::memory_order_seq_cst) == self;
  });
  idle_waiters_.fetch_sub(1, std::memory_order_seq_cst);
}

void ThreadPool::ParallelFor(int64_t total, int64_t cost_per_unit,
                             const std::function<void(int64_t, int64_t)>& fn) {
  if (total <= 0) return;
  // Several shards per thread, so a thread that finishes early takes more work.
  constexpr int64_t kShardsPerThread = 4;
  const int64_t max_shards = kShardsPerThread * (NumThreads() + (IsPoolThread() ? 0 : 1));
  const int64_t work = total * std::max<int64_t>(cost_per_unit, 1);
  const int64_t shards = std::clamp<int64_t>(work / kMinCyclesPerShard, 1,
                                             std::min(max_shards, total));
  if (shards == 1) {
    fn(0, total);
    return;
  }
  auto state = std::make_shared<ParallelForState>();
  state->total = total;
  state->block = (total + shards - 1) / shards;
  state->num_blocks = (total + state->block - 1) / state->block;
  state->fn = fn;
  // One helper per other thread (each drains blocks until none are left), not one per
  // block: the rest would only be queued, locked and dropped.
  const int64_t helpers = std::min<int64_t>(state->num_blocks - 1,
                                            NumThreads() - (IsPoolThread() ? 1 : 0));
  for (int64_t i = 0; i < helpers; ++i) Schedule([state] { state->Drain(); });
  state->Drain();
  // Every block is claimed; the ones still running are on threads that took them, so
  // they end within a block's time. Spin for them first: sleeping on the condition
  // variable would cost a futex wake of this thread (50-80 us on a VM), a fifth of a
  // 2-thread MLP step.
  const auto deadline = std::chrono::steady_clock::now() + kSpinBudget;
  for (int i = 0; state->done.load(std::memory_order_acquire) != state->num_blocks; ++i) {
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > deadline) break;
    CpuRelax();
  }
  std::unique_lock<std::mutex> lock(state->mu);
  state->all_done.wait(lock, [&] { return state->done.load() == state->num_blocks; });
  // Hand a block's exception back to the thread that called ParallelFor, inside the
  // kernel's Compute, where ComputeNoThrow (op_kernel.h) turns it into the step's status.
  if (state->error) std::rethrow_exception(state->error);
}

}  // namespace dflow
