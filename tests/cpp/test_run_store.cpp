// RunStore: schema, WAL, commits, consistency checks, reads; over real SQLite files.
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "catch.hpp"
#include "kernelsmith/error.hpp"
#include "kernelsmith/run_store.hpp"

using namespace kernelsmith;

namespace {

// A fresh file path under the temporary folder, removed (with its WAL files) at scope exit.
struct TempDb {
  std::filesystem::path path;
  TempDb() {
    std::random_device device;
    path = std::filesystem::temp_directory_path() / ("kernelsmith-store-" + std::to_string(device()) + ".db");
  }
  ~TempDb() {
    std::error_code ignored;
    for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path.string() + suffix, ignored);
  }
};

Candidate make_candidate(const std::string& source, std::vector<std::string> parents = {}, int island = 0) {
  Candidate candidate;
  candidate.language = "opencl";
  candidate.source = source;
  candidate.lineage.parent_ids = std::move(parents);
  candidate.lineage.island = island;
  candidate.lineage.origin = candidate.lineage.parent_ids.empty() ? "reference" : "param";
  return candidate;
}

Evaluation make_evaluation(const std::string& id, Status status, double speedup) {
  Evaluation evaluation;
  evaluation.candidate_id = id;
  evaluation.task = "relu";
  evaluation.backend = "opencl";
  evaluation.device = "cpu";
  evaluation.status = status;
  evaluation.message = status == Status::ok ? "ok" : "output y differs";
  evaluation.speedup = speedup;
  evaluation.fitness = status == Status::ok ? speedup : 0.0;
  return evaluation;
}

std::int64_t new_run(RunStore& store, const std::string& task = "relu") {
  RunInfo info;
  info.task_name = task;
  info.config_json = "{}";
  info.task_json = "{}";
  info.language = "opencl";
  info.seed = 7;
  return store.create_run(info);
}

// Reads one integer with the plain C API, as any other reader of the file would.
std::int64_t query_int(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* statement = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &statement, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(statement) == SQLITE_ROW);
  const std::int64_t value = sqlite3_column_int64(statement, 0);
  sqlite3_finalize(statement);
  sqlite3_close(db);
  return value;
}

}  // namespace

TEST_CASE("a new store has the schema, WAL mode, and runs", "[run_store]") {
  TempDb db;
  {
    RunStore store(db.path.string());
    CHECK(store.schema_version() == kRunStoreSchemaVersion);
    const std::int64_t first = new_run(store);
    const std::int64_t second = new_run(store, "matmul");
    CHECK(second > first);
    CHECK(store.runs().size() == 2);
    CHECK(store.latest_run()->id == second);
    CHECK(store.latest_run("relu")->id == first);
    CHECK_FALSE(store.latest_run("row_sum"));
    CHECK(store.run(first).status == "running");
    CHECK(store.run(first).seed == 7);
    store.set_run_status(first, "finished", "budget");
    CHECK(store.run(first).status == "finished");
    CHECK(store.run(first).stop_reason == "budget");
    CHECK(store.run(first).finished > 0.0);
    REQUIRE_THROWS_AS(store.run(99), NotFoundError);
  }
  // Another connection sees the committed rows; the file is in WAL mode.
  CHECK(query_int(db.path.string(), "SELECT count(*) FROM runs") == 2);
  CHECK(query_int(db.path.string(), "SELECT version FROM schema_version") == kRunStoreSchemaVersion);
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(db.path.string().c_str(), &raw) == SQLITE_OK);
  sqlite3_stmt* statement = nullptr;
  REQUIRE(sqlite3_prepare_v2(raw, "PRAGMA journal_mode", -1, &statement, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(statement) == SQLITE_ROW);
  CHECK(std::string(reinterpret_cast<const char*>(sqlite3_column_text(statement, 0))) == "wal");
  sqlite3_finalize(statement);
  sqlite3_close(raw);

  RunStore reopened(db.path.string(), true);
  CHECK(reopened.read_only());
  CHECK(reopened.runs().size() == 2);
  REQUIRE_THROWS_AS(new_run(reopened), StoreError);
}

