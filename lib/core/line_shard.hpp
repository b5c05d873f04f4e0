// --shard I/N over the lines of input files, for the tools whose work is per line (verbalize render,
// pretrain prepare): shard I reads the lines whose first byte lies in bytes [I*S/N, (I+1)*S/N) of
// the inputs taken end to end (S their total size, compressed files counted by their compressed
// bytes). A compressed file, which cannot be entered at a byte, is one unit: all its lines go to the
// part its first byte is in (many compressed files, such as one per Wikipedia part, spread over the
// parts). Every array task computes the same cuts, so each line is in exactly one part, each task
// reads only its share, and the parts concatenated in shard order are the unsharded output.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/input_stream.hpp"
#include "core/shard.hpp"

namespace kglm {

struct LineShardRange {
  std::string path;
  uint64_t begin = 0, end = 0;  // byte offsets at line starts; begin == end: none of this file
};

// Whether `line` continues the group of the line before it (render --group-by-subject: one
// subject's subgraphs). A cut inside a group moves on to the group's end, so a group stays whole in
// one part; groups do not continue across files.
using SameGroup = std::function<bool(std::string_view previous, std::string_view line)>;

// The byte range of each input that `shard` reads (a compressed file: none, or all of it). Throws
// UsageError naming the input unless every input is a regular file (not stdin, not a pipe).
std::vector<LineShardRange> line_shard_ranges(const std::vector<std::string>& inputs, const Shard& shard,
                                              const SameGroup& same_group = {});

// From now on `in` (opened from range.path) reads only the range (nothing changes for a whole
// file), and is named
// "PATH (from byte B)", since the line numbers of its errors count from there.
void restrict_to_line_range(InputStream& in, const LineShardRange& range);

}  // namespace kglm
