#include "gen/template_realizer.hpp"

#include <unicode/uchar.h>
#include <unicode/utf8.h>

#include "text/unicode.hpp"

namespace kglm::gen {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Lower-cases s code point by code point (Turkish: I → ı, İ → i) and records which code points
// were capitals, so that an inflected form can have them back (X-FACTR's way with Turkish names).
std::string lower_case(std::string_view s, std::string_view lang, std::vector<bool>& capitals) {
  std::string out;
  capitals.clear();
  for (int32_t i = 0, n = static_cast<int32_t>(s.size()); i < n;) {
    UChar32 c;
    U8_NEXT(s.data(), i, n, c);
    const bool capital = u_isupper(c) != 0;
    capitals.push_back(capital);
    UChar32 lower = u_tolower(c);
    if (lang == "tr" && c == 'I') lower = 0x0131;  // ı
    text::append_utf8(out, c < 0 ? 0xFFFD : static_cast<uint32_t>(lower));
  }
  return out;
}

std::string restore_capitals(std::string_view s, std::string_view lang, const std::vector<bool>& capitals) {
  std::string out;
  size_t k = 0;
  for (int32_t i = 0, n = static_cast<int32_t>(s.size()); i < n; ++k) {
    UChar32 c;
    U8_NEXT(s.data(), i, n, c);
    UChar32 mapped = c;
    if (k < capitals.size() && capitals[k]) {
      mapped = u_toupper(c);
      if (lang == "tr" && c == 'i') mapped = 0x0130;  // İ
    }
    text::append_utf8(out, mapped < 0 ? 0xFFFD : static_cast<uint32_t>(mapped));
  }
  return out;
}

// The table's form of a name: as written, else lower-cased with its capitals put back, else (where
// the case goes on the last word) the last word's form after the other words.
std::optional<std::string> table_form(const InflectionTables& tables, std::string_view lang, std::string_view label,
                                      std::string_view case_name, bool plural) {
  if (auto form = tables.find(lang, label, case_name, plural)) return form;
  std::vector<bool> capitals;
  const std::string lower = lower_case(label, lang, capitals);
  if (lower != label)
    if (auto form = tables.find(lang, lower, case_name, plural)) return restore_capitals(*form, lang, capitals);
  if (case_on_last_word(lang)) {
    const size_t space = label.rfind(' ');
    if (space != std::string_view::npos && space + 1 < label.size())
      if (auto last = table_form(tables, lang, label.substr(space + 1), case_name, plural))
        return std::string(label.substr(0, space + 1)) + *last;
  }
  return std::nullopt;
}

std::string realize_label(const TemplateElement& slot, std::string_view lang, const TemplateEntity& entity,
                          const Agreement& a, const RealizeOptions& options, TemplateGaps* gaps) {
  if (slot.slot_case.empty() && !slot.copula) return entity.label;
  TemplateGaps none;
  TemplateGaps& g = gaps ? *gaps : none;
  if (keeps_label_plain(lang, entity.label)) {
    ++g.kept_plain;
    return entity.label;
  }
  if (auto form = inflect_by_rule(lang, entity.label, slot, a.plural)) {
    ++g.inflected;
    return *form;
  }
  if (options.inflections != nullptr && !slot.slot_case.empty())
    if (auto form = table_form(*options.inflections, lang, entity.label, slot.slot_case, a.plural)) {
      ++g.inflected;
      return *form;
    }
  ++g.uninflected;
  return entity.label;
}

// The form of a choice for an entity: by humanness (bn), by number where a plural form is given,
// else by gender; an unknown gender takes the first form (probe, X-FACTR's default) or the neutral
// one: a form with no gender, else masculine and feminine together ("né(e)", "a/b").
std::string choose(const TemplateElement& choice, const Agreement& a, bool probe) {
  using Alternative = TemplateElement::Alternative;
  const std::vector<Alternative>& alternatives = choice.alternatives;
  if (alternatives.empty()) return {};
  auto find = [&](auto&& predicate) -> const Alternative* {
    for (const Alternative& alt : alternatives)
      if (predicate(alt)) return &alt;
    return nullptr;
  };
  if (find([](const Alternative& alt) { return alt.human != 0; })) {
    const Alternative* alt = find([&](const Alternative& x) { return x.human == (a.human ? 1 : 2); });
    return (alt ? alt : &alternatives.front())->form;
  }
  if (a.plural)
    if (const Alternative* alt = find([](const Alternative& x) { return x.number == 2; })) return alt->form;
  auto singular_or_any = [](const Alternative& x) { return x.number != 2; };
  const Alternative* first = find(singular_or_any);
  if (first == nullptr) first = &alternatives.front();
  if (a.gender != Gender::unknown) {
    const Alternative* alt = find([&](const Alternative& x) { return x.number != 2 && x.gender == a.gender; });
    return (alt ? alt : first)->form;
  }
  if (probe) return first->form;
  if (const Alternative* alt = find([](const Alternative& x) { return x.number != 2 && x.gender == Gender::unknown; }))
    return alt->form;
  const Alternative* masculine =
      find([](const Alternative& x) { return x.number != 2 && x.gender == Gender::masculine; });
  const Alternative* feminine =
      find([](const Alternative& x) { return x.number != 2 && x.gender == Gender::feminine; });
  if (masculine == nullptr || feminine == nullptr || masculine->form == feminine->form) return first->form;
  if (feminine->form.starts_with(masculine->form))
    return masculine->form + "(" + feminine->form.substr(masculine->form.size()) + ")";
  return masculine->form + "/" + feminine->form;
}

bool is_closing_punctuation(char c) { return c == '.' || c == ',' || c == '?' || c == '!'; }

// Collapses whitespace runs, drops a space before punctuation that ends a word, and trims the
// sentence's ends (first/last: whether this text begins/ends the sentence).
std::string normalise_spaces(std::string_view in, bool first, bool last, bool attach_punctuation) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (is_space(c)) {
      if ((out.empty() && first) || (!out.empty() && out.back() == ' ')) continue;
      out += ' ';
      continue;
    }
    const bool ends_word = i + 1 == in.size() ? last : is_space(in[i + 1]);
    if (attach_punctuation && is_closing_punctuation(c) && ends_word && !out.empty() && out.back() == ' ')
      out.pop_back();
    out += c;
  }
  if (last && !out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// Removes the last word of text if it is one of words (space-separated) and a space follows it.
bool drop_last_word_of(std::string& text, std::string_view words) {
  if (words.empty()) return false;
  const size_t end = text.find_last_not_of(" \t");
  if (end == std::string::npos || end + 1 == text.size()) return false;
  const size_t start = text.find_last_of(" \t", end);
  const size_t begin = start == std::string::npos ? 0 : start + 1;
  const std::string_view word(text.data() + begin, end + 1 - begin);
  for (size_t from = 0; from <= words.size();) {
    size_t to = words.find(' ', from);
    if (to == std::string_view::npos) to = words.size();
    if (words.substr(from, to - from) == word) {
      text.erase(begin);
      return true;
    }
    from = to + 1;
  }
  return false;
}

}  // namespace

