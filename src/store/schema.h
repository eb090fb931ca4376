// The database schema, its version check and its creation (PRAGMA user_version + meta table).
#pragma once
#include <string>

#include "sqlite.h"

namespace wattlab::store_detail {

inline constexpr int kSchemaVersion = 2;

// Brings an opened file to a usable state: checks its version (a newer one is an ErrorKind::schema
// error and the file is not touched), and in read-write mode switches it to WAL and creates the
// schema in an empty file. `wattlab_version` is recorded in meta when the schema is created.
Status prepare_schema(sqlite::Db& db, bool read_only, const std::string& wattlab_version);

// window_domains' value columns after (window_row, position), in table order.
std::string window_domain_columns();
inline constexpr int kWindowDomainColumnCount = 13 + 14 + 1;

// Version 2 added run_tags, window_counts and window_labels. A version-1 file opened read-only
// lacks them: loaders ask this first and read nothing from them then.
bool has_annotation_tables(sqlite::Db& db);

// The DDL of the current version, for tests and docs.
std::string schema_sql();

}  // namespace wattlab::store_detail
