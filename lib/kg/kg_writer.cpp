#include "kg/kg_writer.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"
#include "core/temporaries.hpp"

namespace kglm::kg {

using h5::ColumnWriter;
using h5::StringColumnWriter;

uint8_t statement_table(ValueType t) {
  return t <= ValueType::property ? 0 : static_cast<uint8_t>(static_cast<uint8_t>(t) - 1);
}

// entity + string columns of one language (labels, descriptions, aliases) or one site.
struct KgWriter::StringTableColumns {
  h5::Group group;
  ColumnWriter<uint32_t> entity;
  StringColumnWriter text;
  StringTableColumns(h5::Group g, const char* text_name)
      : group(std::move(g)), entity(group, "entity"), text(group, text_name) {}
  void finish() {
    entity.finish();
    text.finish();
  }
};

// One literal table; which value columns exist depends on the value type.
struct KgWriter::LiteralColumns {
  ValueType type;
  h5::Group group;
  ColumnWriter<uint32_t> subject;
  ColumnWriter<uint32_t> relation;
  ColumnWriter<uint8_t> rank;
  std::vector<std::unique_ptr<StringColumnWriter>> strings;
  std::unique_ptr<ColumnWriter<uint64_t>> item;  // unit, calendar model or globe
  std::unique_ptr<ColumnWriter<int8_t>> precision;
  std::unique_ptr<ColumnWriter<double>> lat, lon, coord_precision;

  LiteralColumns(ValueType t, h5::Group g)
      : type(t), group(std::move(g)), subject(group, "subject"), relation(group, "relation"), rank(group, "rank") {
    auto add_strings = [&](std::initializer_list<const char*> names) {
      for (const char* n : names) strings.push_back(std::make_unique<StringColumnWriter>(group, n));
    };
    switch (type) {
      case ValueType::quantity:
        add_strings({"amount", "lower", "upper"});
        item = std::make_unique<ColumnWriter<uint64_t>>(group, "unit");
        break;
      case ValueType::time:
        add_strings({"value"});
        precision = std::make_unique<ColumnWriter<int8_t>>(group, "precision");
        item = std::make_unique<ColumnWriter<uint64_t>>(group, "calendar");
        break;
      case ValueType::monolingualtext:
        add_strings({"language", "text"});
        break;
      case ValueType::globe_coordinate:
        lat = std::make_unique<ColumnWriter<double>>(group, "latitude");
        lon = std::make_unique<ColumnWriter<double>>(group, "longitude");
        coord_precision = std::make_unique<ColumnWriter<double>>(group, "precision");
        item = std::make_unique<ColumnWriter<uint64_t>>(group, "globe");
        break;
      default:
        add_strings({"value"});
    }
  }

  uint64_t append(uint32_t s, uint32_t r, const Statement& st) {
    const Value& v = st.value;
    subject.append(s);
    relation.append(r);
    rank.append(static_cast<uint8_t>(st.rank));
    switch (type) {
      case ValueType::quantity:
        strings[0]->append(v.text);
        strings[1]->append(v.lower);
        strings[2]->append(v.upper);
        break;
      case ValueType::monolingualtext:
        strings[0]->append(v.lower);
        strings[1]->append(v.text);
        break;
      case ValueType::globe_coordinate:
        lat->append(v.latitude);
        lon->append(v.longitude);
        coord_precision->append(v.coord_precision);
        break;
      default:
        strings[0]->append(v.text);
    }
    if (precision) precision->append(v.precision);
    if (item) item->append(v.number);
    return subject.size() - 1;
  }

  void finish() {
    subject.finish();
    relation.finish();
    rank.finish();
    for (auto& s : strings) s->finish();
    if (item) item->finish();
    if (precision) precision->finish();
    for (auto* c : {lat.get(), lon.get(), coord_precision.get()}) {
      if (c) c->finish();
    }
  }
};

namespace {

void write_all(std::FILE* f, const void* p, size_t n, const std::string& path) {
  if (std::fwrite(p, 1, n, f) != n) throw Error(location(path) + "write error: " + std::strerror(errno));
}

// Reads the spill file back in large blocks; field reads are then plain copies.
class SpillReader {
 public:
  explicit SpillReader(std::FILE* f) : file_(f), buffer_(4 << 20) {}
  bool read(void* out, size_t n) {
    char* dst = static_cast<char*>(out);
    while (n > 0) {
      if (pos_ == end_) {
        end_ = std::fread(buffer_.data(), 1, buffer_.size(), file_);
        pos_ = 0;
        if (end_ == 0) return false;
      }
      size_t take = std::min(n, end_ - pos_);
      std::memcpy(dst, buffer_.data() + pos_, take);
      pos_ += take;
      dst += take;
      n -= take;
    }
    return true;
  }
  template <class T>
  bool operator()(T& v) {
    return read(&v, sizeof v);
  }

