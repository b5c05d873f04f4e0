// Hashes std::string and std::string_view alike, so string-keyed containers can be probed with
// views without building a string (heterogeneous lookup, with std::equal_to<>).
#pragma once

#include <functional>
#include <string_view>

namespace kglm {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};

}  // namespace kglm
