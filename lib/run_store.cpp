#include "kernelsmith/run_store.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <unordered_map>
#include <nlohmann/json.hpp>

#include "detail/json_util.hpp"
#include "detail/sqlite.hpp"
#include "memory/experience_rows.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/novelty.hpp"

namespace kernelsmith {

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

namespace {

// Each HTTP attempt of a step's LLM request (version 3): part of a new store's schema, and what
// upgrade() adds to an older one.
const char* const kLlmAttemptsTable = R"sql(
CREATE TABLE IF NOT EXISTS llm_attempts (
  run INTEGER NOT NULL REFERENCES runs(id),
  step INTEGER NOT NULL REFERENCES steps(id),
  attempt INTEGER NOT NULL,
  http_status INTEGER,
  error TEXT NOT NULL,
  seconds REAL NOT NULL,
  PRIMARY KEY (step, attempt)
);
CREATE INDEX IF NOT EXISTS llm_attempts_by_run ON llm_attempts(run);
)sql";

// What each evaluated step taught the experience memory (version 4): part of a new store's schema, and what
// upgrade() adds to an older one (empty: older versions learned nothing).
std::string experience_table() {
  return fmt::format(R"sql(
CREATE TABLE IF NOT EXISTS experience (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run INTEGER NOT NULL REFERENCES runs(id),
  step INTEGER NOT NULL REFERENCES steps(id),
  item INTEGER NOT NULL,{}
);
CREATE INDEX IF NOT EXISTS experience_by_run ON experience(run);
)sql",
                     detail::kExperienceFactDefinitions);
}

// Indexes for readers: the fittest correct program of a run (the notebook's Run.best(), the web view's
// pages, which ask for it on every refresh) without a scan of the run's evaluations. An index does not
// change a table, so it is no new schema version: a new store gets it with the schema, an older one the
// next time it is opened for writing.
const char* const kReaderIndexes = R"sql(
CREATE INDEX IF NOT EXISTS evaluations_by_fitness ON evaluations(run, status, fitness);
)sql";

// Tables the search's safety rules need, added beside version 4's without changing any of its tables, so no new
// version: an earlier build reads and writes such a store as before and ignores them; a store written by an
// earlier build gains them the first time it is opened for writing (docs/run-store.md, "Added tables").
// evaluation_starts: each child's evaluation, marked (committed) before it starts, with the size of the batch
// it went in; a resume finds a pending child that was marked and does not evaluate it again blindly
// (docs/search.md, "Resume"). screenings: a screen-mode evaluation that would have made its program lead the
// run, kept when the program's strict confirming evaluation takes its place in `evaluations`.
const char* const kAddedTables = R"sql(
CREATE TABLE IF NOT EXISTS evaluation_starts (
  run INTEGER NOT NULL REFERENCES runs(id),
  step INTEGER NOT NULL REFERENCES steps(id),
  program_id TEXT NOT NULL,
  batch INTEGER NOT NULL,
  attempts INTEGER NOT NULL,
  started REAL NOT NULL,
  PRIMARY KEY (step)
);
CREATE INDEX IF NOT EXISTS evaluation_starts_by_run ON evaluation_starts(run);
CREATE TABLE IF NOT EXISTS screenings (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run INTEGER NOT NULL REFERENCES runs(id),
  program_id TEXT NOT NULL,
  sequence INTEGER NOT NULL,
  step INTEGER REFERENCES steps(id),
  status TEXT NOT NULL,
  fitness REAL NOT NULL,
  speedup REAL NOT NULL,
  message TEXT NOT NULL,
  json TEXT NOT NULL,
  created REAL NOT NULL,
  UNIQUE (run, program_id),
  FOREIGN KEY (run, program_id) REFERENCES programs(run, id)
);
)sql";

