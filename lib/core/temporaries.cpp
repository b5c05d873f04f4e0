#include "core/temporaries.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "core/log.hpp"

namespace kglm {

namespace {

namespace fs = std::filesystem;

std::atomic<bool> sigpipe_caught{false};
// Never destroyed: the signal thread may still use them while static destructors run at exit.
std::mutex& registry_mutex() {
  static auto* mutex = new std::mutex();
  return *mutex;
}
std::vector<std::string>& registry() {
  static auto* paths = new std::vector<std::string>();
  return *paths;
}

constexpr int kInterruptSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGXCPU, SIGUSR1, SIGUSR2};

// Held by a CommitSection; the signal thread takes it before it removes anything and exits.
std::recursive_mutex& commit_mutex() {
  static auto* mutex = new std::recursive_mutex();  // a section may open inside another
  return *mutex;
}

std::atomic<int> deferred{0};  // the signal a long run asked to receive as a request (defer_signal)
std::atomic<int> requested{0};

void on_interrupt(int sig) {
  if (sig == deferred.load()) {
    requested.store(sig);
    return;
  }
  std::lock_guard section(commit_mutex());  // a commit under way ends first
  std::lock_guard lock(registry_mutex());
  std::error_code ec;
  for (const std::string& path : registry()) fs::remove_all(path, ec);
  // A closed pipe downstream is the reader's choice, not an event worth a message.
  if (sig != SIGPIPE) {
    log_error(std::string("interrupted by SIG") + sigabbrev_np(sig) + "; temporaries removed, exit status " +
              std::to_string(128 + sig));
  }
  ::_exit(128 + sig);
}

bool process_alive(long pid) {
  if (pid <= 0) return false;
  if (::kill(static_cast<pid_t>(pid), 0) == 0) return true;
  return errno != ESRCH;  // EPERM: someone else's process, alive
}

}  // namespace

void defer_signal(int sig) {
  deferred.store(sig);
  install_interrupt_cleanup();
}

int requested_stop() { return requested.load(); }

void register_temporary(const std::string& path) {
  std::lock_guard lock(registry_mutex());
  registry().push_back(path);
}

void unregister_temporary(const std::string& path) {
  std::lock_guard lock(registry_mutex());
  auto& paths = registry();
  auto it = std::find(paths.rbegin(), paths.rend(), path);
  if (it != paths.rend()) paths.erase(std::next(it).base());
}

void install_interrupt_cleanup() {
  static std::once_flag once;
  std::call_once(once, [] {
    // The handler only writes the signal number into a pipe (async-signal-safe), whichever thread
    // it lands on: libraries such as OpenBLAS start threads before main, so blocking the signals
    // in main's mask would not cover them. The thread below does the real work.
    static int pipe_fds[2] = {-1, -1};
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return;
    struct sigaction action {};
    action.sa_handler = [](int sig) {
      const int saved = errno;
      const unsigned char byte = static_cast<unsigned char>(sig);
      [[maybe_unused]] ssize_t n = ::write(pipe_fds[1], &byte, 1);
      errno = saved;
    };
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    for (int s : kInterruptSignals) {
      // A signal the parent ignores stays ignored: a shell script's background jobs must not
      // die of the Ctrl-C meant for the script (as sort(1) and others do).
      struct sigaction current {};
      if (::sigaction(s, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) continue;
      if (::sigaction(s, &action, nullptr) == 0 && s == SIGPIPE) sigpipe_caught = true;
    }
    std::thread([] {
      for (;;) {
        unsigned char byte = 0;
        ssize_t n = ::read(pipe_fds[0], &byte, 1);
        if (n == 1) on_interrupt(byte);
        if (n < 0 && errno != EINTR) return;
      }
    }).detach();
  });
}

void await_sigpipe_exit() {
  if (sigpipe_caught.load()) std::this_thread::sleep_for(std::chrono::seconds(2));
}

std::string temporary_name_for(const std::string& final_path) {
  return final_path + ".tmp." + std::to_string(::getpid());
}

size_t remove_stale_temporaries(const std::string& final_path) {
  fs::path final(final_path);
  fs::path dir = final.has_parent_path() ? final.parent_path() : fs::path(".");
  const std::string prefix = final.filename().string() + ".tmp.";
  size_t removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!name.starts_with(prefix)) continue;
    std::string_view rest = std::string_view(name).substr(prefix.size());
    size_t digits = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') ++digits;
    if (digits == 0 || (digits < rest.size() && rest[digits] != '.')) continue;
    long pid = std::strtol(std::string(rest.substr(0, digits)).c_str(), nullptr, 10);
    if (pid == ::getpid() || process_alive(pid)) continue;
    std::error_code rm;
    if (fs::remove_all(it->path(), rm) > 0 && !rm) {
      const std::string shown = final.has_parent_path() ? it->path().string() : name;
      log_warning(location(shown) + "removed the temporary of an interrupted run (pid " + std::to_string(pid) + ")");
      ++removed;
    }
  }
  return removed;
}

int open_anonymous_file(const std::string& dir) {
  const std::string where = dir.empty() ? std::string(".") : dir;
  int fd = -1;
#ifdef O_TMPFILE
  fd = ::open(where.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
#endif
  std::string pattern = where + "/.kglm-scratch.XXXXXX";
  fd = ::mkostemp(pattern.data(), O_CLOEXEC);
  if (fd < 0) throw Error(location(where) + "cannot create a scratch file: " + std::strerror(errno));
  ::unlink(pattern.c_str());
  return fd;
}

CommitSection::CommitSection() { commit_mutex().lock(); }

CommitSection::~CommitSection() { commit_mutex().unlock(); }

}  // namespace kglm
