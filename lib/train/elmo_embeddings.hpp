// `pretrain embed --model ELMO_DIR`: contextual word vectors from an ELMo model, written as
// AllenNLP's `allennlp elmo` command writes them, so code that reads those files reads these: each
// input line is one sentence of whitespace-separated words; dataset "<i>" holds line i's vectors,
// [layers, words, 2·projection] with --layers all (layer 0 the character encoder's token vector
// twice, layer l the forward and backward LSTM outputs side by side), [words, 2·projection] with
// average (their mean) or top (the last layer); "sentence_to_index" is one UTF-8 string, the JSON
// object from each sentence to its index. Each sentence is read from a zero LSTM state between
// <S> and </S>, which are left out (AllenNLP's embedder carries its state from batch to batch, so
// its vectors depend on what it read before; these do not).
#pragma once

#include "core/stats.hpp"
#include "nn/elmo_checkpoint.hpp"
#include "train/sentence_embeddings.hpp"

namespace kglm::train {

enum class ElmoLayers : uint8_t { all, average, top };
ElmoLayers parse_elmo_layers(const std::string& name);  // all | average | top; UsageError otherwise

// `options.model` is an ELMo model directory (nn::find_elmo_model).
Stats run_elmo_embed(const EmbedOptions& options);

}  // namespace kglm::train
