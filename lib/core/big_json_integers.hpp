// JSON files written by Python hold integers of any size: transformers' tokenizer_config.json has
// "model_max_length": 1000000000000000019884624838656 (int(1e30)). simdjson refuses an integer that
// does not fit 64 bits (BIGINT_ERROR), so such files are read after the big integers are rewritten
// as floating-point literals (no field kglm reads needs their exact value).
#pragma once

#include <string>
#include <string_view>

namespace kglm {

// json with every integer literal outside strings longer than 18 digits turned into a float
// literal ("…e0"); everything else byte for byte. Text that is not JSON stays as malformed as it was.
std::string widen_big_integers(std::string_view json);

}  // namespace kglm
