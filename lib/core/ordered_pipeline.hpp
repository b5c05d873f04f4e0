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

namespace detail {

// The first exception thrown on any of a pipeline's threads, rethrown by the caller once they are
// joined; recording it wakes every waiter (and runs on_failure under the lock).
struct FirstFailure {
  std::mutex& mutex;
  std::condition_variable& changed;
  std::function<void()> on_failure;
  std::exception_ptr error;

  template <class F>
  void guard(F&& body) {
    try {
      body();
    } catch (...) {
      std::lock_guard lock(mutex);
      if (!error) error = std::current_exception();
      if (on_failure) on_failure();
      changed.notify_all();
    }
  }
  void rethrow() const {
    if (error) std::rethrow_exception(error);
  }
  // `workers` threads named kglm-work running body(worker) under guard().
  template <class F>
  std::vector<std::thread> start_workers(unsigned workers, F& body) {
    std::vector<std::thread> pool;
    for (unsigned w = 0; w < workers; ++w)
      pool.emplace_back([this, &body, w] {
        pthread_setname_np(pthread_self(), "kglm-work");
        guard([&] { body(w); });
      });
    return pool;
  }
};

}  // namespace detail

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
  detail::FirstFailure failed{mutex, changed, {}, {}};
  const std::exception_ptr& failure = failed.error;

  std::thread producer([&] {
    pthread_setname_np(pthread_self(), "kglm-produce");
    failed.guard([&] {
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
    });
    std::lock_guard lock(mutex);
    producer_finished = true;
    changed.notify_all();
  });

  auto worker = [&](unsigned w) {
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
  };
  std::vector<std::thread> pool = failed.start_workers(workers, worker);

  failed.guard([&] {
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
  });
  producer.join();
  for (auto& t : pool) t.join();
  failed.rethrow();
}

// Like run_ordered_pipeline, for tasks whose output has no bound (a hub's cycles): work(worker,
// task, emit) passes its output on in chunks through emit(chunk), and consume(chunk) takes them on
// the calling thread in task order, chunk by chunk. A task waits while `max_chunks` of its chunks
// are unconsumed, and at most `max_tasks` tasks are started and not yet consumed, so memory stays
// below max_tasks * max_chunks chunks whatever a task yields. next(task) runs under the pipeline's
// lock and returns false at the end. consume returns false to stop early: tasks still running see
// emit return false and should return. The first exception stops the pipeline and is rethrown here.
template <class Task, class Chunk>
void run_ordered_streams(unsigned workers, size_t max_tasks, size_t max_chunks, const std::function<bool(Task&)>& next,
                         const std::function<void(unsigned, Task&, const std::function<bool(Chunk&&)>&)>& work,
                         const std::function<bool(Chunk&)>& consume) {
  struct Slot {
    std::deque<Chunk> chunks;
    bool finished = false;
  };
  std::mutex mutex;
  std::condition_variable changed;
  std::map<uint64_t, Slot> slots;  // started and not yet consumed, by task number
  uint64_t started = 0, consumed = 0;
  bool tasks_finished = false, stopped = false;
  detail::FirstFailure failed{mutex, changed, [&] { stopped = true; }, {}};

  auto worker = [&](unsigned w) {
    for (;;) {
      Task task;
      uint64_t number = 0;
      {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return stopped || tasks_finished || started - consumed < max_tasks; });
        if (stopped || tasks_finished) return;
        if (!next(task)) {
          tasks_finished = true;
          changed.notify_all();
          return;
        }
        number = started++;
        slots[number];
      }
      const std::function<bool(Chunk &&)> emit = [&](Chunk&& chunk) {
        std::unique_lock lock(mutex);
        Slot& slot = slots.at(number);
        changed.wait(lock, [&] { return stopped || slot.chunks.size() < max_chunks; });
        if (stopped) return false;
        slot.chunks.push_back(std::move(chunk));
        changed.notify_all();
        return true;
      };
      work(w, task, emit);
      std::lock_guard lock(mutex);
      slots.at(number).finished = true;
      changed.notify_all();
    }
  };
  std::vector<std::thread> pool = failed.start_workers(workers, worker);

  failed.guard([&] {
    for (;;) {
      Chunk chunk;
      {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] {
          if (stopped) return true;
          auto it = slots.find(consumed);
          if (it == slots.end()) return tasks_finished && consumed == started;
          return !it->second.chunks.empty() || it->second.finished;
        });
        if (stopped) break;
        auto it = slots.find(consumed);
        if (it == slots.end()) break;     // every task consumed
        if (it->second.chunks.empty()) {  // finished and drained
          slots.erase(it);
          ++consumed;
          changed.notify_all();
          continue;
        }
        chunk = std::move(it->second.chunks.front());
        it->second.chunks.pop_front();
        changed.notify_all();
      }
      if (!consume(chunk)) {
        std::lock_guard lock(mutex);
        stopped = true;
        changed.notify_all();
        break;
      }
    }
  });
  for (auto& t : pool) t.join();
  failed.rethrow();
}

}  // namespace kglm
