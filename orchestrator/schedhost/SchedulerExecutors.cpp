// The executors of `inmanta scheduler` (see SchedulerExecutors.h): ProcessExecutor groups a batch by code
// blueprint and sends it to executor processes or external agents' sessions, laying out each blueprint's
// Python code once under the state dir; InProcessNullExecutor answers NullResource work in-process.
// Invariant: every submitted work item gets exactly one result, delivered through an io_context post (an
// unavailable executor or unreadable code answers `unavailable`).
#include "SchedulerExecutors.h"

#include "model/AgentUri.h"
#include "model/Ids.h"

#include <boost/asio/post.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace asio = boost::asio;

namespace inm::schedhost {

using namespace inm::scheduler;

InProcessNullExecutor::InProcessNullExecutor(asio::io_context& ioc,
                                             std::function<void(std::vector<WorkResult>)> deliver)
    : ioc_(ioc), deliver_(std::move(deliver)) {
  if (const char* d = std::getenv("INM_NULL_EXECUTOR_DELAY_MS")) delayMs_ = std::atoi(d);
}

void InProcessNullExecutor::submit(std::vector<WorkItem> batch) {
  std::vector<WorkResult> results;
  results.reserve(batch.size());
  for (const auto& w : batch) results.push_back(run(w));
  if (delayMs_ > 0) {
    auto timer = std::make_shared<asio::steady_timer>(ioc_, std::chrono::milliseconds(delayMs_));
    timer->async_wait(
        [this, timer, results = std::move(results)](auto) mutable { deliver_(std::move(results)); });
  } else {
    asio::post(ioc_, [this, results = std::move(results)]() mutable { deliver_(std::move(results)); });
  }
}

WorkResult InProcessNullExecutor::run(const WorkItem& w) {
  WorkResult r;
  r.taskId = w.taskId;
  std::string type = w.resourceId.substr(0, w.resourceId.find('['));
  if (type != "std::testing::NullResource") {
    r.status = model::spelling(model::DeployStatus::Unavailable);
    r.messages.push_back(scheduler::logLine(
        "error", "no executor for resource type " + type +
                     " (the in-process test double only runs std::testing::NullResource)"));
    return r;
  }
  if (w.kind == TaskKind::DryRun) {
    r.status = model::spelling(model::DeployStatus::Dry);
    return r;
  }
  if (w.kind == TaskKind::RefreshFact) {
    r.status = model::spelling(model::DeployStatus::Deployed);
    return r;
  }
  std::string why;
  if (auto skip = gateDependencies(w.dependencyStates, &why)) {
    r.status = *skip;
    r.messages.push_back(scheduler::logLine("warning", why));
    return r;
  }
  r.messages.push_back(scheduler::logLine("debug", "Calling read_resource"));
  nlohmann::json parsed;
  const nlohmann::json* attrs = w.attributes.get();
  if (!attrs && w.attributesText) {
    parsed = nlohmann::json::parse(*w.attributesText, nullptr, false);
    attrs = &parsed;
  }
  bool fail = attrs && attrs->is_object() && attrs->value("fail", false);
  if (fail) {
    r.status = model::spelling(model::DeployStatus::Failed);
    r.messages.push_back(scheduler::logLine("error", "An error occurred during deployment of " +
                                                         w.resourceId + " (NullResource with fail=true)"));
  } else {
    r.status = model::spelling(model::DeployStatus::Deployed);
  }
  // As text, like a real executor's lines (WorkResult::messagesText): the finish waits for the writer
  // without a tree per line.
  if (!r.messages.empty()) {
    r.messagesText = r.messages.dump();
    r.messages = nlohmann::json::array();
  }
  return r;
}

ProcessExecutor::ProcessExecutor(asio::io_context& ioc, executor::ExecutorOptions options,
                                 executor::FileProvider files,
                                 std::function<void(std::vector<WorkResult>)> deliver, CodeSource code)
    : ioc_(ioc), code_(std::move(code)),
      pool_(ioc.get_executor(), withKeyArguments(std::move(options)), std::move(files)),
      deliver_(std::move(deliver)) {}

void ProcessExecutor::submit(std::vector<WorkItem> batch) {
  std::map<std::string, std::vector<executor::DeployRequest>> deploys, facts; // by blueprint
  std::vector<executor::ActionResult> failed;
  std::vector<executor::DeployRequest> agentConfigs;
  std::map<std::shared_ptr<executor::ExecutorProcess>, std::vector<executor::DeployRequest>> remoteDeploys,
      remoteFacts;
  for (const auto& w : batch) {
    executor::DeployRequest r;
    r.actionId = w.actionId;
    r.resourceId = model::resourceVersionId(w.resourceId, w.version);
    if (w.attributes)
      r.attributes = *w.attributes;
    else if (w.attributesText)
      r.attributesText = w.attributesText; // sent verbatim: no parse, copy and dump per resource
    r.reason = w.reason;
    for (const auto& [id, state] : w.dependencyStates) r.dependencies[id] = state;
    r.dependencyChanged = w.dependencyChanged;
    r.dryRun = w.kind == TaskKind::DryRun;
    taskOf_[w.actionId] = w.taskId;
    if (writeAgentUri_ && w.kind != TaskKind::RefreshFact &&
        w.resourceId.rfind("std::AgentConfig[", 0) == 0) {
      agentConfigs.push_back(std::move(r));
      continue;
    }
    std::string error;
    if (externals_ && externals_->isExternal(w.agent)) {
      if (auto s = externals_->session(w.agent, &error))
        (w.kind == TaskKind::RefreshFact ? remoteFacts : remoteDeploys)[s].push_back(std::move(r));
      else
        failed.push_back(executor::ActionResult::unavailable(r.actionId, r.resourceId, error));
      continue;
    }
    auto key = blueprintOf(w.version, w.agent, &error);
    if (key) key = executorKey(*key, w.agent, &error);
    if (!key) {
      failed.push_back(executor::ActionResult::unavailable(r.actionId, r.resourceId, error));
      continue;
    }
    (w.kind == TaskKind::RefreshFact ? facts : deploys)[*key].push_back(std::move(r));
  }
  auto onResult = [this](const executor::ActionResult& a) {
    auto it = taskOf_.find(a.actionId);
    if (it == taskOf_.end()) return;
    WorkResult r;
    r.taskId = it->second;
    taskOf_.erase(it);
    r.status = a.status;
    r.change = a.change;
    r.changes = a.changes;
    r.messages = a.logs;
    r.messagesText = a.logsText; // the executor's lines as received: never parsed in the scheduler
    r.facts = a.facts;
    // Results of one round trip arrive back to back: hand them to the state machine together.
    pending_.push_back(std::move(r));
    if (!flushQueued_) {
      flushQueued_ = true;
      asio::post(ioc_, [this] {
        flushQueued_ = false;
        std::vector<WorkResult> out;
        out.swap(pending_);
        deliver_(std::move(out));
      });
    }
  };
  for (const auto& f : failed) onResult(f);
  for (const auto& r : agentConfigs) applyAgentConfig(r, onResult);
  for (auto& [key, reqs] : deploys) pool_.deploy(key, std::move(reqs), onResult);
  for (auto& [session, reqs] : remoteDeploys) session->deploy(std::move(reqs), onResult);
  for (auto& [session, reqs] : remoteFacts) session->facts(std::move(reqs), onResult);
  for (auto& [key, reqs] : facts) {
    std::string error;
    if (auto p = pool_.get(key, &error)) {
      p->facts(std::move(reqs), onResult);
    } else {
      for (const auto& f : reqs)
        onResult(executor::ActionResult::unavailable(f.actionId, f.resourceId, error));
    }
  }
}

void ProcessExecutor::applyAgentConfig(const executor::DeployRequest& r,
                                       std::function<void(const executor::ActionResult&)> done) {
  executor::ActionResult a;
  a.actionId = r.actionId;
  a.resourceId = r.resourceId;
  auto fail = [&](const std::string& why) {
    a.status = model::spelling(model::DeployStatus::Failed);
    a.logs.push_back(scheduler::logLine("error", "std::AgentConfig " + r.resourceId + ": " + why));
    done(a);
  };
  nlohmann::json attrs =
      r.attributesText ? nlohmann::json::parse(*r.attributesText, nullptr, false) : r.attributes;
  if (!attrs.is_object() || !attrs.contains("agentname") || !attrs["agentname"].is_string())
    return fail("it has no agentname");
  std::string agent = attrs["agentname"].get<std::string>();
  bool purged = attrs.value("purged", false);
  std::string uri =
      attrs.contains("uri") && attrs["uri"].is_string() ? attrs["uri"].get<std::string>() : "local:";
  if (!purged)
    if (auto parsed = model::parseAgentUri(uri); !parsed) return fail(llvm::toString(parsed.takeError()));
  auto it = agentUris_.find(agent);
  nlohmann::json current = it == agentUris_.end() ? nlohmann::json() : nlohmann::json(it->second);
  nlohmann::json desired = purged ? nlohmann::json() : nlohmann::json(uri);
  bool dry = r.dryRun;
  if (current == desired) {
    a.status = model::spelling(dry ? model::DeployStatus::Dry : model::DeployStatus::Deployed);
    return done(a);
  }
  if (current.is_null() || desired.is_null())
    a.changes["purged"] = {{"current", current.is_null()}, {"desired", desired.is_null()}};
  else
    a.changes["uri"] = {{"current", current}, {"desired", desired}};
  if (dry) {
    a.status = model::spelling(model::DeployStatus::Dry);
    return done(a);
  }
  a.change = model::spelling(desired.is_null()   ? model::Change::Purged
                             : current.is_null() ? model::Change::Created
                                                 : model::Change::Updated);
  std::optional<std::string> value = purged ? std::nullopt : std::optional<std::string>(uri);
  writeAgentUri_(agent, value, [this, a, agent, value, done](std::string error) mutable {
    asio::post(ioc_, [this, a = std::move(a), agent, value, done, error]() mutable {
      if (!error.empty()) {
        a.status = model::spelling(model::DeployStatus::Failed);
        a.change = model::spelling(model::Change::NoChange);
        a.logs.push_back(scheduler::logLine("error", "std::AgentConfig " + a.resourceId + ": " + error));
      } else {
        a.status = model::spelling(model::DeployStatus::Deployed);
        a.logs.push_back(scheduler::logLine("info", "autostart_agent_map: agent " + agent + " -> " +
                                                        (value ? *value : std::string("(removed)"))));
        if (value)
          agentUris_[agent] = *value;
        else
          agentUris_.erase(agent);
      }
      done(a);
    });
  });
}

void ProcessExecutor::shutdown(std::function<void()> done) {
  retireTimer_.cancel();
  retention_ = std::chrono::milliseconds(0);
  pool_.shutdown(std::move(done));
}

void ProcessExecutor::retireIdle(std::chrono::milliseconds retention,
                                 std::function<void(const std::string&)> log) {
  retention_ = retention;
  log_ = std::move(log);
  armRetirement();
}

void ProcessExecutor::armRetirement() {
  if (retention_.count() <= 0) return;
  retireTimer_.expires_after(std::max(std::chrono::milliseconds(50), retention_ / 2));
  retireTimer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || retention_.count() <= 0) return;
    if (size_t n = pool_.stopIdle(retention_); n > 0 && log_)
      log_("stopped " + std::to_string(n) + " executor(s) idle for " + std::to_string(retention_.count()) +
           " ms");
    armRetirement();
  });
}

