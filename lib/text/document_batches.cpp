#include "text/document_batches.hpp"

namespace kglm::text {

bool DocumentBatches::next(DocumentBatch& batch) {
  batch.first_ordinal = ordinal_;
  for (;;) {
    if (!reader_) {
      if (next_input_ >= inputs_.size()) return !batch.docs.empty() || !batch.errors.empty();
      input_ = std::make_unique<InputStream>(inputs_[next_input_++]);
      reader_ = std::make_unique<DocumentReader>(*input_);
    }
    batch.file = input_->name();
    Document doc;
    uint64_t line = 0;
    std::string error;
    if (!reader_->next(doc, line, error)) {
      reader_.reset();
      if (!batch.docs.empty() || !batch.errors.empty()) return true;
      continue;
    }
    if (!error.empty()) {
      batch.errors.emplace_back(line, std::move(error));
      continue;
    }
    batch.docs.emplace_back(line, std::move(doc));
    ++ordinal_;
    if (batch.docs.size() >= docs_per_batch_) return true;
  }
}

}  // namespace kglm::text
