#include "core/log.hpp"

#include <cstdio>
#include <mutex>
#include <string>

namespace kglm {
namespace {

std::string g_tool = "kglm";
bool g_quiet = false;
std::mutex g_mutex;

// Warnings and errors are one line each (man 7 kglm): line breaks inside a message (libxml2's
// and ICU's messages have them) become "; ", trailing ones are dropped.
std::string one_line(std::string_view message) {
  while (!message.empty() && (message.back() == '\n' || message.back() == '\r' || message.back() == ' '))
    message.remove_suffix(1);
  std::string out;
  out.reserve(message.size());
  for (char c : message) {
    if (c == '\n')
      out += "; ";
    else if (c != '\r')
      out += c;
  }
  return out;
}

void emit(std::string_view level, std::string_view message) {
  std::lock_guard lock(g_mutex);
  std::string line = g_tool + ": ";
  line += level;
  line += level.empty() ? std::string(message) : one_line(message);
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
}

}  // namespace

void set_log_tool_name(std::string_view name) { g_tool = name; }
void set_log_quiet(bool quiet) { g_quiet = quiet; }
bool log_quiet() { return g_quiet; }

void log_info(std::string_view message) {
  if (!g_quiet) emit("", message);
}
void log_warning(std::string_view message) { emit("warning: ", message); }
void log_error(std::string_view message) { emit("error: ", message); }

}  // namespace kglm
