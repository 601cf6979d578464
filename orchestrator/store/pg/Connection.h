// Private to store/: one libpqxx connection per calling thread and the transaction wrapper every store method
// uses. A method body runs inside withTx(), the one place a store transaction begins, and so behind the
// server fence (enterFence); libpqxx exceptions are caught here and become model::Failure values (broken
// connection -> Unavailable, and the thread's connection is dropped so the next call reconnects); store code
// signals its own outcomes by throwing StoreFailure, caught here too. Nothing thrown escapes.
#pragma once

#include "model/Failure.h"
#include "store/Store.h"

#include <pqxx/pqxx>

#include <functional>
#include <memory>
#include <optional>

namespace inm::store {

/// Thrown inside a transaction body to abort it with a code (caught by withTx).
struct StoreFailure {
  model::ErrorCode code;
  std::string message;
};

/// Opens a connection: the one place a store connection is opened (the server's per-thread ones, the
/// scheduler's, the compile queue's and the embedded mode's). Throws what libpqxx throws.
std::unique_ptr<pqxx::connection> openConnection(const std::string& conninfo);
/// `v` quoted as a libpq connection-string value ('…', with ' and \ escaped).
std::string connValue(const std::string& v);

/// This thread's connection to `db`, opened if absent or broken.
pqxx::connection& threadConnection(const DbSettings& db);
/// Forgets this thread's connection (after a failure).
void dropThreadConnection();

/// The first statement of every transaction (withTx): when this process is a server (setServerFence), fails
/// the transaction as Unavailable unless the database's owner row still names this server.
void enterFence(pqxx::work& tx, const DbSettings& db);

/// Runs `body` in one transaction on this thread's connection, fenced (enterFence); commits when it returns.
template <typename T>
llvm::Expected<T> withTx(const DbSettings& db, const char* what, const std::function<T(pqxx::work&)>& body);
llvm::Error withTxVoid(const DbSettings& db, const char* what, const std::function<void(pqxx::work&)>& body);

/// Translates the exception in flight (inside a catch) into an llvm::Error.
llvm::Error translateCurrentException(const char* what);

/// True when this thread holds a connection opened by an earlier call (it may have died since, e.g. across a
/// database restart, without libpq knowing until it is used).
bool hasThreadConnection();
/// Inside a catch around BEGIN: whether the failure in flight means a reused connection was dead, so one
/// retry on a fresh connection is safe (the body has not run; never used around a commit).
bool deadReusedConnection(bool reused);

template <typename T>
llvm::Expected<T> withTx(const DbSettings& db, const char* what, const std::function<T(pqxx::work&)>& body) {
  for (int attempt = 0;; ++attempt) {
    bool reused = attempt == 0 && hasThreadConnection();
    std::optional<pqxx::work> tx;
    try {
      tx.emplace(threadConnection(db)); // sends BEGIN: a dead connection fails here, before the body ran
    } catch (...) {
      if (deadReusedConnection(reused)) continue;
      return translateCurrentException(what);
    }
    try {
      enterFence(*tx, db);
      T out = body(*tx);
      tx->commit();
      return out;
    } catch (...) {
      return translateCurrentException(what);
    }
  }
}

/// Parses a json/jsonb column (NULL -> null).
nlohmann::json jsonField(const pqxx::field& f);

} // namespace inm::store
