// The router of an external agent's session (orchestrator/agent/AgentRouter.h). Frames from the scheduler are
// decoded on the io_context thread: `hello`/`heartbeat` are answered at once, `deploy`/`facts` requests are
// grouped by (version, agent) and handed to the pool once that pair's blueprint is known, `file`/`code`
// answers wake the coroutine or executor that asked. Results of the children go back as
// `result`/`facts_result` frames.
#include "AgentRouter.h"

// clang-format off
#include <utility> // first: std::exchange, used by asio's awaitable without including it
// clang-format on

#include "executor/Handler.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace inm::agent {

namespace asio = boost::asio;
using executor::ActionResult;
using executor::DeployRequest;
using executor::Json;
using local = asio::local::stream_protocol;

namespace {
constexpr const char* kBuiltin = "builtin-handlers";
} // namespace

AgentRouter::AgentRouter(asio::any_io_executor executor, executor::ExecutorOptions options,
                         std::string codeDir, std::function<void(const std::string&)> log)
    : executor_(executor), codeDir_(std::move(codeDir)), log_(std::move(log)),
      pool_(
          executor,
          [this](executor::ExecutorOptions o) {
            o.keyArguments = [this](const std::string& key) -> std::vector<std::string> {
              auto it = codeDirs_.find(key);
              if (it == codeDirs_.end()) return {};
              return {"--python-code", it->second};
            };
            return o;
          }(std::move(options)),
          [this](const std::string& hash, std::function<void(std::optional<std::string>)> reply) {
            asio::post(executor_, [this, hash, reply] { requestFile(hash, reply); });
          }) {
  pool_.setFileSink([this](const std::string& hash, const std::string& content) {
    asio::post(executor_, [this, hash, content] {
      send(Json{{"type", "put_file"}, {"hash", hash}, {"content_base64", executor::base64Encode(content)}});
    });
  });
}

AgentRouter::~AgentRouter() = default;

asio::awaitable<void> AgentRouter::run(local::socket socket) {
  socket_ = std::make_unique<local::socket>(std::move(socket));
  executor::FrameDecoder decoder;
  std::vector<char> buf(1 << 16);
  for (;;) {
    boost::system::error_code ec;
    size_t n =
        co_await socket_->async_read_some(asio::buffer(buf), asio::redirect_error(asio::use_awaitable, ec));
    if (ec) break;
    decoder.feed(buf.data(), n);
    try {
      while (auto msg = decoder.next()) onFrame(*msg);
    } catch (const std::exception& e) {
      log_(std::string("the scheduler broke the executor protocol: ") + e.what());
      break;
    }
  }
  closed_ = true;
  boost::system::error_code ignored;
  socket_->shutdown(local::socket::shutdown_both, ignored);
  closeWaits();
  // Stop the children and wait until they are reaped.
  asio::steady_timer done(executor_, std::chrono::steady_clock::time_point::max());
  bool finished = false;
  pool_.shutdown([&] {
    finished = true;
    done.cancel();
  });
  if (!finished) co_await done.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  socket_->close(ignored);
}

void AgentRouter::send(const Json& message) {
  if (closed_ || halfClosed_ || !socket_) return;
  writeQueue_.push_back(executor::encodeFrame(message));
  if (!writing_) writeNext();
}

void AgentRouter::writeNext() {
  if (writeQueue_.empty() || closed_) {
    writing_ = false;
    if (finishing_ && !closed_ && !halfClosed_ && socket_) {
      // Every answer is out: end our direction; the peer closes the connection when it has read them.
      halfClosed_ = true;
      boost::system::error_code ignored;
      socket_->shutdown(local::socket::shutdown_send, ignored);
    }
    return;
  }
  writing_ = true;
  // Everything queued leaves in one write.
  auto bytes = std::make_shared<std::string>();
  for (auto& frame : writeQueue_) *bytes += frame;
  writeQueue_.clear();
  asio::async_write(*socket_, asio::buffer(*bytes), [this, bytes](boost::system::error_code ec, size_t) {
    if (ec) {
      writing_ = false;
      boost::system::error_code ignored;
      if (socket_) socket_->shutdown(local::socket::shutdown_both, ignored); // the read loop ends next
      return;
    }
    writeNext();
  });
}

