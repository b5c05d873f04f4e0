// wiki-extract's documents from several inputs in turn, handed out in batches for worker threads
// (run_ordered_pipeline); a batch never spans two files, so errors keep their file:line.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/input_stream.hpp"
#include "text/document.hpp"
#include "text/document_reader.hpp"

namespace kglm::text {

struct DocumentBatch {
  std::string file;
  std::vector<std::pair<uint64_t, Document>> docs;  // (line, document)
  std::vector<std::pair<uint64_t, std::string>> errors;
  uint64_t first_ordinal = 0;  // the input-wide number of docs[0], keys the RNG
};

// Checks that an input holds documents: false (with a warning) when it is empty; Error naming
// what it is when it is HDF5, binary, a MediaWiki dump or other XML.
bool require_documents(InputStream& input);

class DocumentBatches {
 public:
  DocumentBatches(const std::vector<std::string>& inputs, size_t docs_per_batch)
      : inputs_(inputs), docs_per_batch_(docs_per_batch) {}
  // Fills an empty batch; false at the end of the last input.
  bool next(DocumentBatch& batch);

 private:
  const std::vector<std::string>& inputs_;
  size_t docs_per_batch_;
  size_t next_input_ = 0;
  std::unique_ptr<InputStream> input_;
  std::unique_ptr<DocumentReader> reader_;
  uint64_t ordinal_ = 0;
};

}  // namespace kglm::text
