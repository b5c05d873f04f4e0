#include "train/tasks/slot_readers.hpp"

#include <simdjson.h>

#include <algorithm>
#include <optional>

#include "core/input_kind.hpp"
#include "core/input_stream.hpp"
#include "core/jsonl_records.hpp"
#include "core/line_batcher.hpp"

namespace kglm::train::tasks {

namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t begin = 0;
  while (true) {
    const size_t at = s.find(sep, begin);
    out.push_back(s.substr(begin, at == std::string_view::npos ? std::string_view::npos : at - begin));
    if (at == std::string_view::npos) return out;
    begin = at + 1;
  }
}

std::vector<std::string> words_of(std::string_view s) {
  std::vector<std::string> out;
  for (std::string_view w : split(s, ' '))
    if (!w.empty()) out.emplace_back(w);
  return out;
}

std::string_view trimmed(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string_view::npos ? std::string_view() : s.substr(b, e - b + 1);
}

size_t utf8_length(unsigned char lead) { return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4; }

// Appends the words of a stretch of text, all tagged `tag` (B- on the first when `slot` names one).
void append_words(std::string_view text, const std::string& slot, bool by_character, TaggedSentence& s) {
  bool first = true;
  auto add = [&](std::string_view w) {
    s.words.emplace_back(w);
    s.tags.push_back(slot.empty() ? "O" : (first ? "B-" : "I-") + slot);
    first = false;
  };
  for (std::string_view w : split(text, ' ')) {
    if (w.empty()) continue;
    if (!by_character) {
      add(w);
      continue;
    }
    for (size_t i = 0; i < w.size();) {
      const size_t n = std::min(utf8_length(static_cast<unsigned char>(w[i])), w.size() - i);
      add(w.substr(i, n));
      i += n;
    }
  }
}

SlotExample parse_multiatis(const std::vector<std::string_view>& fields, size_t utterance, size_t slots,
                            size_t intent) {
  SlotExample e;
  e.sentence.words = words_of(fields[utterance]);
  e.sentence.tags = words_of(fields[slots]);
  e.intent = std::string(trimmed(fields[intent]));
  if (e.sentence.words.empty()) throw Error("an empty utterance");
  if (e.sentence.words.size() != e.sentence.tags.size())
    throw Error(std::to_string(e.sentence.words.size()) + " words but " + std::to_string(e.sentence.tags.size()) +
                " slot labels");
  if (e.intent.empty()) throw Error("an empty intent");
  // O, or a prefix of one of the tag schemes (B I E S L U) and a slot name: anything else would stop
  // the whole run when scored, not cost its record.
  for (const std::string& tag : e.sentence.tags)
    if (tag != "O" &&
        (tag.size() < 3 || tag[1] != '-' || std::string_view("BIESLU").find(tag[0]) == std::string_view::npos))
      throw Error("slot label '" + tag + "' is not O or B-, I-, E-, S-, L-, U- and a name");
  return e;
}

SlotExample parse_mtop(const std::vector<std::string_view>& f, simdjson::dom::parser& parser) {
  if (f.size() < 8) throw Error(std::to_string(f.size()) + " columns, MTOP has 8");
  SlotExample e;
  e.id = std::string(f[0]);
  e.intent = std::string(trimmed(f[1]));
  if (e.intent.empty()) throw Error("an empty intent");
  const simdjson::padded_string json(f[7]);
  simdjson::dom::element root;
  simdjson::dom::array tokens, spans;
  if (parser.parse(json).get(root) || root["tokens"].get(tokens) || root["tokenSpans"].get(spans) ||
      tokens.size() != spans.size() || tokens.size() == 0)
    throw Error("the tokens column is not {\"tokens\": [...], \"tokenSpans\": [...]} of as many entries");
  std::vector<std::pair<int64_t, int64_t>> token_spans;  // [start, end) characters
  for (simdjson::dom::element t : tokens) {
    std::string_view w;
    if (t.get(w)) throw Error("a token that is not a string");
    e.sentence.words.emplace_back(w);
  }
  for (simdjson::dom::element s : spans) {
    int64_t start = 0, length = 0;
    if (s["start"].get(start) || s["length"].get(length) || start < 0 || length < 0)
      throw Error("a token span without integer \"start\" and \"length\"");
    token_spans.emplace_back(start, start + length);
  }
  e.sentence.tags.assign(e.sentence.words.size(), "O");
  for (std::string_view slot : split(trimmed(f[2]), ',')) {
    if (slot.empty()) continue;
    // START:END:SL:NAME — the name may itself hold colons.
    const size_t c1 = slot.find(':'), c2 = c1 == std::string_view::npos ? c1 : slot.find(':', c1 + 1);
    if (c2 == std::string_view::npos) throw Error("a slot '" + std::string(slot) + "' is not START:END:NAME");
    int64_t start = 0, end = 0;
    try {
      start = std::stoll(std::string(slot.substr(0, c1)));
      end = std::stoll(std::string(slot.substr(c1 + 1, c2 - c1 - 1)));
    } catch (const std::exception&) {
      throw Error("a slot '" + std::string(slot) + "' without character offsets");
    }
    std::string name(slot.substr(c2 + 1));
    if (name.starts_with("SL:")) name = name.substr(3);
    bool first = true;
    for (size_t t = 0; t < token_spans.size(); ++t) {
      if (token_spans[t].first < start || token_spans[t].second > end) continue;
      e.sentence.tags[t] = (first ? "B-" : "I-") + name;
      first = false;
    }
    if (first) throw Error("the slot '" + std::string(slot) + "' covers no token");
  }
  return e;
}

