#include "train/token_dataset.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <regex>

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
  root.set_attribute("tokenizer_kind", tok::tokenizer_kind_name(info_.tokenizer_kind));
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

void TokenDatasetWriter::set_shard(size_t shard, size_t shards, const std::string& run) {
  shard_ = static_cast<int64_t>(shard);
  shards_ = static_cast<int64_t>(shards);
  run_ = run;
}

void TokenDatasetWriter::set_job_part(const Shard& part, const std::string& run,
                                      const std::vector<int64_t>& first_bytes) {
  job_part_ = part;
  job_run_ = run;
  job_first_bytes_ = first_bytes;
}

void TokenDatasetWriter::finish() {
  close();
  commit();
}

void TokenDatasetWriter::commit() { atomic_.commit(); }

void TokenDatasetWriter::close() {
  if (shards_ > 1) {
    file_.root().set_attribute("shard", shard_);
    file_.root().set_attribute("shards", shards_);
    file_.root().set_attribute("prepare_run", run_);
  }
  if (job_part_.active()) {
    h5::write_shard(file_.root(), job_part_, job_run_);
    file_.root().set_attribute("shard_first_byte", job_first_bytes_);
  }
  h5::write_provenance(file_.root(), provenance_);  // at the end: it lists truncated inputs
  columns_->finish();
  h5::StringColumnWriter names(file_.root(), "languages");
  for (const std::string& l : languages_) names.append(l);
  names.finish();
  columns_.reset();
  file_.close();
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
  uint64_t column_size(const h5::Group& g, const char* name, std::optional<uint64_t> expected_size) const {
    if (!g.has(name)) fail("missing dataset " + g.child_path(name));
    const uint64_t n = h5::column_size(g, name);
    if (expected_size && n != *expected_size)
      fail(g.child_path(name) + " has " + std::to_string(n) + " elements, expected " + std::to_string(*expected_size));
    return n;
  }
  template <class T>
  std::vector<T> column(const h5::Group& g, const char* name, std::optional<uint64_t> expected_size) const {
    column_size(g, name, expected_size);
    return h5::read_column<T>(g, name);
  }
  h5::File take_file() { return std::move(file_); }

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
  else if (kind == "words")
    info.tokenizer_kind = tok::TokenizerKind::Words;
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

std::string sequence_name(uint64_t i) { return "sequence " + std::to_string(i); }

}  // namespace

struct TokenDataset::File {
  std::string path;
  h5::File file;
  h5::Group tokens;
  size_t index = 0;             // among the dataset's files: the high bits of its blocks' cache keys
  uint64_t first_sequence = 0;  // the dataset's number of the file's sequence 0
  uint64_t first_token = 0;     // the dataset's number of the file's token 0
  uint64_t token_count = 0;
};

// One file's per-sequence columns, checked, appended to the dataset's; its tokens stay in the file.
// Shards of one name (data-00001-of-00004.h5 …) must come from one prepare run: a run interrupted
// while it renamed its shards into place, or shards copied from two runs, would train on a mix.
void TokenDataset::check_shard_runs() const {
  static const std::regex kShardName(R"((.*)-[0-9]{5}(-of-[0-9]{5}[^/]*)$)");
  std::map<std::string, const ShardOfRun*> first_of_series;
  for (const ShardOfRun& s : shard_runs_) {
    std::smatch m;
    if (!std::regex_match(s.path, m, kShardName)) continue;
    const auto [it, inserted] = first_of_series.emplace(m[1].str() + m[2].str(), &s);
    if (!inserted && it->second->run != s.run)
      throw Error(location(s.path) + "a shard of another pretrain prepare run than " + it->second->path + " (run " +
                  s.run + ", not " + it->second->run +
                  "): shards of two runs under one name (a run interrupted while it put its shards in place?): "
                  "prepare the dataset again");
  }
}

// The parts of a job array (pretrain prepare --shard I/N): each run's given whole and in shard
// order, so that they read as the one dataset an unsharded run writes (a failed task's part
// missing, or a part of an earlier run left beside the others, would otherwise train on less or
// on a mix). Other files, and the parts of other runs, may come with them.
void TokenDataset::check_job_parts() const {
  std::map<std::string, std::vector<ShardPart>> runs;
  for (const ShardPart& p : job_parts_) runs[p.run].push_back(p);
  for (const auto& [run, parts] : runs) {
    check_shard_set(parts);
    for (size_t k = 0; k < parts.size(); ++k)
      if (parts[k].shard.index != k)
        throw Error(location(parts[k].path) + "part " + parts[k].shard.str() + " given in place " + std::to_string(k) +
                    " of its run's parts: give the parts in shard order (as a glob of their "
                    "names sorts them)");
  }
}

