#include "sample/plan.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "core/error.hpp"
#include "core/input_kind.hpp"
#include "core/input_stream.hpp"
#include "core/line_batcher.hpp"

namespace kglm::sample {

SizeUnit parse_size_unit(std::string_view name) {
  if (name == "lines") return SizeUnit::lines;
  if (name == "tokens") return SizeUnit::tokens;
  if (name == "bytes") return SizeUnit::bytes;
  throw UsageError("--unit must be lines, tokens or bytes, not '" + std::string(name) + "'");
}

const char* size_unit_name(SizeUnit unit) {
  switch (unit) {
    case SizeUnit::lines:
      return "lines";
    case SizeUnit::tokens:
      return "tokens";
    case SizeUnit::bytes:
      return "bytes";
  }
  return "?";
}

std::vector<double> smoothed_distribution(std::span<const double> sizes, double alpha) {
  if (!(alpha >= 0) || !std::isfinite(alpha)) throw UsageError("alpha must be a finite number >= 0");
  double sum = 0;
  for (double n : sizes) {
    if (!(n >= 0)) throw Error("language sizes must be >= 0");
    sum += n;
  }
  if (sum == 0) throw Error("every language is empty: nothing to sample");
  std::vector<double> q(sizes.size(), 0.0);
  double norm = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) continue;  // pow(0, 0) is 1, but an empty language cannot be sampled
    q[i] = std::pow(sizes[i] / sum, alpha);
    norm += q[i];
  }
  for (double& x : q) x /= norm;
  return q;
}

uint64_t Plan::total_units() const {
  uint64_t sum = 0;
  for (const PlanRow& r : rows) sum += r.units;
  return sum;
}

uint64_t Plan::total_target() const {
  uint64_t sum = 0;
  for (const PlanRow& r : rows) sum += r.target;
  return sum;
}

namespace {

// Rounds shares (which add up to `total`) to integers that add up to it exactly: floors first,
// then one more unit to the largest remainders (ties to the earlier language).
std::vector<uint64_t> round_to_total(const std::vector<double>& shares, uint64_t total) {
  std::vector<uint64_t> out(shares.size());
  std::vector<double> remainder(shares.size());
  uint64_t assigned = 0;
  for (size_t i = 0; i < shares.size(); ++i) {
    out[i] = static_cast<uint64_t>(std::floor(shares[i]));
    remainder[i] = shares[i] - static_cast<double>(out[i]);
    assigned += out[i];
  }
  std::vector<size_t> order(shares.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return remainder[a] > remainder[b]; });
  // Floating-point error can leave the floors a unit above or below the total; both are fixed here.
  for (size_t k = 0; assigned < total; k = (k + 1) % order.size())
    if (shares[order[k]] > 0) ++out[order[k]], ++assigned;
  for (size_t k = order.size(); assigned > total;) {
    k = (k == 0 ? order.size() : k) - 1;
    if (out[order[k]] > 0) --out[order[k]], --assigned;
  }
  return out;
}

}  // namespace

Plan make_plan(SizeUnit unit, std::vector<LanguageSize> sizes, const PlanOptions& options) {
  if (sizes.empty()) throw Error("no languages to sample");
  std::sort(sizes.begin(), sizes.end(), [](const LanguageSize& a, const LanguageSize& b) { return a.lang < b.lang; });
  for (size_t i = 1; i < sizes.size(); ++i)
    if (sizes[i].lang == sizes[i - 1].lang) throw Error("language '" + sizes[i].lang + "' is listed twice");
  double alpha = options.alpha;
  bool keep_smallest = options.keep_smallest;
  if (options.truncate) {
    if (options.total) throw UsageError("--truncate sets the scale itself: it cannot take --total");
    alpha = 0;
    keep_smallest = true;
  }
  if (keep_smallest && options.total) throw UsageError("--keep-smallest and --total are two different scales");

  std::vector<double> n(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) n[i] = static_cast<double>(sizes[i].units);
  std::vector<double> q = smoothed_distribution(n, alpha);
  double sum = std::accumulate(n.begin(), n.end(), 0.0);

  Plan plan;
  plan.unit = unit;
  std::vector<uint64_t> target;
  if (keep_smallest) {
    size_t smallest = sizes.size();
    for (size_t i = 0; i < sizes.size(); ++i)
      if (sizes[i].units > 0 && (smallest == sizes.size() || sizes[i].units < sizes[smallest].units)) smallest = i;
    for (size_t i = 0; i < sizes.size(); ++i)
      target.push_back(i == smallest ? sizes[i].units
                                     : static_cast<uint64_t>(std::llround(n[smallest] * q[i] / q[smallest])));
  } else {
    uint64_t total = options.total ? *options.total : static_cast<uint64_t>(sum);
    std::vector<double> shares(q.size());
    for (size_t i = 0; i < q.size(); ++i) shares[i] = q[i] * static_cast<double>(total);
    target = round_to_total(shares, total);
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    PlanRow row;
    row.lang = sizes[i].lang;
    row.records = sizes[i].records;
    row.units = sizes[i].units;
    row.p = n[i] / sum;
    row.q = q[i];
    row.target = target[i];
    row.ratio = row.units ? static_cast<double>(row.target) / n[i] : 0.0;
    plan.rows.push_back(std::move(row));
  }
  return plan;
}

