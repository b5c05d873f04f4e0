// --train-layers of pretrain and finetune: "all", "last:K" (the embeddings and the last K layers,
// as EntityCS §3 trains) or "last:K,frozen-embeddings".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace kglm::train {

struct TrainLayers {
  bool all = true;
  size_t last = 0;
  bool embeddings = true;
};

// UsageError for another form, or for K above the model's layers.
TrainLayers parse_train_layers(const std::string& spec, int64_t layers);

}  // namespace kglm::train
