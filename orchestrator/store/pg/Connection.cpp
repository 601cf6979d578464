// Per-thread connections and exception translation for the pg store (see Connection.h).
#include "Connection.h"

#include <memory>

namespace inm::store {

namespace {
thread_local std::unique_ptr<pqxx::connection> tlsConnection;
ConnectionGate gate;    // set once before any store call (setConnectionGate)
std::string fenceOwner; // set once, after the server lock is claimed (setServerFence)
} // namespace

std::string connValue(const std::string& v) {
  std::string out = "'";
  for (char c : v) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

std::unique_ptr<pqxx::connection> openConnection(const std::string& conninfo) {
  return std::make_unique<pqxx::connection>(conninfo);
}

std::string DbSettings::connectionString() const {
  std::string s = "host=" + connValue(host) + " port=" + std::to_string(port) + " dbname=" + connValue(name) +
                  " user=" + connValue(username) +
                  " connect_timeout=" + std::to_string(connectTimeoutSeconds) +
                  " application_name='inmanta-server'";
  if (!password.empty()) s += " password=" + connValue(password);
  return s;
}

pqxx::connection& threadConnection(const DbSettings& db) {
  if (tlsConnection && !tlsConnection->is_open()) tlsConnection.reset();
  if (!tlsConnection) {
    auto fresh = openConnection(db.connectionString());
    // A new connection (the first, or one after a database restart) is used only once the gate agrees: the
    // server's lock must be ours again before anything is written (docs/server.md "Life cycle").
    if (gate) {
      if (std::optional<std::string> refused = gate())
        throw StoreFailure{model::ErrorCode::Unavailable, *refused};
    }
    tlsConnection = std::move(fresh);
  }
  return *tlsConnection;
}

void setConnectionGate(ConnectionGate g) { gate = std::move(g); }

void setServerFence(std::string owner) { fenceOwner = std::move(owner); }

void enterFence(pqxx::work& tx, const DbSettings& db) {
  if (fenceOwner.empty()) return;
  // Shared fence lock + owner check (migration 012): a server that claimed the database after us waited for
  // this transaction, or this one sees its claim and writes nothing.
  if (!tx.exec_params("SELECT inm_server_fence($1)", fenceOwner)[0][0].as<bool>())
    throw StoreFailure{model::ErrorCode::Unavailable, "another inmanta server took database '" + db.name +
                                                          "' while it restarted; this server stops"};
}

void dropThreadConnection() { tlsConnection.reset(); }

llvm::Error translateCurrentException(const char* what) {
  try {
    throw;
  } catch (const StoreFailure& f) {
    return model::fail(f.code, f.message);
  } catch (const pqxx::broken_connection& e) {
    dropThreadConnection();
    return model::fail(model::ErrorCode::Unavailable,
                       std::string("the database is unavailable (") + what + "): " + e.what());
  } catch (const pqxx::in_doubt_error& e) {
    dropThreadConnection();
    return model::fail(model::ErrorCode::Unavailable,
                       std::string("the database connection was lost (") + what + "): " + e.what());
  } catch (const pqxx::sql_error& e) {
    // A server that went away mid-statement shows up as an sql_error on a closed connection.
    if (tlsConnection && !tlsConnection->is_open()) {
      dropThreadConnection();
      return model::fail(model::ErrorCode::Unavailable,
                         std::string("the database is unavailable (") + what + "): " + e.what());
    }
    std::string state = e.sqlstate();
    if (state.rfind("08", 0) == 0 || state == "57P01" || state == "57P02" || state == "57P03") {
      dropThreadConnection();
      return model::fail(model::ErrorCode::Unavailable,
                         std::string("the database is unavailable (") + what + "): " + e.what());
    }
    if (state == "23505")
      return model::fail(model::ErrorCode::Conflict, std::string(what) + ": already exists");
    if (state == "22P02" || state == "23503" || state == "23502" || state.rfind("54", 0) == 0 ||
        state.rfind("22", 0) == 0)
      return model::fail(model::ErrorCode::BadRequest, std::string(what) + ": " + e.what());
    return model::fail(model::ErrorCode::Internal, std::string(what) + ": " + e.what());
  } catch (const pqxx::failure& e) {
    dropThreadConnection();
    return model::fail(model::ErrorCode::Unavailable,
                       std::string("the database is unavailable (") + what + "): " + e.what());
  } catch (const nlohmann::json::exception& e) {
    return model::fail(model::ErrorCode::Internal, std::string(what) + ": " + e.what());
  } catch (const std::exception& e) {
    return model::fail(model::ErrorCode::Internal, std::string(what) + ": " + e.what());
  }
}

bool hasThreadConnection() { return tlsConnection != nullptr; }

bool deadReusedConnection(bool reused) {
  if (!reused) return false;
  try {
    throw;
  } catch (const pqxx::in_doubt_error&) {
    return false; // the commit may have happened: never redo it
  } catch (const pqxx::sql_error&) {
    if (tlsConnection && !tlsConnection->is_open()) {
      dropThreadConnection();
      return true;
    }
    return false;
  } catch (const pqxx::broken_connection&) {
    dropThreadConnection();
    return true;
  } catch (const pqxx::failure&) {
    if (tlsConnection && !tlsConnection->is_open()) {
      dropThreadConnection();
      return true;
    }
    return false;
  } catch (...) {
    return false;
  }
}

llvm::Error withTxVoid(const DbSettings& db, const char* what, const std::function<void(pqxx::work&)>& body) {
  // The same transaction, retry and translation as withTx; only the value differs.
  llvm::Expected<bool> done = withTx<bool>(db, what, [&](pqxx::work& tx) {
    body(tx);
    return true;
  });
  return done ? llvm::Error::success() : done.takeError();
}

nlohmann::json jsonField(const pqxx::field& f) {
  if (f.is_null()) return nullptr;
  return nlohmann::json::parse(f.c_str());
}

} // namespace inm::store