SlotExample parse_massive(simdjson::dom::element root) {
  SlotExample e;
  e.intent = string_field(root, "intent");
  if (e.intent.empty()) throw Error("an empty \"intent\"");
  e.id = string_field(root, "id", false);
  const std::string locale = string_field(root, "locale", false);
  const bool by_character = locale.starts_with("ja") || locale.starts_with("zh");
  e.sentence = parse_bracketed(string_field(root, "annot_utt"), by_character);
  if (e.sentence.words.empty()) throw Error("an empty \"annot_utt\"");
  if (locale.size() >= 2) e.sentence.lang = locale.substr(0, 2);
  return e;
}

// The TSV formats: each line through parse(fields, line number); the header first for MultiATIS++.
std::vector<SlotExample> read_tsv(const std::string& path, SlotFormat format, ErrorCounter& errors) {
  InputStream in(path);
  std::vector<SlotExample> out;
  if (skip_empty_input(require_text_input(in, format == SlotFormat::mtop ? "MTOP TSV" : "MultiATIS++ TSV"), in.name()))
    return out;
  const uint64_t errors_before = errors.count();
  std::optional<size_t> utterance, slots, intent;
  simdjson::dom::parser parser;
  for_each_line(in, [&](uint64_t n, std::string_view line) {
    if (trimmed(line).empty()) return;
    const std::vector<std::string_view> fields = split(line, '\t');
    if (format == SlotFormat::multiatis && !utterance) {
      auto find = [&](std::string_view name) -> size_t {
        for (size_t i = 0; i < fields.size(); ++i)
          if (trimmed(fields[i]) == name) return i;
        throw Error(location(in.name(), n) + "no column \"" + std::string(name) +
                    "\" in the header (MultiATIS++: id, utterance, slot_labels, intent)");
      };
      utterance = find("utterance"), slots = find("slot_labels"), intent = find("intent");
      return;
    }
    try {
      SlotExample e;
      if (format == SlotFormat::mtop) {
        e = parse_mtop(fields, parser);
      } else {
        if (fields.size() <= std::max({*utterance, *slots, *intent}))
          throw Error(std::to_string(fields.size()) + " columns, fewer than the header's");
        e = parse_multiatis(fields, *utterance, *slots, *intent);
      }
      e.line = e.sentence.line = n;
      out.push_back(std::move(e));
      errors.add_valid();
    } catch (const Error& e) {
      errors.record(in.name(), n, e.what());
    }
  });
  if (out.empty() && errors.count() > errors_before)
    throw Error(location(in.name()) + "no valid record; every one was bad");
  return out;
}

}  // namespace

TaggedSentence parse_bracketed(std::string_view annotated, bool by_character) {
  TaggedSentence s;
  size_t pos = 0;
  while (pos < annotated.size()) {
    const size_t open = annotated.find('[', pos);
    const size_t close_before = annotated.find(']', pos);
    if (close_before < open) throw Error("a ']' with no '[' before it");
    append_words(annotated.substr(pos, open == std::string_view::npos ? std::string_view::npos : open - pos), "",
                 by_character, s);
    if (open == std::string_view::npos) break;
    const size_t close = annotated.find(']', open);
    if (close == std::string_view::npos) throw Error("a '[' with no ']'");
    const std::string_view inner = annotated.substr(open + 1, close - open - 1);
    if (inner.find('[') != std::string_view::npos) throw Error("a '[' inside a slot");
    const size_t colon = inner.find(" : ");
    if (colon == std::string_view::npos) throw Error("a slot without \" : \" between its name and value");
    const std::string name(trimmed(inner.substr(0, colon)));
    if (name.empty() || name.find(' ') != std::string::npos) throw Error("a slot name that is empty or has spaces");
    const size_t before = s.words.size();
    append_words(inner.substr(colon + 3), name, by_character, s);
    if (s.words.size() == before) throw Error("the slot " + name + " has no words");
    pos = close + 1;
  }
  return s;
}

std::vector<SlotExample> read_slots(const std::string& path, SlotFormat format, ErrorCounter& errors) {
  std::vector<SlotExample> out =
      format == SlotFormat::massive ? read_jsonl_records<SlotExample>(path, "MASSIVE JSON lines", parse_massive, errors)
                                    : read_tsv(path, format, errors);
  if (out.empty()) throw Error(path + ": no examples");
  for (SlotExample& e : out) e.sentence.line = e.line;
  return out;
}

}  // namespace kglm::train::tasks
