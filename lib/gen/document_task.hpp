// What the generators that read wiki-extract documents (cs-gen entitycs, kg-align, kg-align ner)
// keep from each batch of documents for the ordered writer: the batch's file, its bad records and
// its count of valid documents, the records written and the statistics.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/stats.hpp"
#include "gen/record_writer.hpp"
#include "text/document_batches.hpp"

namespace kglm::gen {

struct DocumentTaskResult {
  std::string file;
  RecordBatch records;
  std::vector<std::pair<uint64_t, std::string>> errors;
  uint64_t valid_docs = 0;
  Stats stats;

  // Takes the batch's file and bad records before its documents are processed.
  void start(text::DocumentBatch& batch) {
    file = batch.file;
    errors = std::move(batch.errors);
    valid_docs = batch.docs.size();
  }
  // In the writer, in input order: the batch's valid documents and bad records into the run's count.
  void count(ErrorCounter& counter) const {
    counter.add_valid(valid_docs);
    for (const auto& [line, reason] : errors) counter.record(file, line, reason);
  }
};

}  // namespace kglm::gen
