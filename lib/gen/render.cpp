#include "gen/render.hpp"

#include <simdjson.h>

#include <array>
#include <memory>

#include "core/error.hpp"
#include "core/input_kind.hpp"
#include "core/input_stream.hpp"
#include "core/json_writer.hpp"
#include "core/line_batcher.hpp"
#include "core/line_shard.hpp"
#include "core/log.hpp"
#include "core/ordered_pipeline.hpp"
#include "gen/annotated_text.hpp"
#include "gen/entity_gender.hpp"
#include "gen/fact_text.hpp"
#include "gen/inflection_tables.hpp"
#include "gen/labels.hpp"
#include "gen/record_writer.hpp"
#include "gen/relation_templates.hpp"
#include "gen/template_realizer.hpp"
#include "kg/facts.hpp"

namespace kglm::gen {

namespace {

// One statement of a subgraph record, as ids ("facts" of man 5 kglm-kelm).
struct StatementIds {
  std::string relation, kind, value;
  std::string qualifier, qualifier_kind, qualifier_value;  // empty: a statement, not a qualifier
};

struct Subgraph {
  std::string id;
  std::string subject;
  std::vector<StatementIds> statements;
};

struct LineTask {
  std::string file;
  LineBatch batch;
};

// A rendered subgraph in one language.
struct Rendered {
  std::string subject;
  std::string id;
  size_t lang = 0;
  AnnotatedText text;
  AnnotatedText source;                             // pairs mode: the linearised statements that `text` says
  std::vector<std::array<std::string, 3>> triples;  // pairs mode: their labels (KELM's "triples")
};

struct TaskResult {
  std::string file;
  std::vector<Rendered> rendered;
  std::vector<std::pair<uint64_t, std::string>> errors;
  uint64_t valid = 0;  // subgraph lines parsed
  Stats stats;
};

std::string string_field(simdjson::dom::element e, const char* what) {
  std::string_view s;
  if (e.get(s) != simdjson::SUCCESS) throw Error(std::string(what) + " is not a string");
  return std::string(s);
}

Subgraph parse_subgraph(simdjson::dom::parser& parser, std::string_view line) {
  simdjson::dom::element doc;
  if (auto error = parser.parse(line.data(), line.size(), false).get(doc); error)
    throw Error(std::string("invalid JSON: ") + simdjson::error_message(error));
  Subgraph g;
  simdjson::dom::object object;
  if (doc.get(object) != simdjson::SUCCESS) throw Error("not a JSON object");
  simdjson::dom::element e;
  if (object["subject"].get(e) != simdjson::SUCCESS) throw Error("no \"subject\"");
  g.subject = string_field(e, "subject");
  g.id = object["id"].get(e) == simdjson::SUCCESS ? string_field(e, "id") : g.subject;
  simdjson::dom::array facts;
  if (object["facts"].get(facts) != simdjson::SUCCESS) throw Error("no \"facts\" array");
  for (simdjson::dom::element f : facts) {
    simdjson::dom::array parts;
    if (f.get(parts) != simdjson::SUCCESS || (parts.size() != 3 && parts.size() != 6))
      throw Error("a fact is not an array of 3 or 6 strings");
    std::vector<std::string> s;
    for (simdjson::dom::element p : parts) s.push_back(string_field(p, "a fact's member"));
    StatementIds st{s[0], s[1], s[2], {}, {}, {}};
    if (s.size() == 6) {
      st.qualifier = s[3];
      st.qualifier_kind = s[4];
      st.qualifier_value = s[5];
    }
    g.statements.push_back(std::move(st));
  }
  return g;
}

class Renderer {
 public:
  explicit Renderer(const RenderOptions& o)
      : options_(o),
        store_(o.kg),
        facts_(store_, {kg::FactKind::item}),
        labels_(store_, o.langs, false),
        text_(store_, facts_, labels_),
        entities_(store_, facts_, text_) {
    if (o.mode == RenderOptions::Mode::templates || o.mode == RenderOptions::Mode::pairs) {
      templates_ = RelationTemplates::load_dir(o.templates, o.langs);
      // A template that cannot be realised costs its relation in its language, nothing else.
      report_template_problems(templates_, "rendered by template", load_stats_);
      if (!o.inflections.empty()) {
        inflections_ = InflectionTables::load_dir(o.inflections, o.langs);
        for (const std::string& line : inflections_.describe()) log_info("inflections " + line);
      }
    } else if (!o.inflections.empty()) {
      throw UsageError("--inflections applies to --mode template and --mode pairs");
    }
  }