// Version 4 (with kLlmAttemptsTable and experience_table()). Changing a table means a new version and an
// upgrade in open_schema() (see upgrade()).
const char* const kSchema = R"sql(
CREATE TABLE IF NOT EXISTS schema_version (
  version INTEGER NOT NULL,
  created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  task_name TEXT NOT NULL,
  config TEXT NOT NULL,
  task TEXT NOT NULL,
  language TEXT NOT NULL DEFAULT '',
  backend TEXT NOT NULL DEFAULT '',
  device TEXT NOT NULL DEFAULT '',
  mutator TEXT NOT NULL DEFAULT '',
  seed INTEGER NOT NULL DEFAULT 0,
  library_version TEXT NOT NULL DEFAULT '',
  started REAL NOT NULL,
  updated REAL NOT NULL,
  finished REAL,
  status TEXT NOT NULL,
  stop_reason TEXT NOT NULL DEFAULT '',
  error TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS programs (
  run INTEGER NOT NULL REFERENCES runs(id),
  id TEXT NOT NULL,
  language TEXT NOT NULL,
  source TEXT NOT NULL,
  normalized_hash TEXT NOT NULL,
  parent_ids TEXT NOT NULL,
  origin TEXT NOT NULL,
  island INTEGER NOT NULL,
  generation INTEGER NOT NULL,
  created REAL NOT NULL,
  PRIMARY KEY (run, id)
);
CREATE INDEX IF NOT EXISTS programs_by_hash ON programs(run, normalized_hash);
CREATE TABLE IF NOT EXISTS evaluations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run INTEGER NOT NULL REFERENCES runs(id),
  program_id TEXT NOT NULL,
  sequence INTEGER NOT NULL,
  status TEXT NOT NULL,
  fitness REAL NOT NULL,
  speedup REAL NOT NULL,
  message TEXT NOT NULL,
  backend TEXT NOT NULL,
  device TEXT NOT NULL,
  wall_seconds REAL NOT NULL,
  json TEXT NOT NULL,
  created REAL NOT NULL,
  UNIQUE (run, program_id),
  UNIQUE (run, sequence),
  FOREIGN KEY (run, program_id) REFERENCES programs(run, id)
);
CREATE TABLE IF NOT EXISTS steps (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run INTEGER NOT NULL REFERENCES runs(id),
  island INTEGER NOT NULL,
  parent_ids TEXT NOT NULL,
  selection TEXT NOT NULL,
  mutation TEXT NOT NULL,
  inspiration_ids TEXT NOT NULL,
  prompt TEXT NOT NULL,
  response TEXT NOT NULL,
  model TEXT NOT NULL,
  prompt_tokens INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL,
  latency_seconds REAL NOT NULL,
  child_id TEXT,
  evaluation_id INTEGER REFERENCES evaluations(id),
  failure TEXT NOT NULL,
  propose_seconds REAL NOT NULL,
  evaluate_seconds REAL NOT NULL,
  created REAL NOT NULL,
  duplicate_of TEXT,
  novelty_kind TEXT,
  abandoned_by TEXT,
  skill TEXT,
  retrieved TEXT
);
CREATE INDEX IF NOT EXISTS steps_by_child ON steps(run, child_id);
CREATE TABLE IF NOT EXISTS islands (
  run INTEGER NOT NULL REFERENCES runs(id),
  island INTEGER NOT NULL,
  programs INTEGER NOT NULL,
  best_program_id TEXT NOT NULL,
  best_fitness REAL NOT NULL,
  best_speedup REAL NOT NULL,
  updated REAL NOT NULL,
  PRIMARY KEY (run, island)
);
CREATE TABLE IF NOT EXISTS migrations (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run INTEGER NOT NULL REFERENCES runs(id),
  program_id TEXT NOT NULL,
  from_island INTEGER NOT NULL,
  to_island INTEGER NOT NULL,
  sequence INTEGER NOT NULL,
  created REAL NOT NULL
);
)sql";


std::string to_json_array(const std::vector<std::string>& values) { return nlohmann::json(values).dump(); }

std::vector<std::string> from_json_array(const std::string& text, const std::string& where) {
  if (text.empty()) return {};
  try {
    return detail::parse_plain_json(text, where).get<std::vector<std::string>>();
  } catch (const std::exception& error) {
    throw StoreError(fmt::format("run store: {} holds '{}', not a JSON array of strings: {}", where,
                                 text.substr(0, 80), error.what()));
  }
}

const char* const kRunColumns =
    "id, task_name, config, task, language, backend, device, mutator, seed, library_version, started, updated, "
    "coalesce(finished, 0), status, stop_reason, error";

RunInfo read_run(const detail::SqliteStatement& row) {
  RunInfo info;
  info.id = row.int64(0);
  info.task_name = row.text(1);
  info.config_json = row.text(2);
  info.task_json = row.text(3);
  info.language = row.text(4);
  info.backend = row.text(5);
  info.device = row.text(6);
  info.mutator = row.text(7);
  info.seed = static_cast<std::uint64_t>(row.int64(8));
  info.library_version = row.text(9);
  info.started = row.real(10);
  info.updated = row.real(11);
  info.finished = row.real(12);
  info.status = row.text(13);
  info.stop_reason = row.text(14);
  info.error = row.text(15);
  return info;
}

const char* const kProgramColumns =
    "run, id, language, source, normalized_hash, parent_ids, origin, island, generation, created";

ProgramRecord read_program(const detail::SqliteStatement& row) {
  ProgramRecord record;
  record.run = row.int64(0);
  record.id = row.text(1);
  record.candidate.language = row.text(2);
  record.candidate.source = row.text(3);
  record.normalized_hash = row.text(4);
  record.candidate.lineage.parent_ids = from_json_array(row.text(5), "programs.parent_ids");
  record.candidate.lineage.origin = row.text(6);
  record.candidate.lineage.island = static_cast<int>(row.int64(7));
  record.candidate.lineage.generation = static_cast<int>(row.int64(8));
  record.created = row.real(9);
  return record;
}

const char* const kEvaluationColumns = "id, run, program_id, sequence, json, created";

EvaluationRecord read_evaluation(const detail::SqliteStatement& row) {
  EvaluationRecord record;
  record.id = row.int64(0);
  record.run = row.int64(1);
  record.program_id = row.text(2);
  record.sequence = row.int64(3);
  record.evaluation = Evaluation::from_json(row.text(4), fmt::format("evaluation {} in the run store", record.id));
  record.created = row.real(5);
  return record;
}

