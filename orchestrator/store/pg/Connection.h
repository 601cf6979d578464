// Private to store/: one libpqxx connection per calling thread and the transaction wrapper every store method
// uses. A method body runs inside withTx(); libpqxx exceptions are caught here and become model::Failure
// values (broken connection -> Unavailable, and the thread's connection is dropped so the next call
// reconnects); store code signals its own outcomes by throwing StoreFailure, caught here too. Nothing thrown
// escapes.
#pragma once

#include "model/Failure.h"
#include "store/Store.h"

#include <pqxx/pqxx>

#include <functional>

namespace inm::store {

/// Thrown inside a transaction body to abort it with a code (caught by withTx).
struct StoreFailure {
  model::ErrorCode code;
  std::string message;
};

/// This thread's connection to `db`, opened if absent or broken.
pqxx::connection& threadConnection(const DbSettings& db);
/// Forgets this thread's connection (after a failure).
void dropThreadConnection();

/// Runs `body` in one transaction on this thread's connection; commits when it returns.
template <typename T>
llvm::Expected<T> withTx(const DbSettings& db, const char* what, const std::function<T(pqxx::work&)>& body);
llvm::Error withTxVoid(const DbSettings& db, const char* what, const std::function<void(pqxx::work&)>& body);

/// Translates the exception in flight (inside a catch) into an llvm::Error.
llvm::Error translateCurrentException(const char* what);

template <typename T>
llvm::Expected<T> withTx(const DbSettings& db, const char* what, const std::function<T(pqxx::work&)>& body) {
  try {
    pqxx::work tx{threadConnection(db)};
    T out = body(tx);
    tx.commit();
    return out;
  } catch (...) {
    return translateCurrentException(what);
  }
}

/// Parses a json/jsonb column (NULL -> null).
nlohmann::json jsonField(const pqxx::field& f);

} // namespace inm::store
