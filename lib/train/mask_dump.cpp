#include "train/mask_dump.hpp"

#include "core/error.hpp"
#include "core/json_writer.hpp"
#include "core/output_stream.hpp"
#include "train/mlm_batch.hpp"
#include "train/objectives/objective_table.hpp"
#include "train/token_shards.hpp"

namespace kglm::train {

namespace {

template <typename T>
void append_numbers(std::string& line, const char* key, std::span<const T> values) {
  line += ", \"";
  line += key;
  line += "\": [";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) line += ',';
    line += std::to_string(values[i]);
  }
  line += ']';
}

}  // namespace

Stats run_mask_dump(const MaskDumpOptions& o) {
  const TokenDataset data = TokenDataset::open(dataset_paths(o.data), {});
  if (data.size() == 0) throw Error(o.data + ": the dataset has no sequences");
  check_masking_options(o.masking);
  const ObjectiveTable table = make_objective_table(o.entity_objective, o.objectives);
  const ObjectiveMasker masker(table, o.masking, Vocabulary(data.special(), data.vocab_size()));
  OutputStream out(o.output);
  Stats stats;
  std::vector<int32_t> input;
  std::vector<MaskedToken> masked;
  std::vector<uint32_t> positions;
  std::string line;
  for (uint64_t row = 0; row < o.rows; ++row) {
    const auto index = static_cast<uint32_t>(row % data.size());
    const Sequence seq = data.sequence(index);
    input.resize(seq.size());
    masked.clear();
    Rng rng(o.seed, row, kTrainStream);
    masker.mask(seq, rng, input, masked);
    line = "{\"row\": " + std::to_string(row) + ", \"sequence\": " + std::to_string(index) + ", \"kind\": \"" +
           sequence_kind_name(seq.kind) + "\", \"objective\": \"" + objective_name(table[seq.kind]) + "\", \"lang\": ";
    append_json_string(line, data.languages()[seq.lang]);
    append_numbers(line, "ids", seq.ids);
    append_numbers(line, "flags", seq.flags);
    append_numbers(line, "spans", seq.span);
    append_numbers(line, "input", std::span<const int32_t>(input));
    positions.clear();
    for (const MaskedToken& m : masked) positions.push_back(m.position);
    append_numbers(line, "positions", std::span<const uint32_t>(positions));
    line += ", \"became\": [";
    for (size_t i = 0; i < masked.size(); ++i)
      line += std::string(i ? "," : "") + "\"" + replacement_name(masked[i].replacement) + "\"";
    line += "], \"terms\": [";
    for (size_t i = 0; i < masked.size(); ++i)
      line += std::string(i ? "," : "") + "\"" + loss_term_name(masked[i].term) + "\"";
    line += "]}\n";
    out.write(line);
    stats.add("rows");
    stats.add("masked", static_cast<int64_t>(masked.size()));
    stats.add(std::string("rows.") + sequence_kind_name(seq.kind));
  }
  out.close();
  return stats;
}

}  // namespace kglm::train