  const LabelIndex& labels() const { return labels_; }
  // What reading the templates counted.
  const Stats& load_stats() const { return load_stats_; }

  void process(simdjson::dom::parser& parser, LineTask& task, TaskResult& result) const {
    result.file = task.file;
    task.batch.for_each_line([&](uint64_t line, std::string_view json) {
      if (json.empty()) return;
      Subgraph g;
      try {
        g = parse_subgraph(parser, json);
      } catch (const Error& e) {
        result.errors.emplace_back(line, e.what());
        return;
      }
      ++result.valid;
      render(g, result);
    });
  }

 private:
  void render(const Subgraph& g, TaskResult& result) const {
    Stats& stats = result.stats;
    stats.add("subgraphs");
    const int64_t subject = text_.item_row(g.subject);
    if (subject < 0) return stats.add("subjects_not_in_kg");
    for (size_t l = 0; l < labels_.languages().size(); ++l) {
      auto subject_label = labels_.label(l, static_cast<uint32_t>(subject));
      if (!subject_label) {
        stats.add("subgraphs_without_subject_label");
        continue;
      }
      Rendered r{g.subject, g.id, l, {}, {}, {}};
      size_t rendered = 0;
      const Mode mode = options_.mode;
      for (const StatementIds& st : g.statements) {
        const bool qualifier = !st.qualifier.empty();
        if (qualifier && mode != Mode::linearize) continue;
        if (mode == Mode::pairs) {
          // Only statements a template says, so that both sides carry the same facts.
          const int64_t relation = text_.relation_row(st.relation);
          if (relation < 0 ||
              !templates_.find(labels_.languages()[l], text_.relation_number(static_cast<uint32_t>(relation)))) {
            stats.add("statements_without_template");
            continue;
          }
          AnnotatedText source = r.source, sentence = r.text;
          const uint32_t s = static_cast<uint32_t>(subject);
          if (!statement(source, Mode::linearize, l, s, g.subject, *subject_label, st, rendered, stats) ||
              !statement(sentence, Mode::templates, l, s, g.subject, *subject_label, st, rendered, stats)) {
            stats.add("statements_missing_label");
            continue;
          }
          r.source = std::move(source);
          r.text = std::move(sentence);
          r.triples.push_back({std::string(*subject_label),
                               std::string(*text_.relation_label(l, static_cast<uint32_t>(relation))),
                               std::string(*text_.value_text(l, st.kind, st.value))});
          ++rendered;
          continue;
        }
        if (statement(r.text, mode, l, static_cast<uint32_t>(subject), g.subject, *subject_label, st, rendered, stats))
          ++rendered;
        else
          stats.add("statements_missing_label");
      }
      if (rendered == 0) continue;
      stats.add("records." + labels_.languages()[l]);
      stats.add("statements_rendered", static_cast<int64_t>(rendered));
      result.rendered.push_back(std::move(r));
    }
  }

  using Mode = RenderOptions::Mode;

