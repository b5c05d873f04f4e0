#include "train/train_layers.hpp"

#include <string_view>

#include "core/error.hpp"

namespace kglm::train {

TrainLayers parse_train_layers(const std::string& spec, int64_t layers) {
  TrainLayers t;
  if (spec == "all") return t;
  std::string rest = spec;
  constexpr std::string_view kFrozen = ",frozen-embeddings";
  if (rest.ends_with(kFrozen)) {
    t.embeddings = false;
    rest.resize(rest.size() - kFrozen.size());
  }
  size_t used = 0;
  long k = -1;
  if (rest.starts_with("last:")) try {
      k = std::stol(rest.substr(5), &used);
    } catch (const std::exception&) {
    }
  if (k < 0 || used == 0 || 5 + used != rest.size())
    throw UsageError("--train-layers must be all, last:K or last:K,frozen-embeddings, not '" + spec + "'");
  if (k > layers) throw UsageError("--train-layers " + spec + ": the model has " + std::to_string(layers) + " layers");
  t.all = false;
  t.last = static_cast<size_t>(k);
  return t;
}

}  // namespace kglm::train
