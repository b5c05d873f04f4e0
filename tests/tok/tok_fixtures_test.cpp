// SentencePiece with XLM-R's id mapping, checked against Debian's spm_encode on the real model and
// text of ../shared/fixtures/tokenizer (skipped when they or spm_encode are absent).
#include <gtest/gtest.h>

#include <unistd.h>
#include "temp_dir.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "tok/tokenizer.hpp"

namespace kglm::tok {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = fs::path(KGLM_FIXTURES_DIR) / "tokenizer";
const fs::path kModel = kFixtures / "spm-test-vocab1000.model";
const fs::path kText = kFixtures / "botchan.txt";

using kglm::testing::TempDir;

// The lines as spm_encode reads them (std::getline: '\n' removed, a '\r' kept).
std::vector<std::string> read_lines(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

bool spm_encode_available() { return std::system("command -v spm_encode >/dev/null 2>&1") == 0; }

std::vector<int32_t> parse_ids(const std::string& line) {
  std::istringstream in(line);
  std::vector<int32_t> ids;
  for (int32_t id; in >> id;) ids.push_back(id);
  return ids;
}

// XLM-R's mapping of this model's ids: <unk>=0 -> 3, the rest + 1 (its <s>, </s> never appear).
int32_t xlmr_id(int32_t spm_id) { return spm_id == 0 ? 3 : spm_id + 1; }

std::string whitespace_normalized(std::string_view text) {
  std::string out;
  for (char c : text) {
    const bool space = c == ' ' || c == '\t' || c == '\r' || c == '\n';
    if (space) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// Suites are prefixed tok_ so that `ctest -R tok` selects this module's tests.
class tok_SentencePieceFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kModel) || !fs::exists(kText)) GTEST_SKIP() << "fixture missing: " << kModel << ", " << kText;
    tokenizer = load_tokenizer(kModel);
    lines = read_lines(kText);
    ASSERT_GT(lines.size(), 1000u);
  }
  std::unique_ptr<Tokenizer> tokenizer;
  std::vector<std::string> lines;
};

TEST_F(tok_SentencePieceFixture, SpecialIdsAndVocabulary) {
  EXPECT_EQ(tokenizer->kind(), TokenizerKind::SentencePiece);
  EXPECT_EQ(tokenizer->vocab_size(), 1002);
  const SpecialTokens& special = tokenizer->special();
  EXPECT_EQ(special.bos, 0);
  EXPECT_EQ(special.pad, 1);
  EXPECT_EQ(special.eos, 2);
  EXPECT_EQ(special.unk, 3);
  EXPECT_EQ(special.mask, 1001);
  EXPECT_EQ(tokenizer->source(), kModel);
  const std::vector<std::string> specials = {"<s>", "<pad>", "</s>", "<unk>"};
  for (int32_t id = 0; id < 4; ++id) {
    EXPECT_EQ(tokenizer->piece(id), specials[static_cast<size_t>(id)]);
    EXPECT_EQ(tokenizer->piece_to_id(specials[static_cast<size_t>(id)]), id);
  }
  EXPECT_EQ(tokenizer->piece(1001), "<mask>");
  EXPECT_EQ(tokenizer->piece_to_id("<mask>"), 1001);
  // spm id 4 is "▁" in this model (spm_export_vocab): ours is 5, and every piece maps back.
  EXPECT_EQ(tokenizer->piece(5), "\xE2\x96\x81");
  for (int32_t id = 4; id < 1001; ++id) EXPECT_EQ(tokenizer->piece_to_id(tokenizer->piece(id)), id) << id;
  EXPECT_EQ(tokenizer->piece_to_id("no such piece"), 3);
  EXPECT_THROW(tokenizer->piece(1002), Error);
  EXPECT_THROW(tokenizer->piece(-1), Error);
}