void AgentRouter::onFrame(Json& msg) {
  const std::string type = msg.value("type", std::string());
  if (type == "hello") {
    int version = msg.value("protocol", 0);
    if (version != executor::kProtocolVersion) {
      send(Json{{"type", "error"},
                {"message", "the agent speaks executor protocol version " +
                                std::to_string(executor::kProtocolVersion) + ", the scheduler asked for " +
                                std::to_string(version)}});
      throw std::runtime_error("protocol version mismatch (" + std::to_string(version) + ")");
    }
    send(Json{
        {"type", "hello"}, {"protocol", executor::kProtocolVersion}, {"pid", static_cast<int>(getpid())}});
  } else if (type == "heartbeat") {
    send(Json{{"type", "heartbeat"}, {"seq", msg.value("seq", 0)}});
  } else if (type == "file" || type == "code") {
    uint64_t id = msg.value("request", uint64_t(0));
    if (type == "file") {
      auto it = fileWaits_.find(id);
      if (it == fileWaits_.end()) return;
      auto reply = std::move(it->second);
      fileWaits_.erase(it);
      std::optional<std::string> content;
      if (msg.value("found", false)) {
        try {
          content = executor::base64Decode(msg.value("content_base64", std::string()));
        } catch (const std::exception& e) {
          log_(std::string("a malformed file answer: ") + e.what());
        }
      }
      reply(std::move(content));
    } else {
      auto it = codeWaits_.find(id);
      if (it == codeWaits_.end()) return;
      auto reply = std::move(it->second);
      codeWaits_.erase(it);
      reply(msg.contains("files") ? msg["files"] : Json(msg.value("error", std::string("no answer"))));
    }
  } else if (type == "deploy" || type == "facts") {
    Json& reqs = msg["requests"];
    if (!reqs.is_array()) throw std::runtime_error("\"" + type + "\" needs a requests array");
    bool facts = type == "facts";
    std::vector<DeployRequest> requests;
    for (Json& rj : reqs) {
      std::string actionId = rj.is_object() ? rj.value("action_id", "") : "";
      std::string resourceId = rj.is_object() ? rj.value("id", "") : "";
      open_[{facts, actionId}] = resourceId;
      if (draining_) {
        answer(facts, ActionResult::unavailable(actionId, resourceId,
                                                "the external agent is shutting down (" + drainReason_ +
                                                    ") and takes no new work"));
        continue;
      }
      try {
        requests.push_back(DeployRequest::fromJson(std::move(rj)));
      } catch (const std::exception& e) {
        answer(facts, ActionResult::unavailable(actionId, resourceId, e.what()));
      }
    }
    if (!requests.empty()) dispatch(facts, std::move(requests));
  } else if (type == "shutdown") {
    drain(shutdownGrace_, "the scheduler asked this agent to shut down its session");
  } else {
    send(Json{{"type", "error"}, {"message", "executor protocol: unknown frame type '" + type + "'"}});
  }
}

void AgentRouter::dispatch(bool facts, std::vector<DeployRequest> requests) {
  std::map<std::string, std::vector<DeployRequest>> ready; // by blueprint key
  for (auto& r : requests) {
    executor::Resource res;
    try {
      res = executor::Resource::fromId(r.resourceId, Json::object());
    } catch (const std::exception& e) {
      answer(facts, ActionResult::unavailable(r.actionId, r.resourceId, e.what()));
      continue;
    }
    auto k = std::make_pair(int(res.version), res.agent);
    if (auto it = blueprints_.find(k); it != blueprints_.end()) {
      ready[it->second].push_back(std::move(r));
      continue;
    }
    auto& waiting = waiting_[k];
    bool first = waiting.empty();
    waiting.push_back(Waiting{facts, std::move(r)});
    if (!first) continue;
    asio::co_spawn(executor_, resolve(k.first, k.second),
                   [this, self = shared_from_this(), k](std::exception_ptr e, Blueprint b) {
                     if (e) {
                       try {
                         std::rethrow_exception(e);
                       } catch (const std::exception& x) {
                         b = Blueprint(std::in_place_index<1>, std::string("internal error: ") + x.what());
                       }
                     }
                     std::vector<Waiting> waiting = std::move(waiting_[k]);
                     waiting_.erase(k);
                     if (b.index() == 0)
                       blueprints_[k] = std::get<0>(b);
                     else
                       log_(std::get<1>(b));
                     std::map<std::string, std::vector<DeployRequest>> byKind[2];
                     for (auto& w : waiting) {
                       if (!isOpen(w.facts, w.request.actionId)) continue; // answered by a drain's grace
                       if (b.index() == 1)
                         answer(w.facts, ActionResult::unavailable(w.request.actionId, w.request.resourceId,
                                                                   std::get<1>(b)));
                       else
                         byKind[w.facts][std::get<0>(b)].push_back(std::move(w.request));
                     }
                     for (int f = 0; f < 2; ++f)
                       for (auto& [key, reqs] : byKind[f]) runOn(key, f == 1, std::move(reqs));
                   });
  }
  for (auto& [key, reqs] : ready) runOn(key, facts, std::move(reqs));
}

