#include "train/token_dataset.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>

#include "core/error.hpp"

namespace kglm::train {

namespace {

// Token columns are read in long runs: larger chunks than the default compress better.
constexpr size_t kTokenChunk = size_t{1} << 16;

struct SpecialAttribute {
  const char* name;
  int32_t tok::SpecialTokens::*id;
};
constexpr SpecialAttribute kSpecialAttributes[] = {{"bos_id", &tok::SpecialTokens::bos},
                                                   {"eos_id", &tok::SpecialTokens::eos},
                                                   {"pad_id", &tok::SpecialTokens::pad},
                                                   {"unk_id", &tok::SpecialTokens::unk},
                                                   {"mask_id", &tok::SpecialTokens::mask}};

}  // namespace

const char* sequence_kind_name(SequenceKind kind) {
  static constexpr const char* kNames[kSequenceKindCount] = {
      "text", "annotated", "kmlm", "kmlm-parallel", "kmlm-alias", "reasoning-3", "reasoning-4", "entitycs"};
  const auto i = static_cast<size_t>(kind);
  return i < kSequenceKindCount ? kNames[i] : "unknown";
}

const char* tokenizer_kind_name(tok::TokenizerKind kind) {
  return kind == tok::TokenizerKind::WordPiece ? "wordpiece" : "sentencepiece";
}

TokenDatasetInfo dataset_info(const tok::Tokenizer& tokenizer, uint32_t max_len) {
  TokenDatasetInfo info;
  info.tokenizer_kind = tokenizer.kind();
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(tokenizer.source(), ec);
  info.tokenizer_source = std::filesystem::weakly_canonical(absolute, ec).string();
  if (ec) info.tokenizer_source = absolute.lexically_normal().string();
  info.tokenizer_checksum = tok::vocabulary_checksum(tokenizer);
  info.vocab_size = tokenizer.vocab_size();
  info.special = tokenizer.special();
  info.max_len = max_len;
  return info;
}

void SequenceBatch::end_sequence(std::string_view language, SequenceKind k, uint64_t line, uint16_t input_index) {
  auto it = std::find(languages.begin(), languages.end(), language);  // a batch has few languages
  if (it == languages.end()) it = languages.insert(languages.end(), std::string(language));
  ends.push_back(ids.size());
  lang.push_back(static_cast<uint16_t>(it - languages.begin()));
  kind.push_back(static_cast<uint8_t>(k));
  source_line.push_back(line);
  input.push_back(input_index);
}

void SequenceBatch::clear() { *this = SequenceBatch(); }

struct TokenDatasetWriter::Columns {
  h5::Group tokens, sequences;
  h5::ColumnWriter<int32_t> ids;
  h5::ColumnWriter<uint8_t> flags;
  h5::ColumnWriter<int32_t> span;
  h5::ColumnWriter<uint64_t> offsets;
  h5::ColumnWriter<uint16_t> lang;
  h5::ColumnWriter<uint8_t> kind;
  h5::ColumnWriter<uint64_t> source_line;
  h5::ColumnWriter<uint16_t> input;

  explicit Columns(const h5::Group& root)
      : tokens(root.create_group("tokens")),
        sequences(root.create_group("sequences")),
        ids(tokens, "ids", kTokenChunk),
        flags(tokens, "flags", kTokenChunk),
        span(tokens, "span", kTokenChunk),
        offsets(sequences, "offsets"),
        lang(sequences, "lang"),
        kind(sequences, "kind"),
        source_line(sequences, "source_line"),
        input(sequences, "input") {}

