// --shard I/N, the job-array split every sharding tool shares, and the check that a merge is given
// exactly the parts of one run: shard 0..N-1, each once, of the same options and inputs. A part
// missing (a failed array task), given twice, or left from another run would otherwise merge into a
// smaller or doubled output with exit 0.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kglm {

struct Shard {
  uint32_t index = 0;
  uint32_t count = 1;
  bool active() const { return count > 1; }
  std::string str() const { return std::to_string(index) + "/" + std::to_string(count); }
  // Where share k of `size` bytes begins, k*size/count (without overflow); shard I reads
  // [split_point(size, I), split_point(size, I+1)).
  uint64_t split_point(uint64_t size, uint64_t k) const {
    return static_cast<uint64_t>(static_cast<unsigned __int128>(size) * k / count);
  }
};

// "I/N" with 0 <= I < N; throws UsageError naming the option.
Shard parse_shard(const std::string& spec, const char* option = "--shard");

// What identifies the run a part belongs to, as 16 hex digits: the tool, the options that decide its
// output (ToolCli::result_options) and each input's name, size and modification time (a job
// array's tasks read the same files on a shared file system).
std::string shard_run_identity(const std::string& tool, const std::string& result_options,
                               const std::vector<std::string>& inputs);

struct ShardPart {
  std::string path;
  Shard shard;
  std::string run;  // shard_run_identity
};

// Throws Error, in one line naming the files, unless the parts are shards 0..N-1 of one N, each once,
// of one run.
void check_shard_set(const std::vector<ShardPart>& parts);

// A part whose output is a byte stream (JSONL or text, plain or compressed) records its shard, its
// run and its size in a sidecar, OUTPUT.shard.json, written after the output is in place. A part
// with companion files (wiki-extract's redirects beside its documents) names them there, each a
// part with its own record, by a path relative to the part's directory.
std::string shard_record_path(const std::string& output);
using ShardCompanions = std::vector<std::pair<std::string, std::string>>;  // (name, path)
void write_shard_record(const std::string& output, const Shard& shard, const std::string& run,
                        const ShardCompanions& companions = {});

// Concatenates the parts in shard order into output, and each named companion of the parts into
// the path given with its name, all put in place together: byte for byte where the parts are
// compressed as the output's name asks (zstd frames, gzip members and bzip2 streams concatenate
// into one valid stream), else decoded and written as the name asks. Refuses what check_shard_set refuses, a part
// without its record or its companion, and a part whose size is not the one recorded (changed since it was written).
// Returns the bytes written to output.
uint64_t concatenate_parts(const std::vector<std::string>& parts, const std::string& output,
                           const ShardCompanions& companion_outputs = {});

// A part that is a directory of files (cs-gen --split-by-lang: LANG.jsonl per language) records
// its shard, its run and each file's name and size in DIR.shard.json, beside the directory.
// merge_part_directories writes into `output` (a directory, locked while merging) each file name
// of any part, the concatenation of that file in the parts that have it, in shard order, all put
// in place together; refused as concatenate_parts refuses. Returns the bytes written.
void write_shard_directory_record(const std::string& dir, const Shard& shard, const std::string& run,
                                  const std::vector<std::string>& files);
uint64_t merge_part_directories(const std::vector<std::string>& dirs, const std::string& output);

// `TOOL merge PART... -o OUT | TOOL merge PARTDIR... --split-by-lang DIR` for a tool whose parts are
// byte streams or --split-by-lang directories (cs-gen kmlm, verbalize render): concatenate_parts or
// merge_part_directories, with the common options; `what` names the sharded command.
int merge_parts_command(const std::string& what, int argc, char** argv);

// Throws UsageError unless path can take a part: a regular file or a new name (not "-", a
// device, a FIFO or a directory), which the record can describe.
void require_part_file(const std::string& path);

}  // namespace kglm