 private:
  std::FILE* file_;
  std::vector<char> buffer_;
  size_t pos_ = 0, end_ = 0;
};

// The text a qualifier value is stored with in /qualifiers/value.
std::string qualifier_text(const Value& v) {
  switch (v.type) {
    case ValueType::item:
    case ValueType::property:
      return "";
    case ValueType::globe_coordinate:
      return format_coordinates(v.latitude, v.longitude);
    default:
      return std::string(v.text);
  }
}

}  // namespace

KgWriter::KgWriter(const std::string& path, const Provenance& provenance, const Shard& shard,
                   const std::string& shard_run)
    : partial_(shard.active()),
      shard_(shard),
      shard_run_(shard_run),
      atomic_(path),
      provenance_(provenance),
      file_(h5::File::create(atomic_.temp())) {
  const h5::Group& root = file_.root();
  if (partial_) {
    h5::Group records = root.create_group("records");
    record_ordinal_ = std::make_unique<ColumnWriter<uint64_t>>(records, "ordinal");
    record_data_ = std::make_unique<StringColumnWriter>(records, "data");
    return;
  }
  h5::Group entities = root.create_group("entities");
  entity_type_ = std::make_unique<ColumnWriter<uint8_t>>(entities, "type");
  entity_number_ = std::make_unique<ColumnWriter<uint64_t>>(entities, "number");
  entity_sitelinks_ = std::make_unique<ColumnWriter<uint32_t>>(entities, "sitelinks");
  for (const char* g : {"labels", "descriptions", "aliases", "sitelinks"}) root.create_group(g);
  h5::Group literals = root.create_group("literals");
  for (size_t i = 0; i < std::size(kLiteralTables); ++i) {
    auto type = static_cast<ValueType>(i + static_cast<size_t>(ValueType::quantity));
    literals_.push_back(std::make_unique<LiteralColumns>(type, literals.create_group(kLiteralTables[i])));
  }
  // Anonymous (O_TMPFILE where possible): no spill file outlives the run, even after SIGKILL.
  spill_path_ = atomic_.temp() + " (qualifier spill)";
  const std::filesystem::path temp(atomic_.temp());
  int fd = open_anonymous_file(temp.has_parent_path() ? temp.parent_path().string() : ".");
  spill_ = ::fdopen(fd, "w+b");
  if (spill_ == nullptr) {
    ::close(fd);
    throw Error(location(spill_path_) + "cannot create: " + std::strerror(errno));
  }
}

KgWriter::~KgWriter() {
  if (spill_ != nullptr) {
    std::fclose(spill_);
  }
}

KgWriter::StringTableColumns& KgWriter::terms(TermTables& tables, const char* group, std::string_view name) {
  auto it = tables.find(name);
  if (it != tables.end()) return *it->second;
  h5::Group parent = file_.root().open_group(group);
  const char* text_name = std::strcmp(group, "sitelinks") == 0 ? "title" : "text";
  auto cols = std::make_unique<StringTableColumns>(parent.create_group(name), text_name);
  return *tables.emplace(std::string(name), std::move(cols)).first->second;
}

uint32_t KgWriter::relation(uint64_t property) {
  // Property numbers are small (P1..P13000 today): a direct table beats hashing on the hot path.
  if (property < (1u << 24)) {
    if (property >= relation_slot_.size()) relation_slot_.resize(property + 1, -1);
    int32_t& slot = relation_slot_[property];
    if (slot < 0) {
      slot = static_cast<int32_t>(relations_.size());
      relations_.push_back(property);
    }
    return static_cast<uint32_t>(slot);
  }
  auto [it, inserted] = relation_index_.emplace(property, static_cast<uint32_t>(relations_.size()));
  if (inserted) relations_.push_back(property);
  return it->second;
}

void KgWriter::spill_bytes(const void* p, size_t n) {
  spill_buffer_.append(static_cast<const char*>(p), n);
  if (spill_buffer_.size() >= (1 << 20)) flush_spill();
}

void KgWriter::flush_spill() {
  write_all(spill_, spill_buffer_.data(), spill_buffer_.size(), spill_path_);
  spill_buffer_.clear();
}

void KgWriter::spill_qualifiers(const Statement& st, uint8_t table, uint64_t row) {
  for (const auto& q : st.qualifiers) {
    std::string text = qualifier_text(q.value);
    spill_pod('Q');
    spill_pod(table);
    spill_pod(row);
    spill_pod(relation(q.property));
    spill_pod(static_cast<uint8_t>(q.value.type));
    spill_pod(q.value.number);
    spill_pod(q.value.precision);
    spill_pod(static_cast<uint32_t>(text.size()));
    spill_bytes(text.data(), text.size());
  }
}

void KgWriter::add(const EntityRecord& e) {
  if (entities_ >= UINT32_MAX) throw Error("more than 2^32-1 entities: the KG store indexes them with uint32");
  if (partial_) {
    record_buffer_.clear();
    serialize(e, record_buffer_);
    record_ordinal_->append(e.ordinal);
    record_data_->append(record_buffer_);
    ++entities_;
    return;
  }
  if (!entity_index_.insert(e.key(), static_cast<uint32_t>(entities_)).second) {
    counts_.add("duplicate_entities");
    return;  // the first occurrence wins
  }
  const uint32_t index = static_cast<uint32_t>(entities_++);
  entity_type_->append(static_cast<uint8_t>(e.type));
  entity_number_->append(e.number);
  entity_sitelinks_->append(e.sitelink_total);
  ++(e.type == EntityType::item ? items_ : properties_);

  auto add_terms = [&](const std::vector<Term>& list, auto& tables, const char* group) {
    for (const auto& t : list) {
      StringTableColumns& cols = terms(tables, group, t.lang);
      cols.entity.append(index);
      cols.text.append(t.text);
    }
  };
  add_terms(e.labels, labels_, "labels");
  add_terms(e.descriptions, descriptions_, "descriptions");
  add_terms(e.aliases, aliases_, "aliases");
  for (const auto& s : e.sitelinks) {
    StringTableColumns& cols = terms(sitelinks_, "sitelinks", s.site);
    cols.entity.append(index);
    cols.text.append(s.title);
  }

  for (const auto& st : e.statements) {
    uint32_t rel = relation(st.property);
    if (st.value.type == ValueType::item || st.value.type == ValueType::property) {
      spill_pod('T');
      spill_pod(index);
      spill_pod(rel);
      spill_pod(
          entity_key(st.value.type == ValueType::property ? EntityType::property : EntityType::item, st.value.number));
      spill_pod(static_cast<uint8_t>(st.rank));
      spill_qualifiers(st, 0, raw_triples_++);
    } else {
      uint8_t table = statement_table(st.value.type);
      uint64_t row = literals_[table - 1]->append(index, rel, st);
      counts_.add(std::string("literal_") + kLiteralTables[table - 1]);
      spill_qualifiers(st, table, row);
    }
  }
}

void KgWriter::write_resolved_statements(Stats& stats) {
  flush_spill();
  if (std::fflush(spill_) != 0 || std::fseek(spill_, 0, SEEK_SET) != 0) {
    throw Error(location(spill_path_) + "cannot reread the spill file");
  }
  const h5::Group& root = file_.root();
  h5::Group triples = root.create_group("triples");
  ColumnWriter<uint32_t> subject(triples, "subject"), relation_col(triples, "relation"), object(triples, "object");
  ColumnWriter<uint8_t> rank(triples, "rank");
  h5::Group quals = root.create_group("qualifiers");
  ColumnWriter<uint8_t> q_table(quals, "table"), q_type(quals, "type");
  ColumnWriter<uint64_t> q_row(quals, "row"), q_number(quals, "number");
  ColumnWriter<uint32_t> q_property(quals, "property");
  ColumnWriter<int8_t> q_precision(quals, "precision");
  StringColumnWriter q_value(quals, "value");

  bool last_triple_kept = false;
  uint64_t triple_rows = 0, dropped = 0, qualifiers = 0, qualifiers_dropped = 0;
  std::string text;
  char tag;
  SpillReader spill_read(spill_);
  while (spill_read(tag)) {
    bool ok = true;
    if (tag == 'T') {
      uint32_t s = 0, r = 0;
      uint64_t key = 0;
      uint8_t rk = 0;
      ok = spill_read(s) && spill_read(r) && spill_read(key) && spill_read(rk);
      const std::optional<uint32_t> object_row = entity_index_.find(key);
      last_triple_kept = object_row.has_value();
      if (last_triple_kept) {
        subject.append(s);
        relation_col.append(r);
        object.append(*object_row);
        rank.append(rk);
        ++triple_rows;
      } else {
        ++dropped;
      }
    } else if (tag == 'Q') {
      uint8_t table = 0, type = 0;
      uint64_t row = 0, number = 0;
      uint32_t prop = 0, len = 0;
      int8_t precision = 0;
      ok = spill_read(table) && spill_read(row) && spill_read(prop) && spill_read(type) && spill_read(number) &&
           spill_read(precision) && spill_read(len) && len <= (1u << 30);
      if (!ok) throw Error(location(spill_path_) + "corrupt spill file");
      text.resize(len);
      ok = ok && spill_read.read(text.data(), len);
      // A triple's qualifiers follow it in the spill; they go where it goes.
      if (table == 0 && !last_triple_kept) {
        ++qualifiers_dropped;
        continue;
      }
      q_table.append(table);
      q_row.append(table == 0 ? triple_rows - 1 : row);
      q_property.append(prop);
      q_type.append(type);
      q_number.append(number);
      q_precision.append(precision);
      q_value.append(text);
      ++qualifiers;
    } else {
      ok = false;
    }
    if (!ok) throw Error(location(spill_path_) + "corrupt spill file");
  }
  for (auto* c : {&subject, &relation_col, &object}) c->finish();
  rank.finish();
  q_table.finish();
  q_type.finish();
  q_row.finish();
  q_number.finish();
  q_property.finish();
  q_precision.finish();
  q_value.finish();
  stats.set("item_triples", static_cast<int64_t>(triple_rows));
  stats.set("triples_dropped_missing_object", static_cast<int64_t>(dropped));
  stats.set("qualifiers", static_cast<int64_t>(qualifiers));
  stats.set("qualifiers_dropped_with_triple", static_cast<int64_t>(qualifiers_dropped));
}

void KgWriter::finish(Stats& stats) {
  const h5::Group& root = file_.root();
  root.set_attribute("format", kKgFormat);
  root.set_attribute("format_version", kKgFormatVersion);
  h5::write_provenance(root, provenance_);
  if (partial_) {
    record_ordinal_->finish();
    record_data_->finish();
    root.set_attribute("partial", int64_t{1});
    h5::write_shard(root, shard_, shard_run_);
    root.set_attribute("statistics", stats.to_json());
  } else {
    entity_type_->finish();
    entity_number_->finish();
    entity_sitelinks_->finish();
    int64_t sitelinks = 0;
    for (auto [tables, group] : {std::pair{&labels_, "labels_"},
                                 {&descriptions_, "descriptions_"},
                                 {&aliases_, "aliases_"},
                                 {&sitelinks_, "sitelinks_"}}) {
      std::vector<std::string> names;
      for (const auto& entry : *tables) names.push_back(entry.first);
      std::sort(names.begin(), names.end());  // hash order varies between runs; output must not
      for (const auto& name : names) {
        StringTableColumns* cols = (*tables)[name].get();
        int64_t rows = static_cast<int64_t>(cols->entity.size());
        if (tables == &sitelinks_)
          sitelinks += rows;
        else
          counts_.set(group + name, rows);
        cols->finish();
      }
    }
    counts_.set("sitelinks", sitelinks);
    for (auto& l : literals_) l->finish();
    write_resolved_statements(stats);
    h5::Group relations = root.create_group("relations");
    std::vector<int64_t> relation_entity;
    for (uint64_t p : relations_) {
      const std::optional<uint32_t> row = entity_index_.find(entity_key(EntityType::property, p));
      relation_entity.push_back(row ? int64_t{*row} : int64_t{-1});
    }
    h5::write_column(relations, "number", relations_);
    h5::write_column(relations, "entity", relation_entity);
    counts_.set("items", static_cast<int64_t>(items_));
    counts_.set("properties", static_cast<int64_t>(properties_));
    stats.merge(counts_);
    stats.set("relations", static_cast<int64_t>(relations_.size()));
    root.set_attribute("partial", int64_t{0});
  }
  root.set_attribute("entities", static_cast<int64_t>(entities_));
  file_.close();
  atomic_.commit();
}

}  // namespace kglm::kg