  void finish() {
    ids.finish();
    flags.finish();
    span.finish();
    offsets.finish();
    lang.finish();
    kind.finish();
    source_line.finish();
    input.finish();
  }
};

TokenDatasetWriter::TokenDatasetWriter(const std::string& path, const TokenDatasetInfo& info,
                                       const Provenance& provenance)
    : info_(info), input_count_(provenance.inputs.size()), atomic_(path), file_(h5::File::create(atomic_.temp())) {
  if (info_.vocab_size <= 0) throw Error(location(path) + "the tokenizer has an empty vocabulary");
  const h5::Group& root = file_.root();
  root.set_attribute("format", kTokenFormat);
  root.set_attribute("format_version", kTokenFormatVersion);
  root.set_attribute("tokenizer_kind", tokenizer_kind_name(info_.tokenizer_kind));
  root.set_attribute("tokenizer_source", info_.tokenizer_source);
  root.set_attribute("tokenizer_checksum", info_.tokenizer_checksum);
  root.set_attribute("vocab_size", int64_t{info_.vocab_size});
  for (const SpecialAttribute& a : kSpecialAttributes) root.set_attribute(a.name, int64_t{info_.special.*a.id});
  root.set_attribute("max_len", int64_t{info_.max_len});
  provenance_ = provenance;
  columns_ = std::make_unique<Columns>(root);
  columns_->offsets.append(0);
}

TokenDatasetWriter::~TokenDatasetWriter() = default;

uint16_t TokenDatasetWriter::language_index(const std::string& name) {
  auto it = language_of_.find(name);
  if (it != language_of_.end()) return it->second;
  if (languages_.size() > UINT16_MAX) throw Error(location(atomic_.final_path()) + "more than 65536 languages");
  const auto index = static_cast<uint16_t>(languages_.size());
  languages_.push_back(name);
  language_sequences_.push_back(0);
  language_of_.emplace(name, index);
  return index;
}

void TokenDatasetWriter::append(const SequenceBatch& batch) {
  const std::string where = location(atomic_.final_path());
  if (batch.flags.size() != batch.ids.size() || batch.span.size() != batch.ids.size() ||
      (!batch.ends.empty() && batch.ends.back() != batch.ids.size()))
    throw Error(where + "a batch whose token columns differ in length");
  for (int32_t id : batch.ids)
    if (id < 0 || id >= info_.vocab_size)
      throw Error(where + "token id " + std::to_string(id) + " outside the vocabulary of " +
                  std::to_string(info_.vocab_size));
  std::vector<uint16_t> global(batch.languages.size());
  for (size_t l = 0; l < global.size(); ++l) global[l] = language_index(batch.languages[l]);

  Columns& c = *columns_;
  uint64_t begin = 0;
  for (size_t s = 0; s < batch.size(); ++s) {
    if (batch.ends[s] < begin) throw Error(where + "a batch whose sequence ends decrease");
    const uint64_t length = batch.ends[s] - begin;
    if (length > info_.max_len)
      throw Error(where + "a sequence of " + std::to_string(length) + " tokens, more than max_len " +
                  std::to_string(info_.max_len));
    if (length < 2 || batch.ids[begin] != info_.special.bos || batch.ids[batch.ends[s] - 1] != info_.special.eos)
      throw Error(where + "a sequence not framed by bos and eos");
    if (batch.input[s] >= input_count_)
      throw Error(where + "input index " + std::to_string(batch.input[s]) + " but " + std::to_string(input_count_) +
                  " inputs");
    begin = batch.ends[s];
    c.offsets.append(tokens_ + begin);
    c.lang.append(global[batch.lang[s]]);
    ++language_sequences_[global[batch.lang[s]]];
  }
  c.ids.append(batch.ids.data(), batch.ids.size());
  c.flags.append(batch.flags.data(), batch.flags.size());
  c.span.append(batch.span.data(), batch.span.size());
  c.kind.append(batch.kind.data(), batch.kind.size());
  c.source_line.append(batch.source_line.data(), batch.source_line.size());
  c.input.append(batch.input.data(), batch.input.size());
  tokens_ += batch.ids.size();
  sequences_ += batch.size();
}

void TokenDatasetWriter::finish() {
  h5::write_provenance(file_.root(), provenance_);  // at the end: it lists truncated inputs
  columns_->finish();
  h5::StringColumnWriter names(file_.root(), "languages");
  for (const std::string& l : languages_) names.append(l);
  names.finish();
  columns_.reset();
  file_.close();
  atomic_.commit();
}

namespace {

// Reads the root attributes and columns, failing with "PATH: what is wrong".
class Loader {
 public:
  explicit Loader(const std::string& path) : path_(path), file_(h5::File::open(path)) {}

