// Hugging Face model directories: config.json + model.safetensors (HF tensor names) + the
// tokenizer's files. Loading accepts what HF itself writes or used to write: LayerNorm
// `gamma`/`beta` for `weight`/`bias`, `position_ids` buffers (ignored), the tied decoder weight
// stored or not (when stored it must equal the word embeddings), BF16/F16/F64 tensors (to F32), and
// base models (BertModel, XLMRobertaModel) whose encoder names lack the "bert." / "roberta." prefix.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "nn/model_config.hpp"
#include "nn/parameters.hpp"
#include "nn/safetensors.hpp"

namespace kglm::nn {

struct LoadReport {
  std::vector<std::string> missing;     // parameters the file does not have (left as they were)
  std::vector<std::string> unexpected;  // tensors of the file no parameter wants (e.g. another head)
};

// Copies every parameter found in `file` into `params` by HF name. Missing parameters are an
// error unless allow_missing (a new head on a pre-trained encoder); shapes must match exactly.
LoadReport load_parameters(const SafetensorsFile& file, ParameterStore& params, bool allow_missing);

// The parameters of an encoder (names under `prefix`, "bert." or "roberta.") must all come from the
// file: a checkpoint that lacks one (a truncated file, a config of 3 layers over weights of 2) is
// refused, naming it. Only task and LM heads may start random, and the pooler, which HF's MLM
// checkpoints do not store (transformers starts it random too). Throws Error.
void require_encoder_tensors(const LoadReport& report, const std::string& prefix, const std::string& source);

// Refuses a weight tensor (host, F32) that holds a NaN or an infinity, naming the tensor and the
// first such element: trained from, it would make every output NaN and look like divergence.
void require_finite(const Tensor& host_f32, const std::string& source, const std::string& name);

// The parameters under their HF names (the tied decoder is not stored, as HF does), as host
// tensors of `dtype` (F32, or BF16/F16 rounded to nearest even, for smaller checkpoints).
std::vector<std::pair<std::string, Tensor>> hf_tensors(const ParameterStore& params, DType dtype = DType::F32);

// The weights of a model directory: what marks a directory as one (check_directory_output).
inline constexpr const char* kModelWeightsFile = "model.safetensors";

// Writes DIR atomically: everything goes to DIR.tmp.<pid>, which replaces DIR only when complete.
// `write_files(tmp_dir)` adds the other files (config.json, tokenizer files, trainer state). The
// weights are stored as `dtype` (F32, BF16 or F16).
void write_model_dir(const std::filesystem::path& dir, const ParameterStore& params, DType dtype,
                     const std::vector<std::pair<std::string, std::string>>& metadata,
                     const std::function<void(const std::filesystem::path&)>& write_files);

}  // namespace kglm::nn
