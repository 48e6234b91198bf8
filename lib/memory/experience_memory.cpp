// ExperienceMemory: the items in the process, written through to a SQLite file when the memory has one.
// A credit is applied in SQL as an increment of the stored mean and read back, so two runs sharing a file
// both count; reload() picks up the items other processes added.
#include <algorithm>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "detail/sqlite.hpp"
#include "memory/experience_rows.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/experience.hpp"
#include "kernelsmith/run_store.hpp"

namespace kernelsmith {

namespace {

// The file: one row a schema tag, one row an item (its facts, as the run store's experience table has them,
// then its values).
std::string memory_schema() {
  return fmt::format(R"sql(
CREATE TABLE IF NOT EXISTS memory_schema (
  schema TEXT NOT NULL,
  created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS items (
  id INTEGER PRIMARY KEY AUTOINCREMENT,{},
  draft_value REAL NOT NULL,
  draft_weight REAL NOT NULL,
  draft_credits INTEGER NOT NULL,
  refine_value REAL NOT NULL,
  refine_weight REAL NOT NULL,
  refine_credits INTEGER NOT NULL
);
)sql",
                     detail::kExperienceFactDefinitions);
}

const char* const kValueColumns =
    "draft_value, draft_weight, draft_credits, refine_value, refine_weight, refine_credits";

std::string item_columns() { return fmt::format("id, {}, {}", detail::kExperienceFactColumns, kValueColumns); }

// "a = ?, b = ?, ..." over the facts and the values, for an UPDATE.
std::string item_assignments() {
  std::string assignments;
  const std::string columns = fmt::format("{}, {}", detail::kExperienceFactColumns, kValueColumns);
  std::size_t start = 0;
  while (start < columns.size()) {
    std::size_t end = columns.find(", ", start);
    if (end == std::string::npos) end = columns.size();
    assignments += (assignments.empty() ? "" : ", ") + columns.substr(start, end - start) + " = ?";
    start = end + 2;
  }
  return assignments;
}

constexpr int kFirstValue = 1 + detail::kExperienceFactCount;  // the column (and parameter) after the facts

ExperienceItem read_item(const detail::SqliteStatement& row, const std::string& path) {
  ExperienceItem item;
  item.id = row.int64(0);
  detail::read_experience_facts(row, 1, item, fmt::format("experience memory '{}', item {}", path, item.id));
  item.draft = {row.real(kFirstValue), row.real(kFirstValue + 1), row.int64(kFirstValue + 2)};
  item.refine = {row.real(kFirstValue + 3), row.real(kFirstValue + 4), row.int64(kFirstValue + 5)};
  return item;
}

// Binds the facts to parameters 1 to 15 and the values to 16 to 21.
void bind_item(detail::SqliteStatement& statement, const ExperienceItem& item) {
  detail::bind_experience_facts(statement, 1, item);
  statement.bind(kFirstValue, item.draft.value)
      .bind(kFirstValue + 1, item.draft.weight)
      .bind(kFirstValue + 2, item.draft.credits)
      .bind(kFirstValue + 3, item.refine.value)
      .bind(kFirstValue + 4, item.refine.weight)
      .bind(kFirstValue + 5, item.refine.credits);
}

std::string stage_prefix(Stage stage) { return stage == Stage::draft ? "draft" : "refine"; }

}  // namespace

struct ExperienceMemory::Impl {
  std::string path;
  ExperienceMemoryOptions options;
  mutable std::mutex mutex;
  std::map<std::int64_t, ExperienceItem> items;  // by id
  std::int64_t next_id = 1;                      // for a memory in the process
  std::unique_ptr<detail::SqliteDatabase> db;
  std::shared_ptr<Retriever> retriever;
  // What retrievers read: a copy of the items by id, so that retrieval (a Python retriever included) runs
  // without the lock and sees a consistent set. Kept up to date in place while no reader holds it (the engine's
  // case: it records and retrieves on one thread), made anew after a change while one did.
  mutable std::shared_ptr<std::vector<ExperienceItem>> snapshot;

  enum class Change { inserted, updated, erased, all };
  void changed(Change change, std::int64_t id = 0) {
    if (!snapshot) return;
    if (change == Change::all || snapshot.use_count() > 1) {
      snapshot.reset();
      return;
    }
    std::vector<ExperienceItem>& copy = *snapshot;
    auto position = std::lower_bound(copy.begin(), copy.end(), id,
                                     [](const ExperienceItem& item, std::int64_t value) { return item.id < value; });
    const bool present = position != copy.end() && position->id == id;
    if (change == Change::erased) {
      if (present) copy.erase(position);
    } else if (present) {
      *position = items.at(id);
    } else {
      copy.insert(position, items.at(id));
    }
  }