TEST_CASE("programs, steps and evaluations are linked and committed", "[run_store]") {
  TempDb db;
  RunStore store(db.path.string());
  const std::int64_t run = new_run(store);
  const Candidate reference = make_candidate("__kernel void k() {}");
  store.add_program(run, "ref", reference, "h0");
  StepRecord seed_step;
  seed_step.run = run;
  seed_step.selection = "seed";
  seed_step.mutation = "reference";
  seed_step.child_id = "ref";
  const std::int64_t seed_step_id = store.add_step(seed_step);
  CHECK(store.pending_steps(run).size() == 1);
  CHECK(query_int(db.path.string(), "SELECT count(*) FROM programs") == 1);  // visible before any evaluation

  const std::int64_t evaluation_id = store.add_evaluation(run, "ref", 0, make_evaluation("ref", Status::ok, 1.0),
                                                          seed_step_id, 0.25);
  CHECK(store.pending_steps(run).empty());
  REQUIRE(store.steps(run).size() == 1);
  CHECK(store.steps(run)[0].evaluation_id == evaluation_id);
  CHECK(store.steps(run)[0].evaluate_seconds == Approx(0.25));

  // A child with an LLM-like step record, then a failed proposal.
  store.add_program(run, "child", make_candidate("__kernel void k2() {}", {"ref"}, 1), "h1");
  StepRecord step;
  step.run = run;
  step.island = 1;
  step.parent_ids = {"ref"};
  step.selection = "policy";
  step.mutation = "llm_diff";
  step.inspiration_ids = {"ref"};
  step.prompt = R"([{"role": "user", "content": "make it faster"}])";
  step.response = "<<<<<<< SEARCH ...";
  step.model = "test-model";
  step.prompt_tokens = 120;
  step.completion_tokens = 30;
  step.latency_seconds = 1.5;
  step.child_id = "child";
  step.propose_seconds = 1.6;
  const std::int64_t child_step = store.add_step(step);
  store.add_evaluation(run, "child", 1, make_evaluation("child", Status::ok, 2.5), child_step, 0.5);
  StepRecord failed = step;
  failed.child_id.clear();
  failed.failure = "the SEARCH block matched nothing";
  store.add_step(failed);

  const std::vector<StepRecord> steps = store.steps(run);
  REQUIRE(steps.size() == 3);
  CHECK(steps[1].prompt == step.prompt);
  CHECK(steps[1].model == "test-model");
  CHECK(steps[1].prompt_tokens == 120);
  CHECK(steps[1].completion_tokens == 30);
  CHECK(steps[1].latency_seconds == Approx(1.5));
  CHECK(steps[1].parent_ids == std::vector<std::string>{"ref"});
  CHECK(steps[2].failure == "the SEARCH block matched nothing");
  CHECK_FALSE(steps[2].pending());

  const auto program = store.program(run, "child");
  REQUIRE(program);
  CHECK(program->candidate.lineage.parent_ids == std::vector<std::string>{"ref"});
  CHECK(program->candidate.lineage.island == 1);
  CHECK(program->normalized_hash == "h1");
  const auto evaluation = store.evaluation_of(run, "child");
  REQUIRE(evaluation);
  CHECK(evaluation->evaluation.speedup == Approx(2.5));
  CHECK(evaluation->evaluation.status == Status::ok);
  CHECK(store.evaluation_count(run) == 2);

  SECTION("a program is never evaluated twice, and only stored programs are evaluated") {
    REQUIRE_THROWS_AS(store.add_evaluation(run, "child", 2, make_evaluation("child", Status::ok, 2.5)), StoreError);
    REQUIRE_THROWS_AS(store.add_evaluation(run, "ghost", 2, make_evaluation("ghost", Status::ok, 1.0)), StoreError);
    REQUIRE_THROWS_AS(store.add_program(run, "child", make_candidate("again"), "h9"), StoreError);
    CHECK(store.evaluation_count(run) == 2);
  }
  SECTION("a failed transaction leaves nothing behind") {
    store.add_program(run, "third", make_candidate("__kernel void k3() {}", {"child"}), "h2");
    // The step does not exist: the evaluation insert is rolled back with the step update.
    REQUIRE_THROWS_AS(store.add_evaluation(run, "third", 2, make_evaluation("third", Status::ok, 3.0), 999), StoreError);
    CHECK_FALSE(store.evaluation_of(run, "third"));
    store.add_evaluation(run, "third", 2, make_evaluation("third", Status::incorrect, 0.0));
    CHECK(store.evaluation_count(run) == 3);
  }
  SECTION("summaries: best, lineage, history") {
    store.add_program(run, "third", make_candidate("__kernel void k3() {}", {"child"}), "h2");
    store.add_evaluation(run, "third", 2, make_evaluation("third", Status::incorrect, 0.0));
    const auto best = store.best(run, 5);
    REQUIRE(best.size() == 2);
    CHECK(best[0].program_id == "child");
    CHECK(best[1].program_id == "ref");
    const auto lineage = store.lineage(run, "third");
    REQUIRE(lineage.size() == 3);
    CHECK(lineage[0].id == "third");
    CHECK(lineage[1].id == "child");
    CHECK(lineage[2].id == "ref");
    REQUIRE_THROWS_AS(store.lineage(run, "nobody"), NotFoundError);
    const auto history = store.history(run);
    REQUIRE(history.size() == 3);
    CHECK(history[0].best_speedup == Approx(1.0));
    CHECK(history[1].best_speedup == Approx(2.5));
    CHECK(history[2].status == Status::incorrect);
    CHECK(history[2].best_speedup == Approx(2.5));
  }
  SECTION("migrations and islands") {
    MigrationRecord migration;
    migration.run = run;
    migration.program_id = "child";
    migration.from_island = 1;
    migration.to_island = 0;
    migration.sequence = 2;
    store.add_migration(migration);
    REQUIRE(store.migrations(run).size() == 1);
    CHECK(store.migrations(run)[0].to_island == 0);
    IslandRecord island;
    island.run = run;
    island.island = 1;
    island.programs = 2;
    island.best_program_id = "child";
    island.best_speedup = 2.5;
    store.update_island(island);
    island.programs = 3;
    store.update_island(island);
    REQUIRE(store.islands(run).size() == 1);
    CHECK(store.islands(run)[0].programs == 3);
  }
  SECTION("a pending step can be closed with a failure") {
    store.add_program(run, "fourth", make_candidate("__kernel void k4() {}", {"child"}), "h3");
    StepRecord pending = step;
    pending.child_id = "fourth";
    const std::int64_t id = store.add_step(pending);
    CHECK(store.pending_steps(run).size() == 1);
    store.fail_step(id, "budget exhausted");
    CHECK(store.pending_steps(run).empty());
  }
}

