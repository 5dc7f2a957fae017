// ThreadPool: the one pool that runs both independent nodes (inter-op) and the shards
// of a single kernel (intra-op), so the two never oversubscribe the cores.
//
// Waking a sleeping thread costs 50-80 us on a VM (a futex wake of an idle vCPU), more
// than many kernels take. So a worker that just finished a task spins briefly (~50 us)
// watching for new work before it sleeps, and Schedule() only pays for a wake-up when
// no worker is spinning. Idle pools still sleep: the spin follows work, never idleness.
//
// ParallelFor lets the calling thread take part: shards are claimed from a shared
// counter by the caller and by helper tasks alike, so a ParallelFor issued from a pool
// thread cannot deadlock waiting for work queued behind it. A caller that runs out of
// shards spins (up to the same ~50 us) for the helpers' running ones before it sleeps.
//
// Thread-safety: all methods may be called from any thread, including pool threads.
// The destructor runs queued work to completion and joins the threads.
#ifndef DFLOW_RUNTIME_THREAD_POOL_H_
#define DFLOW_RUNTIME_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace dflow {

class ThreadPool {
 public:
  // `num_threads` >= 1 worker threads named "<name>/<i>".
  ThreadPool(int num_threads, std::string name);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void Schedule(std::function<void()> fn);
  int NumThreads() const { return static_cast<int>(threads_.size()); }
  // True when called from one of this pool's threads.
  bool IsPoolThread() const;
  // Returns once no task is queued or running, including tasks that running tasks
  // scheduled. A step's last closure may still be unwinding (releasing device tensors)
  // after the step reported done; whoever destroys what those closures touch waits here
  // first. From a task of this pool: returns once every other task is done.
  void WaitUntilIdle();

  // Calls fn(begin, end) over disjoint ranges covering [0, total) and returns when all
  // are done. `cost_per_unit` (roughly cycles per element) decides how many shards are
  // worth the scheduling overhead; cheap small loops run inline. If `fn` throws, every
  // range still completes and the first exception reaches the caller once all are done
  // (never a pool thread, where it would end the process).
  void ParallelFor(int64_t total, int64_t cost_per_unit,
                   const std::function<void(int64_t, int64_t)>& fn);

 private:
  void WorkerLoop();
  // Spins up to the spin budget waiting for queued work; true if some appeared.
  bool SpinForWork();

  std::string name_;
  std::mutex mu_;
  std::condition_variable work_ready_;
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  std::atomic<int> queued_{0};    // queue_.size(), readable without the lock
  std::atomic<int> spinning_{0};  // workers spinning for work right now
  int sleeping_ = 0;              // workers blocked on work_ready_, guarded by mu_
  std::atomic<int> running_{0};   // tasks being run; incremented under mu_ as they leave queue_
  std::atomic<int> idle_waiters_{0};  // threads in WaitUntilIdle
  std::condition_variable idle_;      // notified under mu_ when running_ drops to 0
  std::vector<std::thread> threads_;
};

}  // namespace dflow

#endif  // DFLOW_RUNTIME_THREAD_POOL_H_
