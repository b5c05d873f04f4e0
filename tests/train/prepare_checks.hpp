// Checks shared by the token dataset tests: a dataset made by run_prepare against the tokenizer's
// own encodings (nothing lost, cuts at word starts, span flags by byte overlap), and equality of
// two datasets' contents.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/json_writer.hpp"
#include "tok/tokenizer.hpp"
#include "train/prepare.hpp"
#include "train/token_dataset.hpp"

namespace kglm::train::checks {

inline void write_text(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream out(path, std::ios::binary);
  for (const auto& l : lines) out << l << '\n';
}

inline PrepareOptions prepare_options(const std::string& tokenizer, std::vector<std::string> inputs,
                                      const std::string& output, uint32_t max_len = 512) {
  PrepareOptions o;
  o.tokenizer = tokenizer;
  o.inputs = std::move(inputs);
  o.output = output;
  o.max_len = max_len;
  o.quiet = true;
  o.command_line = "pretrain prepare (test)";
  return o;
}

// Files in dir whose name contains ".tmp." (unfinished atomic outputs).
inline std::vector<std::string> temp_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().find(".tmp.") != std::string::npos) out.push_back(e.path().string());
  return out;
}

// Everything but the provenance's creation time and command line.
inline void expect_same_content(const TokenDataset& a, const TokenDataset& b) {
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(a.total_tokens(), b.total_tokens());
  EXPECT_EQ(a.languages(), b.languages());
  EXPECT_EQ(a.vocab_size(), b.vocab_size());
  EXPECT_EQ(a.max_len(), b.max_len());
  EXPECT_EQ(a.tokenizer_source(), b.tokenizer_source());
  EXPECT_EQ(a.provenance().inputs.size(), b.provenance().inputs.size());
  for (size_t i = 0; i < a.size(); ++i) {
    Sequence x = a.sequence(i), y = b.sequence(i);
    ASSERT_TRUE(std::equal(x.ids.begin(), x.ids.end(), y.ids.begin(), y.ids.end())) << "sequence " << i;
    ASSERT_TRUE(std::equal(x.flags.begin(), x.flags.end(), y.flags.begin(), y.flags.end())) << "sequence " << i;
    ASSERT_TRUE(std::equal(x.span.begin(), x.span.end(), y.span.begin(), y.span.end())) << "sequence " << i;
    ASSERT_EQ(x.lang, y.lang);
    ASSERT_EQ(x.kind, y.kind);
    ASSERT_EQ(x.source_line, y.source_line);
    ASSERT_EQ(x.input, y.input);
  }
}

// One annotated-text record (man 5 kglm-annotated) with these spans, ending in '\n'.
inline std::string annotated_json(const std::string& text, const std::string& lang,
                                  const std::vector<RecordSpan>& spans) {
  auto kind = [](uint8_t flag) {
    return flag == kInEntity ? "entity" : flag == kInRelation ? "relation" : flag == kLinkSlot ? "link" : "answer";
  };
  std::string out = "{\"text\":";
  append_json_string(out, text);
  out += ",\"lang\":";
  append_json_string(out, lang);
  out += ",\"spans\":[";
  for (size_t i = 0; i < spans.size(); ++i) {
    out += (i ? ",[" : "[") + std::to_string(spans[i].begin) + "," + std::to_string(spans[i].end) + ",\"" +
           kind(spans[i].flag) + "\",\"Q" + std::to_string(i + 1) + "\"]";
  }
  return out + "]}\n";
}

// A record as the test wrote it: its text and spans, for the line it is on.
struct ExpectedRecord {
  uint64_t line = 0;
  std::string text;
  std::vector<RecordSpan> spans;
};

