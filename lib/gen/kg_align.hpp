// TEKGEN's alignment of KG statements to Wikipedia sentences (Agarwal et al. 2021, §2.1, Fig. 3):
// for each article whose title maps to an entity s, every statement (s, r, o) aligns to the
// sentences of the lead section that write o — an English name of an item, the amount of a
// quantity with a name of its unit, a date agreeing component-wise, a string's value — and a
// qualifier aligns as the sub-triple (s, o + " " + qualifier label, value) where its statement
// does. All statements aligned to one sentence form one example; relation co-occurrence counts
// are taken over those sentences. Item statements whose subject is named too give relation
// classification examples: the sentence with the subject's and the object's spans. The tool in
// bin/ (kg-align) only parses options and calls align_kg(). The matching rules are listed in
// man 1 kg-align.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/cli.hpp"
#include "core/stats.hpp"
#include "kg/facts.hpp"

namespace kglm::gen {

struct KgAlignOptions : RunOptions {
  std::string kg;
  std::string redirects;  // wiki-extract --redirects table (optional)
  std::string cooc;       // relation co-occurrence TSV (optional)
  // Relation classification examples (optional): annotated text, one record per item statement
  // whose subject and object are both named in an aligned sentence, "label" the relation.
  std::string relations;
  std::string locale = "en";
  std::vector<kg::FactKind> kinds = {kg::FactKind::item, kg::FactKind::quantity, kg::FactKind::time,
                                     kg::FactKind::string, kg::FactKind::monolingualtext};
  bool qualifiers = true;
  bool replace_pronoun = true;
  bool all_sections = false;  // every section, not only the lead
  // The wiki's language: articles resolve through LANG + "wiki" sitelinks, objects match by their
  // names in LANG. TEKGEN (and kg-align without qa) is English.
  std::string lang = "en";
  // kg-align qa: SQuAD v1.1 JSON (silver_qa.hpp) to `output` instead of the quadruples.
  bool qa = false;
  std::string questions;             // directory of LANG.jsonl question forms ("" for none)
  bool qa_sentence_context = false;  // the sentence as the context, not its paragraph
};

Stats align_kg(const KgAlignOptions& options);

// TEKGEN's pronoun rule for a sentence that does not name its subject: the first animate
// third-person pronoun, as a whole word in any case, becomes the subject's name: "he", "she",
// "him" -> name; "his", "hers" -> name + "'s". "her" is left alone (object or possessive cannot
// be told apart), as are "they" and "it" (not animate-specific). False when there is none.
bool replace_first_pronoun(std::string& sentence, std::string_view name);

}  // namespace kglm::gen
