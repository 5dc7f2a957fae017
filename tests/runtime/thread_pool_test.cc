// ThreadPool: every scheduled task runs, ParallelFor covers its range exactly once, and
// WaitUntilIdle returns only after all tasks (and tasks they scheduled) ran and released
// what they captured.
#include "runtime/thread_pool.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

namespace dflow {
namespace {

TEST_CASE("Every scheduled task runs before the pool is destroyed", "[thread_pool]") {
  std::atomic<int> ran{0};
  {
    ThreadPool pool(3, "test");
    for (int i = 0; i < 1000; ++i) pool.Schedule([&ran] { ran.fetch_add(1); });
  }
  CHECK(ran.load() == 1000);
}

TEST_CASE("ParallelFor covers [0, total) exactly once", "[thread_pool]") {
  ThreadPool pool(4, "test");
  for (int64_t total : {0, 1, 7, 1000, 100003}) {
    std::vector<std::atomic<int>> hits(total);
    pool.ParallelFor(total, 100000, [&hits](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) hits[i].fetch_add(1);
    });
    int64_t wrong = 0;
    for (const auto& h : hits) wrong += h.load() != 1;
    INFO("total " << total);
    CHECK(wrong == 0);
  }
}

// A kernel's shard that throws on a pool thread (a container's bad_alloc) used to end
// the process; now every shard completes and the caller gets the exception, inside the
// kernel's Compute where ComputeNoThrow turns it into a status (issue 15).
TEST_CASE("An exception in a ParallelFor shard reaches the caller, not std::terminate",
          "[thread_pool]") {
  ThreadPool pool(2, "test");
  for (int rep = 0; rep < 20; ++rep) {
    std::atomic<int64_t> covered{0};
    bool caught = false;
    try {
      pool.ParallelFor(1000, 100000, [&covered](int64_t begin, int64_t end) {
        covered.fetch_add(end - begin);
        if (begin > 0) throw std::bad_alloc();  // a shard other than the first one
      });
    } catch (const std::bad_alloc&) {
      caught = true;
    }
    CHECK(caught);
    CHECK(covered.load() == 1000);  // every shard ran
  }
  std::atomic<int> after{0};  // the pool still works
  pool.ParallelFor(100, 100000, [&after](int64_t begin, int64_t end) {
    after.fetch_add(static_cast<int>(end - begin));
  });
  CHECK(after.load() == 100);
}

TEST_CASE("WaitUntilIdle waits for chained tasks and their captures", "[thread_pool]") {
  ThreadPool pool(2, "test");
  std::atomic<int> ran{0};
  auto alive = std::make_shared<int>(0);
  std::weak_ptr<int> watch = alive;
  // Each task schedules the next, so the queue is empty between links while one runs;
  // every link holds `alive` until it is destroyed.
  std::function<void(int, std::shared_ptr<int>)> link = [&](int left, std::shared_ptr<int> keep) {
    pool.Schedule([&, left, keep] {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      ran.fetch_add(1);
      if (left > 1) link(left - 1, keep);
    });
  };
  link(50, alive);
  alive.reset();
  pool.WaitUntilIdle();
  CHECK(ran.load() == 50);
  CHECK(watch.expired());  // the last task's captures were released before it counted as done
}

TEST_CASE("WaitUntilIdle returns at once on an idle pool, from several threads", "[thread_pool]") {
  ThreadPool pool(2, "test");
  pool.WaitUntilIdle();
  std::atomic<int> ran{0};
  for (int i = 0; i < 200; ++i) pool.Schedule([&ran] { ran.fetch_add(1); });
  std::vector<std::thread> waiters;
  for (int t = 0; t < 3; ++t) waiters.emplace_back([&pool] { pool.WaitUntilIdle(); });
  for (std::thread& w : waiters) w.join();
  CHECK(ran.load() == 200);
}

TEST_CASE("WaitUntilIdle from a pool task waits for every other task", "[thread_pool]") {
  ThreadPool pool(2, "test");
  std::atomic<int> ran{0};
  std::atomic<int> seen_by_waiter{-1};
  std::atomic<bool> waiter_done{false};
  pool.Schedule([&] {
    for (int i = 0; i < 20; ++i) {
      pool.Schedule([&ran] {
        std::this_thread::sleep_for(std::chrono::microseconds(300));
        ran.fetch_add(1);
      });
    }
    pool.WaitUntilIdle();  // must not wait for itself
    seen_by_waiter = ran.load();
    waiter_done = true;
  });
  pool.WaitUntilIdle();
  CHECK(waiter_done.load());
  CHECK(seen_by_waiter.load() == 20);
}

}  // namespace
}  // namespace dflow
