// Producer -> N workers -> consumer, with results consumed in production order. This is how
// tools parallelise record processing yet write byte-identical outputs for any --threads.
#pragma once

#include <pthread.h>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace kglm {

// produce(item) runs on its own thread and returns false at the end; work(worker, item, result)
// runs on `workers` threads; consume(result) runs on the calling thread in the order the items
// were produced. At most `max_in_flight` items exist at once, which bounds memory. The first
// exception thrown anywhere stops the pipeline and is rethrown here.
template <class Item, class Result>
void run_ordered_pipeline(unsigned workers, size_t max_in_flight, const std::function<bool(Item&)>& produce,
                          const std::function<void(unsigned, Item&, Result&)>& work,
                          const std::function<void(Result&)>& consume) {
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<std::pair<uint64_t, Item>> pending;
  std::map<uint64_t, Result> done;
  uint64_t produced = 0;
  uint64_t consumed = 0;
  bool producer_finished = false;
  std::exception_ptr failure;

  auto fail = [&](std::exception_ptr e) {
    std::lock_guard lock(mutex);
    if (!failure) failure = e;
    changed.notify_all();
  };

  std::thread producer([&] {
    pthread_setname_np(pthread_self(), "kglm-produce");
    try {
      for (;;) {
        {
          std::unique_lock lock(mutex);
          changed.wait(lock, [&] { return failure || produced - consumed < max_in_flight; });
          if (failure) break;
        }
        Item item;
        if (!produce(item)) break;
        std::lock_guard lock(mutex);
        pending.emplace_back(produced++, std::move(item));
        changed.notify_all();
      }
    } catch (...) {
      fail(std::current_exception());
    }
    std::lock_guard lock(mutex);
    producer_finished = true;
    changed.notify_all();
  });

  std::vector<std::thread> pool;
  for (unsigned w = 0; w < workers; ++w) {
    pool.emplace_back([&, w] {
      pthread_setname_np(pthread_self(), "kglm-work");
      try {
        for (;;) {
          std::pair<uint64_t, Item> job;
          {
            std::unique_lock lock(mutex);
            changed.wait(lock, [&] { return failure || !pending.empty() || producer_finished; });
            if (failure || pending.empty()) return;
            job = std::move(pending.front());
            pending.pop_front();
          }
          Result result;
          work(w, job.second, result);
          std::lock_guard lock(mutex);
          done.emplace(job.first, std::move(result));
          changed.notify_all();
        }
      } catch (...) {
        fail(std::current_exception());
      }
    });
  }

  try {
    for (;;) {
      Result result;
      {
        std::unique_lock lock(mutex);
        changed.wait(
            lock, [&] { return failure || done.count(consumed) > 0 || (producer_finished && consumed == produced); });
        if (failure || done.count(consumed) == 0) break;
        auto it = done.find(consumed);
        result = std::move(it->second);
        done.erase(it);
      }
      consume(result);
      std::lock_guard lock(mutex);
      ++consumed;
      changed.notify_all();
    }
  } catch (...) {
    fail(std::current_exception());
  }
  producer.join();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace kglm
