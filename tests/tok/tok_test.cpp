// WordPiece cases written from BERT's algorithm (BasicTokenizer + WordpieceTokenizer), loading
// options and errors. SentencePiece against the real model: tok_fixtures_test.cpp.
#include <gtest/gtest.h>

#include <unistd.h>
#include "temp_dir.hpp"

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "tok/tokenizer.hpp"
#include "tok/wordpiece_tokenizer.hpp"

namespace kglm::tok {
namespace {

namespace fs = std::filesystem;

using kglm::testing::TempDir;

void write_file(const fs::path& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
  ASSERT_TRUE(out.good()) << path;
}

const std::vector<std::string> kVocab = {
    "[PAD]", "[UNK]", "[CLS]",   "[SEP]", "[MASK]", "hello", "world",  ",",    "!",    "?",     "¿",    "—",
    "cafe",  "café",  "Café",    "##s",   "un",     "##aff", "##able", "##a",  "##ff", "中",    "文",   "abc",
    "a",     "x",     "unicode", "οδος",  "σα",     "i",     "ᄒ",     "##ᅡ", "##ᆫ", "Hello", "##lo", "hel"};

std::string vocab_text(const std::vector<std::string>& pieces) {
  std::string text;
  for (const auto& piece : pieces) text += piece + "\n";
  return text;
}

// A directory holding vocab.txt and, when given, tokenizer_config.json.
fs::path make_bert_dir(const TempDir& tmp, const std::string& name, const std::string& config = "",
                       const std::vector<std::string>& pieces = kVocab) {
  fs::path dir = tmp.path() / name;
  fs::create_directories(dir);
  write_file(dir / "vocab.txt", vocab_text(pieces));
  if (!config.empty()) write_file(dir / "tokenizer_config.json", config);
  return dir;
}

struct Token {
  std::string piece;
  std::string source;  // the original bytes the token covers
  bool word_start;
  bool operator==(const Token&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Token& t) {
  return os << "{" << t.piece << ", \"" << t.source << "\", " << t.word_start << "}";
}

std::vector<Token> tokens_of(const Tokenizer& tokenizer, std::string_view text) {
  Encoding encoding;
  tokenizer.encode(text, encoding);
  EXPECT_EQ(encoding.begin.size(), encoding.size());
  EXPECT_EQ(encoding.end.size(), encoding.size());
  EXPECT_EQ(encoding.word_start.size(), encoding.size());
  std::vector<Token> tokens;
  for (size_t i = 0; i < encoding.size(); ++i) {
    EXPECT_LE(encoding.begin[i], encoding.end[i]);
    EXPECT_LE(encoding.end[i], text.size());
    tokens.push_back({tokenizer.piece(encoding.ids[i]),
                      std::string(text.substr(encoding.begin[i], encoding.end[i] - encoding.begin[i])),
                      encoding.word_start[i] != 0});
  }
  return tokens;
}

std::vector<std::string> pieces_of(const Tokenizer& tokenizer, std::string_view text) {
  std::vector<std::string> pieces;
  for (const auto& token : tokens_of(tokenizer, text)) pieces.push_back(token.piece);
  return pieces;
}

using Pieces = std::vector<std::string>;

// Suites are prefixed tok_ so that `ctest -R tok` selects this module's tests.
class tok_WordPiece : public ::testing::Test {
 protected:
  TempDir tmp;
  std::unique_ptr<Tokenizer> uncased = load_tokenizer(make_bert_dir(tmp, "uncased"));            // directory default
  std::unique_ptr<Tokenizer> cased = load_tokenizer(make_bert_dir(tmp, "cased") / "vocab.txt");  // bare file
};

TEST_F(tok_WordPiece, SpecialTokensAndVocabulary) {
  EXPECT_EQ(uncased->kind(), TokenizerKind::WordPiece);
  EXPECT_EQ(uncased->vocab_size(), static_cast<int32_t>(kVocab.size()));
  const SpecialTokens& special = uncased->special();
  EXPECT_EQ(special.pad, 0);
  EXPECT_EQ(special.unk, 1);
  EXPECT_EQ(special.bos, 2);
  EXPECT_EQ(special.eos, 3);
  EXPECT_EQ(special.mask, 4);
  EXPECT_EQ(uncased->piece(17), "##aff");
  EXPECT_EQ(uncased->piece_to_id("##aff"), 17);
  EXPECT_EQ(uncased->piece_to_id("[MASK]"), 4);
  EXPECT_EQ(uncased->piece_to_id("no such piece"), special.unk);
  EXPECT_THROW(uncased->piece(-1), Error);
  EXPECT_THROW(uncased->piece(uncased->vocab_size()), Error);
  Encoding encoding;
  uncased->encode("", encoding);
  EXPECT_EQ(encoding.size(), 0u);
}

TEST_F(tok_WordPiece, CasedVersusUncased) {
  EXPECT_EQ(pieces_of(*uncased, "Hello WORLD"), (Pieces{"hello", "world"}));
  EXPECT_EQ(pieces_of(*cased, "Hello WORLD"), (Pieces{"Hello", "[UNK]"}));
  EXPECT_EQ(pieces_of(*cased, "hello world"), (Pieces{"hello", "world"}));
}

TEST_F(tok_WordPiece, AccentsStrippedOnlyWhenLowerCasing) {
  EXPECT_EQ(tokens_of(*uncased, "Café"), (std::vector<Token>{{"cafe", "Café", true}}));
  EXPECT_EQ(tokens_of(*cased, "Café"), (std::vector<Token>{{"Café", "Café", true}}));
  EXPECT_EQ(tokens_of(*cased, "café"), (std::vector<Token>{{"café", "café", true}}));
  // The '##s' after the stripped 'é' (2 bytes) still points at the input's 's'.
  EXPECT_EQ(tokens_of(*uncased, "Cafés"), (std::vector<Token>{{"cafe", "Café", true}, {"##s", "s", false}}));
  // A decomposed accent (e + U+0301): the mark is dropped, the token covers the letters.
  EXPECT_EQ(tokens_of(*uncased, "Cafe\xCC\x81s"), (std::vector<Token>{{"cafe", "Cafe", true}, {"##s", "s", false}}));
  // Cased keeps the decomposed word, which the vocabulary lacks: one [UNK] over all of it.
  EXPECT_EQ(tokens_of(*cased, "Cafe\xCC\x81"), (std::vector<Token>{{"[UNK]", "Cafe\xCC\x81", true}}));
  EXPECT_EQ(tokens_of(*uncased, "ÜNÏCÖDÉ"), (std::vector<Token>{{"unicode", "ÜNÏCÖDÉ", true}}));
}

TEST_F(tok_WordPiece, SpecialLowerCasing) {
  // 'İ' lower-cases to "i" + U+0307, whose combining dot goes with the accents.
  EXPECT_EQ(tokens_of(*uncased, "İ"), (std::vector<Token>{{"i", "İ", true}}));
  // Python's str.lower(): a final capital sigma becomes 'ς', any other 'σ'.
  EXPECT_EQ(pieces_of(*uncased, "ΟΔΟΣ ΣΑ"), (Pieces{"οδος", "σα"}));
  EXPECT_EQ(pieces_of(*uncased, "ΟΔΟΣ."), (Pieces{"οδος", "[UNK]"}));
  // Hangul syllables decompose into conjoining jamo under NFD, each pointing at the syllable.
  EXPECT_EQ(tokens_of(*uncased, "한"),
            (std::vector<Token>{{"ᄒ", "한", true}, {"##ᅡ", "한", false}, {"##ᆫ", "한", false}}));
  EXPECT_EQ(pieces_of(*cased, "한"), (Pieces{"[UNK]"}));
}

TEST_F(tok_WordPiece, CjkIdeographsAreWordsOfTheirOwn) {
  EXPECT_EQ(tokens_of(*uncased, "中文abc"),
            (std::vector<Token>{{"中", "中", true}, {"文", "文", true}, {"abc", "abc", true}}));
  EXPECT_EQ(pieces_of(*cased, "abc中"), (Pieces{"abc", "中"}));
}

TEST_F(tok_WordPiece, PunctuationIsSplitIntoSingleCharacters) {
  EXPECT_EQ(
      tokens_of(*uncased, "hello,world!"),
      (std::vector<Token>{{"hello", "hello", true}, {",", ",", true}, {"world", "world", true}, {"!", "!", true}}));
  EXPECT_EQ(
      tokens_of(*uncased, "¿hello—world?"),
      (std::vector<Token>{
          {"¿", "¿", true}, {"hello", "hello", true}, {"—", "—", true}, {"world", "world", true}, {"?", "?", true}}));
  // ASCII symbols that are not Unicode punctuation still split ('$' is Sc); '##' cannot glue.
  EXPECT_EQ(pieces_of(*uncased, "hello$world"), (Pieces{"hello", "[UNK]", "world"}));
  EXPECT_EQ(pieces_of(*uncased, "hello##s"), (Pieces{"hello", "[UNK]", "[UNK]", "[UNK]"}));
}

TEST_F(tok_WordPiece, GreedyLongestMatchFirst) {
  EXPECT_EQ(tokens_of(*uncased, "unaffable"),
            (std::vector<Token>{{"un", "un", true}, {"##aff", "aff", false}, {"##able", "able", false}}));
  EXPECT_EQ(tokens_of(*uncased, "  UNAFFABLE worlds"), (std::vector<Token>{{"un", "UN", true},
                                                                           {"##aff", "AFF", false},
                                                                           {"##able", "ABLE", false},
                                                                           {"world", "world", true},
                                                                           {"##s", "s", false}}));
  // "hello" beats "hel" + "##lo".
  EXPECT_EQ(pieces_of(*uncased, "hello"), (Pieces{"hello"}));
  EXPECT_EQ(pieces_of(*uncased, "aaa"), (Pieces{"a", "##a", "##a"}));
}

TEST_F(tok_WordPiece, UnknownWords) {
  // 'x' matches but nothing continues it: the whole word is one [UNK].
  EXPECT_EQ(tokens_of(*uncased, "hello xyz world"),
            (std::vector<Token>{{"hello", "hello", true}, {"[UNK]", "xyz", true}, {"world", "world", true}}));
  // At most 100 code points per word.
  const std::string hundred(100, 'a');
  const auto tokens = pieces_of(*uncased, hundred);
  ASSERT_EQ(tokens.size(), 100u);
  EXPECT_EQ(tokens.front(), "a");
  EXPECT_EQ(tokens.back(), "##a");
  const std::string too_long = "x " + std::string(101, 'a') + " x";
  EXPECT_EQ(tokens_of(*uncased, too_long),
            (std::vector<Token>{{"x", "x", true}, {"[UNK]", std::string(101, 'a'), true}, {"x", "x", true}}));
}

TEST_F(tok_WordPiece, CleaningDropsControlsAndSplitsOnWhitespace) {
  // Cc and Cf characters vanish inside a word (U+0001, U+00AD soft hyphen, U+200B, NUL, U+FFFD).
  const std::string text =
      std::string("hel\x01lo wor\xC2\xAD") + "ld he\xE2\x80\x8Bl" + std::string(1, '\0') + "lo \xEF\xBF\xBDworld";
  EXPECT_EQ(tokens_of(*uncased, text),
            (std::vector<Token>{{"hello", "hel\x01lo", true},
                                {"world",
                                 "wor\xC2\xAD"
                                 "ld",
                                 true},
                                {"hello", std::string("he\xE2\x80\x8Bl") + '\0' + "lo", true},
                                {"world", "world", true}}));
  // Tabs, newlines, no-break and ideographic spaces separate words.
  EXPECT_EQ(pieces_of(*uncased, "\thello\r\nworld\xC2\xA0hello\xE3\x80\x80world\n"),
            (Pieces{"hello", "world", "hello", "world"}));
  // Malformed UTF-8 is dropped like U+FFFD, never a crash.
  EXPECT_EQ(pieces_of(*uncased, "hello\xFF\xC3 world\xE4\xB8"), (Pieces{"hello", "world"}));
}

TEST_F(tok_WordPiece, ConcurrentEncodingGivesTheSameTokens) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "Unaffable Café, 中文abc! ΟΔΟΣ xyz ";
  const auto expected = tokens_of(*uncased, text);
  std::vector<std::vector<Token>> results(4);
  std::vector<std::thread> threads;
  for (auto& result : results) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) result = tokens_of(*uncased, text);
    });
  }
  for (auto& thread : threads) thread.join();
  for (const auto& result : results) EXPECT_EQ(result, expected);
}

