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
// run and its size in a sidecar, OUTPUT.shard.json, written after the output is in place.
std::string shard_record_path(const std::string& output);
void write_shard_record(const std::string& output, const Shard& shard, const std::string& run);

// Concatenates the parts' bytes in shard order into output (zstd frames and gzip members
// concatenate into one valid stream), atomically. Refuses what check_shard_set refuses, a part
// without its record, and a part whose size is not the one recorded (changed since it was written).
// Returns the bytes written.
uint64_t concatenate_parts(const std::vector<std::string>& parts, const std::string& output);

}  // namespace kglm
