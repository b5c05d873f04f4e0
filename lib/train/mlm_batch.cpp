#include "train/mlm_batch.hpp"

#include <algorithm>

namespace kglm::train {

MlmBatch make_mlm_batch(const TokenDataset& data, std::span<const uint32_t> sequences, const Masker& masker,
                        uint64_t seed, uint64_t batch_number, uint32_t stream, const nn::ModelConfig& config,
                        BatchRows slice) {
  const uint64_t global_rows = sequences.size();
  slice.end = std::min(slice.end, sequences.size());
  slice.begin = std::min(slice.begin, slice.end);
  const auto b = static_cast<int64_t>(slice.end - slice.begin);

  std::vector<std::vector<int32_t>> ids(static_cast<size_t>(b));
  std::vector<int32_t> rows, targets;
  std::vector<MaskedToken> masked;
  MlmBatch batch;
  int64_t row0 = 0;  // the packed row of the sequence's first token
  for (int64_t r = 0; r < b; ++r) {
    const size_t global_row = slice.begin + static_cast<size_t>(r);
    Sequence seq = data.sequence(sequences[global_row]);
    std::vector<int32_t>& out = ids[static_cast<size_t>(r)];
    out.resize(seq.size());
    Rng rng(seed, batch_number * global_rows + global_row, stream);
    masked.clear();
    masker.mask(seq, rng, out, masked);
    for (const MaskedToken& m : masked) {
      rows.push_back(static_cast<int32_t>(row0 + m.position));
      targets.push_back(m.target);
      batch.terms.push_back(m.term);
      ++batch.term_counts[static_cast<size_t>(m.term)];
      batch.tally.add(seq, m);
    }
    batch.tokens += static_cast<int64_t>(seq.size());
    row0 += static_cast<int64_t>(seq.size());
  }
  batch.encoder = nn::pack_sequences(ids, {}, config);
  const auto m = static_cast<int64_t>(rows.size());
  batch.rows = nn::Tensor::from<int32_t>({m}, rows);
  batch.targets = nn::Tensor::from<int32_t>({m}, targets);
  return batch;
}

}  // namespace kglm::train