// Random bytes mixing ASCII, valid multibyte characters and broken sequences.
std::string random_text(std::mt19937& rng) {
  static const std::vector<std::string> parts = {"a",
                                                 "Z",
                                                 " ",
                                                 ",",
                                                 "\t",
                                                 "##",
                                                 "é",
                                                 "É",
                                                 "\xCC\x81",
                                                 "中",
                                                 "Σ",
                                                 "İ",
                                                 "한",
                                                 "\xFF",
                                                 "\xC3",
                                                 "\xE4\xB8",
                                                 "\xF0\x9F\x98\x80",
                                                 "\x01",
                                                 std::string(1, '\0'),
                                                 "—"};
  std::string text;
  const size_t length = rng() % 40;
  for (size_t i = 0; i < length; ++i) text += parts[rng() % parts.size()];
  return text;
}

TEST_F(tok_WordPiece, AnyBytesGiveSpansInOrderAndInBounds) {
  std::mt19937 rng(7);
  Encoding encoding;
  for (int round = 0; round < 3000; ++round) {
    const std::string text = random_text(rng);
    for (const Tokenizer* tokenizer : {uncased.get(), cased.get()}) {
      tokenizer->encode(text, encoding);
      ASSERT_EQ(encoding.begin.size(), encoding.size());
      for (size_t k = 0; k < encoding.size(); ++k) {
        ASSERT_GE(encoding.ids[k], 0);
        ASSERT_LT(encoding.ids[k], tokenizer->vocab_size());
        ASSERT_LT(encoding.begin[k], encoding.end[k]);  // every WordPiece token comes from some input bytes
        ASSERT_LE(encoding.end[k], text.size());
        if (k > 0) {  // in order; tokens cut from one expanded character (한 -> 3 jamo) share its bytes
          ASSERT_LE(encoding.begin[k - 1], encoding.begin[k]) << text;
          ASSERT_LE(encoding.end[k - 1], encoding.end[k]) << text;
        }
      }
    }
  }
}

