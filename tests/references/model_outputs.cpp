// What a kglm model computes on given inputs, loaded by kglm's own loaders, for the comparisons with
// Hugging Face transformers (transformers_check.py).
//   model_outputs encoder DIR IN OUT   hidden_states.0..L [B,T,H]: a BERT / XLM-R encoder (any head ignored)
//   model_outputs mlm DIR IN OUT       the same and mlm_logits [B,T,V] (the model's MLM head)
//   model_outputs task DIR IN OUT      logits of a finetune model: token [B,T,labels], sequence and
//                                      relation by [CLS] [B,labels], choice [B,C] (IN's ids [B,C,T]);
//                                      qa start_logits and end_logits [B,T] (zeros at padding)
//   model_outputs t5 DIR IN OUT        logits [B,T,V] teacher-forced on IN's decoder_input_ids, and the
//                                      greedy and beam-4 outputs (greedy / beam4: I32 [B,max_len], -1 after
//                                      the end) for at most IN's max_new_tokens (I64 [1]) tokens
// IN is a safetensors file with input_ids and attention_mask (I64 [B,T]), optionally token_type_ids.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "nn/checkpoint.hpp"
#include "nn/encoder.hpp"
#include "nn/heads.hpp"
#include "nn/model_config.hpp"
#include "nn/safetensors.hpp"
#include "nn/torch_checkpoint.hpp"
#include "train/finetune.hpp"
#include "verbalize/decoding.hpp"
#include "verbalize/seq2seq_batch.hpp"
#include "verbalize/verbalizer_model.hpp"

using namespace kglm;
namespace fs = std::filesystem;