executor::ExecutorOptions ProcessExecutor::withKeyArguments(executor::ExecutorOptions o) {
  o.keyArguments = [this](const std::string& key) -> std::vector<std::string> {
    std::vector<std::string> args;
    auto remote = remoteKeys_.find(key);
    auto it = codeDirs_.find(remote == remoteKeys_.end() ? key : remote->second.first);
    if (it != codeDirs_.end()) args = {"--python-code", it->second};
    if (remote != remoteKeys_.end()) args.insert(args.end(), {"--agent-uri", remote->second.second});
    return args;
  };
  return o;
}

std::optional<std::string> ProcessExecutor::executorKey(const std::string& blueprint,
                                                        const std::string& agent, std::string* error) {
  auto it = agentUris_.find(agent);
  if (it == agentUris_.end()) return blueprint;
  auto uri = model::parseAgentUri(it->second);
  if (!uri) {
    *error = "agent " + agent + " in setting autostart_agent_map: " + llvm::toString(uri.takeError());
    return std::nullopt;
  }
  if (uri->local()) return blueprint;
  std::string key = blueprint + "|" + agent + "|" + uri->str();
  remoteKeys_[key] = {blueprint, agent + "=" + uri->str()};
  return key;
}

std::optional<std::string> ProcessExecutor::blueprintOf(int version, const std::string& agent,
                                                        std::string* error) {
  auto cached = blueprints_.find({version, agent});
  if (cached != blueprints_.end()) return cached->second;
  auto files = code_.load(version, agent);
  if (!files) {
    *error = "cannot read the handler code of version " + std::to_string(version) + ": " +
             llvm::toString(files.takeError());
    return std::nullopt;
  }
  std::string key = kBuiltin;
  if (!files->empty()) {
    std::string listing;
    for (const auto& f : *files) listing += f.module + "\t" + f.path + "\t" + f.hash + "\n";
    key = "py-" + executor::sha1Hex(listing);
    if (!codeDirs_.count(key)) {
      auto dir = materialise(key, *files, error);
      if (!dir) return std::nullopt;
      codeDirs_[key] = *dir;
    }
  }
  blueprints_[{version, agent}] = key;
  return key;
}

