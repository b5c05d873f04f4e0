#include "core/shard.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <map>

#include <fcntl.h>
#include <simdjson.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

#include "core/atomic_file.hpp"
#include "core/cli.hpp"
#include "core/error.hpp"
#include "core/input_stream.hpp"
#include "core/json_writer.hpp"
#include "core/output_lock.hpp"
#include "core/output_stream.hpp"
#include "core/temporaries.hpp"

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

std::string shard_record_path(const std::string& output) { return output + ".shard.json"; }

void require_part_file(const std::string& path) {
  std::error_code ec;
  const auto type = std::filesystem::status(path, ec).type();
  if (path == "-" || (type != std::filesystem::file_type::not_found && type != std::filesystem::file_type::regular))
    throw UsageError("--shard writes its part to a file, not to " + (path == "-" ? std::string("stdout") : path));
}

void write_shard_record(const std::string& output, const Shard& shard, const std::string& run,
                        const ShardCompanions& companions) {
  struct stat st {};
  if (::stat(output.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    throw UsageError("--shard writes a part to a file (-o FILE), not to " + output);
  std::string json = "{\"shard_index\":" + std::to_string(shard.index) +
                     ",\"shard_count\":" + std::to_string(shard.count) + ",\"shard_run\":\"" + run +
                     "\",\"bytes\":" + std::to_string(st.st_size);
  const std::filesystem::path dir = std::filesystem::absolute(output).parent_path();
  for (const auto& [name, path] : companions) {
    json += ',';
    append_json_string(json, name);
    json += ':';
    append_json_string(json, std::filesystem::absolute(path).lexically_relative(dir).string());
  }
  write_file_atomically(shard_record_path(output), json + "}\n");
}

namespace {

// A part as its record describes it.
struct RecordedPart {
  ShardPart part;
  uint64_t bytes = 0;
  std::vector<std::string> companions;  // in the order asked for, resolved against the part's directory
};

// The shard and run of a part's record; the document stays in `parser`.
ShardPart read_record_header(const std::string& path, const std::string& record, simdjson::dom::parser& parser,
                             simdjson::dom::element& doc) {
  int64_t index = -1, count = 0;
  std::string_view run;
  if (parser.load(record).get(doc) != simdjson::SUCCESS || doc["shard_index"].get(index) != simdjson::SUCCESS ||
      doc["shard_count"].get(count) != simdjson::SUCCESS || doc["shard_run"].get(run) != simdjson::SUCCESS ||
      count < 1 || count > UINT32_MAX || index < 0 || index >= count)
    throw Error(location(path) + "not a part of a --shard run: its record " + record + " is missing or unreadable");
  return {path, {static_cast<uint32_t>(index), static_cast<uint32_t>(count)}, std::string(run)};
}

// Throws unless the file at path has the size its part's record gives.
void require_recorded_size(const std::string& path, int64_t bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw Error(location(path) + "cannot read: " + std::strerror(errno));
  if (static_cast<int64_t>(st.st_size) != bytes)
    throw Error(location(path) + std::to_string(st.st_size) + " bytes, but the part was written with " +
                std::to_string(bytes) + ": changed since (write the part again)");
}

RecordedPart read_part_record(const std::string& path, const ShardCompanions& wanted) {
  const std::string record = shard_record_path(path);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  RecordedPart out{read_record_header(path, record, parser, doc), 0, {}};
  int64_t bytes = -1;
  if (doc["bytes"].get(bytes) != simdjson::SUCCESS || bytes < 0)
    throw Error(location(path) + "not a part of a --shard run: its record " + record + " is missing or unreadable");
  require_recorded_size(path, bytes);
  out.bytes = static_cast<uint64_t>(bytes);
  for (const auto& [name, unused] : wanted) {
    std::string_view relative;
    if (doc[name].get(relative) != simdjson::SUCCESS)
      throw Error(location(path) + "the part has no " + name + " part (written without it?)");
    out.companions.push_back((std::filesystem::absolute(path).parent_path() / relative).lexically_normal().string());
  }
  return out;
}

// One merged output: the parts' bytes copied as they are when their compression is the one the
// output's name asks for (zstd frames, gzip members and bzip2 streams concatenate into one
// stream), else decoded and encoded again.
class MergedOutput {
 public:
  MergedOutput(const std::string& path, const std::vector<RecordedPart>& parts) {
    const Compression wanted = path == "-" ? Compression::plain : compression_for_suffix(path);
    bool same = true;
    for (const RecordedPart& p : parts)
      same = same && (p.bytes == 0 || InputStream(p.part.path).compression() == wanted);
    if (same)
      raw_ = std::make_unique<AtomicOutputFd>(path);
    else
      coded_ = std::make_unique<OutputStream>(path);
  }

  uint64_t append(const RecordedPart& part) {
    uint64_t copied = 0;
    if (coded_) {
      InputStream in(part.part.path);
      std::vector<char> buffer(1 << 20);
      while (const size_t n = in.read(buffer.data(), buffer.size())) coded_->write({buffer.data(), n});
      copied = in.raw_bytes_read();
    } else {
      const int fd = ::open(part.part.path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) throw Error(location(part.part.path) + "cannot open: " + std::strerror(errno));
      try {
        copied = copy_file_into(fd, part.part.path, raw_->fd(), raw_->name());
      } catch (...) {
        ::close(fd);
        throw;
      }
      ::close(fd);
    }
    if (copied != part.bytes) throw Error(location(part.part.path) + "changed while it was read");
    return copied;
  }
  void finish() { raw_ ? raw_->finish() : coded_->finish(); }
  void put_in_place() { raw_ ? raw_->put_in_place() : coded_->put_in_place(); }

 private:
  std::unique_ptr<AtomicOutputFd> raw_;
  std::unique_ptr<OutputStream> coded_;
};

}  // namespace

uint64_t concatenate_parts(const std::vector<std::string>& parts, const std::string& output,
                           const ShardCompanions& companion_outputs) {
  std::vector<RecordedPart> recorded;
  std::vector<ShardPart> set;
  for (const std::string& path : parts) {
    recorded.push_back(read_part_record(path, companion_outputs));
    set.push_back(recorded.back().part);
  }
  check_shard_set(set);
  std::sort(recorded.begin(), recorded.end(),
            [](const RecordedPart& a, const RecordedPart& b) { return a.part.shard.index < b.part.shard.index; });
  // The companions of the parts: each checked as a shard set of its own.
  std::vector<std::vector<RecordedPart>> companions(companion_outputs.size());
  for (size_t c = 0; c < companion_outputs.size(); ++c) {
    std::vector<ShardPart> companion_set;
    for (const RecordedPart& p : recorded) {
      companions[c].push_back(read_part_record(p.companions[c], {}));
      companion_set.push_back(companions[c].back().part);
      if (companion_set.back().shard.index != p.part.shard.index)
        throw Error(location(p.companions[c]) + "shard " + companion_set.back().shard.str() + ", but it is the " +
                    companion_outputs[c].first + " part of shard " + p.part.shard.str());
    }
    check_shard_set(companion_set);
  }
  MergedOutput out(output, recorded);
  uint64_t total = 0;
  for (const RecordedPart& p : recorded) total += out.append(p);
  std::vector<std::unique_ptr<MergedOutput>> companion_out;
  for (size_t c = 0; c < companion_outputs.size(); ++c) {
    companion_out.push_back(std::make_unique<MergedOutput>(companion_outputs[c].second, companions[c]));
    for (const RecordedPart& p : companions[c]) companion_out.back()->append(p);
  }
  out.finish();
  for (auto& c : companion_out) c->finish();
  const CommitSection together;
  out.put_in_place();
  for (auto& c : companion_out) c->put_in_place();
  return total;
}

namespace {

std::string without_trailing_slashes(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

}  // namespace

void write_shard_directory_record(const std::string& dir, const Shard& shard, const std::string& run,
                                  const std::vector<std::string>& files) {
  const std::string base = without_trailing_slashes(dir);
  std::string json = "{\"shard_index\":" + std::to_string(shard.index) +
                     ",\"shard_count\":" + std::to_string(shard.count) + ",\"shard_run\":\"" + run + "\",\"files\":{";
  for (size_t i = 0; i < files.size(); ++i) {
    struct stat st {};
    const std::string path = base + "/" + files[i];
    if (::stat(path.c_str(), &st) != 0) throw Error(location(path) + "cannot read: " + std::strerror(errno));
    if (i) json += ',';
    append_json_string(json, files[i]);
    json += ':' + std::to_string(st.st_size);
  }
  write_file_atomically(shard_record_path(base), json + "}}\n");
}

uint64_t merge_part_directories(const std::vector<std::string>& dirs, const std::string& output) {
  std::vector<ShardPart> set;
  std::map<std::string, std::vector<std::pair<uint32_t, RecordedPart>>> by_file;  // name -> (shard, part)
  for (const std::string& given : dirs) {
    const std::string dir = without_trailing_slashes(given);
    simdjson::dom::parser parser;
    simdjson::dom::element doc;
    set.push_back(read_record_header(dir, shard_record_path(dir), parser, doc));
    simdjson::dom::object files;
    if (doc["files"].get(files) != simdjson::SUCCESS)
      throw Error(location(dir) + "not a directory part of a --shard run: its record has no files");
    for (auto [name, size] : files) {
      int64_t bytes = -1;
      // A file of the directory, by a plain name (LANG.jsonl): never a path, "." or "..".
      if (size.get(bytes) != simdjson::SUCCESS || bytes < 0 || name.empty() || name[0] == '.' ||
          name.find('/') != std::string_view::npos)
        throw Error(location(shard_record_path(dir)) + "a bad file entry '" + std::string(name) + "'");
      const std::string path = dir + "/" + std::string(name);
      require_recorded_size(path, bytes);
      by_file[std::string(name)].emplace_back(
          set.back().shard.index,
          RecordedPart{{path, set.back().shard, set.back().run}, static_cast<uint64_t>(bytes), {}});
    }
  }
  check_shard_set(set);
  const OutputLock lock(output, "merged directory");
  make_directories(output);
  std::vector<std::unique_ptr<MergedOutput>> outputs;
  uint64_t total = 0;
  for (auto& [name, parts] : by_file) {
    std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<RecordedPart> ordered;
    for (auto& [index, part] : parts) ordered.push_back(part);
    outputs.push_back(std::make_unique<MergedOutput>(without_trailing_slashes(output) + "/" + name, ordered));
    for (const RecordedPart& part : ordered) total += outputs.back()->append(part);
  }
  for (auto& out : outputs) out->finish();
  const CommitSection together;
  for (auto& out : outputs) out->put_in_place();
  return total;
}

int merge_parts_command(const std::string& what, int argc, char** argv) {
  const std::string tool = what.substr(0, what.find(' '));
  const std::string usage = tool + " merge PART... -o out.jsonl | " + tool + " merge PARTDIR... --split-by-lang DIR";
  ToolCli cli(tool + " merge", usage,
              "Concatenate the parts 0..N-1 of one " + what +
                  " --shard I/N run, in order, into the unsharded output\n"
                  "(with --split-by-lang: each language's file of the part directories into DIR).");
  std::string split_dir;
  cli.add()("split-by-lang", po::value(&split_dir), "merge part directories of --split-by-lang runs into DIR");
  if (!cli.parse(argc, argv)) return 0;
  if (split_dir.empty()) cli.require_output();
  cli.require_inputs();
  Stats stats;
  stats.set("bytes",
            static_cast<int64_t>(split_dir.empty() ? concatenate_parts(cli.common().inputs, cli.common().output)
                                                   : merge_part_directories(cli.common().inputs, split_dir)));
  stats.set("shards", static_cast<int64_t>(cli.common().inputs.size()));
  report_stats(cli.common(), stats);
  return 0;
}

}  // namespace kglm