namespace {

using Outputs = std::vector<std::pair<std::string, nn::Tensor>>;

// The inputs' padded batch, packed for kglm; ids of rank 3 ([B,C,T], multiple choice) are flattened
// to B·C rows.
struct Inputs {
  int64_t batch = 0, seq = 0;
  nn::EncoderBatch packed;
  std::vector<int32_t> packed_row;  // [B·T]: the packed row of each position, -1 for padding
  // Packed rows [N, X] put back in the padded layout [B, T, X], zeros at padding (the comparison
  // leaves padding out: kglm computes nothing there).
  nn::Tensor padded(const nn::Tensor& rows) const {
    const int64_t width = rows.numel() / std::max<int64_t>(packed.tokens(), 1);
    nn::Tensor host = rows.to(nn::Device::Cpu);
    nn::Tensor out = nn::Tensor::zeros({batch, seq, width}, host.dtype());
    nn::Tensor flat = out.view({batch * seq, width});
    for (int64_t i = 0; i < batch * seq; ++i)
      if (packed_row[static_cast<size_t>(i)] >= 0)
        flat.rows(i, i + 1).copy_from(
            host.rows(packed_row[static_cast<size_t>(i)], packed_row[static_cast<size_t>(i)] + 1));
    return out;
  }
};

Inputs read_inputs(const nn::SafetensorsFile& in, const nn::ModelConfig& config) {
  Inputs b;
  nn::Tensor ids = in.read_i32("input_ids");
  b.seq = ids.shape().back();
  b.batch = ids.numel() / b.seq;
  const int64_t n = b.batch * b.seq;
  nn::Tensor types;
  if (in.find("token_type_ids")) types = in.read_i32("token_type_ids").view({n});
  b.packed = nn::pack_padded(ids.view({n}), in.read_i32("attention_mask").view({n}), types, b.batch, b.seq, config,
                             &b.packed_row);
  return b;
}

Outputs encoder_outputs(const fs::path& dir, const nn::SafetensorsFile& in, bool with_head) {
  const nn::ModelConfig config = nn::read_model_config(dir / "config.json");
  nn::ParameterStore params(nn::Device::Cpu);
  nn::Encoder encoder(config, params);
  std::optional<nn::MlmHead> head;
  if (with_head) head.emplace(config, params, encoder.word_embeddings());
  params.allocate(1, false);
  // Without the head a checkpoint's MLM or task head is left over: allowed, the encoder is complete.
  const nn::LoadReport report = nn::load_parameters(nn::open_model_weights(dir), params, false);
  params.refresh_compute();
  if (!report.unexpected.empty() && with_head)
    throw Error("unexpected tensors in a masked language model: " + report.unexpected.front());
  const Inputs inputs = read_inputs(in, config);
  const nn::Tensor& last = encoder.forward(inputs.packed, nn::DropoutContext{});
  Outputs out;
  for (int64_t l = 0; l <= config.layers; ++l)
    out.emplace_back("hidden_states." + std::to_string(l), inputs.padded(encoder.hidden_state(static_cast<size_t>(l))));
  if (head) {
    const int64_t n = inputs.packed.tokens();
    std::vector<int32_t> rows(static_cast<size_t>(n));
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int32_t>(i);
    out.emplace_back("mlm_logits", inputs.padded(head->predict(last, nn::Tensor::from<int32_t>({n}, rows))));
  }
  return out;
}

Outputs task_outputs(const fs::path& dir, const nn::SafetensorsFile& in) {
  train::LoadedModel m = train::load_finetuned_model(dir, nn::Device::Cpu);
  m.model->params().refresh_compute();
  const Inputs inputs = read_inputs(in, m.model->config());
  train::tasks::TaskBatch batch;
  batch.encoder = inputs.packed;
  const nn::Shape shape = in.read_i32("input_ids").shape();
  batch.examples = shape[0];
  batch.choices = shape.size() == 3 ? shape[1] : 1;
  if (m.task.kind == train::tasks::TaskKind::token) {  // every real token
    std::vector<int32_t> rows(static_cast<size_t>(inputs.packed.tokens()));
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int32_t>(i);
    batch.token_rows = nn::Tensor::from<int32_t>({inputs.packed.tokens()}, rows);
  }
  const nn::Tensor& logits = m.model->forward(batch, nn::DropoutContext{});
  if (m.task.kind == train::tasks::TaskKind::token) return {{"logits", inputs.padded(logits)}};
  if (m.task.kind == train::tasks::TaskKind::qa) {
    // [2B, T'] (starts, then ends; kNoScore past each sequence) to two [B, T] with zeros at padding.
    const nn::Tensor host = train::tasks::host_logits(logits);
    const int64_t width = host.dim(1);
    nn::Tensor start = nn::Tensor::zeros({inputs.batch, inputs.seq}),
               end = nn::Tensor::zeros({inputs.batch, inputs.seq});
    for (int64_t b = 0; b < inputs.batch; ++b)
      for (int64_t t = 0; t < inputs.packed.sequences.length(b); ++t) {
        start.data<float>()[b * inputs.seq + t] = host.data<float>()[b * width + t];
        end.data<float>()[b * inputs.seq + t] = host.data<float>()[(inputs.batch + b) * width + t];
      }
    return {{"start_logits", start}, {"end_logits", end}};
  }
  return {{"logits", logits.clone()}};
}

Outputs t5_outputs(const fs::path& dir, const nn::SafetensorsFile& in) {
  verbalize::Verbalizer v = verbalize::load_verbalizer(dir, nn::Device::Cpu);
  // The padded sources' real tokens, packed; every decoder input position is kept (the reference
  // computes logits at all of them).
  const nn::Tensor padded_ids = in.read_i32("input_ids"), mask = in.read_i32("attention_mask");
  const nn::Tensor decoder_ids = in.read_i32("decoder_input_ids");
  const int64_t B = padded_ids.dim(0), S = padded_ids.dim(1), T = decoder_ids.dim(1);
  std::vector<std::vector<int32_t>> sources(static_cast<size_t>(B));
  for (int64_t r = 0; r < B; ++r)
    for (int64_t t = 0; t < S; ++t)
      if (mask.data<int32_t>()[r * S + t])
        sources[static_cast<size_t>(r)].push_back(padded_ids.data<int32_t>()[r * S + t]);
  const verbalize::SourceBatch source_batch = verbalize::make_source_batch(sources);
  nn::Seq2SeqBatch batch;
  batch.sources = source_batch.sequences;
  batch.targets = nn::PackedSequences::from_lengths(std::vector<int64_t>(static_cast<size_t>(B), T));
  batch.input_ids = source_batch.input_ids;
  batch.decoder_input_ids = decoder_ids.view({B * T});
  batch.labels = nn::Tensor::zeros({B * T}, nn::DType::I32);
  v.model->forward(batch, nn::DropoutContext{}, 0);
  Outputs out{{"logits", v.model->logits().clone().view({B, T, v.config.vocab_size})}};

  // Decoding from the same sources.
  const int64_t max_new = in.read_i32("max_new_tokens").data<int32_t>()[0];
  std::vector<uint64_t> keys(sources.size(), 0);
  for (auto [name, method] :
       {std::pair{"greedy", verbalize::DecodeMethod::Greedy}, std::pair{"beam4", verbalize::DecodeMethod::Beam}}) {
    verbalize::DecodeOptions options;
    options.method = method;
    options.beams = 4;
    options.max_len = max_new;
    const std::vector<std::vector<int32_t>> tokens = verbalize::decode(*v.model, source_batch, options, keys);
    std::vector<int32_t> flat(static_cast<size_t>(B * max_new), -1);
    for (size_t r = 0; r < tokens.size(); ++r)
      std::copy(tokens[r].begin(), tokens[r].end(), flat.begin() + static_cast<int64_t>(r) * max_new);
    out.emplace_back(name, nn::Tensor::from<int32_t>({B, max_new}, flat));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() != 4) {
      std::cerr << "usage: model_outputs encoder|mlm|task|t5 MODEL_DIR IN.safetensors OUT.safetensors\n";
      return 2;
    }
    const nn::SafetensorsFile in = nn::SafetensorsFile::open(args[2]);
    Outputs out;
    if (args[0] == "encoder" || args[0] == "mlm") {
      out = encoder_outputs(args[1], in, args[0] == "mlm");
    } else if (args[0] == "task") {
      out = task_outputs(args[1], in);
    } else if (args[0] == "t5") {
      out = t5_outputs(args[1], in);
    } else {
      std::cerr << "model_outputs: unknown kind " << args[0] << "\n";
      return 2;
    }
    nn::write_safetensors(args[3], out);
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "model_outputs: " << e.what() << "\n";
    return 1;
  }
}
