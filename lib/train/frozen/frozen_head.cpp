#include "train/frozen/frozen_head.hpp"

namespace kglm::train::frozen {

std::unique_ptr<FrozenHead> make_pos_head(const HeadShape& shape, nn::Device device);     // pos_head.cpp
std::unique_ptr<FrozenHead> make_parser_head(const HeadShape& shape, nn::Device device);  // parser_head.cpp
std::unique_ptr<FrozenHead> make_esim_head(const HeadShape& shape, nn::Device device);    // esim_head.cpp

std::optional<FrozenTask> parse_frozen_task(const std::string& name) {
  if (name == "pos") return FrozenTask::pos;
  if (name == "parse") return FrozenTask::parse;
  if (name == "nli") return FrozenTask::nli;
  return std::nullopt;
}

const char* frozen_task_name(FrozenTask task) {
  return task == FrozenTask::pos ? "pos" : task == FrozenTask::parse ? "parse" : "nli";
}

std::unique_ptr<FrozenHead> make_frozen_head(FrozenTask task, const HeadShape& shape, nn::Device device) {
  switch (task) {
    case FrozenTask::pos:
      return make_pos_head(shape, device);
    case FrozenTask::parse:
      return make_parser_head(shape, device);
    case FrozenTask::nli:
      break;
  }
  return make_esim_head(shape, device);
}

nn::Tensor word_targets(const FrozenData& t, std::span<const uint32_t> sentences, const std::vector<int32_t>& of) {
  std::vector<int32_t> out;
  for (uint32_t s : sentences) out.insert(out.end(), of.begin() + t.first[s], of.begin() + t.first[s + 1]);
  return nn::Tensor::from({static_cast<int64_t>(out.size())}, out);
}

}  // namespace kglm::train::frozen