// Version 1 recorded a step's novelty only in its failure text. These expressions read the two facts
// version 2 stores from that text; the upgrade writes them into the new columns, and a version-1
// file opened read-only is read through them. The texts are those version 1 wrote
// (NoveltyVerdict::message() and the LLM mutator's own duplicate check).
std::string version_1_novelty_kind() {
  return fmt::format(
      "(CASE WHEN child_id IS NOT NULL THEN '{}' "
      "WHEN failure LIKE 'duplicate of program %' OR failure LIKE 'the answer''s program is already in the run%' "
      "THEN '{}' WHEN failure LIKE 'near duplicate of program %' THEN '{}' END)",
      to_string(NoveltyVerdict::Kind::novel), to_string(NoveltyVerdict::Kind::duplicate),
      to_string(NoveltyVerdict::Kind::near_duplicate));
}

std::string version_1_duplicate_of() {
  // The id follows the prefix and ends at the next space.
  auto id_after = [](const std::string& prefix) {
    const std::size_t start = prefix.size() + 1;
    return fmt::format(
        "WHEN failure LIKE '{0}%' THEN substr(failure, {1}, instr(substr(failure, {1}) || ' ', ' ') - 1)", prefix,
        start);
  };
  return fmt::format("(CASE {} {} END)", id_after("duplicate of program "), id_after("near duplicate of program "));
}

std::string step_columns(int version) {
  const std::string novelty = version >= 2 ? "duplicate_of, novelty_kind"
                                           : version_1_duplicate_of() + ", " + version_1_novelty_kind();
  const std::string abandoned = version >= 3 ? "coalesce(abandoned_by, '')" : "''";
  const std::string experience = version >= 4 ? "coalesce(skill, ''), coalesce(retrieved, '')" : "'', ''";
  return "id, run, island, parent_ids, selection, mutation, inspiration_ids, prompt, response, model, prompt_tokens, "
         "completion_tokens, latency_seconds, coalesce(child_id, ''), evaluation_id, failure, propose_seconds, "
         "evaluate_seconds, created, " +
         novelty + ", " + abandoned + ", " + experience;
}

// Binds text, or NULL when it is empty (a step's child and its novelty facts).
void bind_text_or_null(detail::SqliteStatement& statement, int index, const std::string& text) {
  if (text.empty()) {
    statement.bind_null(index);
  } else {
    statement.bind(index, text);
  }
}

// A step's retrieved experience as steps.retrieved holds it: [{"item", "score", "value", "similarity",
// "explored"}, ...], best first.
std::string retrievals_to_json(const std::vector<Retrieval>& retrieved) {
  nlohmann::json array = nlohmann::json::array();
  for (const Retrieval& r : retrieved) {
    array.push_back({{"item", r.item},
                     {"skill", r.skill},
                     {"score", r.score},
                     {"value", r.value},
                     {"similarity", r.similarity},
                     {"explored", r.explored}});
  }
  return array.dump();
}

std::vector<Retrieval> retrievals_from_json(const std::string& text, std::int64_t step) {
  std::vector<Retrieval> retrieved;
  if (text.empty()) return retrieved;
  try {
    for (const auto& entry : detail::parse_plain_json(text, fmt::format("steps.retrieved of step {}", step))) {
      Retrieval r;
      r.item = entry.at("item").get<std::int64_t>();
      r.skill = entry.value("skill", std::string());
      r.score = entry.value("score", 0.0);
      r.value = entry.value("value", 0.0);
      r.similarity = entry.value("similarity", 0.0);
      r.explored = entry.value("explored", false);
      retrieved.push_back(r);
    }
  } catch (const std::exception& error) {
    throw StoreError(fmt::format("run store: steps.retrieved of step {} holds '{}', not a JSON array of retrievals: {}",
                                 step, text.substr(0, 80), error.what()));
  }
  return retrieved;
}

std::string experience_columns() { return fmt::format("id, run, step, item, {}", detail::kExperienceFactColumns); }

ExperienceRecord read_experience(const detail::SqliteStatement& row) {
  ExperienceRecord record;
  record.id = row.int64(0);
  record.run = row.int64(1);
  record.step = row.int64(2);
  record.item.id = row.int64(3);
  detail::read_experience_facts(row, 4, record.item, fmt::format("run store: experience record {}", record.id));
  return record;
}

StepRecord read_step(const detail::SqliteStatement& row) {
  StepRecord step;
  step.id = row.int64(0);
  step.run = row.int64(1);
  step.island = static_cast<int>(row.int64(2));
  step.parent_ids = from_json_array(row.text(3), "steps.parent_ids");
  step.selection = row.text(4);
  step.mutation = row.text(5);
  step.inspiration_ids = from_json_array(row.text(6), "steps.inspiration_ids");
  step.prompt = row.text(7);
  step.response = row.text(8);
  step.model = row.text(9);
  step.prompt_tokens = row.int64(10);
  step.completion_tokens = row.int64(11);
  step.latency_seconds = row.real(12);
  step.child_id = row.text(13);
  step.evaluation_id = row.optional_int64(14);
  step.failure = row.text(15);
  step.propose_seconds = row.real(16);
  step.evaluate_seconds = row.real(17);
  step.created = row.real(18);
  step.duplicate_of = row.text(19);
  step.novelty_kind = row.text(20);
  step.abandoned_by = row.text(21);
  step.skill = row.text(22);
  step.retrieved = retrievals_from_json(row.text(23), step.id);
  return step;
}

}  // namespace

