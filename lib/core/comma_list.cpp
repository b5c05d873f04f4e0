#include "core/comma_list.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace kglm {

std::vector<std::string_view> split_comma_list(std::string_view list) {
  std::vector<std::string_view> items;
  for (size_t begin = 0;;) {
    const size_t comma = std::min(list.find(',', begin), list.size());
    items.push_back(list.substr(begin, comma - begin));
    if (comma == list.size()) return items;
    begin = comma + 1;
  }
}

std::vector<std::string> comma_list_option(std::string_view list, std::string_view option) {
  std::vector<std::string> items;
  for (std::string_view item : split_comma_list(list)) {
    if (item.empty())
      throw UsageError(std::string(option) + " takes a comma-separated list, not '" + std::string(list) + "'");
    items.emplace_back(item);
  }
  return items;
}

}  // namespace kglm