TEST(tok_WordPieceConfig, TokenizerConfigOptionsAreHonoured) {
  TempDir tmp;
  auto cased = load_tokenizer(make_bert_dir(tmp, "cased", R"({"do_lower_case": false})"));
  EXPECT_EQ(pieces_of(*cased, "Café Hello"), (Pieces{"Café", "Hello"}));

  // Lower-cased but accents kept.
  auto keep_accents = load_tokenizer(make_bert_dir(tmp, "keep", R"({"do_lower_case": true, "strip_accents": false})"));
  EXPECT_EQ(pieces_of(*keep_accents, "CAFÉ"), (Pieces{"café"}));
  // Cased but accents stripped.
  auto strip_only = load_tokenizer(make_bert_dir(tmp, "strip", R"({"do_lower_case": false, "strip_accents": true})"));
  EXPECT_EQ(pieces_of(*strip_only, "Café café"), (Pieces{"[UNK]", "cafe"}));
  // null strip_accents follows do_lower_case.
  auto null_strip = load_tokenizer(make_bert_dir(tmp, "null", R"({"strip_accents": null})"));
  EXPECT_EQ(pieces_of(*null_strip, "Café"), (Pieces{"cafe"}));

  auto no_cjk = load_tokenizer(make_bert_dir(tmp, "nocjk", R"({"tokenize_chinese_chars": false})"));
  EXPECT_EQ(tokens_of(*no_cjk, "中文abc 中"), (std::vector<Token>{{"[UNK]", "中文abc", true}, {"中", "中", true}}));

  // Special tokens under other names, as strings or serialized AddedTokens.
  std::vector<std::string> renamed = {"<pad>", "<unk>", "<cls>", "<sep>", "<mask>", "hello"};
  auto custom = load_tokenizer(
      make_bert_dir(tmp, "renamed",
                    R"({"unk_token": "<unk>", "pad_token": {"content": "<pad>", "lstrip": false}, "cls_token": "<cls>",
          "sep_token": "<sep>", "mask_token": "<mask>", "model_max_length": 512})",
                    renamed));
  EXPECT_EQ(custom->special().unk, 1);
  EXPECT_EQ(custom->special().pad, 0);
  EXPECT_EQ(custom->special().bos, 2);
  EXPECT_EQ(custom->special().eos, 3);
  EXPECT_EQ(custom->special().mask, 4);
  EXPECT_EQ(pieces_of(*custom, "hello there"), (Pieces{"hello", "<unk>"}));
}

