// Private to store/: the embedded migrations (generated EmbeddedMigrations.cpp) and their runner.
#pragma once

#include <string>
#include <vector>

namespace inm::store {

/// One migrations/NNN_name.sql file.
struct Migration {
  int number;
  const char* name;
  const char* sql;
};

/// Every embedded migration, sorted by number.
extern const std::vector<Migration> kMigrations;

} // namespace inm::store