struct RunStore::Impl {
  Impl(const std::string& path, bool read_only) : db(path, read_only, !read_only), read_only(read_only) {}
  mutable std::mutex mutex;
  mutable detail::SqliteDatabase db;
  bool read_only;
  int version = 0;

  void open_schema() {
    auto count_tables = [&](const char* name) {
      auto statement = db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?");
      statement.bind(1, name);
      statement.step();
      return statement.int64(0);
    };
    const bool has_version = count_tables("schema_version") > 0;
    if (!has_version) {
      auto statement = db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table'");
      statement.step();
      if (statement.int64(0) > 0) {
        throw StoreError(fmt::format(
            "'{}' is a SQLite database but not a kernelsmith run store (no schema_version table): give another "
            "--db path",
            db.path()));
      }
      if (read_only) {
        throw StoreError(fmt::format("'{}' holds no run store (empty database)", db.path()));
      }
    }
    if (!read_only) {
      // WAL lets readers (a notebook) see committed rows while the run writes; NORMAL sync keeps
      // every commit across a process crash (kill -9), which is what resume needs.
      db.execute("PRAGMA journal_mode = WAL");
      db.execute("PRAGMA synchronous = NORMAL");
      db.execute("PRAGMA foreign_keys = ON");
      if (!has_version) {
        detail::SqliteTransaction transaction(db);
        db.execute(kSchema);
        db.execute(kLlmAttemptsTable);
        db.execute(experience_table());
        auto statement = db.prepare("INSERT INTO schema_version (version, created) VALUES (?, ?)");
        statement.bind(1, kRunStoreSchemaVersion).bind(2, unix_seconds()).run();
        transaction.commit();
      }
    }
    auto statement = db.prepare("SELECT max(version) FROM schema_version");
    statement.step();
    version = static_cast<int>(statement.int64(0));
    if (version < 1 || version > kRunStoreSchemaVersion) {
      throw StoreError(fmt::format(
          "run store '{}' has schema version {}, this build of kernelsmith reads versions 1 to {}: open it with "
          "the kernelsmith version that wrote it",
          db.path(), version, kRunStoreSchemaVersion));
    }
    if (version < kRunStoreSchemaVersion && !read_only) upgrade();
    if (!read_only) {
      db.execute(kReaderIndexes);
      db.execute(kAddedTables);
    }
  }

  bool has_table(const char* name) {
    auto statement = db.prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?");
    statement.bind(1, name);
    statement.step();
    return statement.int64(0) > 0;
  }

  // Brings an older file to the current version in one transaction, so that a reader sees either the
  // old file or the upgraded one. Version 2 added steps.duplicate_of and steps.novelty_kind, filled from
  // the version-1 failure texts; version 3 added steps.abandoned_by and the llm_attempts table (empty:
  // older versions recorded no attempts); version 4 added steps.skill, steps.retrieved and the experience
  // table (NULL and empty: older versions kept no experience).
  void upgrade() {
    detail::SqliteTransaction transaction(db);
    if (version < 2) {
      db.execute("ALTER TABLE steps ADD COLUMN duplicate_of TEXT");
      db.execute("ALTER TABLE steps ADD COLUMN novelty_kind TEXT");
      db.execute(fmt::format("UPDATE steps SET duplicate_of = {}, novelty_kind = {}", version_1_duplicate_of(),
                             version_1_novelty_kind()));
    }
    if (version < 3) {
      db.execute("ALTER TABLE steps ADD COLUMN abandoned_by TEXT");
      db.execute(kLlmAttemptsTable);
    }
    if (version < 4) {
      db.execute("ALTER TABLE steps ADD COLUMN skill TEXT");
      db.execute("ALTER TABLE steps ADD COLUMN retrieved TEXT");
      db.execute(experience_table());
    }
    auto statement = db.prepare("INSERT INTO schema_version (version, created) VALUES (?, ?)");
    statement.bind(1, kRunStoreSchemaVersion).bind(2, unix_seconds()).run();
    transaction.commit();
    version = kRunStoreSchemaVersion;
  }

  // The LLM attempts of a run's steps, by step id (none before version 3).
  std::unordered_map<std::int64_t, std::vector<LlmAttempt>> llm_attempts(std::int64_t run) {
    std::unordered_map<std::int64_t, std::vector<LlmAttempt>> by_step;
    if (version < 3) return by_step;
    auto statement = db.prepare(
        "SELECT step, coalesce(http_status, 0), error, seconds FROM llm_attempts WHERE run = ? ORDER BY step, attempt");
    statement.bind(1, run);
    while (statement.step()) {
      LlmAttempt attempt;
      attempt.http_status = static_cast<int>(statement.int64(1));
      attempt.error = statement.text(2);
      attempt.seconds = statement.real(3);
      by_step[statement.int64(0)].push_back(std::move(attempt));
    }
    return by_step;
  }

  std::vector<StepRecord> read_steps(std::int64_t run, const char* condition) {
    auto statement = db.prepare(
        fmt::format("SELECT {} FROM steps WHERE run = ? {} ORDER BY id", step_columns(version), condition));
    statement.bind(1, run);
    std::vector<StepRecord> result;
    while (statement.step()) result.push_back(read_step(statement));
    auto attempts = llm_attempts(run);
    for (StepRecord& step : result) {
      auto found = attempts.find(step.id);
      if (found != attempts.end()) step.llm_attempts = std::move(found->second);
    }
    return result;
  }

