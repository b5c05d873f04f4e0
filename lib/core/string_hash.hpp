// Hashes std::string and std::string_view alike, so string-keyed containers can be probed with
// views without building a string (heterogeneous lookup, with std::equal_to<>).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <unordered_set>

namespace kglm {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
};

// A set of strings probed with string_views.
using StringSet = std::unordered_set<std::string, StringHash, std::equal_to<>>;

}  // namespace kglm