  [[noreturn]] void fail(const std::string& what) const { throw Error(location(path_) + what); }

  const h5::Group& root() const { return file_.root(); }

  int64_t int_attribute(const char* name) const {
    if (!root().has_attribute(name)) fail(std::string("missing root attribute ") + name);
    return root().int_attribute(name);
  }
  std::string string_attribute(const char* name) const {
    if (!root().has_attribute(name)) fail(std::string("missing root attribute ") + name);
    return root().string_attribute(name);
  }
  h5::Group group(const char* name) const {
    if (!root().has(name)) fail(std::string("missing group /") + name);
    return root().open_group(name);
  }
  template <class T>
  std::vector<T> column(const h5::Group& g, const char* name, std::optional<uint64_t> expected_size) const {
    if (!g.has(name)) fail("missing dataset " + g.child_path(name));
    std::vector<T> values = h5::read_column<T>(g, name);
    if (expected_size && values.size() != *expected_size)
      fail(g.child_path(name) + " has " + std::to_string(values.size()) + " elements, expected " +
           std::to_string(*expected_size));
    return values;
  }

 private:
  std::string path_;
  h5::File file_;
};

TokenDatasetInfo read_info(const Loader& in) {
  if (!in.root().has_attribute("format") || in.root().string_attribute("format") != kTokenFormat)
    in.fail("is " + h5::describe_format(in.root()) + "; expected a token dataset (pretrain prepare)");
  const int64_t version = in.int_attribute("format_version");
  if (version != kTokenFormatVersion)
    in.fail("token dataset format version " + std::to_string(version) + "; this kglm reads version " +
            std::to_string(kTokenFormatVersion));
  TokenDatasetInfo info;
  const std::string kind = in.string_attribute("tokenizer_kind");
  if (kind == "sentencepiece")
    info.tokenizer_kind = tok::TokenizerKind::SentencePiece;
  else if (kind == "wordpiece")
    info.tokenizer_kind = tok::TokenizerKind::WordPiece;
  else
    in.fail("unknown tokenizer_kind \"" + kind + "\"");
  info.tokenizer_source = in.string_attribute("tokenizer_source");
  if (in.root().has_attribute("tokenizer_checksum"))
    info.tokenizer_checksum = in.string_attribute("tokenizer_checksum");
  const int64_t vocab = in.int_attribute("vocab_size");
  if (vocab <= 0 || vocab > INT32_MAX) in.fail("vocab_size " + std::to_string(vocab) + " is not a vocabulary size");
  info.vocab_size = static_cast<int32_t>(vocab);
  for (const SpecialAttribute& a : kSpecialAttributes) {
    const int64_t id = in.int_attribute(a.name);
    if (id < -1 || id >= vocab) in.fail(std::string(a.name) + " " + std::to_string(id) + " outside the vocabulary");
    info.special.*a.id = static_cast<int32_t>(id);
  }
  const int64_t max_len = in.int_attribute("max_len");
  if (max_len < 2 || max_len > UINT32_MAX) in.fail("max_len " + std::to_string(max_len) + " is too small or large");
  info.max_len = static_cast<uint32_t>(max_len);
  return info;
}

}  // namespace

TokenDataset TokenDataset::open(const std::string& path) {
  Loader in(path);
  TokenDataset d;
  d.info_ = read_info(in);
  d.provenance_ = h5::read_provenance(in.root());
  if (!in.root().has("languages")) in.fail("missing string table /languages");
  const h5::StringTable names = h5::read_string_table(in.root(), "languages");
  for (size_t i = 0; i < names.size(); ++i) d.languages_.emplace_back(names[i]);

  const h5::Group tokens = in.group("tokens");
  d.ids_ = in.column<int32_t>(tokens, "ids", std::nullopt);
  d.flags_ = in.column<uint8_t>(tokens, "flags", d.ids_.size());
  d.span_ = in.column<int32_t>(tokens, "span", d.ids_.size());
  const h5::Group sequences = in.group("sequences");
  d.offsets_ = in.column<uint64_t>(sequences, "offsets", std::nullopt);
  if (d.offsets_.empty()) in.fail("/sequences/offsets is empty (it has N + 1 entries)");
  const uint64_t n = d.offsets_.size() - 1;
  d.lang_ = in.column<uint16_t>(sequences, "lang", n);
  d.kind_ = in.column<uint8_t>(sequences, "kind", n);
  d.source_line_ = in.column<uint64_t>(sequences, "source_line", n);
  d.input_ = in.column<uint16_t>(sequences, "input", n);

  if (d.offsets_.front() != 0) in.fail("/sequences/offsets does not start at 0");
  const uint64_t total = d.ids_.size();
  auto seq = [](uint64_t i) { return "sequence " + std::to_string(i); };
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t begin = d.offsets_[i], end = d.offsets_[i + 1];
    if (end < begin) in.fail("/sequences/offsets decreases at " + seq(i));
    if (end > total) in.fail("/sequences/offsets goes past the token count " + std::to_string(total) + " at " + seq(i));
    if (end - begin > d.info_.max_len)
      in.fail(seq(i) + " has " + std::to_string(end - begin) + " tokens, more than max_len " +
              std::to_string(d.info_.max_len));
    if (end - begin < 2 || d.ids_[begin] != d.info_.special.bos || d.ids_[end - 1] != d.info_.special.eos)
      in.fail(seq(i) + " is not framed by bos_id and eos_id");
    if (d.lang_[i] >= d.languages_.size())
      in.fail(seq(i) + ": language index " + std::to_string(d.lang_[i]) + " but /languages has " +
              std::to_string(d.languages_.size()));
    if (d.kind_[i] >= kSequenceKindCount) in.fail(seq(i) + ": unknown kind " + std::to_string(d.kind_[i]));
    if (d.input_[i] >= d.provenance_.inputs.size())
      in.fail(seq(i) + ": input index " + std::to_string(d.input_[i]) + " but " +
              std::to_string(d.provenance_.inputs.size()) + " inputs");
  }
  if (d.offsets_.back() != total)
    in.fail("/sequences/offsets ends at " + std::to_string(d.offsets_.back()) + ", not at the token count " +
            std::to_string(total));
  for (size_t t = 0; t < d.ids_.size(); ++t) {
    if (d.ids_[t] < 0 || d.ids_[t] >= d.info_.vocab_size)
      in.fail("/tokens/ids: token " + std::to_string(t) + " has id " + std::to_string(d.ids_[t]) + ", not in [0, " +
              std::to_string(d.info_.vocab_size) + ")");
    if (d.span_[t] < -1)
      in.fail("/tokens/span: token " + std::to_string(t) + " has span " + std::to_string(d.span_[t]));
  }
  return d;
}

size_t TokenDataset::length(size_t i) const {
  if (i >= size()) throw Error("sequence " + std::to_string(i) + " of a dataset of " + std::to_string(size()));
  return offsets_[i + 1] - offsets_[i];
}

Sequence TokenDataset::sequence(size_t i) const {
  if (i >= size()) throw Error("sequence " + std::to_string(i) + " of a dataset of " + std::to_string(size()));
  const size_t begin = offsets_[i], length = offsets_[i + 1] - offsets_[i];
  Sequence s;
  s.ids = std::span<const int32_t>(ids_).subspan(begin, length);
  s.flags = std::span<const uint8_t>(flags_).subspan(begin, length);
  s.span = std::span<const int32_t>(span_).subspan(begin, length);
  s.lang = lang_[i];
  s.kind = static_cast<SequenceKind>(kind_[i]);
  s.source_line = source_line_[i];
  s.input = input_[i];
  return s;
}

}  // namespace kglm::train