TEST_CASE("opening what is not a run store fails with a clear error", "[run_store]") {
  TempDb db;
  {
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(db.path.string().c_str(), &raw) == SQLITE_OK);
    REQUIRE(sqlite3_exec(raw, "CREATE TABLE other (x INTEGER)", nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(raw);
  }
  try {
    RunStore store(db.path.string());
    FAIL("opened a database that is not a run store");
  } catch (const StoreError& error) {
    CHECK(std::string(error.what()).find("not a kernelsmith run store") != std::string::npos);
  }

  TempDb newer;
  {
    RunStore store(newer.path.string());
  }
  {
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(newer.path.string().c_str(), &raw) == SQLITE_OK);
    REQUIRE(sqlite3_exec(raw, "UPDATE schema_version SET version = 99", nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(raw);
  }
  try {
    RunStore store(newer.path.string());
    FAIL("opened a store of another schema version");
  } catch (const StoreError& error) {
    CHECK(std::string(error.what()).find("schema version 99") != std::string::npos);
  }

  REQUIRE_THROWS_AS(RunStore("/nonexistent-folder/run.db"), StoreError);
  TempDb missing;
  REQUIRE_THROWS_AS(RunStore(missing.path.string(), true), StoreError);
}

TEST_CASE("a damaged store says so and how to recover, not which statement found it", "[run_store]") {
  auto message = [](const std::string& path, bool read_only) {
    try {
      RunStore store(path, read_only);
      store.latest_run();
    } catch (const StoreError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  SECTION("pages overwritten in the middle of the file") {
    TempDb db;
    {
      RunStore store(db.path.string());
      for (int i = 0; i < 200; ++i) new_run(store, "task_" + std::to_string(i));
    }
    {
      // Every page after the first (the header) turns to noise: the schema and the tables are lost.
      std::fstream file(db.path, std::ios::in | std::ios::out | std::ios::binary);
      file.seekg(0, std::ios::end);
      const auto size = static_cast<std::size_t>(file.tellg());
      REQUIRE(size > 8192);
      file.seekp(4096);
      file << std::string(size - 4096, '\x5a');
    }
    for (const bool read_only : {true, false}) {
      const std::string text = message(db.path.string(), read_only);
      INFO(text);
      CHECK(text.find("the run store '" + db.path.string() + "' is damaged (database disk image is malformed): keep "
                      "a copy of the file, start a new run with another --db path, and rescue what is left with "
                      "`sqlite3 " + db.path.string() + " .recover | sqlite3 recovered.db`") == 0);
      CHECK(text.find("SELECT") == std::string::npos);
    }
  }
  SECTION("a file that is not a database at all") {
    TempDb db;
    std::ofstream(db.path) << std::string(8192, 'x');
    const std::string text = message(db.path.string(), true);
    INFO(text);
    CHECK(text.find("'" + db.path.string() + "' is not a SQLite database, or its header is damaged (file is not a "
                    "database): give the --db path of a run store, or a new path to start one") == 0);
    CHECK(text.find("SELECT") == std::string::npos);
  }
}

namespace {

// tests/data/run_store_v1.db, written by the code of commit 07601d7 (tests/data/make_run_store_v1.py),
// copied to a temporary file so that the upgrade does not touch the committed one.
void copy_version_1_fixture(const TempDb& db) {
  std::filesystem::copy_file(std::string(KERNELSMITH_SOURCE_DIR) + "/tests/data/run_store_v1.db", db.path);
}

const char* const kVariantId = "199484d18f2f9a3d";  // the scripted run's new program

// The version-1 facts: (mutation, failure prefix) -> (novelty_kind, duplicate_of), checked on every step.
void check_version_1_facts(RunStore& store) {
  const std::vector<RunInfo> runs = store.runs();
  REQUIRE(runs.size() == 2);
  int duplicates = 0, near_duplicates = 0, known = 0, unjudged = 0, novel = 0;
  for (const RunInfo& run : runs) {
    for (const StepRecord& step : store.steps(run.id)) {
      INFO("run " << run.id << " step " << step.id << ": " << step.failure);
      if (!step.child_id.empty()) {
        ++novel;
        CHECK(step.novelty_kind == "novel");
        CHECK(step.duplicate_of.empty());
      } else if (step.failure.rfind("duplicate of program ", 0) == 0) {
        ++duplicates;
        CHECK(step.novelty_kind == "duplicate");
        CHECK(step.duplicate_of == kVariantId);
      } else if (step.failure.rfind("near duplicate of program ", 0) == 0) {
        ++near_duplicates;
        CHECK(step.novelty_kind == "near_duplicate");
        CHECK(step.duplicate_of == kVariantId);
      } else if (step.failure.rfind("the answer's program is already in the run", 0) == 0) {
        ++known;
        CHECK(step.novelty_kind == "duplicate");
        CHECK(step.duplicate_of.empty());  // version 1 did not record which program
      } else {
        ++unjudged;
        CHECK(step.failure == "the SEARCH block matched nothing");
        CHECK(step.novelty_kind.empty());
        CHECK(step.duplicate_of.empty());
      }
    }
  }
  CHECK(novel == 6);
  CHECK(duplicates == 1);
  CHECK(near_duplicates == 1);
  CHECK(known == 2);
  CHECK(unjudged == 1);
}

std::int64_t column_count(const std::string& path, const std::string& column) {
  return query_int(path, "SELECT count(*) FROM pragma_table_info('steps') WHERE name = '" + column + "'");
}

}  // namespace

TEST_CASE("a version-1 store is read as it is when read-only and upgraded when opened for writing",
          "[run_store][migration]") {
  TempDb db;
  copy_version_1_fixture(db);
  const std::string path = db.path.string();
  REQUIRE(query_int(path, "SELECT max(version) FROM schema_version") == 1);

  std::vector<std::vector<StepRecord>> steps_before;
  std::vector<std::vector<EvaluationRecord>> evaluations_before;
  std::vector<std::vector<ProgramRecord>> programs_before;
  {
    RunStore old(path, true);
    CHECK(old.schema_version() == 1);
    check_version_1_facts(old);  // derived while reading, the file untouched
    for (const RunInfo& run : old.runs()) {
      steps_before.push_back(old.steps(run.id));
      evaluations_before.push_back(old.evaluations(run.id));
      programs_before.push_back(old.programs(run.id));
    }
  }
  CHECK(column_count(path, "duplicate_of") == 0);
  CHECK(query_int(path, "SELECT max(version) FROM schema_version") == 1);

  {
    RunStore upgraded(path);
    CHECK(upgraded.schema_version() == kRunStoreSchemaVersion);
    check_version_1_facts(upgraded);  // now from the columns
    // Nothing lost: every run, program, evaluation and step as before, field by field.
    const std::vector<RunInfo> runs = upgraded.runs();
    REQUIRE(runs.size() == steps_before.size());
    for (std::size_t r = 0; r < runs.size(); ++r) {
      const std::vector<StepRecord> steps = upgraded.steps(runs[r].id);
      REQUIRE(steps.size() == steps_before[r].size());
      for (std::size_t i = 0; i < steps.size(); ++i) {
        const StepRecord& a = steps[i];
        const StepRecord& b = steps_before[r][i];
        CHECK(a.id == b.id);
        CHECK(a.parent_ids == b.parent_ids);
        CHECK(a.mutation == b.mutation);
        CHECK(a.prompt == b.prompt);
        CHECK(a.response == b.response);
        CHECK(a.child_id == b.child_id);
        CHECK(a.evaluation_id == b.evaluation_id);
        CHECK(a.failure == b.failure);
        CHECK(a.created == b.created);
        CHECK(a.duplicate_of == b.duplicate_of);
        CHECK(a.novelty_kind == b.novelty_kind);
      }
      const std::vector<EvaluationRecord> evaluations = upgraded.evaluations(runs[r].id);
      REQUIRE(evaluations.size() == evaluations_before[r].size());
      for (std::size_t i = 0; i < evaluations.size(); ++i) {
        CHECK(evaluations[i].program_id == evaluations_before[r][i].program_id);
        CHECK(evaluations[i].evaluation.to_json() == evaluations_before[r][i].evaluation.to_json());
      }
      const std::vector<ProgramRecord> programs = upgraded.programs(runs[r].id);
      REQUIRE(programs.size() == programs_before[r].size());
      for (std::size_t i = 0; i < programs.size(); ++i) {
        CHECK(programs[i].candidate.to_json() == programs_before[r][i].candidate.to_json());
      }
    }
    CHECK(query_int(path, "SELECT count(*) FROM evaluations") == 6);

    // The upgraded file takes version-2 steps.
    StepRecord step;
    step.run = runs[0].id;
    step.parent_ids = {kVariantId};
    step.selection = "policy";
    step.mutation = "llm_diff";
    step.failure = "the answer's program is already in the run (a duplicate of an earlier program)";
    step.duplicate_of = kVariantId;
    step.novelty_kind = "duplicate";
    const std::int64_t id = upgraded.add_step(step);
    CHECK(upgraded.steps(runs[0].id).back().id == id);
    CHECK(upgraded.steps(runs[0].id).back().duplicate_of == kVariantId);
  }
  CHECK(column_count(path, "duplicate_of") == 1);
  CHECK(column_count(path, "novelty_kind") == 1);
  CHECK(query_int(path, "SELECT count(*) FROM steps WHERE novelty_kind = 'duplicate' AND duplicate_of IS NULL") == 2);
  // The upgrade is recorded once: opening the file again changes nothing.
  { RunStore again(path); }
  CHECK(query_int(path, "SELECT count(*) FROM schema_version") == 2);
  CHECK(query_int(path, "SELECT max(version) FROM schema_version") == kRunStoreSchemaVersion);
}

namespace {

// Runs SQL on a file with the plain C API (to make an older version of the schema).
void execute_sql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  char* message = nullptr;
  const int code = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
  INFO((message != nullptr ? message : ""));
  sqlite3_free(message);
  sqlite3_close(db);
  REQUIRE(code == SQLITE_OK);
}

}  // namespace

TEST_CASE("steps keep their LLM attempts and the deadline that abandoned them", "[run_store]") {
  TempDb db;
  RunStore store(db.path.string());
  const std::int64_t run = new_run(store);
  StepRecord step;
  step.run = run;
  step.selection = "policy";
  step.mutation = "llm";
  step.failure = "LLM request failed: cancelled";
  step.abandoned_by = "wall_time";
  step.llm_attempts = {{500, "HTTP 500 from http://127.0.0.1/v1/chat/completions: busy", 0.25},
                       {0, "timeout: no answer within 2 s", 2.0},
                       {0, "cancelled: the run stopped", 0.5}};
  const std::int64_t id = store.add_step(step);
  StepRecord plain;
  plain.run = run;
  plain.selection = "policy";
  plain.mutation = "param";
  store.add_step(plain);

  const std::vector<StepRecord> steps = store.steps(run);
  REQUIRE(steps.size() == 2);
  CHECK(steps[0].id == id);
  CHECK(steps[0].abandoned_by == "wall_time");
  REQUIRE(steps[0].llm_attempts.size() == 3);
  CHECK(steps[0].llm_attempts[0].http_status == 500);
  CHECK(steps[0].llm_attempts[1].error == "timeout: no answer within 2 s");
  CHECK(steps[0].llm_attempts[2].seconds == 0.5);
  CHECK(steps[1].abandoned_by.empty());
  CHECK(steps[1].llm_attempts.empty());
  // In SQL: no status is NULL, the attempts are numbered from 0.
  const std::string path = db.path.string();
  CHECK(query_int(path, "SELECT count(*) FROM llm_attempts WHERE http_status IS NULL") == 2);
  CHECK(query_int(path, "SELECT max(attempt) FROM llm_attempts WHERE step = " + std::to_string(id)) == 2);
  CHECK(query_int(path, "SELECT count(*) FROM steps WHERE abandoned_by IS NULL") == 1);
}

TEST_CASE("a version-2 store is read as it is when read-only and upgraded when opened for writing",
          "[run_store][migration]") {
  TempDb db;
  copy_version_1_fixture(db);
  const std::string path = db.path.string();
  // Version 2 as its build wrote it: the two novelty columns (left NULL here) and the version row.
  execute_sql(path,
              "ALTER TABLE steps ADD COLUMN duplicate_of TEXT; ALTER TABLE steps ADD COLUMN novelty_kind TEXT; "
              "INSERT INTO schema_version (version, created) VALUES (2, 0);");
  std::size_t steps_before = 0;
  {
    RunStore old(path, true);
    CHECK(old.schema_version() == 2);
    for (const RunInfo& run : old.runs()) {
      for (const StepRecord& step : old.steps(run.id)) {
        CHECK(step.abandoned_by.empty());
        CHECK(step.llm_attempts.empty());
        ++steps_before;
      }
    }
  }
  CHECK(column_count(path, "abandoned_by") == 0);
  {
    RunStore upgraded(path);
    CHECK(upgraded.schema_version() == kRunStoreSchemaVersion);
    std::size_t steps_after = 0;
    for (const RunInfo& run : upgraded.runs()) steps_after += upgraded.steps(run.id).size();
    CHECK(steps_after == steps_before);
    StepRecord step;
    step.run = upgraded.runs().front().id;
    step.selection = "policy";
    step.mutation = "llm";
    step.failure = "abandoned";
    step.abandoned_by = "stopped";
    step.llm_attempts = {{200, "", 1.5}};
    upgraded.add_step(step);
    CHECK(upgraded.steps(step.run).back().llm_attempts.size() == 1);
  }
  CHECK(column_count(path, "abandoned_by") == 1);
  CHECK(query_int(path, "SELECT count(*) FROM llm_attempts") == 1);
  { RunStore again(path); }
  CHECK(query_int(path, "SELECT count(*) FROM schema_version") == 3);  // 1, 2, then the current one
  CHECK(query_int(path, "SELECT max(version) FROM schema_version") == kRunStoreSchemaVersion);
}

TEST_CASE("steps keep their skill and retrieved experience; the experience table keeps each step's lesson",
          "[run_store][experience]") {
  TempDb db;
  RunStore store(db.path.string());
  const std::int64_t run = new_run(store);
  StepRecord step;
  step.run = run;
  step.selection = "policy";
  step.mutation = "llm_diff";
  step.skill = "fuse_kernels";
  step.retrieved = {{17, "fuse_kernels", 1.4, 0.5, 0.9, false}, {3, "tree_reduction", 0.7, -0.1, 0.8, true}};
  const std::int64_t id = store.add_step(step);
  StepRecord plain;
  plain.run = run;
  plain.selection = "policy";
  plain.mutation = "param";
  store.add_step(plain);
  const auto steps = store.steps(run);
  REQUIRE(steps.size() == 2);
  CHECK(steps[0].skill == "fuse_kernels");
  REQUIRE(steps[0].retrieved.size() == 2);
  CHECK(steps[0].retrieved[0].item == 17);
  CHECK(steps[0].retrieved[0].skill == "fuse_kernels");
  CHECK(steps[0].retrieved[0].score == Approx(1.4));
  CHECK(steps[0].retrieved[1].value == Approx(-0.1));
  CHECK(steps[0].retrieved[1].similarity == Approx(0.8));
  CHECK(steps[0].retrieved[1].explored);
  CHECK(steps[1].skill.empty());
  CHECK(steps[1].retrieved.empty());
  const std::string path = db.path.string();
  CHECK(query_int(path, "SELECT count(*) FROM steps WHERE skill IS NULL AND retrieved IS NULL") == 1);

  ExperienceItem item;
  item.id = 41;
  item.task = "relu";
  item.task_features.numbers["task_intensity"] = 0.125;
  item.feedback.labels["stage"] = "refine";
  item.stage = Stage::refine;
  item.skill = "fuse_kernels";
  item.edit = "llm_diff";
  item.status = Status::ok;
  item.compiled = item.correct = true;
  item.speedup = 1.5;
  item.parent_speedup = 1.0;
  item.note = "ok";
  item.reward = 0.58;
  item.origin = "run 1 of x.db, step 1";
  store.add_experience(run, id, item);
  const auto records = store.experience(run);
  REQUIRE(records.size() == 1);
  CHECK(records[0].run == run);
  CHECK(records[0].step == id);
  CHECK(records[0].item.id == 41);
  CHECK(records[0].item.skill == "fuse_kernels");
  CHECK(records[0].item.stage == Stage::refine);
  CHECK(records[0].item.task_features.number("task_intensity") == std::optional<double>(0.125));
  CHECK(records[0].item.feedback.label("stage") == std::optional<std::string>("refine"));
  CHECK(records[0].item.speedup == Approx(1.5));
  CHECK(records[0].item.reward == Approx(0.58));
  CHECK(records[0].item.created > 0.0);
  CHECK(store.experience(run + 1).empty());
  CHECK(query_int(path, "SELECT count(*) FROM experience WHERE correct = 1 AND skill = 'fuse_kernels'") == 1);
}

TEST_CASE("a version-3 store is read as it is when read-only and upgraded when opened for writing",
          "[run_store][migration]") {
  TempDb db;
  copy_version_1_fixture(db);
  const std::string path = db.path.string();
  // Version 3 as its build wrote it: the columns and table versions 2 and 3 added, and the version row.
  execute_sql(path,
              "ALTER TABLE steps ADD COLUMN duplicate_of TEXT; ALTER TABLE steps ADD COLUMN novelty_kind TEXT; "
              "ALTER TABLE steps ADD COLUMN abandoned_by TEXT; "
              "CREATE TABLE llm_attempts (run INTEGER NOT NULL, step INTEGER NOT NULL, attempt INTEGER NOT NULL, "
              "http_status INTEGER, error TEXT NOT NULL, seconds REAL NOT NULL, PRIMARY KEY (step, attempt)); "
              "INSERT INTO schema_version (version, created) VALUES (3, 0);");
  std::size_t steps_before = 0;
  std::int64_t first_run = 0;
  {
    RunStore old(path, true);
    CHECK(old.schema_version() == 3);
    first_run = old.runs().front().id;
    for (const RunInfo& run : old.runs()) {
      CHECK(old.experience(run.id).empty());
      for (const StepRecord& step : old.steps(run.id)) {
        CHECK(step.skill.empty());
        CHECK(step.retrieved.empty());
        ++steps_before;
      }
    }
    REQUIRE_THROWS_AS(old.add_experience(first_run, 1, ExperienceItem{}), StoreError);
  }
  CHECK(column_count(path, "skill") == 0);
  {
    RunStore upgraded(path);
    CHECK(upgraded.schema_version() == kRunStoreSchemaVersion);
    std::size_t steps_after = 0;
    for (const RunInfo& run : upgraded.runs()) steps_after += upgraded.steps(run.id).size();
    CHECK(steps_after == steps_before);
    StepRecord step;
    step.run = first_run;
    step.selection = "policy";
    step.mutation = "llm_full";
    step.skill = "tile_in_shared_memory";
    step.retrieved = {{1, "tile_in_shared_memory", 0.5, 0.25, 0.25, false}};
    const std::int64_t id = upgraded.add_step(step);
    CHECK(upgraded.steps(first_run).back().skill == "tile_in_shared_memory");
    ExperienceItem item;
    item.task = "relu";
    upgraded.add_experience(first_run, id, item);
    CHECK(upgraded.experience(first_run).size() == 1);
  }
  CHECK(column_count(path, "skill") == 1);
  CHECK(column_count(path, "retrieved") == 1);
  CHECK(query_int(path, "SELECT count(*) FROM experience") == 1);
  CHECK(query_int(path, "SELECT max(version) FROM schema_version") == kRunStoreSchemaVersion);
}
