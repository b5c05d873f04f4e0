#include "core/shard.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <map>

#include "core/error.hpp"

namespace kglm {

namespace {

uint64_t fnv1a(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

Shard parse_shard(const std::string& spec, const char* option) {
  unsigned long i = 0, n = 0;
  char tail = 0;
  if (std::sscanf(spec.c_str(), "%lu/%lu%c", &i, &n, &tail) != 2 || n == 0 || i >= n || n > UINT32_MAX ||
      spec.find('-') != std::string::npos)
    throw UsageError(std::string(option) + " expects I/N with 0 <= I < N, got '" + spec + "'");
  return {static_cast<uint32_t>(i), static_cast<uint32_t>(n)};
}

std::string shard_run_identity(const std::string& tool, const std::string& result_options,
                               const std::vector<std::string>& inputs) {
  std::string text = tool + '\n' + result_options;
  for (const std::string& path : inputs) {
    text += '\n' + base_name(path);
    struct stat st {};
    if (path != "-" && ::stat(path.c_str(), &st) == 0)
      text += ' ' + std::to_string(st.st_size) + ' ' + std::to_string(st.st_mtim.tv_sec);
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(text)));
  return hex;
}

void check_shard_set(const std::vector<ShardPart>& parts) {
  if (parts.empty()) throw UsageError("no parts to merge");
  const ShardPart& first = parts.front();
  std::map<uint32_t, const ShardPart*> by_index;
  for (const ShardPart& p : parts) {
    if (!p.shard.active()) throw Error(location(p.path) + "not a shard (written without --shard I/N)");
    if (p.shard.count != first.shard.count)
      throw Error(location(p.path) + "shard " + p.shard.str() + ", but " + first.path + " is shard " +
                  first.shard.str() + ": parts of two shard counts");
    if (p.run != first.run)
      throw Error(location(p.path) + "a shard of another run than " + first.path +
                  " (other options or inputs): merge the parts of one job array");
    const auto [at, inserted] = by_index.emplace(p.shard.index, &p);
    if (!inserted)
      throw Error(location(p.path) + "shard " + p.shard.str() + " a second time (also " + at->second->path +
                  "): each part once");
  }
  if (by_index.size() != first.shard.count) {
    std::string missing;
    size_t listed = 0;
    for (uint32_t i = 0; i < first.shard.count && listed < 8; ++i)
      if (!by_index.count(i)) missing += (listed++ ? ", " : "") + std::to_string(i);
    const size_t absent = first.shard.count - by_index.size();
    throw Error("an incomplete shard set: " + std::to_string(by_index.size()) + " of " +
                std::to_string(first.shard.count) + " parts given; missing shard " + missing +
                (absent > listed ? " and " + std::to_string(absent - listed) + " more" : "") +
                " (a failed array task? rerun it, then merge)");
  }
}

}  // namespace kglm
