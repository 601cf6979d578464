// The executor process loop (include/executor/ExecutorHost.h). The calling thread reads frames (poll with a 1
// s tick that also runs the caches' idle cleanup) and answers `hello`/`heartbeat` at once, so a busy worker
// pool never delays a heartbeat; actions go to a fixed pool of worker threads (this process runs blocking
// handler code, hence plain threads rather than the orchestrator's asio pool). Output frames are written
// whole under one mutex. `get_file` calls block their worker on a promise that the reader fulfils when the
// `file` frame arrives.
#include "executor/ExecutorHost.h"

#include "executor/Protocol.h"

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <poll.h>
#include <thread>
#include <unistd.h>

namespace inm::executor {

ActionResult runAction(const DeployRequest& request, const HandlerRegistry& registry,
                       const HandlerServices& services) {
  ActionResult result;
  result.actionId = request.actionId;
  result.resourceId = request.resourceId;
  Resource resource;
  try {
    resource = Resource::fromId(request.resourceId, request.attributes);
  } catch (const std::exception& e) {
    return ActionResult::unavailable(request.actionId, request.resourceId, e.what());
  }
  std::unique_ptr<HandlerAPI> handler = registry.create(resource.type);
  if (!handler)
    return ActionResult::unavailable(request.actionId, request.resourceId,
                                     "no handler is registered for resource type " + resource.type);
  if (services.cache) services.cache->cleanup();
  handler->attach(&services);
  HandlerContext ctx(request.actionId, request.dryRun);
  // The scheduler already logged "Start run because <reason>" when the action started (once per deploy, as
  // the reference does); this line only says which process took it.
  ctx.debug("Executor process %(pid)s runs the handler of %(resource)s",
            {{"resource", request.resourceId}, {"pid", static_cast<int64_t>(::getpid())}});
  if (request.dryRun) {
    try {
      handler->execute(ctx, resource, true);
    } catch (const NoProviderException& e) {
      ctx.setResourceState(ResourceState::Unavailable);
      ctx.exception("Unable to find a handler for %(resource)s (exception: %(exception)s)", e.traceback,
                    {{"resource", request.resourceId}, {"exception", e.type + "('" + e.what() + "')"}});
    } catch (const std::exception& e) {
      ctx.setResourceState(ResourceState::Failed);
      ctx.error("Dry run of %(resource)s failed: %(error)s",
                {{"resource", request.resourceId}, {"error", e.what()}});
    }
    if (ctx.status() == ResourceState::Unavailable) {
      ctx.addChange("handler", "Unable to find a handler", "FAILED"); // the reference's text for this case
    } else if (ctx.status() == ResourceState::Failed) {
      // §6.11: a failing handler shows in the diff as the pseudo attribute "handler".
      std::string reason = "handler failed";
      for (auto it = ctx.logs().rbegin(); it != ctx.logs().rend(); ++it)
        if (it->level == "ERROR") {
          reason = it->msg;
          break;
        }
      ctx.addChange("handler", reason, "FAILED");
    }
    if (!ctx.status()) ctx.setResourceState(ResourceState::Dry);
  } else {
    handler->deploy(ctx, resource, request.dependencies, request.dependencyChanged);
  }
  try {
    handler->close();
  } catch (const std::exception& e) {
    ctx.warning("closing the handler failed: %(error)s", {{"error", e.what()}});
  }
  ResourceState state = ctx.status().value_or(ResourceState::Deployed);
  ctx.info(
      "End run for resource %(resource)s: %(status)s, %(change)s",
      {{"resource", request.resourceId}, {"status", stateName(state)}, {"change", changeName(ctx.change())}});
  result.status = stateName(state);
  result.change = changeName(ctx.change());
  result.changes = ctx.changes();
  for (const LogLine& l : ctx.logs()) result.logs.push_back(l.toJson());
  result.facts = ctx.facts();
  return result;
}

namespace {

/// Writes whole frames to the output fd from one writer thread; `write` is safe from any thread and only
/// queues, so frames that pile up while the pipe is full leave in one write() (many results per syscall). The
/// queue is bounded: producers wait while more than kMaxQueued bytes are pending.
class FrameWriter {
 public:
  explicit FrameWriter(int fd) : fd_(fd), thread_([this] { loop(); }) {}
  ~FrameWriter() { close(); }

  void write(const Json& msg) {
    std::string bytes = encodeFrame(msg);
    std::unique_lock<std::mutex> lock(mutex_);
    drained_.wait(lock, [this] { return pending_.size() < kMaxQueued || broken_ || closing_; });
    if (broken_) return; // the scheduler is gone; the reader sees EOF next
    pending_ += bytes;
    ready_.notify_one();
  }

  /// Writes what is queued, then stops the writer thread.
  void close() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closing_ = true;
    }
    ready_.notify_one();
    if (thread_.joinable()) thread_.join();
  }