void TokenDataset::add_file(const std::string& path) {
  Loader in(path);
  const TokenDatasetInfo info = read_info(in);
  if (ShardPart part = h5::read_shard_part(in.root(), path); part.shard.active()) job_parts_.push_back(part);
  if (in.root().has_attribute("prepare_run")) shard_runs_.push_back({path, in.string_attribute("prepare_run")});
  const Provenance provenance = h5::read_provenance(in.root());
  if (files_.empty()) {
    info_ = info;
    provenance_ = provenance;
  } else if (info.tokenizer_kind != info_.tokenizer_kind || info.vocab_size != info_.vocab_size ||
             info.tokenizer_checksum != info_.tokenizer_checksum || info.special.bos != info_.special.bos ||
             info.special.eos != info_.special.eos || info.special.pad != info_.special.pad ||
             info.special.unk != info_.special.unk || info.special.mask != info_.special.mask) {
    in.fail("was tokenized differently from " + files_.front()->path + " (tokenizer, vocabulary or special ids)");
  }
  info_.max_len = std::max(info_.max_len, info.max_len);
  // Input indices: into the first file's inputs when the provenance lists the same ones (shards
  // of one prepare run), else into this file's inputs, appended.
  uint16_t input_base = 0;
  bool same_inputs = provenance.inputs.size() == provenance_.inputs.size();
  for (size_t k = 0; same_inputs && k < provenance.inputs.size(); ++k)
    same_inputs = provenance.inputs[k].name == provenance_.inputs[k].name;
  if (!same_inputs) {
    if (provenance_.inputs.size() + provenance.inputs.size() > UINT16_MAX + size_t{1})
      in.fail("more than 65536 inputs in the dataset's files");
    input_base = static_cast<uint16_t>(provenance_.inputs.size());
    provenance_.inputs.insert(provenance_.inputs.end(), provenance.inputs.begin(), provenance.inputs.end());
  }

  if (!in.root().has("languages")) in.fail("missing string table /languages");
  const h5::StringTable names = h5::read_string_table(in.root(), "languages");
  std::vector<uint16_t> language_index;  // the file's language numbers → the dataset's
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string name(names[i]);
    auto it = std::find(languages_.begin(), languages_.end(), name);
    if (it == languages_.end()) {
      if (languages_.size() > UINT16_MAX) in.fail("more than 65536 languages in the dataset's files");
      it = languages_.insert(languages_.end(), name);
    }
    language_index.push_back(static_cast<uint16_t>(it - languages_.begin()));
  }

  const h5::Group tokens = in.group("tokens");
  const uint64_t total = in.column_size(tokens, "ids", std::nullopt);
  in.column_size(tokens, "flags", total);
  in.column_size(tokens, "span", total);
  const h5::Group sequences = in.group("sequences");
  const std::vector<uint64_t> offsets = in.column<uint64_t>(sequences, "offsets", std::nullopt);
  if (offsets.empty()) in.fail("/sequences/offsets is empty (it has N + 1 entries)");
  const uint64_t n = offsets.size() - 1;
  const std::vector<uint16_t> lang = in.column<uint16_t>(sequences, "lang", n);
  const std::vector<uint8_t> kind = in.column<uint8_t>(sequences, "kind", n);
  const std::vector<uint64_t> source_line = in.column<uint64_t>(sequences, "source_line", n);
  const std::vector<uint16_t> input = in.column<uint16_t>(sequences, "input", n);

  if (offsets.front() != 0) in.fail("/sequences/offsets does not start at 0");
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t begin = offsets[i], end = offsets[i + 1];
    if (end < begin) in.fail("/sequences/offsets decreases at " + sequence_name(i));
    if (end > total)
      in.fail("/sequences/offsets goes past the token count " + std::to_string(total) + " at " + sequence_name(i));
    if (end - begin > info.max_len)
      in.fail(sequence_name(i) + " has " + std::to_string(end - begin) + " tokens, more than max_len " +
              std::to_string(info.max_len));
    if (end - begin < 2) in.fail(sequence_name(i) + " is not framed by bos_id and eos_id");
    if (lang[i] >= names.size())
      in.fail(sequence_name(i) + ": language index " + std::to_string(lang[i]) + " but /languages has " +
              std::to_string(names.size()));
    if (kind[i] >= kSequenceKindCount) in.fail(sequence_name(i) + ": unknown kind " + std::to_string(kind[i]));
    if (input[i] >= provenance.inputs.size())
      in.fail(sequence_name(i) + ": input index " + std::to_string(input[i]) + " but " +
              std::to_string(provenance.inputs.size()) + " inputs");
  }
  if (offsets.back() != total)
    in.fail("/sequences/offsets ends at " + std::to_string(offsets.back()) + ", not at the token count " +
            std::to_string(total));

  auto f = std::make_shared<File>();
  f->path = path;
  f->index = files_.size();
  f->first_sequence = size();
  f->first_token = offsets_.back();
  f->token_count = total;
  for (uint64_t i = 0; i < n; ++i) {
    offsets_.push_back(f->first_token + offsets[i + 1]);
    lang_.push_back(language_index[lang[i]]);
    input_.push_back(static_cast<uint16_t>(input_base + input[i]));
  }
  kind_.insert(kind_.end(), kind.begin(), kind.end());
  source_line_.insert(source_line_.end(), source_line.begin(), source_line.end());
  f->file = in.take_file();
  f->tokens = f->file.root().open_group("tokens");
  files_.push_back(std::move(f));
}

