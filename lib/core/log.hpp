// Messages on stderr, prefixed with the tool's name. Data never goes through here.
#pragma once

#include <string_view>

namespace kglm {

void set_log_tool_name(std::string_view name);
// --quiet: info messages and progress are silenced; warnings and errors still print.
void set_log_quiet(bool quiet);
bool log_quiet();

void log_info(std::string_view message);
void log_warning(std::string_view message);
void log_error(std::string_view message);

}  // namespace kglm
