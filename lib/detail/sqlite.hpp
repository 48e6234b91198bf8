// Thin RAII wrappers over the sqlite3 C API: a connection, prepared statements, transactions. Every
// failure throws StoreError with SQLite's message, the statement and the database path.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace kernelsmith::detail {

class SqliteStatement;

class SqliteDatabase {
 public:
  /// Opens (creating when `create`) the file; read_only opens it for reading only.
  SqliteDatabase(const std::string& path, bool read_only, bool create);
  ~SqliteDatabase();
  SqliteDatabase(const SqliteDatabase&) = delete;
  SqliteDatabase& operator=(const SqliteDatabase&) = delete;

  /// Runs one or more statements with no results.
  void execute(const std::string& sql);
  SqliteStatement prepare(const std::string& sql);
  std::int64_t last_insert_rowid() const;
  int changes() const;
  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_; }
  /// Throws StoreError for a failed call `what` with result code `code`.
  [[noreturn]] void fail(int code, const std::string& what) const;

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

/// A prepared statement: bind with 1-based indices, step() until it returns false, read columns.
class SqliteStatement {
 public:
  SqliteStatement(SqliteDatabase& db, sqlite3_stmt* statement, std::string sql);
  ~SqliteStatement();
  SqliteStatement(SqliteStatement&& other) noexcept;
  SqliteStatement& operator=(SqliteStatement&&) = delete;
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  SqliteStatement& bind(int index, std::int64_t value);
  SqliteStatement& bind(int index, int value) { return bind(index, static_cast<std::int64_t>(value)); }
  SqliteStatement& bind(int index, double value);
  SqliteStatement& bind(int index, const std::string& value);
  SqliteStatement& bind(int index, const char* value) { return bind(index, std::string(value)); }
  SqliteStatement& bind_null(int index);
  template <typename T>
  SqliteStatement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind_null(index);
  }

  /// True when a row is available; false when done. Throws StoreError on failure.
  bool step();
  /// Runs a statement that returns no rows.
  void run();
  void reset();

  bool is_null(int column) const;
  std::int64_t int64(int column) const;
  double real(int column) const;
  std::string text(int column) const;
  std::optional<std::int64_t> optional_int64(int column) const;

 private:
  SqliteDatabase* db_;
  sqlite3_stmt* statement_;
  std::string sql_;
};

/// BEGIN IMMEDIATE ... COMMIT; rolls back when destroyed without commit().
class SqliteTransaction {
 public:
  explicit SqliteTransaction(SqliteDatabase& db);
  ~SqliteTransaction();
  SqliteTransaction(const SqliteTransaction&) = delete;
  SqliteTransaction& operator=(const SqliteTransaction&) = delete;
  void commit();

 private:
  SqliteDatabase& db_;
  bool done_ = false;
};

}  // namespace kernelsmith::detail