TEST(tok_WordPieceConfig, CrlfVocabularyAndDuplicates) {
  TempDir tmp;
  fs::create_directories(tmp.path() / "crlf");
  write_file(tmp.path() / "crlf" / "vocab.txt", "[PAD]\r\n[UNK]\r\n[CLS]\r\n[SEP]\r\n[MASK]\r\nhi\r\nhi\r\n");
  auto tokenizer = load_tokenizer(tmp.path() / "crlf");
  EXPECT_EQ(tokenizer->vocab_size(), 7);
  EXPECT_EQ(tokenizer->piece(5), "hi");
  // A token listed twice keeps its last id, as BertTokenizer's vocabulary dict does.
  EXPECT_EQ(tokenizer->piece_to_id("hi"), 6);
  Encoding encoding;
  tokenizer->encode("hi", encoding);
  EXPECT_EQ(encoding.ids, (std::vector<int32_t>{6}));
}

TEST(tok_WordPieceConfig, SaveHfFilesRoundTrip) {
  TempDir tmp;
  const char* config = R"({"do_lower_case": false, "strip_accents": true, "tokenize_chinese_chars": false})";
  auto original = load_tokenizer(make_bert_dir(tmp, "model", config));
  const fs::path saved = tmp.path() / "saved" / "nested";
  original->save_hf_files(saved);
  for (const char* name : {"vocab.txt", "tokenizer_config.json", "special_tokens_map.json"}) {
    EXPECT_TRUE(fs::is_regular_file(saved / name)) << name;
  }
  std::ifstream config_in(saved / "tokenizer_config.json");
  const std::string saved_config((std::istreambuf_iterator<char>(config_in)), std::istreambuf_iterator<char>());
  EXPECT_NE(saved_config.find("\"tokenizer_class\": \"BertTokenizer\""), std::string::npos) << saved_config;
  EXPECT_NE(saved_config.find("\"do_lower_case\": false"), std::string::npos) << saved_config;

  auto reloaded = load_tokenizer(saved);
  EXPECT_EQ(reloaded->source(), saved);
  const auto& original_wp = dynamic_cast<const WordPieceTokenizer&>(*original);
  const auto& reloaded_wp = dynamic_cast<const WordPieceTokenizer&>(*reloaded);
  EXPECT_EQ(original_wp.options(), reloaded_wp.options());
  ASSERT_EQ(reloaded->vocab_size(), original->vocab_size());
  for (int32_t id = 0; id < original->vocab_size(); ++id) EXPECT_EQ(reloaded->piece(id), original->piece(id));
  const std::string text = "Café cafés 中文abc Hello, unaffable!";
  EXPECT_EQ(tokens_of(*reloaded, text), tokens_of(*original, text));
  EXPECT_EQ(pieces_of(*reloaded, "Café"), (Pieces{"[UNK]"}));  // cased with stripped accents: "Cafe"

  // The default (uncased, strip_accents null) survives as well.
  auto uncased = load_tokenizer(make_bert_dir(tmp, "uncased"));
  uncased->save_hf_files(tmp.path() / "uncased-saved");
  auto uncased_reloaded = load_tokenizer(tmp.path() / "uncased-saved");
  EXPECT_EQ(dynamic_cast<const WordPieceTokenizer&>(*uncased_reloaded).options(),
            dynamic_cast<const WordPieceTokenizer&>(*uncased).options());
}

