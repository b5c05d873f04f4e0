// Labels and aliases of KG-store entities for a set of languages, looked up by entity row.
// Tables stay as the store keeps them (rows ascending) and lookups are binary searches, so
// memory is the size of the text, not entities x languages.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kg/kg_store.hpp"

namespace kglm::gen {

class LabelIndex {
 public:
  // Loads the labels (and, with aliases, the aliases) of langs; a language absent from the store
  // has no labels.
  LabelIndex(const kg::KgStore& store, const std::vector<std::string>& langs, bool aliases);

  const std::vector<std::string>& languages() const { return langs_; }
  // The label of entity `row` in languages()[lang], if any.
  std::optional<std::string_view> label(size_t lang, uint32_t row) const;
  // Aliases of `row` in languages()[lang]: [first, last) indexes for alias().
  std::pair<size_t, size_t> aliases(size_t lang, uint32_t row) const;
  std::string_view alias(size_t lang, size_t i) const { return aliases_[lang].text[i]; }
  // Index of lang in languages(), or -1.
  int find(std::string_view lang) const;

 private:
  std::vector<std::string> langs_;
  std::vector<kg::TermTable> labels_;
  std::vector<kg::TermTable> aliases_;
};

}  // namespace kglm::gen
