#include "gen/labels.hpp"

#include <algorithm>

#include "core/log.hpp"

namespace kglm::gen {

LabelIndex::LabelIndex(const kg::KgStore& store, const std::vector<std::string>& langs, bool aliases) : langs_(langs) {
  std::string without;  // requested languages the store has no label in: a typo, or the wrong store
  for (const std::string& lang : langs_) {
    labels_.push_back(store.terms("labels", lang));
    aliases_.push_back(aliases ? store.terms("aliases", lang) : kg::TermTable{});
    if (labels_.back().entity.empty()) without += (without.empty() ? "" : ", ") + lang;
  }
  if (!without.empty())
    log_warning("the KG store has 0 labels (of " + std::to_string(store.entity_count()) + " entities) in: " + without +
                "; nothing is written in these languages");
}

std::optional<std::string_view> LabelIndex::label(size_t lang, uint32_t row) const {
  const kg::TermTable& t = labels_[lang];
  auto it = std::lower_bound(t.entity.begin(), t.entity.end(), row);
  if (it == t.entity.end() || *it != row) return std::nullopt;
  return t.text[static_cast<size_t>(it - t.entity.begin())];
}

std::pair<size_t, size_t> LabelIndex::aliases(size_t lang, uint32_t row) const {
  const kg::TermTable& t = aliases_[lang];
  auto [first, last] = std::equal_range(t.entity.begin(), t.entity.end(), row);
  return {static_cast<size_t>(first - t.entity.begin()), static_cast<size_t>(last - t.entity.begin())};
}

int LabelIndex::find(std::string_view lang) const {
  auto it = std::find(langs_.begin(), langs_.end(), lang);
  return it == langs_.end() ? -1 : static_cast<int>(it - langs_.begin());
}

}  // namespace kglm::gen
