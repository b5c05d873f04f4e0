// Temporary files and directories a run creates beside its outputs, and what happens to them
// when the run is interrupted: the one place that knows every temporary of the process.
//
// - install_interrupt_cleanup() (called by run_tool before any thread starts) blocks SIGINT,
//   SIGTERM, SIGHUP, SIGPIPE, SIGXCPU, SIGUSR1 and SIGUSR2 in every thread and waits for them in
//   one dedicated thread. On arrival it removes every registered temporary and exits with
//   128 + the signal number (SIGTERM: 143, SIGINT: 130), so Slurm's time-limit SIGTERM leaves
//   nothing behind. A signal handler could not safely walk a std::vector or call remove_all.
// - Named temporaries are NAME.tmp.<pid>[suffix]; remove_stale_temporaries() deletes those of
//   dead processes of this host beside an output (what SIGKILL leaves behind).
#pragma once

#include <string>

namespace kglm {

// Registered paths are removed (recursively for directories) on an interrupting signal.
void register_temporary(const std::string& path);
void unregister_temporary(const std::string& path);

// Blocks the interrupting signals and starts the thread that handles them; idempotent.
void install_interrupt_cleanup();

// "NAME.tmp.<pid>" for this process.
std::string temporary_name_for(const std::string& final_path);

// Removes NAME.tmp.<pid> and NAME.tmp.<pid>.* beside final_path whose process no longer runs on
// this host. Returns how many were removed.
size_t remove_stale_temporaries(const std::string& final_path);

// An anonymous scratch file in dir: O_TMPFILE where the file system allows (no name ever
// exists), otherwise a file unlinked right after creation. Returns an fd opened read-write.
int open_anonymous_file(const std::string& dir);

}  // namespace kglm
