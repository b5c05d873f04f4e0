// Options that take comma-separated lists ("en,fr,ru", "P19,P36", "11,22,33").
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kglm {

// The items of list between commas, empty ones included ("a,,b" has three; "" has one, empty), so
// that callers can refuse them with their own message.
std::vector<std::string_view> split_comma_list(std::string_view list);

// The items, none of them empty; UsageError "OPTION takes a comma-separated list, not 'LIST'".
std::vector<std::string> comma_list_option(std::string_view list, std::string_view option);

}  // namespace kglm