 private:
  static constexpr size_t kMaxQueued = 8u << 20;

  void loop() {
    std::string out;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [this] { return !pending_.empty() || closing_; });
        if (pending_.empty()) return;
        out.swap(pending_);
        pending_.clear();
      }
      drained_.notify_all();
      size_t done = 0;
      while (done < out.size()) {
        ssize_t n = ::write(fd_, out.data() + done, out.size() - done);
        if (n < 0) {
          if (errno == EINTR) continue;
          std::lock_guard<std::mutex> lock(mutex_);
          broken_ = true;
          break;
        }
        done += static_cast<size_t>(n);
      }
      out.clear();
    }
  }

  int fd_;
  std::mutex mutex_;
  std::condition_variable ready_, drained_;
  std::string pending_;
  bool closing_ = false;
  bool broken_ = false;
  std::thread thread_;
};

/// FileSource over the protocol: a `get_file` frame out, a `file` frame back (delivered by the reader).
class RemoteFiles : public FileSource {
 public:
  RemoteFiles(FrameWriter& out, double timeout) : out_(out), timeout_(timeout) {}

  std::optional<std::string> getFile(const std::string& hash) override {
    std::future<std::optional<std::string>> fut;
    uint64_t id;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (closed_) throw std::runtime_error("cannot fetch file " + hash + ": the executor is shutting down");
      id = ++next_;
      fut = pending_[id].get_future();
    }
    out_.write(Json{{"type", "get_file"}, {"request", id}, {"hash", hash}});
    if (fut.wait_for(std::chrono::duration<double>(timeout_)) != std::future_status::ready) {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_.erase(id);
      throw std::runtime_error("timed out after " + std::to_string(int(timeout_)) + " s waiting for file " +
                               hash + " from the scheduler");
    }
    return fut.get();
  }

  void putFile(const std::string& hash, const std::string& content) override {
    out_.write(Json{{"type", "put_file"}, {"hash", hash}, {"content_base64", base64Encode(content)}});
  }

  /// A `file` frame arrived.
  void answer(const Json& msg) {
    uint64_t id = msg.value("request", uint64_t(0));
    std::promise<std::optional<std::string>> p;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = pending_.find(id);
      if (it == pending_.end()) return; // timed out meanwhile
      p = std::move(it->second);
      pending_.erase(it);
    }
    try {
      if (msg.value("found", false))
        p.set_value(base64Decode(msg.value("content_base64", std::string())));
      else if (msg.contains("error"))
        throw std::runtime_error("the scheduler could not read the file: " +
                                 msg.value("error", std::string()));
      else
        p.set_value(std::nullopt);
    } catch (...) {
      p.set_exception(std::current_exception());
    }
  }

  /// Fails every waiting fetch (input closed).
  void close() {
    std::map<uint64_t, std::promise<std::optional<std::string>>> pending;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closed_ = true;
      pending.swap(pending_);
    }
    for (auto& [id, p] : pending)
      p.set_exception(std::make_exception_ptr(std::runtime_error("the scheduler closed the connection")));
  }

 private:
  FrameWriter& out_;
  double timeout_;
  std::mutex mutex_;
  bool closed_ = false;
  uint64_t next_ = 0;
  std::map<uint64_t, std::promise<std::optional<std::string>>> pending_;
};

/// A fixed set of worker threads draining one job queue.
class WorkerPool {
 public:
  explicit WorkerPool(int n) {
    for (int i = 0; i < std::max(1, n); ++i) threads_.emplace_back([this] { loop(); });
  }
  ~WorkerPool() { join(); }
  void post(std::function<void()> job) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.push_back(std::move(job));
    }
    cv_.notify_one();
  }
  /// Finishes the queued jobs, then stops the threads.
  void join() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_)
      if (t.joinable()) t.join();
    threads_.clear();
  }

 private:
  void loop() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
};

/// Per-agent state: its cache and the services handed to its handlers.
struct AgentSlot {
  HandlerCache cache;
  HandlerServices services;
  std::unique_ptr<HostIo> io; ///< set for an agent with an ssh:// URI
};

} // namespace