void AgentRouter::runOn(const std::string& key, bool facts, std::vector<DeployRequest> requests) {
  auto self = shared_from_this();
  auto onResult = [self, facts](const ActionResult& r) { self->answer(facts, r); };
  if (facts)
    pool_.facts(key, std::move(requests), onResult);
  else
    pool_.deploy(key, std::move(requests), onResult);
}

void AgentRouter::answer(bool facts, const ActionResult& result) {
  // One answer per request: a late result of an action the drain already answered is dropped.
  auto it = open_.find({facts, result.actionId});
  if (it == open_.end()) return;
  open_.erase(it);
  Json j = result.toJson();
  if (facts) j["type"] = "facts_result";
  send(j);
  if (draining_ && open_.empty()) finishDrain();
}

void AgentRouter::drain(std::chrono::milliseconds grace, std::string reason) {
  if (draining_ || closed_) return;
  draining_ = true;
  drainReason_ = std::move(reason);
  log_("stopping (" + drainReason_ + "): no new work; " + std::to_string(open_.size()) +
       " accepted action(s) get up to " + std::to_string(grace.count() / 1000.0).substr(0, 5) +
       " s to finish");
  if (open_.empty()) return finishDrain();
  graceTimer_ = std::make_unique<asio::steady_timer>(executor_, grace);
  graceTimer_->async_wait([this, self = shared_from_this(), grace](boost::system::error_code ec) {
    if (ec || finishing_) return;
    std::string why = "the external agent stopped (" + drainReason_ +
                      ") before this action finished within the shutdown grace period of " +
                      std::to_string(grace.count()) + " ms";
    auto open = open_;
    for (auto& [key, resourceId] : open) {
      log_("reporting " + resourceId + " (action " + key.second + ") unavailable: " + why);
      answer(key.first, ActionResult::unavailable(key.second, resourceId, why));
    }
    finishDrain();
  });
}

void AgentRouter::finishDrain() {
  if (finishing_) return;
  finishing_ = true;
  if (graceTimer_) graceTimer_->cancel();
  // The server went first: what was answered after that never left (the end of the scheduler's session
  // reports those actions `unavailable`).
  if (closed_)
    log_("every accepted action is answered, but the connection closed during the drain: answers given after "
         "that were not delivered");
  else
    log_("every accepted action is answered; closing the session");
  // `bye` first: the scheduler sends no more work, so no request is left unanswered on the wire.
  send(Json{{"type", "bye"}});
  if (!writing_) writeNext(); // an empty queue half-closes at once
}

void AgentRouter::requestFile(const std::string& hash,
                              std::function<void(std::optional<std::string>)> reply) {
  if (closed_) return reply(std::nullopt);
  uint64_t id = ++nextRequest_;
  fileWaits_[id] = std::move(reply);
  send(Json{{"type", "get_file"}, {"request", id}, {"hash", hash}});
}

void AgentRouter::closeWaits() {
  auto files = std::move(fileWaits_);
  auto codes = std::move(codeWaits_);
  fileWaits_.clear();
  codeWaits_.clear();
  for (auto& [id, reply] : files) reply(std::nullopt);
  for (auto& [id, reply] : codes) reply(Json("the connection to the server closed"));
}

namespace {
/// One answer awaited by a coroutine: the callback stores the value and wakes the waiter through the timer.
/// (GCC 12 mishandles lambdas captured in an async_initiate inside co_await, so no async_initiate here.)
template <typename T>
struct Awaited {
  explicit Awaited(asio::any_io_executor ex) : timer(ex, std::chrono::steady_clock::time_point::max()) {}
  asio::steady_timer timer;
  std::optional<T> value;
  void set(T v) {
    value = std::move(v);
    timer.cancel();
  }
  asio::awaitable<T> get() {
    boost::system::error_code ec;
    while (!value) co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    co_return std::move(*value);
  }
};
} // namespace

