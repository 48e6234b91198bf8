#include "detail/sqlite.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <utility>

#include "kernelsmith/error.hpp"

namespace kernelsmith::detail {

SqliteDatabase::SqliteDatabase(const std::string& path, bool read_only, bool create) : path_(path) {
  int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  if (create && !read_only) flags |= SQLITE_OPEN_CREATE;
  // Each connection is used under the owner's own lock; SQLite's mutexes stay on for safety.
  flags |= SQLITE_OPEN_FULLMUTEX;
  const int code = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (code != SQLITE_OK) {
    std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(code);
    sqlite3_close(db_);
    db_ = nullptr;
    throw StoreError(fmt::format("cannot open the run store '{}': {}{}", path, message,
                                 read_only ? " (opened read-only: does the file exist?)"
                                           : " (check that the folder exists and is writable)"));
  }
  sqlite3_extended_result_codes(db_, 1);
  // Readers (a notebook) and the writer share the file; wait instead of failing on a brief lock.
  sqlite3_busy_timeout(db_, 10000);
}

SqliteDatabase::~SqliteDatabase() {
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

namespace {

// A damaged file is the user's to rescue: say so and how, instead of naming the statement that found it.
void fail_if_damaged(const std::string& path, int code, const std::string& message) {
  const int primary = code & 0xff;
  if (primary == SQLITE_NOTADB) {
    throw StoreError(fmt::format(
        "'{}' is not a SQLite database, or its header is damaged ({}): give the --db path of a run store, or a new "
        "path to start one; if it was a run store, keep a copy of the file and try `sqlite3 {} .recover | sqlite3 "
        "recovered.db`",
        path, message, path));
  }
  if (primary == SQLITE_CORRUPT) {
    throw StoreError(fmt::format(
        "the run store '{}' is damaged ({}): keep a copy of the file, start a new run with another --db path, and "
        "rescue what is left with `sqlite3 {} .recover | sqlite3 recovered.db` (then open recovered.db)",
        path, message, path));
  }
}

}  // namespace

void SqliteDatabase::fail(int code, const std::string& what) const {
  const char* message = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(code);
  fail_if_damaged(path_, code, message);
  throw StoreError(fmt::format("run store '{}': {} failed: {} (sqlite code {})", path_, what, message, code));
}

void SqliteDatabase::execute(const std::string& sql) {
  char* error = nullptr;
  const int code = sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error);
  if (code != SQLITE_OK) {
    std::string message = error != nullptr ? error : sqlite3_errstr(code);
    sqlite3_free(error);
    fail_if_damaged(path_, code, message);
    throw StoreError(fmt::format("run store '{}': executing `{}` failed: {} (sqlite code {})", path_,
                                 sql.substr(0, 120), message, code));
  }
}

SqliteStatement SqliteDatabase::prepare(const std::string& sql) {
  sqlite3_stmt* statement = nullptr;
  const int code = sqlite3_prepare_v2(db_, sql.c_str(), static_cast<int>(sql.size()), &statement, nullptr);
  if (code != SQLITE_OK) fail(code, fmt::format("preparing `{}`", sql.substr(0, 120)));
  return SqliteStatement(*this, statement, sql);
}

std::int64_t SqliteDatabase::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

int SqliteDatabase::changes() const { return sqlite3_changes(db_); }

SqliteStatement::SqliteStatement(SqliteDatabase& db, sqlite3_stmt* statement, std::string sql)
    : db_(&db), statement_(statement), sql_(std::move(sql)) {}

SqliteStatement::~SqliteStatement() {
  if (statement_ != nullptr) sqlite3_finalize(statement_);
}

SqliteStatement::SqliteStatement(SqliteStatement&& other) noexcept
    : db_(other.db_), statement_(std::exchange(other.statement_, nullptr)), sql_(std::move(other.sql_)) {}

SqliteStatement& SqliteStatement::bind(int index, std::int64_t value) {
  const int code = sqlite3_bind_int64(statement_, index, value);
  if (code != SQLITE_OK) db_->fail(code, fmt::format("binding parameter {} of `{}`", index, sql_.substr(0, 80)));
  return *this;
}

SqliteStatement& SqliteStatement::bind(int index, double value) {
  const int code = sqlite3_bind_double(statement_, index, value);
  if (code != SQLITE_OK) db_->fail(code, fmt::format("binding parameter {} of `{}`", index, sql_.substr(0, 80)));
  return *this;
}

SqliteStatement& SqliteStatement::bind(int index, const std::string& value) {
  const int code = sqlite3_bind_text(statement_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  if (code != SQLITE_OK) db_->fail(code, fmt::format("binding parameter {} of `{}`", index, sql_.substr(0, 80)));
  return *this;
}

SqliteStatement& SqliteStatement::bind_null(int index) {
  const int code = sqlite3_bind_null(statement_, index);
  if (code != SQLITE_OK) db_->fail(code, fmt::format("binding parameter {} of `{}`", index, sql_.substr(0, 80)));
  return *this;
}

bool SqliteStatement::step() {
  const int code = sqlite3_step(statement_);
  if (code == SQLITE_ROW) return true;
  if (code == SQLITE_DONE) return false;
  db_->fail(code, fmt::format("running `{}`", sql_.substr(0, 120)));
}

void SqliteStatement::run() {
  while (step()) {
  }
}

void SqliteStatement::reset() {
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
}

bool SqliteStatement::is_null(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }

std::int64_t SqliteStatement::int64(int column) const { return sqlite3_column_int64(statement_, column); }

double SqliteStatement::real(int column) const { return sqlite3_column_double(statement_, column); }

std::string SqliteStatement::text(int column) const {
  const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(statement_, column));
  if (data == nullptr) return {};
  return std::string(data, static_cast<std::size_t>(sqlite3_column_bytes(statement_, column)));
}

std::optional<std::int64_t> SqliteStatement::optional_int64(int column) const {
  if (is_null(column)) return std::nullopt;
  return int64(column);
}

SqliteTransaction::SqliteTransaction(SqliteDatabase& db) : db_(db) { db_.execute("BEGIN IMMEDIATE"); }

SqliteTransaction::~SqliteTransaction() {
  if (!done_) {
    // Nothing to report from a destructor: the exception that skipped commit() says what went wrong.
    sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
  }
}

void SqliteTransaction::commit() {
  db_.execute("COMMIT");
  done_ = true;
}

}  // namespace kernelsmith::detail
