// Where generated records go: one stream (-o), or one file per language (--split-by-lang DIR,
// files LANG.jsonl or LANG.txt). Files are atomic: all appear at close(), together, none on failure;
// the directory is locked against a second run (OutputLock) until then.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "core/output_lock.hpp"
#include "core/output_stream.hpp"

namespace kglm::gen {

// The records of one worker task: in input order for one output, or grouped by language.
struct RecordBatch {
  std::string all;
  std::map<std::string, std::string, std::less<>> by_lang;
  // Where a record of `lang` goes.
  std::string& out(const std::string& lang, bool split) { return split ? by_lang[lang] : all; }
};

class RecordWriter {
 public:
  // output: a path or "-" (used when split_dir is empty); suffix: ".jsonl" or ".txt".
  RecordWriter(std::string output, std::string split_dir, std::string suffix);
  void write(std::string_view lang, std::string_view records);
  void write(const RecordBatch& batch);
  void close();
  // The files written into the split directory (LANG + suffix), in name order.
  std::vector<std::string> file_names() const;

 private:
  std::string split_dir_;
  OutputLock lock_;  // on split_dir_, from the start to the end of the run
  std::string suffix_;
  std::unique_ptr<OutputStream> single_;
  std::map<std::string, std::unique_ptr<OutputStream>, std::less<>> per_lang_;
};

}  // namespace kglm::gen