  // Appends one statement in `mode`'s form; false (nothing appended) when a label is missing.
  bool statement(AnnotatedText& t, Mode mode, size_t lang, uint32_t subject, const std::string& subject_id,
                 std::string_view subject_label, const StatementIds& st, size_t index, Stats& stats) const {
    auto object = text_.value_text(lang, st.kind, st.value);
    const int64_t relation = text_.relation_row(st.relation);  // -1 for an id the store lacks
    if (!object || relation < 0) return false;
    const ParsedTemplate* tpl = nullptr;
    if (mode == Mode::templates && st.qualifier.empty()) {
      tpl = templates_.find(labels_.languages()[lang], text_.relation_number(static_cast<uint32_t>(relation)));
      if (!tpl) stats.add("template_fallbacks");
    }
    // Templates say the relation in their own words; the other forms need its label.
    auto relation_label = text_.relation_label(lang, static_cast<uint32_t>(relation));
    if (!tpl && !relation_label) return false;
    const bool item = st.kind == "item";
    const std::string_view object_id = item ? std::string_view(st.value) : std::string_view();
    auto object_span = [&] {
      if (item)
        t.append_span(*object, "entity", object_id);
      else
        t.append(*object);
    };
    if (mode == Mode::linearize) {
      if (index == 0) t.append_span(subject_label, "entity", subject_id);
      t.append(index == 0 ? " " : ", ");
      if (st.qualifier.empty()) {
        t.append_span(*relation_label, "relation", st.relation);
        t.append(" ");
        object_span();
        return true;
      }
      const int64_t q = text_.relation_row(st.qualifier);
      auto q_label = q < 0 ? std::nullopt : text_.relation_label(lang, static_cast<uint32_t>(q));
      auto q_value = text_.value_text(lang, st.qualifier_kind, st.qualifier_value);
      if (!q_label || !q_value) return false;
      object_span();
      t.append(" ");
      t.append_span(*q_label, "relation", st.qualifier);
      t.append(" ");
      t.append(*q_value);
      return true;
    }
    if (index > 0) t.append(" ");
    if (!tpl) {
      t.append_triple({subject_label, *relation_label, *object}, {subject_id, st.relation, object_id});
      return true;
    }
    const int64_t object_row = item ? text_.item_row(st.value) : -1;
    TemplateEntity object_entity;
    if (object_row >= 0)
      object_entity = entities_.of(static_cast<uint32_t>(object_row), *object);
    else
      object_entity.label = *object;
    RealizeOptions realize;
    realize.inflections = &inflections_;
    TemplateGaps gaps;
    const std::string& lang_code = labels_.languages()[lang];
    for (const TemplatePiece& piece : resolve_template(
             *tpl, lang_code, entities_.of(subject, std::string(subject_label)), object_entity, realize, &gaps)) {
      if (piece.kind == TemplatePiece::Kind::subject)
        t.append_span(piece.text, "entity", subject_id);
      else if (piece.kind == TemplatePiece::Kind::object && item)
        t.append_span(piece.text, "entity", object_id);
      else
        t.append(piece.text);
    }
    stats.add("slots_inflected." + lang_code, gaps.inflected);
    stats.add("slots_kept_plain." + lang_code, gaps.kept_plain);
    stats.add("slots_uninflected." + lang_code, gaps.uninflected);
    stats.add("missing_function_words." + lang_code, gaps.missing_function_words);
    return true;
  }

  const RenderOptions& options_;
  kg::KgStore store_;
  kg::FactStore facts_;
  LabelIndex labels_;
  FactText text_;
  TemplateEntities entities_;
  RelationTemplates templates_;
  InflectionTables inflections_;
  Stats load_stats_;
};

// Input files in turn, cut into line batches; with --shard, each file's share of the lines.
class LineTasks {
 public:
  LineTasks(const std::vector<std::string>& inputs, size_t batch_bytes, std::vector<LineShardRange> ranges)
      : inputs_(inputs), batch_bytes_(batch_bytes), ranges_(std::move(ranges)) {}
  bool next(LineTask& task) {
    for (;;) {
      if (!batcher_) {
        if (next_input_ >= inputs_.size()) return false;
        const size_t k = next_input_++;
        if (!ranges_.empty() && ranges_[k].begin == ranges_[k].end) continue;
        input_ = std::make_unique<InputStream>(inputs_[k]);
        if (skip_empty_input(
                require_input_kind(*input_, {InputKind::json}, "subgraphs (JSON lines of verbalize subgraphs)"),
                input_->name()))
          continue;
        if (!ranges_.empty()) restrict_to_line_range(*input_, ranges_[k]);
        batcher_ = std::make_unique<LineBatcher>(*input_, batch_bytes_);
      }
      task.file = input_->name();
      if (batcher_->next(task.batch)) return true;
      if (!batcher_->stream_error().empty()) throw Error(location(input_->name()) + batcher_->stream_error());
      batcher_.reset();
    }
  }