TokenDataset TokenDataset::open(const std::string& path, const TokenDatasetOptions& options) {
  return open(std::vector<std::string>{path}, options);
}

TokenDataset TokenDataset::open(const std::vector<std::string>& paths, const TokenDatasetOptions& options) {
  if (paths.empty()) throw UsageError("no token dataset to open");
  TokenDataset d;
  for (const std::string& path : paths) d.add_file(path);
  d.check_shard_runs();
  d.check_job_parts();
  d.cache_ = std::make_shared<TokenBlockCache>(options.cache_bytes);
  // Small enough: read every block now, so a bad token or frame fails the open, not a later step.
  const uint64_t bytes = d.total_tokens() * kTokenBytes;
  d.whole_ = bytes <= options.cache_bytes;
  if (d.whole_) {
    for (const auto& f : d.files_)
      for (uint64_t b = 0; b * kTokenBlock < f->token_count; ++b) d.block(*f, b);
    for (size_t i = 0; i < d.size(); ++i) d.sequence(i);
  }
  return d;
}

const TokenDataset::File& TokenDataset::file_of(size_t sequence) const {
  auto it = std::upper_bound(files_.begin(), files_.end(), sequence,
                             [](size_t s, const std::shared_ptr<File>& f) { return s < f->first_sequence; });
  return **std::prev(it);
}

std::shared_ptr<const TokenBlock> TokenDataset::block(const File& f, uint64_t index) const {
  return cache_->get((uint64_t{f.index} << 40) | index, [&] {
    static std::mutex hdf5;  // the library is not thread-safe, and blocks are read outside the cache's lock
    std::lock_guard lock(hdf5);
    TokenBlock b;
    const uint64_t begin = index * kTokenBlock, count = std::min(kTokenBlock, f.token_count - begin);
    b.ids.resize(count);
    b.flags.resize(count);
    b.span.resize(count);
    h5::read_column_range(f.tokens, "ids", h5::native_type<int32_t>(), begin, count, b.ids.data());
    h5::read_column_range(f.tokens, "flags", h5::native_type<uint8_t>(), begin, count, b.flags.data());
    h5::read_column_range(f.tokens, "span", h5::native_type<int32_t>(), begin, count, b.span.data());
    for (uint64_t t = 0; t < count; ++t) {
      if (b.ids[t] < 0 || b.ids[t] >= info_.vocab_size)
        throw Error(location(f.path) + "/tokens/ids: token " + std::to_string(begin + t) + " has id " +
                    std::to_string(b.ids[t]) + ", not in [0, " + std::to_string(info_.vocab_size) + ")");
      if (b.span[t] < -1)
        throw Error(location(f.path) + "/tokens/span: token " + std::to_string(begin + t) + " has span " +
                    std::to_string(b.span[t]));
    }
    return b;
  });
}

size_t TokenDataset::length(size_t i) const {
  if (i >= size()) throw Error(sequence_name(i) + " of a dataset of " + std::to_string(size()));
  return offsets_[i + 1] - offsets_[i];
}

namespace {

// A sequence's own copy of its tokens (they may come from two blocks).
struct SequenceTokens {
  std::vector<int32_t> ids;
  std::vector<uint8_t> flags;
  std::vector<int32_t> span;
};

}  // namespace

Sequence TokenDataset::sequence(size_t i) const {
  const size_t length = this->length(i);
  const File& f = file_of(i);
  auto tokens = std::make_shared<SequenceTokens>();
  tokens->ids.resize(length);
  tokens->flags.resize(length);
  tokens->span.resize(length);
  const uint64_t first = offsets_[i] - f.first_token;  // in the file
  for (uint64_t done = 0; done < length;) {
    const uint64_t at = first + done, index = at / kTokenBlock, in_block = at % kTokenBlock;
    const std::shared_ptr<const TokenBlock> b = block(f, index);
    const uint64_t n = std::min<uint64_t>(length - done, b->ids.size() - in_block);
    std::copy_n(b->ids.begin() + static_cast<ptrdiff_t>(in_block), n,
                tokens->ids.begin() + static_cast<ptrdiff_t>(done));
    std::copy_n(b->flags.begin() + static_cast<ptrdiff_t>(in_block), n,
                tokens->flags.begin() + static_cast<ptrdiff_t>(done));
    std::copy_n(b->span.begin() + static_cast<ptrdiff_t>(in_block), n,
                tokens->span.begin() + static_cast<ptrdiff_t>(done));
    done += n;
  }
  Sequence s;
  s.ids = tokens->ids;
  s.flags = tokens->flags;
  s.span = tokens->span;
  s.lang = lang_[i];
  s.kind = static_cast<SequenceKind>(kind_[i]);
  s.source_line = source_line_[i];
  s.input = input_[i];
  s.storage = std::move(tokens);
  check_framing(i, s);
  return s;
}

void TokenDataset::check_framing(size_t i, const Sequence& s) const {
  if (s.ids.front() != info_.special.bos || s.ids.back() != info_.special.eos) {
    const File& f = file_of(i);
    throw Error(location(f.path) + sequence_name(i - f.first_sequence) + " is not framed by bos_id and eos_id");
  }
}

}  // namespace kglm::train