TEST_F(tok_SentencePieceFixture, IdsMatchSpmEncode) {
  if (!spm_encode_available()) GTEST_SKIP() << "spm_encode not installed";
  TempDir tmp;
  const fs::path expected_file = tmp.path() / "ids.txt";
  const std::string command = "spm_encode --model='" + kModel.string() + "' --output_format=id < '" + kText.string() +
                              "' > '" + expected_file.string() + "' 2>/dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const auto expected_lines = read_lines(expected_file);
  ASSERT_EQ(expected_lines.size(), lines.size());

  size_t unknown_tokens = 0;
  Encoding encoding;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    tokenizer->encode(line, encoding);
    std::vector<int32_t> expected;
    for (int32_t id : parse_ids(expected_lines[i])) expected.push_back(xlmr_id(id));
    ASSERT_EQ(encoding.ids, expected) << "line " << i + 1 << ": " << line;

    // Offsets: in bounds, in order, and together they rebuild the line.
    std::string rebuilt;
    for (size_t k = 0; k < encoding.size(); ++k) {
      ASSERT_LE(encoding.begin[k], encoding.end[k]);
      ASSERT_LE(encoding.end[k], line.size());
      if (k > 0) {
        ASSERT_LE(encoding.begin[k - 1], encoding.begin[k]) << "line " << i + 1;
      }
      const std::string_view source =
          std::string_view(line).substr(encoding.begin[k], encoding.end[k] - encoding.begin[k]);
      std::string piece = tokenizer->piece(encoding.ids[k]);
      EXPECT_EQ(encoding.word_start[k] != 0, piece.starts_with("\xE2\x96\x81")) << piece;
      if (encoding.ids[k] == tokenizer->special().unk) {
        ++unknown_tokens;
        piece = source;  // an unknown piece stands for the input bytes
      }
      std::string spaced;  // '▁' as ' '
      for (size_t at = 0; at < piece.size();) {
        if (piece.compare(at, 3, "\xE2\x96\x81") == 0) {
          spaced += ' ';
          at += 3;
        } else {
          spaced += piece[at++];
        }
      }
      // What the piece spells is exactly its span of the input (ASCII text: NFKC changes nothing),
      // without the spaces before a word.
      if (encoding.ids[k] != tokenizer->special().unk) {
        EXPECT_EQ(source, spaced.substr(spaced.starts_with(' ') ? 1 : 0)) << "line " << i + 1;
      }
      rebuilt += spaced;
    }
    EXPECT_EQ(whitespace_normalized(rebuilt), whitespace_normalized(line)) << "line " << i + 1;
  }
  EXPECT_GT(unknown_tokens, 0u);  // the byte order mark of the first line
}

TEST_F(tok_SentencePieceFixture, DirectoryLoadAndSavedFilesGiveTheSameIds) {
  TempDir tmp;
  const fs::path dir = tmp.path() / "xlmr";
  fs::create_directories(dir);
  fs::copy_file(kModel, dir / "sentencepiece.bpe.model");
  auto from_dir = load_tokenizer(dir);
  EXPECT_EQ(from_dir->source(), dir);
  EXPECT_EQ(from_dir->vocab_size(), 1002);

  const fs::path saved = tmp.path() / "saved";
  tokenizer->save_hf_files(saved);
  for (const char* name : {"sentencepiece.bpe.model", "tokenizer_config.json", "special_tokens_map.json"}) {
    EXPECT_TRUE(fs::is_regular_file(saved / name)) << name;
  }
  EXPECT_EQ(fs::file_size(saved / "sentencepiece.bpe.model"), fs::file_size(kModel));
  std::ifstream config_in(saved / "tokenizer_config.json");
  const std::string config((std::istreambuf_iterator<char>(config_in)), std::istreambuf_iterator<char>());
  EXPECT_NE(config.find("\"tokenizer_class\": \"XLMRobertaTokenizer\""), std::string::npos) << config;
  auto reloaded = load_tokenizer(saved);

  Encoding expected, got;
  for (const auto& line : lines) {
    tokenizer->encode(line, expected);
    from_dir->encode(line, got);
    ASSERT_EQ(got.ids, expected.ids) << line;
    ASSERT_EQ(got.begin, expected.begin) << line;
    reloaded->encode(line, got);
    ASSERT_EQ(got.ids, expected.ids) << line;
    ASSERT_EQ(got.end, expected.end) << line;
  }
}