 private:
  const std::vector<std::string>& inputs_;
  size_t batch_bytes_;
  std::vector<LineShardRange> ranges_;  // empty: whole files
  size_t next_input_ = 0;
  std::unique_ptr<InputStream> input_;
  std::unique_ptr<LineBatcher> batcher_;
};

// --group-by-subject keeps a subject's subgraphs (consecutive lines) in one part.
bool same_subject(std::string_view previous, std::string_view line) {
  simdjson::dom::parser parser;
  std::string_view a, b;
  std::string first(previous);
  if (parser.parse(first).at_key("subject").get(a) != simdjson::SUCCESS) return false;
  first.assign(a);
  return parser.parse(line.data(), line.size()).at_key("subject").get(b) == simdjson::SUCCESS && first == b;
}

}  // namespace

Stats render_subgraphs(const RenderOptions& options) {
  if (options.langs.empty()) throw UsageError("--langs: no language");
  if ((options.mode == RenderOptions::Mode::templates || options.mode == RenderOptions::Mode::pairs) &&
      options.templates.empty())
    throw UsageError("--mode template and --mode pairs need --templates DIR");
  if (options.mode == RenderOptions::Mode::pairs && options.group_by_subject)
    throw UsageError("--group-by-subject does not apply to --mode pairs");
  const Renderer renderer(options);
  const std::vector<std::string>& langs = renderer.labels().languages();
  RecordWriter writer(options.output, options.split_dir, ".jsonl");
  const bool split = !options.split_dir.empty();
  std::vector<LineShardRange> ranges;
  if (options.shard.active())
    ranges = line_shard_ranges(options.inputs, options.shard,
                               options.group_by_subject ? SameGroup(same_subject) : SameGroup());
  LineTasks source(options.inputs, std::min<size_t>(options.batch_bytes, 1 << 20), std::move(ranges));
  const unsigned workers = std::max(1u, options.threads);
  std::vector<simdjson::dom::parser> parsers(workers);
  ErrorCounter errors(options.max_errors);
  Stats stats = renderer.load_stats();
  const char* mode = options.mode == RenderOptions::Mode::kmlm        ? "kmlm"
                     : options.mode == RenderOptions::Mode::linearize ? "linearize"
                     : options.mode == RenderOptions::Mode::pairs     ? "pairs"
                                                                      : "template";
  // Pairs mode: the verbaliser's training records, as kg-align writes its aligned sentences.
  auto write_pair = [&](const Rendered& r) {
    RecordBatch batch;
    std::string& out = batch.out(langs[r.lang], split);
    out += "{\"id\":";
    append_json_string(out, r.id);
    out += ",\"subject\":";
    append_json_string(out, r.subject);
    out += ",\"lang\":";
    append_json_string(out, langs[r.lang]);
    out += ",\"triples\":[";
    for (size_t i = 0; i < r.triples.size(); ++i) {
      out += i ? ",[" : "[";
      for (size_t k = 0; k < 3; ++k) {
        if (k) out += ',';
        append_json_string(out, r.triples[i][k]);
      }
      out += ']';
    }
    out += "],\"serialized_triples\":";
    append_json_string(out, r.source.text());
    out += ",\"sentence\":";
    append_json_string(out, r.text.text());
    out += ",\"mode\":\"pairs\"}\n";
    writer.write(batch);
  };
  auto write = [&](const AnnotatedText& text, size_t lang, const std::string& id, const std::string& subject) {
    std::string extra = ",\"id\":";
    append_json_string(extra, id);
    extra += ",\"subject\":";
    append_json_string(extra, subject);
    extra += ",\"mode\":\"";
    extra += mode;
    extra += "\"";
    RecordBatch batch;
    text.append_json(batch.out(langs[lang], split), langs[lang], extra);
    writer.write(batch);
  };
  // --group-by-subject: a subject's consecutive subgraphs become one document per language.
  std::string group_subject;
  std::vector<AnnotatedText> groups(langs.size());
  auto flush_groups = [&] {
    for (size_t l = 0; l < langs.size(); ++l) {
      if (groups[l].text().empty()) continue;
      write(groups[l], l, group_subject, group_subject);
      groups[l].clear();
    }
  };
  run_ordered_pipeline<LineTask, TaskResult>(
      workers, 2 * workers + 2, [&](LineTask& task) { return source.next(task); },
      [&](unsigned w, LineTask& task, TaskResult& result) { renderer.process(parsers[w], task, result); },
      [&](TaskResult& result) {
        errors.add_valid(result.valid);
        for (const auto& [line, reason] : result.errors) errors.record(result.file, line, reason);
        stats.merge(result.stats);
        for (Rendered& r : result.rendered) {
          if (options.mode == RenderOptions::Mode::pairs) {
            write_pair(r);
            continue;
          }
          if (!options.group_by_subject) {
            write(r.text, r.lang, r.id, r.subject);
            continue;
          }
          if (r.subject != group_subject) {
            flush_groups();
            group_subject = r.subject;
          }
          if (!groups[r.lang].text().empty()) groups[r.lang].append(" ");
          groups[r.lang].append_text(r.text);
        }
      });
  flush_groups();
  errors.finish(options.inputs);
  writer.close();
  if (options.shard.active() && split)
    write_shard_directory_record(options.split_dir, options.shard, options.shard_run, writer.file_names());
  else if (options.shard.active())
    write_shard_record(options.output, options.shard, options.shard_run);
  stats.set("errors", static_cast<int64_t>(errors.count()));
  return stats;
}

}  // namespace kglm::gen
