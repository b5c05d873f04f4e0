// A fixed set of threads running submitted tasks; submit() returns a future for the result.
#pragma once

#include <pthread.h>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace kglm {

class ThreadPool {
 public:
  explicit ThreadPool(unsigned threads) {
    for (unsigned i = 0; i < std::max(1u, threads); ++i) {
      workers_.emplace_back([this] {
        pthread_setname_np(pthread_self(), "kglm-pool");
        for (;;) {
          std::function<void()> task;
          {
            std::unique_lock lock(mutex_);
            ready_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
            if (tasks_.empty()) return;
            task = std::move(tasks_.front());
            tasks_.pop_front();
          }
          task();
        }
      });
    }
  }
  ~ThreadPool() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    ready_.notify_all();
    for (auto& t : workers_) t.join();
  }
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  template <class F>
  auto submit(F&& f) -> std::future<decltype(f())> {
    auto task = std::make_shared<std::packaged_task<decltype(f())()>>(std::forward<F>(f));
    auto future = task->get_future();
    {
      std::lock_guard lock(mutex_);
      tasks_.emplace_back([task] { (*task)(); });
    }
    ready_.notify_one();
    return future;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> tasks_;
  std::vector<std::thread> workers_;
  bool stop_ = false;
};

}  // namespace kglm