  void require_writable(const char* what) const {
    if (read_only) {
      throw StoreError(fmt::format("run store '{}' was opened read-only: cannot {}", db.path(), what));
    }
  }
};

RunStore::RunStore(const std::string& path, bool read_only) : impl_(std::make_unique<Impl>(path, read_only)) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->open_schema();
}

RunStore::~RunStore() = default;

const std::string& RunStore::path() const { return impl_->db.path(); }
bool RunStore::read_only() const { return impl_->read_only; }
int RunStore::schema_version() const { return impl_->version; }

std::int64_t RunStore::create_run(const RunInfo& info) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->require_writable("create a run");
  const double now = unix_seconds();
  auto statement = impl_->db.prepare(
      "INSERT INTO runs (task_name, config, task, language, backend, device, mutator, seed, library_version, "
      "started, updated, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running')");
  statement.bind(1, info.task_name)
      .bind(2, info.config_json)
      .bind(3, info.task_json)
      .bind(4, info.language)
      .bind(5, info.backend)
      .bind(6, info.device)
      .bind(7, info.mutator)
      .bind(8, static_cast<std::int64_t>(info.seed))
      .bind(9, info.library_version)
      .bind(10, info.started > 0.0 ? info.started : now)
      .bind(11, now)
      .run();
  return impl_->db.last_insert_rowid();
}

void RunStore::set_run_status(std::int64_t run, const std::string& status, const std::string& stop_reason,
                              const std::string& error) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->require_writable("update a run");
  const double now = unix_seconds();
  const bool final_status = status != "running";
  auto statement = impl_->db.prepare(
      "UPDATE runs SET status = ?, stop_reason = ?, error = ?, updated = ?, finished = ? WHERE id = ?");
  statement.bind(1, status).bind(2, stop_reason).bind(3, error).bind(4, now);
  if (final_status) {
    statement.bind(5, now);
  } else {
    statement.bind_null(5);
  }
  statement.bind(6, run).run();
  if (impl_->db.changes() == 0) throw NotFoundError(fmt::format("run store '{}' has no run {}", path(), run));
}

RunInfo RunStore::run(std::int64_t run) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto statement = impl_->db.prepare(fmt::format("SELECT {} FROM runs WHERE id = ?", kRunColumns));
  statement.bind(1, run);
  if (!statement.step()) {
    throw NotFoundError(fmt::format("run store '{}' has no run {}", impl_->db.path(), run));
  }
  return read_run(statement);
}

std::vector<RunInfo> RunStore::runs() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto statement = impl_->db.prepare(fmt::format("SELECT {} FROM runs ORDER BY id", kRunColumns));
  std::vector<RunInfo> result;
  while (statement.step()) result.push_back(read_run(statement));
  return result;
}

std::optional<RunInfo> RunStore::latest_run(const std::string& task_name) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto statement = impl_->db.prepare(fmt::format(
      "SELECT {} FROM runs WHERE ? = '' OR task_name = ? ORDER BY id DESC LIMIT 1", kRunColumns));
  statement.bind(1, task_name).bind(2, task_name);
  if (!statement.step()) return std::nullopt;
  return read_run(statement);
}

void RunStore::add_program(std::int64_t run, const std::string& id, const Candidate& candidate,
                           const std::string& normalized_hash) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->require_writable("add a program");
  auto statement = impl_->db.prepare(fmt::format(
      "INSERT INTO programs ({}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", kProgramColumns));
  statement.bind(1, run)
      .bind(2, id)
      .bind(3, candidate.language)
      .bind(4, candidate.source)
      .bind(5, normalized_hash)
      .bind(6, to_json_array(candidate.lineage.parent_ids))
      .bind(7, candidate.lineage.origin)
      .bind(8, candidate.lineage.island)
      .bind(9, candidate.lineage.generation)
      .bind(10, unix_seconds())
      .run();
}

