#include "gen/record_writer.hpp"

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace kglm::gen {

RecordWriter::RecordWriter(std::string output, std::string split_dir, std::string suffix)
    : split_dir_(std::move(split_dir)), suffix_(std::move(suffix)) {
  if (split_dir_.empty()) {
    single_ = std::make_unique<OutputStream>(output);
  } else {
    lock_ = OutputLock(split_dir_, "split directory");
    make_directories(split_dir_);
  }
}

void RecordWriter::write(std::string_view lang, std::string_view records) {
  if (records.empty()) return;
  if (single_) {
    single_->write(records);
    return;
  }
  auto it = per_lang_.find(lang);
  if (it == per_lang_.end()) {
    if (lang.empty() || lang.find('/') != std::string_view::npos || lang[0] == '.')
      throw Error("language code '" + std::string(lang) + "' cannot name a file");
    std::string path = split_dir_ + "/" + std::string(lang) + suffix_;
    it = per_lang_.emplace(std::string(lang), std::make_unique<OutputStream>(path)).first;
  }
  it->second->write(records);
}

void RecordWriter::write(const RecordBatch& batch) {
  write("", batch.all);
  for (const auto& [lang, records] : batch.by_lang) write(lang, records);
}

void RecordWriter::close() {
  if (single_) single_->close();
  std::vector<OutputStream*> parts;
  for (auto& [lang, stream] : per_lang_) parts.push_back(stream.get());
  put_in_place_together(parts);
}

std::vector<std::string> RecordWriter::file_names() const {
  std::vector<std::string> names;
  for (const auto& [lang, stream] : per_lang_) names.push_back(lang + suffix_);
  return names;
}

}  // namespace kglm::gen
