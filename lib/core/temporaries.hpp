// Temporary files and directories a run creates beside its outputs, and what happens to them
// when the run is interrupted: the one place that knows every temporary of the process.
//
// - install_interrupt_cleanup() (called by run_tool) catches SIGINT, SIGTERM, SIGHUP, SIGPIPE,
//   SIGXCPU, SIGUSR1 and SIGUSR2 and hands them to one dedicated thread through a pipe. That thread
//   removes every registered temporary and exits with 128 + the signal number (SIGTERM: 143,
//   SIGINT: 130), so Slurm's time-limit SIGTERM leaves nothing behind. A signal handler itself
//   could not safely walk a std::vector or call remove_all. Signals ignored at start (nohup's
//   SIGHUP, SIGINT for a script's background jobs) stay ignored.
// - Named temporaries are NAME.tmp.<pid>[suffix]; remove_stale_temporaries() deletes those of
//   dead processes of this host beside an output (what SIGKILL leaves behind).
#pragma once

#include <string>

namespace kglm {

// Registered paths are removed (recursively for directories) on an interrupting signal.
void register_temporary(const std::string& path);
void unregister_temporary(const std::string& path);

// Installs the handlers and starts the thread that acts on them; idempotent.
void install_interrupt_cleanup();

// A long run that can stop cleanly (pretrain: checkpoint, then exit) asks for `sig` (SIGUSR1, what
// Slurm's --signal sends before the time limit) as a request instead of an interruption: the
// signal then only sets what requested_stop() returns, and the run acts on it when it can.
void defer_signal(int sig);
int requested_stop();  // the deferred signal once received, else 0

// After a write failed with EPIPE: SIGPIPE is already on its way to the cleanup thread, which
// exits quietly with 141 like any tool whose reader went away; give it a moment to do so rather
// than report a "Broken pipe" error first. Returns if it does not.
void await_sigpipe_exit();

// Held while a run puts the parts of one output in place, one rename after another (a dataset's
// shards, wiki-extract's documents and redirects): an interrupting signal waits until the section
// ends, so that a reader finds every part new or every part old, never a mix. Write and sync
// every part before (they can fail); inside, only the renames. A directory output is written whole
// inside one (write_directory_atomically): a signal that removed DIR.tmp.<pid> while files were
// still being made in it left the directory behind (seen: SIGTERM during a --save-every save).
class CommitSection {
 public:
  CommitSection();
  ~CommitSection();
  CommitSection(const CommitSection&) = delete;
  CommitSection& operator=(const CommitSection&) = delete;
};

// "NAME.tmp.<pid>" for this process.
std::string temporary_name_for(const std::string& final_path);

// Removes NAME.tmp.<pid> and NAME.tmp.<pid>.* beside final_path whose process no longer runs on
// this host. Returns how many were removed.
size_t remove_stale_temporaries(const std::string& final_path);

// An anonymous scratch file in dir: O_TMPFILE where the file system allows (no name ever
// exists), otherwise a file unlinked right after creation. Returns an fd opened read-write.
int open_anonymous_file(const std::string& dir);

}  // namespace kglm