// The message of the kglm::Error thrown by load_tokenizer(path), or "" when none was thrown.
std::string load_error(const fs::path& path) {
  try {
    load_tokenizer(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(tok_LoadErrors, NameThePathAndTheReason) {
  TempDir tmp;
  const fs::path missing = tmp.path() / "no-such-model";
  EXPECT_NE(load_error(missing).find(missing.string()), std::string::npos);

  const fs::path no_unk = make_bert_dir(tmp, "nounk", "", {"[PAD]", "[CLS]", "[SEP]", "[MASK]", "hello"});
  const std::string message = load_error(no_unk);
  EXPECT_NE(message.find(no_unk.string()), std::string::npos) << message;
  EXPECT_NE(message.find("[UNK]"), std::string::npos) << message;

  const fs::path empty_dir = tmp.path() / "empty";
  fs::create_directories(empty_dir);
  EXPECT_NE(load_error(empty_dir).find(empty_dir.string()), std::string::npos);

  const fs::path bad_json = make_bert_dir(tmp, "badjson", "{not json");
  EXPECT_NE(load_error(bad_json).find("tokenizer_config.json"), std::string::npos);
  const fs::path bad_type = make_bert_dir(tmp, "badtype", R"({"do_lower_case": "yes"})");
  EXPECT_NE(load_error(bad_type).find("do_lower_case"), std::string::npos);

  const fs::path bad_model = tmp.path() / "garbage.model";
  write_file(bad_model, "this is not a protobuf");
  EXPECT_NE(load_error(bad_model).find(bad_model.string()), std::string::npos);
  const fs::path bad_dir = tmp.path() / "badspm";
  fs::create_directories(bad_dir);
  write_file(bad_dir / "sentencepiece.bpe.model", "garbage");
  EXPECT_NE(load_error(bad_dir).find("sentencepiece.bpe.model"), std::string::npos);

  const fs::path unknown_kind = tmp.path() / "weights.bin";
  write_file(unknown_kind, "x");
  EXPECT_NE(load_error(unknown_kind).find(unknown_kind.string()), std::string::npos);
}

}  // namespace
}  // namespace kglm::tok