  void open() {
    try {
      db = std::make_unique<detail::SqliteDatabase>(path, false, true);
      db->execute("PRAGMA journal_mode = WAL");
      db->execute("PRAGMA synchronous = NORMAL");
      auto tables = db->prepare("SELECT name FROM sqlite_master WHERE type = 'table'");
      bool has_schema = false, has_tables = false;
      while (tables.step()) {
        has_tables = true;
        if (tables.text(0) == "memory_schema") has_schema = true;
      }
      if (has_tables && !has_schema) {
        throw StoreError(fmt::format("'{}' is a SQLite database but not an experience memory (no memory_schema table): "
                                     "give another memory file",
                                     path));
      }
      if (!has_schema) {
        detail::SqliteTransaction transaction(*db);
        db->execute(memory_schema());
        auto insert = db->prepare("INSERT INTO memory_schema (schema, created) VALUES (?, ?)");
        insert.bind(1, kExperienceMemorySchema).bind(2, unix_seconds()).run();
        transaction.commit();
      }
      auto schema = db->prepare("SELECT schema FROM memory_schema LIMIT 1");
      if (!schema.step() || schema.text(0) != kExperienceMemorySchema) {
        throw StoreError(fmt::format("experience memory '{}' has schema '{}'; this build reads '{}': open it with the "
                                     "kernelsmith version that wrote it",
                                     path, schema.is_null(0) ? std::string("(none)") : schema.text(0),
                                     kExperienceMemorySchema));
      }
    } catch (const StoreError& error) {
      const std::string message = error.what();
      if (message.find("experience memory") != std::string::npos) throw;
      throw StoreError(fmt::format("experience memory '{}': {}", path, message));
    }
    read_all();
  }

  void read_all() {
    items.clear();
    auto statement = db->prepare(fmt::format("SELECT {} FROM items ORDER BY id", item_columns()));
    while (statement.step()) {
      ExperienceItem item = read_item(statement, path);
      items.emplace(item.id, std::move(item));
    }
    changed(Change::all);
  }

  // Inserts (under the caller's lock and transaction); returns the id.
  std::int64_t insert(ExperienceItem item) {
    if (item.created <= 0.0) item.created = unix_seconds();
    if (db) {
      std::string placeholders = "?";
      for (int i = 1; i < kFirstValue + 5; ++i) placeholders += ", ?";
      auto statement = db->prepare(fmt::format("INSERT INTO items ({}, {}) VALUES ({})", detail::kExperienceFactColumns,
                                               kValueColumns, placeholders));
      bind_item(statement, item);
      statement.run();
      item.id = db->last_insert_rowid();
    } else {
      item.id = next_id++;
    }
    const std::int64_t id = item.id;
    items[id] = std::move(item);
    changed(Change::inserted, id);
    return id;
  }

  bool erase(std::int64_t id) {
    if (items.erase(id) == 0) return false;
    if (db) {
      auto statement = db->prepare("DELETE FROM items WHERE id = ?");
      statement.bind(1, id).run();
    }
    changed(Change::erased, id);
    return true;
  }

  bool add_credit(std::int64_t id, Stage stage, double reward, double weight) {
    auto found = items.find(id);
    if (found == items.end() || !(weight > 0.0)) return false;
    StageValue& value = found->second.value(stage);
    if (db) {
      const std::string s = stage_prefix(stage);
      auto update = db->prepare(fmt::format(
          "UPDATE items SET {0}_value = ({0}_value * {0}_weight + ?1 * ?2) / ({0}_weight + ?2), "
          "{0}_weight = {0}_weight + ?2, {0}_credits = {0}_credits + 1 WHERE id = ?3",
          s));
      update.bind(1, reward).bind(2, weight).bind(3, id).run();
      if (db->changes() == 0) {  // another process removed it
        items.erase(found);
        changed(Change::erased, id);
        return false;
      }
      auto read = db->prepare(fmt::format("SELECT {0}_value, {0}_weight, {0}_credits FROM items WHERE id = ?", s));
      read.bind(1, id);
      if (read.step()) value = {read.real(0), read.real(1), read.int64(2)};
    } else {
      value.value = (value.value * value.weight + reward * weight) / (value.weight + weight);
      value.weight += weight;
      ++value.credits;
    }
    changed(Change::updated, id);
    return true;
  }

  // Over max_items: the least credited item goes, the oldest among equals; `keep` never.
  void evict(std::int64_t keep) {
    while (options.max_items > 0 && items.size() > options.max_items) {
      const ExperienceItem* victim = nullptr;
      for (const auto& [id, item] : items) {
        if (id == keep) continue;
        const std::int64_t credits = item.draft.credits + item.refine.credits;
        if (victim == nullptr || credits < victim->draft.credits + victim->refine.credits) victim = &item;
      }
      if (victim == nullptr) return;
      erase(victim->id);
    }
  }