std::string format_plan(const Plan& plan) {
  std::string out = std::string("#lang\trecords\t") + size_unit_name(plan.unit) + "\tp\tq\ttarget\tratio\n";
  char buf[256];
  for (const PlanRow& r : plan.rows) {
    std::snprintf(buf, sizeof buf, "\t%llu\t%llu\t%.6f\t%.6f\t%llu\t%.4f\n", static_cast<unsigned long long>(r.records),
                  static_cast<unsigned long long>(r.units), r.p, r.q, static_cast<unsigned long long>(r.target),
                  r.ratio);
    out += r.lang;
    out += buf;
  }
  return out;
}

namespace {

std::vector<std::string_view> split_tabs(std::string_view line) {
  std::vector<std::string_view> fields;
  for (size_t pos = 0;;) {
    size_t tab = line.find('\t', pos);
    fields.push_back(line.substr(pos, tab - pos));
    if (tab == std::string_view::npos) return fields;
    pos = tab + 1;
  }
}

uint64_t parse_count(std::string_view field, const std::string& where) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (ec != std::errc() || end != field.data() + field.size() || field.empty())
    throw Error(where + "'" + std::string(field) + "' is not a count");
  return value;
}

}  // namespace

std::vector<LanguageSize> read_counts(const std::string& path, SizeUnit unit) {
  InputStream in(path);
  require_text_input(in, "a counts table (sample-lang --plan)");
  LineBatcher batcher(in, 1 << 20);
  LineBatch batch;
  std::vector<LanguageSize> sizes;
  long lang_col = -1, unit_col = -1, records_col = -1;
  bool header_seen = false;
  while (batcher.next(batch)) {
    batch.for_each_line([&](uint64_t line_no, std::string_view line) {
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.empty()) return;
      std::string where = location(path, line_no);
      if (!header_seen) {
        if (line[0] != '#') throw Error(where + "the first line must be a '#' header naming the columns");
        line.remove_prefix(1);
        auto names = split_tabs(line);
        for (size_t c = 0; c < names.size(); ++c) {
          if (names[c] == "lang") lang_col = static_cast<long>(c);
          if (names[c] == size_unit_name(unit)) unit_col = static_cast<long>(c);
          if (names[c] == "records") records_col = static_cast<long>(c);
        }
        if (lang_col < 0 || unit_col < 0)
          throw Error(where + "the header needs the columns 'lang' and '" + size_unit_name(unit) + "'");
        header_seen = true;
        return;
      }
      if (line[0] == '#') return;
      auto fields = split_tabs(line);
      long needed = std::max({lang_col, unit_col, records_col});
      if (static_cast<long>(fields.size()) <= needed)
        throw Error(where + "expected at least " + std::to_string(needed + 1) + " columns");
      LanguageSize size;
      size.lang = std::string(fields[static_cast<size_t>(lang_col)]);
      if (size.lang.empty()) throw Error(where + "empty language");
      size.units = parse_count(fields[static_cast<size_t>(unit_col)], where);
      if (records_col >= 0)
        size.records = parse_count(fields[static_cast<size_t>(records_col)], where);
      else if (unit == SizeUnit::lines)
        size.records = size.units;
      sizes.push_back(std::move(size));
    });
  }
  if (!batcher.stream_error().empty()) throw Error(location(path) + batcher.stream_error());
  if (!header_seen) throw Error(location(path) + "empty counts file");
  return sizes;
}

}  // namespace kglm::sample
