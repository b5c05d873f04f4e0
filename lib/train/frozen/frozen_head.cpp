#include "train/frozen/frozen_head.hpp"

namespace kglm::train::frozen {

std::unique_ptr<FrozenHead> make_pos_head(const HeadShape& shape, nn::Device device);     // pos_head.cpp
std::unique_ptr<FrozenHead> make_parser_head(const HeadShape& shape, nn::Device device);  // parser_head.cpp

std::optional<FrozenTask> parse_frozen_task(const std::string& name) {
  if (name == "pos") return FrozenTask::pos;
  if (name == "parse") return FrozenTask::parse;
  return std::nullopt;
}

const char* frozen_task_name(FrozenTask task) { return task == FrozenTask::pos ? "pos" : "parse"; }

std::unique_ptr<FrozenHead> make_frozen_head(FrozenTask task, const HeadShape& shape, nn::Device device) {
  return task == FrozenTask::pos ? make_pos_head(shape, device) : make_parser_head(shape, device);
}

nn::Tensor word_targets(const Treebank& t, std::span<const uint32_t> sentences, const std::vector<int32_t>& of) {
  std::vector<int32_t> out;
  for (uint32_t s : sentences) out.insert(out.end(), of.begin() + t.first[s], of.begin() + t.first[s + 1]);
  return nn::Tensor::from({static_cast<int64_t>(out.size())}, out);
}

}  // namespace kglm::train::frozen
