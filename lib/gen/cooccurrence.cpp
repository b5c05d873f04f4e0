#include "gen/cooccurrence.hpp"

#include <algorithm>
#include <charconv>
#include <vector>

#include "core/error.hpp"
#include "core/line_batcher.hpp"
#include "core/output_stream.hpp"

namespace kglm::gen {

namespace {

bool parse_property(std::string_view s, uint64_t& number) {
  if (s.size() < 2 || s[0] != 'P') return false;
  auto [end, ec] = std::from_chars(s.data() + 1, s.data() + s.size(), number);
  return ec == std::errc() && end == s.data() + s.size() && number > 0 && number < (uint64_t{1} << 32);
}

}  // namespace

void CooccurrenceTable::add(uint64_t a, uint64_t b, uint64_t count) { counts_[key(a, b)] += count; }

uint64_t CooccurrenceTable::count(uint64_t a, uint64_t b) const {
  auto it = counts_.find(key(a, b));
  return it == counts_.end() ? 0 : it->second;
}

CooccurrenceTable CooccurrenceTable::read(const std::vector<std::string>& paths) {
  CooccurrenceTable total;
  for (const std::string& path : paths) {
    CooccurrenceTable table;
    for_each_data_line(path, [&](uint64_t line, std::string_view text) {
      const size_t t1 = text.find('\t');
      const size_t t2 = t1 == std::string_view::npos ? t1 : text.find('\t', t1 + 1);
      uint64_t a = 0, b = 0, count = 0;
      bool ok = t2 != std::string_view::npos && parse_property(text.substr(0, t1), a) &&
                parse_property(text.substr(t1 + 1, t2 - t1 - 1), b);
      if (ok) {
        const std::string_view c = text.substr(t2 + 1);
        auto [end, ec] = std::from_chars(c.data(), c.data() + c.size(), count);
        ok = ec == std::errc() && end == c.data() + c.size();
      }
      if (!ok) throw Error(location(path, line) + "expected 'P<number><TAB>P<number><TAB>count'");
      if (!table.counts_.emplace(key(a, b), count).second)
        throw Error(location(path, line) + "the pair " + std::string(text.substr(0, t2)) + " is given twice");
    });
    for (const auto& [k, count] : table.counts_) total.counts_[k] += count;
  }
  return total;
}

void CooccurrenceTable::write(const std::string& path) const {
  std::vector<std::pair<uint64_t, uint64_t>> rows(counts_.begin(), counts_.end());
  std::sort(rows.begin(), rows.end());
  std::string buffer = "# relation_i\trelation_j\tcount\n";
  for (const auto& [k, count] : rows)
    buffer +=
        "P" + std::to_string(k >> 32) + "\tP" + std::to_string(k & 0xFFFFFFFFu) + "\t" + std::to_string(count) + "\n";
  OutputStream out(path);
  out.write(buffer);
  out.close();
}

}  // namespace kglm::gen