std::string realize_slot(const TemplateElement& slot, std::string_view lang, const TemplateEntity& entity,
                         const RealizeOptions& options, TemplateGaps* gaps) {
  Agreement a = agreement(lang, entity);
  if (slot.fixed_gender != Gender::unknown) a.gender = slot.fixed_gender;
  return realize_label(slot, lang, entity, a, options, gaps);
}

std::vector<TemplatePiece> resolve_template(const ParsedTemplate& parsed, std::string_view lang,
                                            const TemplateEntity& subject, const TemplateEntity& object,
                                            const RealizeOptions& options, TemplateGaps* gaps) {
  const TemplateEntity* entities[2] = {&subject, &object};
  Agreement agreements[2] = {agreement(lang, subject), agreement(lang, object)};
  std::string_view cases[2];
  for (int e = 0; e < 2; ++e)
    if (const TemplateElement* slot = find_slot(parsed, static_cast<Entity>(e))) {
      cases[e] = slot->slot_case;
      if (slot->fixed_gender != Gender::unknown) agreements[e].gender = slot->fixed_gender;
    }

  std::vector<TemplatePiece> pieces;
  bool glue = false;  // the last text ends in an elided word ("l'"): no space after it
  auto append_text = [&](std::string_view text) {
    if (glue) {
      while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
      glue = text.empty();
    }
    if (text.empty()) return;
    if (pieces.empty() || pieces.back().kind != TemplatePiece::Kind::text)
      pieces.push_back({TemplatePiece::Kind::text, {}});
    pieces.back().text += text;
  };
  for (const TemplateElement& element : parsed.elements) {
    const int e = static_cast<int>(element.entity);
    switch (element.kind) {
      case TemplateElement::Kind::text:
        append_text(element.text);
        break;
      case TemplateElement::Kind::slot:
        glue = false;
        pieces.push_back(
            {element.entity == Entity::subject ? TemplatePiece::Kind::subject : TemplatePiece::Kind::object,
             realize_label(element, lang, *entities[e], agreements[e], options, gaps)});
        break;
      case TemplateElement::Kind::choice:
        append_text(choose(element, agreements[e], options.probe));
        break;
      case TemplateElement::Kind::function_word: {
        Agreement a = agreements[e];
        if (element.fixed_gender != Gender::unknown) a.gender = element.fixed_gender;
        const std::string_view case_name = element.slot_case.empty() ? cases[e] : element.slot_case;
        // A masked object shows nothing of its label (X-FACTR sees the mask there).
        const bool masked = options.probe && element.entity == Entity::object;
        const auto word = function_word(lang, element.text, a, case_name, masked ? "" : entities[e]->label);
        if (!word) {
          if (gaps) ++gaps->missing_function_words;
          break;
        }
        if (word->empty()) break;
        if (!pieces.empty() && pieces.back().kind == TemplatePiece::Kind::text)
          drop_last_word_of(pieces.back().text, function_word_class_words(lang, element.text));
        append_text(*word);
        glue = word->back() == '\'';
        break;
      }
    }
  }
  std::vector<TemplatePiece> normalised;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (pieces[i].kind == TemplatePiece::Kind::text) {
      pieces[i].text = normalise_spaces(pieces[i].text, i == 0, i + 1 == pieces.size(), !options.probe);
      if (pieces[i].text.empty()) continue;
    }
    normalised.push_back(std::move(pieces[i]));
  }
  return normalised;
}

std::string fill_template(const ParsedTemplate& parsed, std::string_view lang, const TemplateEntity& subject,
                          const TemplateEntity& object, const RealizeOptions& options) {
  std::string out;
  for (const TemplatePiece& piece : resolve_template(parsed, lang, subject, object, options)) out += piece.text;
  return out;
}

}  // namespace kglm::gen
