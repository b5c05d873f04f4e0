#include "tok/bert_basic_tokenizer.hpp"

#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <array>

#include "core/error.hpp"
#include "tok/utf8.hpp"

namespace kglm::tok {

void BasicWords::clear() {
  chars.clear();
  char_offset.clear();
  source_begin.clear();
  source_end.clear();
  word_first.clear();
}

namespace {

bool is_ascii_separator(unsigned byte) { return byte == ' ' || byte == '\t' || byte == '\n' || byte == '\r'; }

// BERT counts every non-alphanumeric printable ASCII character as punctuation ('$', '^', '`', ...).
bool is_ascii_punctuation(unsigned byte) {
  return (byte >= 33 && byte <= 47) || (byte >= 58 && byte <= 64) || (byte >= 91 && byte <= 96) ||
         (byte >= 123 && byte <= 126);
}

bool is_punctuation(int32_t cp) {
  if (cp < 0x80) return is_ascii_punctuation(static_cast<unsigned>(cp));
  return (U_GET_GC_MASK(cp) & U_GC_P_MASK) != 0;
}

// Removed by BERT's text cleaning: U+FFFD and the "other" categories (Cc, Cf, Cn, Co, Cs), as in
// HF's _is_control. For code points >= 0x80 only; ASCII is handled on its own path.
bool is_dropped(int32_t cp) { return cp == 0xFFFD || (U_GET_GC_MASK(cp) & U_GC_C_MASK) != 0; }

// Zs is BERT's whitespace; Zl and Zp also split, as Python's str.split() does in whitespace_tokenize.
bool is_separator(int32_t cp) { return (U_GET_GC_MASK(cp) & U_GC_Z_MASK) != 0; }

// The CJK Unified Ideograph blocks of BERT's _is_chinese_char.
bool is_cjk_ideograph(int32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
         (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

bool is_case_ignorable(int32_t cp) { return u_hasBinaryProperty(cp, UCHAR_CASE_IGNORABLE); }
bool is_cased(int32_t cp) { return u_hasBinaryProperty(cp, UCHAR_CASED); }

// Case properties of ASCII, looked up on the hot path instead of asking ICU.
struct AsciiCaseTable {
  std::array<bool, 128> ignorable{}, cased{};
  AsciiCaseTable() {
    for (int32_t c = 0; c < 128; ++c) ignorable[c] = is_case_ignorable(c), cased[c] = is_cased(c);
  }
};
const AsciiCaseTable& ascii_case_table() {
  static const AsciiCaseTable table;
  return table;
}

// The code points one input code point becomes: at most 2 after lower-casing, each at most 4 after
// canonical decomposition.
struct Expansion {
  std::array<int32_t, 16> cps;
  size_t size = 0;
  void push(int32_t cp) {
    if (size < cps.size()) cps[size++] = cp;
  }
};

// Appends words with the source bytes of each code point.
class WordCollector {
 public:
  explicit WordCollector(BasicWords& words) : words_(words) {}

  void add(int32_t cp, size_t source_begin, size_t source_end) {
    if (!in_word_) {
      words_.word_first.push_back(static_cast<uint32_t>(words_.source_begin.size()));
      in_word_ = true;
    }
    words_.char_offset.push_back(static_cast<uint32_t>(words_.chars.size()));
    append_utf8(words_.chars, static_cast<uint32_t>(cp));
    words_.source_begin.push_back(static_cast<uint32_t>(source_begin));
    words_.source_end.push_back(static_cast<uint32_t>(source_end));
  }
  void add_alone(int32_t cp, size_t source_begin, size_t source_end) {
    end_word();
    add(cp, source_begin, source_end);
    end_word();
  }
  void end_word() { in_word_ = false; }
  void finish() {
    words_.char_offset.push_back(static_cast<uint32_t>(words_.chars.size()));
    words_.word_first.push_back(static_cast<uint32_t>(words_.source_begin.size()));
  }

 private:
  BasicWords& words_;
  bool in_word_ = false;
};

class BasicTokenizer {
 public:
  BasicTokenizer(std::string_view text, const BasicTokenizerOptions& options, BasicWords& words)
      : text_(text), options_(options), words_(words) {
    if (options.strip_accents) {
      UErrorCode status = U_ZERO_ERROR;
      nfd_ = icu::Normalizer2::getNFDInstance(status);
      if (U_FAILURE(status)) throw Error(std::string("ICU NFD normalizer unavailable: ") + u_errorName(status));
    }
  }

  void run() {
    const AsciiCaseTable& ascii = ascii_case_table();
    size_t i = 0;
    while (i < text_.size()) {
      const size_t begin = i;
      const unsigned byte = static_cast<unsigned char>(text_[i]);
      if (byte < 0x80) {
        ++i;
        if (is_ascii_separator(byte)) {
          end_whitespace_token();
        } else if (byte >= 0x20 && byte != 0x7F) {  // the rest of ASCII below 0x20 and DEL are controls
          if (options_.lower_case && !ascii.ignorable[byte]) previous_cased_ = ascii.cased[byte];
          const bool upper = byte >= 'A' && byte <= 'Z';
          const int32_t cp = static_cast<int32_t>(options_.lower_case && upper ? byte + ('a' - 'A') : byte);
          if (is_ascii_punctuation(byte)) {
            words_.add_alone(cp, begin, i);
          } else {
            words_.add(cp, begin, i);
          }
        }
        continue;
      }
      const int32_t cp = next_code_point(text_, i);
      if (cp < 0 || is_dropped(cp)) continue;  // malformed bytes count as U+FFFD, which BERT drops
      if (is_separator(cp)) {
        end_whitespace_token();
        continue;
      }
      // BERT puts spaces around ideographs: each is a whitespace token of its own.
      const bool ideograph = options_.split_cjk_ideographs && is_cjk_ideograph(cp);
      if (ideograph) end_whitespace_token();
      const Expansion expansion = normalize(cp, i);
      if (options_.lower_case && !is_case_ignorable(cp)) previous_cased_ = is_cased(cp);
      for (size_t k = 0; k < expansion.size; ++k) {
        if (is_punctuation(expansion.cps[k])) {
          words_.add_alone(expansion.cps[k], begin, i);
        } else {
          words_.add(expansion.cps[k], begin, i);
        }
      }
      if (ideograph) end_whitespace_token();
    }
    words_.finish();
  }

 private:
  void end_whitespace_token() {
    words_.end_word();
    previous_cased_ = false;
  }

  // Lower-casing (Python's str.lower()) then accent stripping (NFD, Mn removed) of cp, which ends
  // at byte `next` of the text.
  Expansion normalize(int32_t cp, size_t next) const {
    Expansion lowered;
    if (!options_.lower_case) {
      lowered.push(cp);
    } else if (cp == 0x130) {
      // The only unconditional multi-code-point lower-case mapping: 'İ' becomes "i̇".
      lowered.push('i');
      lowered.push(0x307);
    } else if (cp == 0x3A3) {
      lowered.push(is_final_sigma(next) ? 0x3C2 : 0x3C3);
    } else {
      lowered.push(u_tolower(cp));
    }
    if (nfd_ == nullptr) return lowered;
    Expansion stripped;
    for (size_t k = 0; k < lowered.size; ++k) {
      const int32_t c = lowered.cps[k];
      icu::UnicodeString decomposition;
      if (c >= 0xC0 && nfd_->getDecomposition(c, decomposition)) {  // nothing below U+00C0 decomposes
        for (int32_t unit = 0; unit < decomposition.length(); unit = decomposition.moveIndex32(unit, 1)) {
          const UChar32 part = decomposition.char32At(unit);
          if (u_charType(part) != U_NON_SPACING_MARK) stripped.push(part);
        }
      } else if (u_charType(c) != U_NON_SPACING_MARK) {
        stripped.push(c);
      }
    }
    return stripped;
  }

  // Python's Final_Sigma rule within the whitespace token: a capital sigma after a cased letter
  // (case-ignorable characters skipped) and not before one lower-cases to 'ς'.
  bool is_final_sigma(size_t next) const {
    if (!previous_cased_) return false;
    size_t i = next;
    while (i < text_.size()) {
      const unsigned byte = static_cast<unsigned char>(text_[i]);
      if (byte < 0x80 && is_ascii_separator(byte)) return true;
      const int32_t cp = next_code_point(text_, i);
      const bool dropped = cp < 0 || (cp < 0x80 ? cp < 0x20 || cp == 0x7F : is_dropped(cp));
      if (dropped) continue;  // cleaned away before Python sees the text
      if (cp >= 0x80 && is_separator(cp)) return true;
      if (options_.split_cjk_ideographs && is_cjk_ideograph(cp)) return true;
      if (!is_case_ignorable(cp)) return !is_cased(cp);
    }
    return true;
  }

  std::string_view text_;
  const BasicTokenizerOptions& options_;
  WordCollector words_;
  const icu::Normalizer2* nfd_ = nullptr;
  // Whether the last non-case-ignorable character of this whitespace token is cased (kept only
  // when lower-casing, for the final sigma).
  bool previous_cased_ = false;
};

}  // namespace

void basic_tokenize(std::string_view text, const BasicTokenizerOptions& options, BasicWords& words) {
  words.clear();
  BasicTokenizer(text, options, words).run();
}

}  // namespace kglm::tok