std::int64_t RunStore::add_step(const StepRecord& step) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->require_writable("add a step");
  detail::SqliteTransaction transaction(impl_->db);
  auto statement = impl_->db.prepare(
      "INSERT INTO steps (run, island, parent_ids, selection, mutation, inspiration_ids, prompt, response, model, "
      "prompt_tokens, completion_tokens, latency_seconds, child_id, evaluation_id, failure, propose_seconds, "
      "evaluate_seconds, created, duplicate_of, novelty_kind, abandoned_by, skill, retrieved) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  statement.bind(1, step.run)
      .bind(2, step.island)
      .bind(3, to_json_array(step.parent_ids))
      .bind(4, step.selection)
      .bind(5, step.mutation)
      .bind(6, to_json_array(step.inspiration_ids))
      .bind(7, step.prompt)
      .bind(8, step.response)
      .bind(9, step.model)
      .bind(10, step.prompt_tokens)
      .bind(11, step.completion_tokens)
      .bind(12, step.latency_seconds);
  bind_text_or_null(statement, 13, step.child_id);
  statement.bind(14, step.evaluation_id)
      .bind(15, step.failure)
      .bind(16, step.propose_seconds)
      .bind(17, step.evaluate_seconds)
      .bind(18, step.created > 0.0 ? step.created : unix_seconds());
  bind_text_or_null(statement, 19, step.duplicate_of);
  bind_text_or_null(statement, 20, step.novelty_kind);
  bind_text_or_null(statement, 21, step.abandoned_by);
  bind_text_or_null(statement, 22, step.skill);
  if (step.retrieved.empty()) {
    statement.bind_null(23);
  } else {
    statement.bind(23, retrievals_to_json(step.retrieved));
  }
  statement.run();
  const std::int64_t step_id = impl_->db.last_insert_rowid();
  for (std::size_t index = 0; index < step.llm_attempts.size(); ++index) {
    const LlmAttempt& attempt = step.llm_attempts[index];
    auto insert = impl_->db.prepare(
        "INSERT INTO llm_attempts (run, step, attempt, http_status, error, seconds) VALUES (?, ?, ?, ?, ?, ?)");
    insert.bind(1, step.run).bind(2, step_id).bind(3, static_cast<std::int64_t>(index));
    if (attempt.http_status > 0) {
      insert.bind(4, attempt.http_status);
    } else {
      insert.bind_null(4);
    }
    insert.bind(5, attempt.error).bind(6, attempt.seconds).run();
  }
  transaction.commit();
  return step_id;
}

std::int64_t RunStore::add_evaluation(std::int64_t run, const std::string& program_id, std::int64_t sequence,
                                      const Evaluation& evaluation, std::optional<std::int64_t> step_id,
                                      double evaluate_seconds) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->require_writable("add an evaluation");
  detail::SqliteTransaction transaction(impl_->db);
  {
    auto known = impl_->db.prepare("SELECT count(*) FROM programs WHERE run = ? AND id = ?");
    known.bind(1, run).bind(2, program_id);
    known.step();
    if (known.int64(0) == 0) {
      throw StoreError(fmt::format("run store '{}': evaluation of program {} that run {} does not hold; add the "
                                   "program first",
                                   path(), program_id, run));
    }
    auto evaluated = impl_->db.prepare("SELECT id FROM evaluations WHERE run = ? AND program_id = ?");
    evaluated.bind(1, run).bind(2, program_id);
    if (evaluated.step()) {
      throw StoreError(fmt::format("run store '{}': program {} of run {} is already evaluated (evaluation {}); a "
                                   "program is never evaluated twice",
                                   path(), program_id, run, evaluated.int64(0)));
    }
  }
  auto statement = impl_->db.prepare(
      "INSERT INTO evaluations (run, program_id, sequence, status, fitness, speedup, message, backend, device, "
      "wall_seconds, json, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  statement.bind(1, run)
      .bind(2, program_id)
      .bind(3, sequence)
      .bind(4, to_string(evaluation.status))
      .bind(5, evaluation.fitness)
      .bind(6, evaluation.speedup)
      .bind(7, evaluation.message)
      .bind(8, evaluation.backend)
      .bind(9, evaluation.device)
      .bind(10, evaluation.wall_seconds)
      .bind(11, evaluation.to_json())
      .bind(12, unix_seconds())
      .run();
  const std::int64_t evaluation_id = impl_->db.last_insert_rowid();
  if (step_id) {
    auto link = impl_->db.prepare("UPDATE steps SET evaluation_id = ?, evaluate_seconds = ? WHERE id = ?");
    link.bind(1, evaluation_id).bind(2, evaluate_seconds).bind(3, *step_id).run();
    if (impl_->db.changes() == 0) {
      throw StoreError(fmt::format("run store '{}': step {} does not exist", path(), *step_id));
    }
  }
  auto touch = impl_->db.prepare("UPDATE runs SET updated = ? WHERE id = ?");
  touch.bind(1, unix_seconds()).bind(2, run).run();
  transaction.commit();
  return evaluation_id;
}

void RunStore::start_evaluation(std::int64_t run, std::int64_t step_id, const std::string& program_id,
                                std::int64_t batch) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->require_writable("mark an evaluation started");
  auto statement = impl_->db.prepare(
      "INSERT INTO evaluation_starts (run, step, program_id, batch, attempts, started) VALUES (?, ?, ?, ?, 1, ?) "
      "ON CONFLICT (step) DO UPDATE SET batch = excluded.batch, attempts = attempts + 1, started = excluded.started");
  statement.bind(1, run).bind(2, step_id).bind(3, program_id).bind(4, batch).bind(5, unix_seconds()).run();
}

void RunStore::forget_evaluation_start(std::int64_t step_id) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->require_writable("clear an evaluation's start");
  auto statement = impl_->db.prepare(
      "UPDATE evaluation_starts SET attempts = attempts - 1 WHERE step = ?");
  statement.bind(1, step_id).run();
  auto remove = impl_->db.prepare("DELETE FROM evaluation_starts WHERE step = ? AND attempts <= 0");
  remove.bind(1, step_id).run();
}

std::vector<EvaluationStart> RunStore::evaluation_starts(std::int64_t run) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  std::vector<EvaluationStart> starts;
  if (!impl_->has_table("evaluation_starts")) return starts;
  auto statement = impl_->db.prepare(
      "SELECT step, program_id, batch, attempts, started FROM evaluation_starts WHERE run = ? ORDER BY step");
  statement.bind(1, run);
  while (statement.step()) {
    EvaluationStart start;
    start.run = run;
    start.step = statement.int64(0);
    start.program_id = statement.text(1);
    start.batch = statement.int64(2);
    start.attempts = statement.int64(3);
    start.started = statement.real(4);
    starts.push_back(std::move(start));
  }
  return starts;
}

