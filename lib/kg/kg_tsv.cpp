#include "kg/kg_tsv.hpp"

#include "core/atomic_file.hpp"
#include "core/output_stream.hpp"
#include "kg/kg_store.hpp"
#include "kg/kg_writer.hpp"

namespace kglm::kg {
namespace {

void append_escaped(std::string& out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\\':
        out += "\\\\";
        break;
      default:
        out += c;
    }
  }
}

// Buffers rows and writes them through an atomic OutputStream.
class TsvFile {
 public:
  TsvFile(const std::string& path, std::string_view header) : out_(path) { row_.append("# ").append(header) += '\n'; }
  TsvFile& field(std::string_view s) {
    if (!first_) row_ += '\t';
    append_escaped(row_, s);
    first_ = false;
    return *this;
  }
  void end_row() {
    row_ += '\n';
    first_ = true;
    if (row_.size() > (1 << 20)) flush();
  }
  void close() {
    flush();
    out_.close();
  }

 private:
  void flush() {
    out_.write(row_);
    row_.clear();
  }
  OutputStream out_;
  std::string row_;
  bool first_ = true;
};

std::string item_or_empty(uint64_t number) { return number == 0 ? "" : entity_id(EntityType::item, number); }

void export_terms(KgStore& store, const std::vector<std::string>& ids, const char* table, const std::string& dir) {
  const bool sites = std::string(table) == "sitelinks";
  TsvFile f(dir + "/" + table + ".tsv", sites ? "entity\tsite\ttitle" : "entity\tlang\ttext");
  for (const auto& key : store.keys(table)) {
    TermTable t = store.terms(table, key);
    for (size_t i = 0; i < t.entity.size(); ++i) f.field(ids[t.entity[i]]).field(key).field(t.text[i]).end_row();
  }
  f.close();
}

void export_literals(KgStore& store, const std::vector<std::string>& ids, const std::vector<std::string>& rels,
                     const std::string& dir) {
  TsvFile f(dir + "/literals.tsv", "entity\trelation\ttype\trank\tvalue\tlower\tupper\titem\tprecision\tlanguage");
  h5::Group literals = store.root().open_group("literals");
  for (const char* name : kLiteralTables) {
    h5::Group g = literals.open_group(name);
    auto subject = h5::read_column<uint32_t>(g, "subject");
    auto relation = h5::read_column<uint32_t>(g, "relation");
    auto rank = h5::read_column<uint8_t>(g, "rank");
    auto strings = [&](const char* c) { return g.has(c) ? h5::read_string_table(g, c) : h5::StringTable(); };
    h5::StringTable value = strings(g.has("amount") ? "amount" : g.has("text") ? "text" : "value");
    h5::StringTable lower = strings("lower"), upper = strings("upper"), language = strings("language");
    const char* item_col = g.has("unit") ? "unit" : g.has("calendar") ? "calendar" : g.has("globe") ? "globe" : nullptr;
    std::vector<uint64_t> item = item_col ? h5::read_column<uint64_t>(g, item_col) : std::vector<uint64_t>();
    std::vector<int8_t> time_precision =
        g.has("precision") && !g.has("latitude") ? h5::read_column<int8_t>(g, "precision") : std::vector<int8_t>();
    std::vector<double> lat, lon, coord_precision;
    if (g.has("latitude")) {
      lat = h5::read_column<double>(g, "latitude");
      lon = h5::read_column<double>(g, "longitude");
      coord_precision = h5::read_column<double>(g, "precision");
    }
    for (size_t i = 0; i < subject.size(); ++i) {
      f.field(ids[subject[i]]).field(rels[relation[i]]).field(name).field(rank_name(static_cast<Rank>(rank[i])));
      if (!lat.empty()) {
        f.field(format_coordinates(lat[i], lon[i]));
      } else {
        f.field(value.size() ? value[i] : "");
      }
      f.field(lower.size() ? lower[i] : "").field(upper.size() ? upper[i] : "");
      f.field(item.empty() ? "" : item_or_empty(item[i]));
      if (!time_precision.empty())
        f.field(std::to_string(time_precision[i]));
      else if (!coord_precision.empty())
        f.field(std::to_string(coord_precision[i]));
      else
        f.field("");
      f.field(language.size() ? language[i] : "").end_row();
    }
  }
  f.close();
}

void export_qualifiers(KgStore& store, const std::vector<std::string>& rels, const std::string& dir) {
  TsvFile f(dir + "/qualifiers.tsv", "table\trow\tproperty\ttype\tvalue\titem\tprecision");
  h5::Group g = store.root().open_group("qualifiers");
  auto table = h5::read_column<uint8_t>(g, "table");
  auto row = h5::read_column<uint64_t>(g, "row");
  auto property = h5::read_column<uint32_t>(g, "property");
  auto type = h5::read_column<uint8_t>(g, "type");
  auto number = h5::read_column<uint64_t>(g, "number");
  auto precision = h5::read_column<int8_t>(g, "precision");
  h5::StringTable value = h5::read_string_table(g, "value");
  for (size_t i = 0; i < table.size(); ++i) {
    auto vt = static_cast<ValueType>(type[i]);
    std::string item =
        vt == ValueType::property ? entity_id(EntityType::property, number[i]) : item_or_empty(number[i]);
    f.field(table[i] == 0 ? "triples" : kLiteralTables[table[i] - 1]).field(std::to_string(row[i]));
    f.field(rels[property[i]]).field(value_type_name(vt)).field(value[i]).field(item);
    f.field(precision[i] >= 0 ? std::to_string(precision[i]) : "").end_row();
  }
  f.close();
}

}  // namespace

void export_tsv(const std::string& store_path, const std::string& dir) {
  make_directories(dir);
  KgStore store(store_path);
  std::vector<std::string> ids = store.entity_ids();
  std::vector<std::string> rels;
  for (uint64_t p : store.relation_numbers()) rels.push_back(entity_id(EntityType::property, p));

  TsvFile entities(dir + "/entities.tsv", "entity\tsitelinks");
  std::vector<uint32_t> sitelinks = store.entity_sitelinks();
  for (size_t i = 0; i < ids.size(); ++i) entities.field(ids[i]).field(std::to_string(sitelinks[i])).end_row();
  entities.close();
  for (const char* t : {"labels", "descriptions", "aliases", "sitelinks"}) export_terms(store, ids, t, dir);

  TsvFile triples(dir + "/triples.tsv", "subject\trelation\tobject\trank");
  TripleTable t = store.triples();
  for (size_t i = 0; i < t.subject.size(); ++i) {
    triples.field(ids[t.subject[i]])
        .field(rels[t.relation[i]])
        .field(ids[t.object[i]])
        .field(rank_name(static_cast<Rank>(t.rank[i])));
    triples.end_row();
  }
  triples.close();
  export_literals(store, ids, rels, dir);
  export_qualifiers(store, rels, dir);
}

}  // namespace kglm::kg
