// The data kglm ships with its tools (relation templates, question forms, ELMo's option files, the
// demo samples): PREFIX/share/kglm/data in an installed tree, found from the executable's own path
// (bin/../share/kglm/data), so a tree moved elsewhere still finds it. The build tree mirrors the
// layout (BUILD/share/kglm/data is a link to the source tree's data/), so the rule is the same there.
#pragma once

#include <filesystem>
#include <string>

namespace kglm {

// bin/../share/kglm/data beside the running executable; empty when there is none.
std::filesystem::path shipped_data_dir();

// A data option's value (--templates, --questions, --options): the path as given when it exists from
// the working directory; else, for a relative path, the same path in the shipped data (so
// `--templates templates` names the shipped relation templates). UsageError naming both places
// otherwise.
std::string find_data_path(const std::string& value, const char* option);

}  // namespace kglm