std::int64_t RunStore::add_screening(std::int64_t run, const std::string& program_id, std::int64_t sequence,
                                     const Evaluation& evaluation, std::optional<std::int64_t> step_id) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->require_writable("add a screening");
  // A session that ended between a program's screening and its evaluation (killed while confirming it) left
  // the screening of an evaluation that never counted: the resume evaluates the program again, and its
  // screening replaces that one.
  detail::SqliteTransaction transaction(impl_->db);
  auto stale = impl_->db.prepare("DELETE FROM screenings WHERE run = ? AND program_id = ?");
  stale.bind(1, run).bind(2, program_id).run();
  auto statement = impl_->db.prepare(
      "INSERT INTO screenings (run, program_id, sequence, step, status, fitness, speedup, message, json, created) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  statement.bind(1, run).bind(2, program_id).bind(3, sequence).bind(4, step_id);
  statement.bind(5, to_string(evaluation.status))
      .bind(6, evaluation.fitness)
      .bind(7, evaluation.speedup)
      .bind(8, evaluation.message)
      .bind(9, evaluation.to_json())
      .bind(10, unix_seconds())
      .run();
  const std::int64_t id = impl_->db.last_insert_rowid();
  transaction.commit();
  return id;
}

std::vector<EvaluationRecord> RunStore::screenings(std::int64_t run) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  std::vector<EvaluationRecord> result;
  if (!impl_->has_table("screenings")) return result;
  auto statement = impl_->db.prepare(
      fmt::format("SELECT {} FROM screenings WHERE run = ? ORDER BY sequence", kEvaluationColumns));
  statement.bind(1, run);
  while (statement.step()) result.push_back(read_evaluation(statement));
  return result;
}

void RunStore::fail_step(std::int64_t step_id, const std::string& failure) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->require_writable("update a step");
  auto statement = impl_->db.prepare("UPDATE steps SET failure = ? WHERE id = ? AND evaluation_id IS NULL");
  statement.bind(1, failure).bind(2, step_id).run();
}

std::int64_t RunStore::add_experience(std::int64_t run, std::int64_t step, const ExperienceItem& item) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->require_writable("add experience");
  std::string placeholders = "?, ?, ?";
  for (int i = 0; i < detail::kExperienceFactCount; ++i) placeholders += ", ?";
  auto statement = impl_->db.prepare(fmt::format("INSERT INTO experience (run, step, item, {}) VALUES ({})",
                                                 detail::kExperienceFactColumns, placeholders));
  statement.bind(1, run).bind(2, step).bind(3, item.id);
  detail::bind_experience_facts(statement, 4, item);
  statement.run();
  return impl_->db.last_insert_rowid();
}

std::vector<ExperienceRecord> RunStore::experience(std::int64_t run) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  std::vector<ExperienceRecord> records;
  if (impl_->version < 4) return records;
  auto statement =
      impl_->db.prepare(fmt::format("SELECT {} FROM experience WHERE run = ? ORDER BY id", experience_columns()));
  statement.bind(1, run);
  while (statement.step()) records.push_back(read_experience(statement));
  return records;
}

void RunStore::add_migration(const MigrationRecord& migration) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->require_writable("add a migration");
  auto statement = impl_->db.prepare(
      "INSERT INTO migrations (run, program_id, from_island, to_island, sequence, created) VALUES (?, ?, ?, ?, ?, ?)");
  statement.bind(1, migration.run)
      .bind(2, migration.program_id)
      .bind(3, migration.from_island)
      .bind(4, migration.to_island)
      .bind(5, migration.sequence)
      .bind(6, migration.created > 0.0 ? migration.created : unix_seconds())
      .run();
}

void RunStore::update_island(const IslandRecord& island) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->require_writable("update an island");
  auto statement = impl_->db.prepare(
      "INSERT INTO islands (run, island, programs, best_program_id, best_fitness, best_speedup, updated) "
      "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run, island) DO UPDATE SET programs = excluded.programs, "
      "best_program_id = excluded.best_program_id, best_fitness = excluded.best_fitness, "
      "best_speedup = excluded.best_speedup, updated = excluded.updated");
  statement.bind(1, island.run)
      .bind(2, island.island)
      .bind(3, island.programs)
      .bind(4, island.best_program_id)
      .bind(5, island.best_fitness)
      .bind(6, island.best_speedup)
      .bind(7, island.updated > 0.0 ? island.updated : unix_seconds())
      .run();
}

std::vector<ProgramRecord> RunStore::programs(std::int64_t run) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto statement = impl_->db.prepare(
      fmt::format("SELECT {} FROM programs WHERE run = ? ORDER BY created, rowid", kProgramColumns));
  statement.bind(1, run);
  std::vector<ProgramRecord> result;
  while (statement.step()) result.push_back(read_program(statement));
  return result;
}

