#include "nn/checkpoint.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/output_target.hpp"
#include "core/temporaries.hpp"
#include "nn/convert.hpp"

namespace kglm::nn {

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The HF name a tensor of the file stands for: legacy LayerNorm names are renamed.
std::string canonical_name(std::string_view name) {
  std::string n(name);
  if (n.find("LayerNorm") != std::string::npos || n.find("layer_norm") != std::string::npos) {
    if (ends_with(n, ".gamma")) return n.substr(0, n.size() - 6) + ".weight";
    if (ends_with(n, ".beta")) return n.substr(0, n.size() - 5) + ".bias";
  }
  return n;
}

bool is_tied_decoder(std::string_view name) {
  return name == "lm_head.decoder.weight" || name == "cls.predictions.decoder.weight";
}
// Stored by some HF versions as a second name of the bias parameter.
bool is_decoder_bias(std::string_view name) {
  return name == "lm_head.decoder.bias" || name == "cls.predictions.decoder.bias";
}

}  // namespace

LoadReport load_parameters(const SafetensorsFile& file, ParameterStore& params, bool allow_missing) {
  struct Target {
    Parameter* param;
    const HfTensorName* slice;
  };
  std::unordered_map<std::string, Target> wanted;
  for (Parameter& p : params.all())
    for (const HfTensorName& hf : p.hf_names) wanted[hf.name] = {&p, &hf};

  LoadReport report;
  std::unordered_map<std::string, bool> loaded;
  std::vector<std::string> tied;
  for (const SafetensorsEntry& e : file.entries()) {
    std::string name = canonical_name(e.name);
    if (ends_with(name, "position_ids")) continue;  // a buffer, not a parameter
    if (is_tied_decoder(name)) {
      tied.push_back(e.name);
      continue;
    }
    if (is_decoder_bias(name)) name = name == "lm_head.decoder.bias" ? "lm_head.bias" : "cls.predictions.bias";
    auto it = wanted.find(name);
    // A base model (transformers' BertModel, XLMRobertaModel: all-MiniLM-L6-v2, say) stores the encoder
    // without its prefix; transformers adds it when a head model loads one, and so does kglm.
    for (const char* prefix : {"bert.", "roberta."}) {
      if (it != wanted.end()) break;
      if (auto prefixed = wanted.find(prefix + name); prefixed != wanted.end()) {
        name = prefix + name;
        it = prefixed;
      }
    }
    if (it == wanted.end()) {
      report.unexpected.push_back(e.name);
      continue;
    }
    if (loaded[name]) continue;  // decoder bias stored under both names
    Parameter& p = *it->second.param;
    const HfTensorName& slice = *it->second.slice;
    Tensor dst = p.value.rows(slice.row_begin, slice.row_end);
    Tensor src = file.read_f32(e.name);
    if (src.shape() != dst.shape())
      throw Error(file.source() + ": tensor '" + e.name + "' has shape " + shape_string(src.shape()) +
                  ", the model expects " + shape_string(dst.shape()));
    require_finite(src, file.source(), e.name);
    dst.copy_from(src);
    loaded[name] = true;
  }
  params.refresh_compute();
  for (const auto& [name, target] : wanted)
    if (!loaded[name]) report.missing.push_back(name);
  std::sort(report.missing.begin(), report.missing.end());
  if (!report.missing.empty() && !allow_missing)
    throw Error(file.source() + ": tensor '" + report.missing.front() + "' is missing (" +
                std::to_string(report.missing.size()) + " parameters missing in all)");
  // A stored decoder must really be tied: kglm keeps one matrix for both.
  for (const std::string& name : tied) {
    bool bert = name.rfind("cls.", 0) == 0;
    const Parameter* word =
        params.find((bert ? "bert." : "roberta.") + std::string("embeddings.word_embeddings.weight"));
    if (!word) continue;
    Tensor decoder = file.read_f32(name);
    const Tensor words = word->value.to(Device::Cpu);
    if (decoder.shape() != words.shape() || std::memcmp(decoder.raw(), words.raw(), decoder.nbytes()) != 0)
      throw Error(file.source() + ": tensor '" + name +
                  "' differs from the word embeddings; untied decoders are not supported");
  }
  return report;
}

void require_encoder_tensors(const LoadReport& report, const std::string& prefix, const std::string& source) {
  for (const std::string& name : report.missing)
    if (name.rfind(prefix, 0) == 0 && name.rfind(prefix + "pooler.", 0) != 0)
      throw Error(source + ": tensor '" + name +
                  "' of the encoder is missing (a truncated checkpoint, or a config.json that does not match its "
                  "weights); only a head may start random");
}

void require_finite(const Tensor& host_f32, const std::string& source, const std::string& name) {
  const float* v = host_f32.data<float>();
  const int64_t n = host_f32.numel();
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(v[i]))
      throw Error(source + ": tensor '" + name + "' holds " + (std::isnan(v[i]) ? "NaN" : "an infinity") +
                  " (element " + std::to_string(i) + " of " + std::to_string(n) + "): the checkpoint is damaged");
}

std::vector<std::pair<std::string, Tensor>> hf_tensors(const ParameterStore& params, DType dtype) {
  // One copy of the whole store to the host (when it is on a GPU) and one conversion, then views.
  Tensor values = params.values().to(Device::Cpu);
  if (dtype != DType::F32) values = from_f32(values, dtype);
  std::vector<std::pair<std::string, Tensor>> out;
  for (const Parameter& p : params.all()) {
    const Tensor value = values.rows(p.offset, p.offset + p.value.numel()).view(p.shape);
    for (const HfTensorName& hf : p.hf_names) out.emplace_back(hf.name, value.rows(hf.row_begin, hf.row_end));
  }
  return out;
}

void write_model_dir(const std::filesystem::path& dir, const ParameterStore& params, DType dtype,
                     const std::vector<std::pair<std::string, std::string>>& metadata,
                     const std::function<void(const std::filesystem::path&)>& write_files) {
  write_directory_atomically(dir, "model directory", kModelWeightsFile, [&](const std::filesystem::path& tmp) {
    write_safetensors(tmp / kModelWeightsFile, hf_tensors(params, dtype), metadata);
    write_files(tmp);
  });
}

}  // namespace kglm::nn
