// The share of a MediaWiki dump that one task of a job array reads (wiki-extract --shard I/N): the
// pages whose <page> tag (plain XML) or bzip2 stream (a multistream dump, whose streams hold whole
// pages) starts in raw bytes [I*S/N, (I+1)*S/N) of the file. Every task finds the same boundaries,
// so the N shards hold each page once, in the dump's order, and decompress only their own streams.
#pragma once

#include <cstdint>
#include <string>

#include "core/input_stream.hpp"
#include "core/shard.hpp"

namespace kglm::text {

struct DumpShard {
  uint64_t begin = 0, end = 0;  // raw bytes read
  std::string header;           // the dump up to its first <page> (<mediawiki>, <siteinfo>), for begin > 0
  std::string footer;           // "</mediawiki>" for a shard before the last
  bool empty() const { return begin == end; }
};

// Finds the shard's range in `input` (a plain or bzip2 regular file) and restricts the input to
// it. Throws Error when the file cannot be split that way: another compression, or a bzip2 file
// whose streams do not start at pages (not a multistream dump).
DumpShard restrict_to_dump_shard(InputStream& input, const std::string& path, const Shard& shard);

}  // namespace kglm::text