// The flags and span index of every token of enc, computed independently of SequenceBuilder: a
// token belongs to a span when their byte ranges overlap.
inline void expected_span_marks(const tok::Encoding& enc, const std::vector<RecordSpan>& spans,
                                std::vector<uint8_t>& flags, std::vector<int32_t>& span) {
  flags.assign(enc.size(), 0);
  span.assign(enc.size(), -1);
  for (size_t t = 0; t < enc.size(); ++t) {
    for (size_t s = 0; s < spans.size(); ++s) {
      const uint64_t b = enc.begin[t], e = enc.end[t];
      const bool hit = b < e ? b < spans[s].end && spans[s].begin < e : spans[s].begin <= b && b < spans[s].end;
      if (!hit || spans[s].begin == spans[s].end) continue;
      flags[t] |= spans[s].flag;
      if (span[t] < 0) span[t] = static_cast<int32_t>(s);
    }
  }
}

// The sequences of input `input` hold exactly the given records, in order: bos + tokens + eos,
// at most max_len each, the pieces of a record concatenating to its encoding, every cut at the last
// word start that fits (or at the budget when there is none), span marks by byte overlap.
inline void expect_records(const TokenDataset& data, const tok::Tokenizer& tokenizer, uint16_t input,
                           const std::vector<ExpectedRecord>& records) {
  const tok::SpecialTokens& sp = tokenizer.special();
  const size_t budget = data.max_len() - 2;
  size_t next = 0;
  while (next < data.size() && data.sequence(next).input != input) ++next;
  tok::Encoding enc;
  std::vector<uint8_t> flags;
  std::vector<int32_t> span;
  for (const ExpectedRecord& r : records) {
    tokenizer.encode(r.text, enc);
    if (enc.size() == 0) continue;
    expected_span_marks(enc, r.spans, flags, span);
    size_t begin = 0;  // of the current piece, in enc
    while (begin < enc.size()) {
      ASSERT_LT(next, data.size()) << "line " << r.line << " is missing";
      Sequence s = data.sequence(next++);
      ASSERT_EQ(s.input, input);
      ASSERT_EQ(s.source_line, r.line);
      ASSERT_GE(s.size(), 3u);
      ASSERT_LE(s.size(), data.max_len());
      EXPECT_EQ(s.ids.front(), sp.bos);
      EXPECT_EQ(s.ids.back(), sp.eos);
      EXPECT_EQ(s.flags.front(), kSpecialToken);
      EXPECT_EQ(s.flags.back(), kSpecialToken);
      const size_t n = s.size() - 2, end = begin + n;
      ASSERT_LE(end, enc.size()) << "line " << r.line;
      for (size_t k = 0; k < n; ++k) {
        const size_t t = begin + k;
        ASSERT_EQ(s.ids[k + 1], enc.ids[t]) << "line " << r.line << " token " << t;
        ASSERT_EQ(s.flags[k + 1] & kWordStart, enc.word_start[t] ? kWordStart : 0) << "line " << r.line;
        const uint8_t span_bits = kInEntity | kInRelation | kLinkSlot | kInAnswer;
        ASSERT_EQ(s.flags[k + 1] & span_bits, flags[t]) << "line " << r.line << " token " << t;
        ASSERT_EQ(s.span[k + 1], span[t]) << "line " << r.line << " token " << t;
      }
      if (end < enc.size()) {  // a cut: maximal, and at a word start unless the word was too long
        if (enc.word_start[end]) {
          for (size_t j = end + 1; j <= begin + budget; ++j)
            EXPECT_FALSE(enc.word_start[j]) << "line " << r.line << ": a later word start fits";
        } else {
          EXPECT_EQ(n, budget) << "line " << r.line << ": cut inside a word";
          for (size_t j = begin + 1; j <= begin + budget; ++j)
            EXPECT_FALSE(enc.word_start[j]) << "line " << r.line << ": cut inside a word";
        }
      }
      begin = end;
    }
  }
  if (next < data.size()) {
    EXPECT_NE(data.sequence(next).input, input) << "more sequences than records";
  }
}

}  // namespace kglm::train::checks