std::optional<ProgramRecord> RunStore::program(std::int64_t run, const std::string& id) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto statement = impl_->db.prepare(fmt::format("SELECT {} FROM programs WHERE run = ? AND id = ?", kProgramColumns));
  statement.bind(1, run).bind(2, id);
  if (!statement.step()) return std::nullopt;
  return read_program(statement);
}

std::vector<EvaluationRecord> RunStore::evaluations(std::int64_t run) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto statement = impl_->db.prepare(
      fmt::format("SELECT {} FROM evaluations WHERE run = ? ORDER BY sequence", kEvaluationColumns));
  statement.bind(1, run);
  std::vector<EvaluationRecord> result;
  while (statement.step()) result.push_back(read_evaluation(statement));
  return result;
}

std::optional<EvaluationRecord> RunStore::evaluation_of(std::int64_t run, const std::string& program_id) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto statement = impl_->db.prepare(
      fmt::format("SELECT {} FROM evaluations WHERE run = ? AND program_id = ?", kEvaluationColumns));
  statement.bind(1, run).bind(2, program_id);
  if (!statement.step()) return std::nullopt;
  return read_evaluation(statement);
}

std::vector<StepRecord> RunStore::steps(std::int64_t run) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->read_steps(run, "");
}

std::vector<StepRecord> RunStore::pending_steps(std::int64_t run) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->read_steps(run, "AND child_id IS NOT NULL AND evaluation_id IS NULL AND failure = ''");
}

std::vector<MigrationRecord> RunStore::migrations(std::int64_t run) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto statement = impl_->db.prepare(
      "SELECT id, run, program_id, from_island, to_island, sequence, created FROM migrations WHERE run = ? "
      "ORDER BY id");
  statement.bind(1, run);
  std::vector<MigrationRecord> result;
  while (statement.step()) {
    MigrationRecord record;
    record.id = statement.int64(0);
    record.run = statement.int64(1);
    record.program_id = statement.text(2);
    record.from_island = static_cast<int>(statement.int64(3));
    record.to_island = static_cast<int>(statement.int64(4));
    record.sequence = statement.int64(5);
    record.created = statement.real(6);
    result.push_back(std::move(record));
  }
  return result;
}

std::vector<IslandRecord> RunStore::islands(std::int64_t run) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto statement = impl_->db.prepare(
      "SELECT run, island, programs, best_program_id, best_fitness, best_speedup, updated FROM islands "
      "WHERE run = ? ORDER BY island");
  statement.bind(1, run);
  std::vector<IslandRecord> result;
  while (statement.step()) {
    IslandRecord record;
    record.run = statement.int64(0);
    record.island = static_cast<int>(statement.int64(1));
    record.programs = statement.int64(2);
    record.best_program_id = statement.text(3);
    record.best_fitness = statement.real(4);
    record.best_speedup = statement.real(5);
    record.updated = statement.real(6);
    result.push_back(std::move(record));
  }
  return result;
}

std::int64_t RunStore::evaluation_count(std::int64_t run) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto statement = impl_->db.prepare("SELECT count(*) FROM evaluations WHERE run = ?");
  statement.bind(1, run);
  statement.step();
  return statement.int64(0);
}

std::vector<EvaluationRecord> RunStore::best(std::int64_t run, int count) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto statement = impl_->db.prepare(fmt::format(
      "SELECT {} FROM evaluations WHERE run = ? AND status = 'ok' ORDER BY fitness DESC, sequence LIMIT ?",
      kEvaluationColumns));
  statement.bind(1, run).bind(2, count);
  std::vector<EvaluationRecord> result;
  while (statement.step()) result.push_back(read_evaluation(statement));
  return result;
}

std::vector<ProgramRecord> RunStore::lineage(std::int64_t run, const std::string& program_id) const {
  std::vector<ProgramRecord> chain;
  std::string next = program_id;
  // Lineage is acyclic by construction (ids are content hashes of newer code), but a hand-edited
  // store could loop: stop at the first repeat.
  std::vector<std::string> seen;
  while (!next.empty()) {
    if (std::find(seen.begin(), seen.end(), next) != seen.end()) break;
    seen.push_back(next);
    std::optional<ProgramRecord> record = program(run, next);
    if (!record) {
      if (chain.empty()) {
        throw NotFoundError(fmt::format("run store '{}': run {} has no program {}", path(), run, program_id));
      }
      break;
    }
    const std::vector<std::string>& parents = record->candidate.lineage.parent_ids;
    next = parents.empty() ? std::string() : parents.front();
    chain.push_back(std::move(*record));
  }
  return chain;
}

std::vector<HistoryPoint> RunStore::history(std::int64_t run) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto statement = impl_->db.prepare(
      "SELECT sequence, program_id, status, speedup FROM evaluations WHERE run = ? ORDER BY sequence");
  statement.bind(1, run);
  std::vector<HistoryPoint> points;
  double best_speedup = 0.0;
  while (statement.step()) {
    HistoryPoint point;
    point.sequence = statement.int64(0);
    point.program_id = statement.text(1);
    point.status = parse_status(statement.text(2));
    point.speedup = statement.real(3);
    if (point.status == Status::ok && point.speedup > best_speedup) best_speedup = point.speedup;
    point.best_speedup = best_speedup;
    points.push_back(std::move(point));
  }
  return points;
}

}  // namespace kernelsmith