asio::awaitable<std::optional<std::string>> AgentRouter::fetchFile(const std::string& hash) {
  auto slot = std::make_shared<Awaited<std::optional<std::string>>>(executor_);
  requestFile(hash, [slot](std::optional<std::string> content) { slot->set(std::move(content)); });
  co_return co_await slot->get();
}

asio::awaitable<Json> AgentRouter::fetchCode(int version, const std::string& agent) {
  auto slot = std::make_shared<Awaited<Json>>(executor_);
  if (closed_) co_return Json("the connection to the server closed");
  uint64_t id = ++nextRequest_;
  codeWaits_[id] = [slot](Json j) { slot->set(std::move(j)); };
  send(Json{{"type", "get_code"}, {"request", id}, {"version", version}, {"agent", agent}});
  co_return co_await slot->get();
}

asio::awaitable<AgentRouter::Blueprint> AgentRouter::resolve(int version, std::string agent) {
  auto self = shared_from_this(); // the router outlives this coroutine
  auto fail = [&](const std::string& why) { return Blueprint(std::in_place_index<1>, why); };
  std::string what = "the handler code of version " + std::to_string(version) + " for agent " + agent;
  Json files = co_await fetchCode(version, agent);
  if (!files.is_array())
    co_return fail("cannot get " + what +
                   " from the server: " + (files.is_string() ? files.get<std::string>() : files.dump()));
  if (files.empty()) co_return Blueprint(std::in_place_index<0>, kBuiltin);
  std::string listing;
  for (const Json& f : files) {
    if (!f.is_object() || !f.value("module", Json()).is_string() || !f.value("path", Json()).is_string() ||
        !f.value("hash", Json()).is_string())
      co_return fail("the server sent a malformed file entry for " + what + ": " + f.dump());
    listing += f["module"].get<std::string>() + "\t" + f["path"].get<std::string>() + "\t" +
               f["hash"].get<std::string>() + "\n";
  }
  std::string key = "py-" + executor::sha1Hex(listing);
  if (codeDirs_.count(key)) co_return Blueprint(std::in_place_index<0>, key);
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path target = fs::path(codeDir_) / key;
  // A tree of the same blueprint (the hash of every file's name and content) from an earlier session.
  if (fs::is_directory(target, ec)) {
    codeDirs_[key] = target.string();
    co_return Blueprint(std::in_place_index<0>, key);
  }
  fs::path tmp = fs::path(codeDir_) / (key + ".tmp-" + std::to_string(::getpid()));
  fs::remove_all(tmp, ec);
  auto failAndClean = [&](const std::string& why) {
    fs::remove_all(tmp, ec);
    return fail(why);
  };
  for (const Json& f : files) {
    std::string module = f["module"], path = f["path"], hash = f["hash"];
    fs::path rel = fs::path(path).lexically_normal();
    bool bad = module.empty() || module.find('/') != std::string::npos || module == "." || module == ".." ||
               path.empty() || rel.is_absolute() || rel.string().rfind("..", 0) == 0;
    if (bad) co_return failAndClean("file '" + path + "' of module " + module + " has no safe relative path");
    std::optional<std::string> content = co_await fetchFile(hash);
    if (!content)
      co_return failAndClean("the handler code of module " + module + " is missing on the server: file " +
                             path + " (sha1 " + hash + ") cannot be fetched");
    if (std::string actual = executor::sha1Hex(*content); actual != hash)
      co_return failAndClean("the handler code of module " + module + " is corrupt: file " + path +
                             " has sha1 " + actual + ", expected " + hash);
    fs::path out = tmp / module / rel;
    fs::create_directories(out.parent_path(), ec);
    if (ec)
      co_return failAndClean("cannot lay out module " + module + " under " + codeDir_ + ": " + ec.message());
    std::ofstream o(out, std::ios::binary | std::ios::trunc);
    o << *content;
    o.close();
    if (!o) co_return failAndClean("writing " + out.string() + " (module " + module + ") failed");
  }
  fs::rename(tmp, target, ec);
  if (ec && !fs::is_directory(target))
    co_return failAndClean("cannot move the handler code into " + target.string() + ": " + ec.message());
  fs::remove_all(tmp, ec);
  codeDirs_[key] = target.string();
  log_("laid out " + what + " as " + target.string());
  co_return Blueprint(std::in_place_index<0>, key);
}

} // namespace inm::agent