TEST_F(tok_SentencePieceFixture, OffsetsPointIntoTheOriginalText) {
  // NFKC turns the full-width letters into ASCII; the offsets still cover the input's bytes, and
  // a word's first piece starts at the word, not at the spaces before it.
  const std::string text = "  Ｈｅｌｌｏ   world";
  Encoding encoding;
  tokenizer->encode(text, encoding);
  std::string words;
  for (size_t k = 0; k < encoding.size(); ++k) {
    if (encoding.word_start[k] && k > 0) words += '|';
    words += text.substr(encoding.begin[k], encoding.end[k] - encoding.begin[k]);
  }
  EXPECT_EQ(words, "Ｈｅｌｌｏ|world");
  EXPECT_EQ(encoding.begin.front(), 2u);
  EXPECT_EQ(encoding.word_start.front(), 1);
  // 'ﬁ' becomes "fi": the pieces inside it share its bytes, the first one with an empty span.
  tokenizer->encode("ﬁx", encoding);
  ASSERT_GT(encoding.size(), 1u);
  EXPECT_EQ(encoding.begin.front(), 0u);
  EXPECT_EQ(encoding.end.back(), 4u);
  // Malformed UTF-8 is encoded, not a crash.
  tokenizer->encode("abc\xFF\xC3 def", encoding);
  EXPECT_GT(encoding.size(), 0u);
  for (size_t k = 0; k < encoding.size(); ++k) EXPECT_LE(encoding.end[k], 9u);
  tokenizer->encode("", encoding);
  EXPECT_EQ(encoding.size(), 0u);
}

TEST_F(tok_SentencePieceFixture, AnyBytesGiveSpansInOrderAndInBounds) {
  static const std::vector<std::string> parts = {"a",    "Z",  " ",   "  ",   "\t",   "é",        "e\xCC\x81",
                                                 "ﬁ",    "Ｈ", "中",  "\xFF", "\xC3", "\xE4\xB8", "\xF0\x9F\x98\x80",
                                                 "\x01", "　", "\r\n"};
  std::mt19937 rng(11);
  Encoding encoding;
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    for (size_t i = 0, length = rng() % 30; i < length; ++i) text += parts[rng() % parts.size()];
    tokenizer->encode(text, encoding);
    for (size_t k = 0; k < encoding.size(); ++k) {
      ASSERT_GE(encoding.ids[k], 0);
      ASSERT_LT(encoding.ids[k], tokenizer->vocab_size());
      ASSERT_LE(encoding.begin[k], encoding.end[k]);
      ASSERT_LE(encoding.end[k], text.size());
      if (k > 0) {
        ASSERT_LE(encoding.begin[k - 1], encoding.begin[k]) << text;
      }
    }
  }
}

TEST_F(tok_SentencePieceFixture, ConcurrentEncodingGivesTheSameIds) {
  std::vector<std::vector<int32_t>> expected(lines.size());
  Encoding encoding;
  for (size_t i = 0; i < lines.size(); ++i) {
    tokenizer->encode(lines[i], encoding);
    expected[i] = encoding.ids;
  }
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < mismatches.size(); ++t) {
    threads.emplace_back([&, t] {
      Encoding local;
      for (size_t i = t; i < lines.size(); i += 2) {
        tokenizer->encode(lines[i], local);
        if (local.ids != expected[i]) ++mismatches[t];
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int count : mismatches) EXPECT_EQ(count, 0);
}

}  // namespace
}  // namespace kglm::tok
