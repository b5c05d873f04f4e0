#include "text/dump_shard.hpp"

#include <string_view>

#include "core/error.hpp"
#include "core/log.hpp"

namespace kglm::text {

namespace {

constexpr std::string_view kPage = "<page>";
constexpr size_t kMaxHeader = 64 << 20;  // a <siteinfo> is a few kB

// The first raw offset >= from where a shard may start.
uint64_t boundary(const InputStream& in, uint64_t from) {
  return in.compression() == Compression::bzip2 ? in.next_stream_start(from) : in.next_occurrence(from, kPage);
}

// The decoded dump up to its first <page>; empty when it has none.
std::string read_header(const std::string& path) {
  InputStream in(path);
  std::string text;
  std::string chunk(1 << 16, '\0');
  while (text.size() < kMaxHeader) {
    const size_t n = in.read(chunk.data(), chunk.size());
    if (n == 0) return {};
    const size_t from = text.size() >= kPage.size() ? text.size() - kPage.size() : 0;
    text.append(chunk.data(), n);
    const size_t at = text.find(kPage, from);
    if (at != std::string::npos) return text.substr(0, at);
  }
  throw Error(location(path) + "no <page> in the first " + std::to_string(kMaxHeader >> 20) +
              " MB: not a MediaWiki pages dump");
}

}  // namespace

DumpShard restrict_to_dump_shard(InputStream& input, const std::string& path, const Shard& shard) {
  if (input.raw_size() == 0 || path == "-")
    throw Error(location(input.name()) + "--shard reads its share of a named dump file, not of a stream");
  if (!input.splittable())
    throw Error(location(input.name()) + "a " + compression_name(input.compression()) +
                " file: --shard splits plain XML or a bzip2 multistream dump (pages-articles-multistream.xml.bz2); "
                "decompress it, or give each task a part of the dump");
  const uint64_t size = input.raw_size();
  DumpShard out;
  out.begin = shard.index == 0 ? 0 : boundary(input, shard.split_point(size, shard.index));
  out.end = shard.index + 1 == shard.count ? size : boundary(input, shard.split_point(size, shard.index + 1));
  if (out.end < out.begin) out.end = out.begin;
  input.read_range(out.begin, out.end);
  if (out.empty() && input.compression() == Compression::bzip2)
    log_warning(location(input.name()) + "no bzip2 stream starts in shard " + shard.str() +
                "'s bytes, so it has no pages: fewer streams than shards (a dump in one stream is read whole "
                "by shard 0; the multistream dump splits)");
  if (out.empty() || out.begin == 0) {
    if (!out.empty() && out.end < size) out.footer = "</mediawiki>\n";
    return out;
  }
  out.header = read_header(path);
  if (out.header.empty()) {  // a dump without pages: nothing for any shard but the first
    input.read_range(out.end, out.end);
    out.begin = out.end;
    return out;
  }
  if (input.compression() == Compression::bzip2) {
    std::string_view head = input.peek(4096);
    head.remove_prefix(std::min(head.size(), head.find_first_not_of(" \t\r\n")));
    if (!head.starts_with(kPage) && !head.starts_with("</mediawiki>"))
      throw Error(location(input.name()) + "the bzip2 stream at byte " + std::to_string(out.begin) +
                  " does not begin with a <page>: --shard needs a multistream dump "
                  "(pages-articles-multistream.xml.bz2), whose streams hold whole pages, or plain XML");
  }
  if (out.end < size) out.footer = "</mediawiki>\n";
  return out;
}

}  // namespace kglm::text
