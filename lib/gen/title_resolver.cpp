#include "gen/title_resolver.hpp"

#include "core/error.hpp"
#include "core/line_batcher.hpp"
#include "text/unicode.hpp"

namespace kglm::gen {

TitleResolver::TitleResolver(const kg::KgStore& store, const std::string& kg_path, const std::string& redirects,
                             const std::string& site) {
  kg::TermTable links = store.terms("sitelinks", site);
  if (links.entity.empty())
    throw Error(kg_path + ": the KG store has no " + site + " sitelinks to resolve titles with");
  for (size_t i = 0; i < links.entity.size(); ++i) titles_.emplace(std::string(links.text[i]), links.entity[i]);
  if (redirects.empty()) return;
  for_each_data_line(redirects, [&](uint64_t, std::string_view line) {
    size_t tab = line.find('\t');
    if (tab != std::string_view::npos)
      redirects_.emplace(std::string(line.substr(0, tab)), std::string(line.substr(tab + 1)));
  });
}

int64_t TitleResolver::direct(std::string_view title) const {
  auto it = titles_.find(title);
  return it == titles_.end() ? int64_t{-1} : int64_t{it->second};
}

int64_t TitleResolver::resolve(std::string_view title, Stats& stats, const std::string& counter) const {
  if (int64_t row = direct(title); row >= 0) return row;
  auto via_redirect = [&](std::string_view t) -> int64_t {
    auto r = redirects_.find(t);
    return r == redirects_.end() ? -1 : direct(r->second);
  };
  if (int64_t row = via_redirect(title); row >= 0) {
    stats.add(counter + "_via_redirect");
    return row;
  }
  const std::string upper = text::upper_first(title);
  if (upper == title) return -1;
  int64_t row = direct(upper);
  if (row < 0) row = via_redirect(upper);
  if (row >= 0) stats.add(counter + "_via_capitalisation");
  return row;
}

}  // namespace kglm::gen