std::optional<std::string>
ProcessExecutor::materialise(const std::string& key, const std::vector<pg::SchedulerStore::CodeFile>& files,
                             std::string* error) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path target = fs::path(code_.dir) / key;
  if (fs::is_directory(target, ec)) return target.string();
  fs::path tmp = fs::path(code_.dir) / (key + ".tmp-" + std::to_string(::getpid()));
  fs::remove_all(tmp, ec);
  auto fail = [&](const std::string& why) {
    *error = "cannot lay out the handler code " + key + " under " + code_.dir + ": " + why;
    fs::remove_all(tmp, ec);
    return std::nullopt;
  };
  for (const auto& f : files) {
    fs::path rel = fs::path(f.path).lexically_normal();
    bool bad = f.module.empty() || f.module.find('/') != std::string::npos || f.module == "." ||
               f.module == ".." || f.path.empty() || rel.is_absolute() || rel.string().rfind("..", 0) == 0;
    if (bad) return fail("file '" + f.path + "' of module '" + f.module + "' has no safe relative path");
    auto content = code_.readFile(f.hash);
    if (!content) return fail(llvm::toString(content.takeError()));
    if (!*content)
      return fail("file " + f.hash + " (" + f.module + "/" + f.path + ") is not in the file store");
    fs::path out = tmp / f.module / rel;
    fs::create_directories(out.parent_path(), ec);
    if (ec) return fail(out.parent_path().string() + ": " + ec.message());
    std::ofstream o(out, std::ios::binary | std::ios::trunc);
    o << **content;
    o.close();
    if (!o) return fail("writing " + out.string() + " failed");
  }
  fs::rename(tmp, target, ec);
  if (ec && !fs::is_directory(target)) return fail("renaming into " + target.string() + ": " + ec.message());
  fs::remove_all(tmp, ec);
  return target.string();
}

} // namespace inm::schedhost