  std::shared_ptr<const std::vector<ExperienceItem>> current() const {
    if (!snapshot) {
      auto copy = std::make_shared<std::vector<ExperienceItem>>();
      copy->reserve(items.size());
      for (const auto& entry : items) copy->push_back(entry.second);
      snapshot = std::move(copy);
    }
    return snapshot;
  }
};

ExperienceMemory::ExperienceMemory(const std::string& path, ExperienceMemoryOptions options)
    : impl_(std::make_unique<Impl>()) {
  if (!(options.discount >= 0.0 && options.discount <= 1.0)) {
    throw ValidationError(fmt::format("ExperienceMemoryOptions.discount = {} is outside [0, 1]", options.discount));
  }
  if (options.horizon < 0) {
    throw ValidationError(fmt::format("ExperienceMemoryOptions.horizon = {} must be >= 0", options.horizon));
  }
  impl_->path = path;
  impl_->options = options;
  impl_->retriever = std::make_shared<ValueRetriever>();
  if (!path.empty()) impl_->open();
}

ExperienceMemory::~ExperienceMemory() = default;

const std::string& ExperienceMemory::path() const { return impl_->path; }
const ExperienceMemoryOptions& ExperienceMemory::options() const { return impl_->options; }

std::vector<ExperienceItem> ExperienceMemory::items() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return *impl_->current();
}

std::optional<ExperienceItem> ExperienceMemory::item(std::int64_t id) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto found = impl_->items.find(id);
  if (found == impl_->items.end()) return std::nullopt;
  return found->second;
}

std::size_t ExperienceMemory::size() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->items.size();
}

std::int64_t ExperienceMemory::add(ExperienceItem item) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  const std::int64_t id = impl_->insert(std::move(item));
  impl_->evict(id);
  return id;
}

void ExperienceMemory::update(const ExperienceItem& item) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto found = impl_->items.find(item.id);
  if (found == impl_->items.end()) {
    throw NotFoundError(fmt::format("the experience memory{} has no item {}",
                                    impl_->path.empty() ? "" : " '" + impl_->path + "'", item.id));
  }
  if (impl_->db) {
    auto statement = impl_->db->prepare(fmt::format("UPDATE items SET {} WHERE id = ?", item_assignments()));
    bind_item(statement, item);
    statement.bind(kFirstValue + 6, item.id).run();
  }
  found->second = item;
  impl_->changed(Impl::Change::updated, item.id);
}

bool ExperienceMemory::remove(std::int64_t id) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->erase(id);
}

void ExperienceMemory::clear() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (impl_->db) impl_->db->execute("DELETE FROM items");
  impl_->items.clear();
  impl_->changed(Impl::Change::all);
}

std::int64_t ExperienceMemory::record(ExperienceItem item, const std::vector<std::vector<std::int64_t>>& credited) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  std::optional<detail::SqliteTransaction> transaction;
  if (impl_->db) transaction.emplace(*impl_->db);
  item.reward = experience_reward(item.stage, item.status, item.speedup, item.parent_speedup);
  item.draft = {};
  item.refine = {};
  item.value(item.stage) = {item.reward, 1.0, 1};
  const Stage stage = item.stage;
  const double reward = item.reward;
  const std::int64_t id = impl_->insert(std::move(item));
  double weight = 1.0;
  const std::size_t levels = std::min(credited.size(), static_cast<std::size_t>(impl_->options.horizon) + 1);
  for (std::size_t level = 0; level < levels; ++level) {
    for (std::int64_t used : credited[level]) {
      if (used != id) impl_->add_credit(used, stage, reward, weight);
    }
    weight *= impl_->options.discount;
  }
  impl_->evict(id);
  if (transaction) transaction->commit();
  return id;
}

bool ExperienceMemory::credit(std::int64_t id, Stage stage, double reward, double weight) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->add_credit(id, stage, reward, weight);
}

std::vector<RetrievedItem> ExperienceMemory::retrieve(const ExperienceQuery& query) const {
  std::shared_ptr<const std::vector<ExperienceItem>> items;
  std::shared_ptr<Retriever> retriever;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    items = impl_->current();
    retriever = impl_->retriever;
  }
  if (items->empty() || query.count == 0) return {};
  std::vector<RetrievedItem> found = retriever->retrieve(query, *items);
  if (found.size() > query.count) found.resize(query.count);
  for (RetrievedItem& entry : found) {
    if (entry.retrieval.item == 0) entry.retrieval.item = entry.item.id;
    if (entry.retrieval.skill.empty()) entry.retrieval.skill = entry.item.skill;
  }
  return found;
}

void ExperienceMemory::set_retriever(std::shared_ptr<Retriever> retriever) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->retriever = retriever ? std::move(retriever) : std::make_shared<ValueRetriever>();
}

std::shared_ptr<Retriever> ExperienceMemory::retriever() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->retriever;
}

void ExperienceMemory::reload() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (impl_->db) impl_->read_all();
}

}  // namespace kernelsmith
