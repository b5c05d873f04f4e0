#include "text/document_batches.hpp"

#include "core/error.hpp"
#include "core/input_kind.hpp"

namespace kglm::text {

bool require_documents(InputStream& input) {
  constexpr std::string_view kExpected = "wiki-extract documents (JSON lines or <doc> text)";
  InputKind kind = require_text_input(input, kExpected);
  if (skip_empty_input(kind, input.name())) return false;
  if (kind == InputKind::xml && !input.peek(256).starts_with("<doc"))
    throw Error(location(input.name()) + "is XML; expected " + std::string(kExpected));
  return true;
}

bool DocumentBatches::next(DocumentBatch& batch) {
  batch.first_ordinal = ordinal_;
  for (;;) {
    if (!reader_) {
      if (next_input_ >= inputs_.size()) return !batch.docs.empty() || !batch.errors.empty();
      input_ = std::make_unique<InputStream>(inputs_[next_input_++]);
      if (!require_documents(*input_)) continue;
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