int runExecutorHost(int inFd, int outFd, const HandlerRegistry& registry, HostOptions options) {
  FrameWriter out(outFd);
  RemoteFiles files(out, options.fileTimeoutSeconds);
  std::mutex agentsMutex;
  std::map<std::string, std::unique_ptr<AgentSlot>> agents;
  auto agentFor = [&](const std::string& agent) -> AgentSlot& {
    std::lock_guard<std::mutex> lock(agentsMutex);
    auto& slot = agents[agent];
    if (!slot) {
      slot = std::make_unique<AgentSlot>();
      slot->services.agent = agent;
      slot->services.files = &files;
      slot->services.cache = &slot->cache;
      if (auto uri = options.agentUris.find(agent); uri != options.agentUris.end() && !uri->second.local()) {
        slot->io = makeSshIo(uri->second, options.ssh);
        slot->services.io = slot->io.get();
      }
    }
    return *slot;
  };
  auto cleanupCaches = [&] {
    std::lock_guard<std::mutex> lock(agentsMutex);
    for (auto& [name, slot] : agents) slot->cache.cleanup();
  };

  auto pool = std::make_unique<WorkerPool>(options.threads);
  FrameDecoder decoder;
  int rc = 0;
  bool helloSeen = false;
  char buf[65536];
  for (bool running = true; running;) {
    struct pollfd pfd {
      inFd, POLLIN, 0
    };
    int ready = poll(&pfd, 1, 1000);
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (ready == 0) {
      cleanupCaches();
      continue;
    }
    ssize_t n = read(inFd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break; // EOF: the scheduler is gone
    decoder.feed(buf, static_cast<size_t>(n));
    try {
      while (running) {
        std::optional<Json> msg = decoder.next();
        if (!msg) break;
        std::string type = (*msg)["type"].get<std::string>();
        if (type == "hello") {
          int version = msg->value("protocol", 0);
          if (version != kProtocolVersion) {
            out.write(
                Json{{"type", "error"},
                     {"message", "executor speaks protocol version " + std::to_string(kProtocolVersion) +
                                     ", the scheduler asked for version " + std::to_string(version)}});
            rc = 2;
            running = false;
            break;
          }
          helloSeen = true;
          out.write(
              Json{{"type", "hello"}, {"protocol", kProtocolVersion}, {"pid", static_cast<int>(getpid())}});
        } else if (!helloSeen) {
          throw std::runtime_error("executor protocol: the first frame must be hello, got " + type);
        } else if (type == "heartbeat") {
          out.write(Json{{"type", "heartbeat"}, {"seq", msg->value("seq", 0)}});
        } else if (type == "file") {
          files.answer(*msg);
        } else if (type == "deploy" || type == "facts") {
          Json& reqs = (*msg)["requests"];
          if (!reqs.is_array())
            throw std::runtime_error("executor protocol: \"" + type + "\" needs a requests array");
          bool facts = type == "facts";
          for (Json& rj : reqs) {
            DeployRequest req;
            try {
              req = DeployRequest::fromJson(std::move(rj));
            } catch (const std::exception& e) {
              ActionResult bad = ActionResult::unavailable(
                  rj.is_object() ? rj.value("action_id", std::string()) : std::string(),
                  rj.is_object() ? rj.value("id", std::string()) : std::string(), e.what());
              out.write(bad.toJson());
              continue;
            }
            rj = nullptr; // free the parsed request as we go
            pool->post([&, req = std::move(req), facts] {
              std::string agent;
              try {
                agent = Resource::fromId(req.resourceId, Json::object()).agent;
              } catch (const std::exception&) {
              }
              AgentSlot& slot = agentFor(agent);
              ActionResult r;
              if (!facts) {
                r = runAction(req, registry, slot.services);
              } else {
                r.actionId = req.actionId;
                r.resourceId = req.resourceId;
                std::unique_ptr<HandlerAPI> h;
                Resource res;
                try {
                  res = Resource::fromId(req.resourceId, req.attributes);
                  h = registry.create(res.type);
                } catch (const std::exception&) {
                }
                if (!h) {
                  r = ActionResult::unavailable(req.actionId, req.resourceId,
                                                "no handler for " + req.resourceId);
                } else {
                  h->attach(&slot.services);
                  HandlerContext ctx(req.actionId, false);
                  Json facts = h->checkFacts(ctx, res);
                  h->close();
                  r.status = stateName(ctx.status().value_or(ResourceState::Deployed));
                  for (auto& [k, v] : facts.items())
                    r.facts[k] =
                        ctx.facts().contains(k) ? ctx.facts()[k] : Json{{"value", v}, {"expires", true}};
                  for (const LogLine& l : ctx.logs()) r.logs.push_back(l.toJson());
                }
              }
              Json j = r.toJson();
              if (facts) j["type"] = "facts_result";
              out.write(j);
            });
          }
        } else if (type == "shutdown") {
          running = false;
        } else {
          out.write(
              Json{{"type", "error"}, {"message", "executor protocol: unknown frame type '" + type + "'"}});
        }
      }
    } catch (const std::exception& e) {
      out.write(Json{{"type", "error"}, {"message", e.what()}});
      rc = 2;
      break;
    }
  }
  // Input closed or shutdown: unblock file waits, let the running actions finish and report, free the caches
  // (their call_on_delete runs here).
  files.close();
  pool->join();
  {
    std::lock_guard<std::mutex> lock(agentsMutex);
    agents.clear();
  }
  out.write(Json{{"type", "bye"}});
  out.close();
  return rc;
}

} // namespace inm::executor
