// ExecutorProcess / ExecutorPool (include/executor/ExecutorClient.h). The child is started by support::spawn
// with a parent-death SIGKILL (it exits at once if its parent is already gone); its stdin/stdout pipes are
// asio stream descriptors read and written on one strand. Death is detected by EOF on the child's stdout,
// hangs by the heartbeat timer (which then SIGKILLs, so the EOF path is the single place that fails in-flight
// requests).
#include "executor/ExecutorClient.h"

#include "executor/Handler.h"
#include "support/Spawn.h"

#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <sys/socket.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <signal.h>
#include <thread>
#include <unistd.h>

namespace asio = boost::asio;

namespace inm::executor {

namespace {

std::string selfExecutable() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("inmanta");
}

std::string describeStatus(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    std::string s = std::to_string(sig) + (name ? std::string(" (SIG") + name + ")" : "");
    bool crash = sig == SIGSEGV || sig == SIGABRT || sig == SIGBUS || sig == SIGFPE || sig == SIGILL;
    return (crash ? "crashed with signal " : "was killed by signal ") + s;
  }
  return "ended with status " + std::to_string(status);
}

} // namespace

ExecutorProcess::ExecutorProcess(asio::any_io_executor executor, std::string key, ExecutorOptions options,
                                 FileProvider files)
    : strand_(asio::make_strand(executor)), key_(std::move(key)), options_(std::move(options)),
      files_(std::move(files)), in_(strand_), out_(strand_), heartbeat_(strand_), grace_(strand_) {}

std::shared_ptr<ExecutorProcess> ExecutorProcess::start(asio::any_io_executor executor, std::string key,
                                                        const ExecutorOptions& options, FileProvider files,
                                                        std::string* error) {
  // A write to a dead child's stdin must be an EPIPE error, not a fatal SIGPIPE for the scheduler.
  signal(SIGPIPE, SIG_IGN);
  std::shared_ptr<ExecutorProcess> p(
      new ExecutorProcess(executor, std::move(key), options, std::move(files)));
  std::string exe = options.executable.empty() ? selfExecutable() : options.executable;
  std::vector<std::string> args = {exe};
  args.insert(args.end(), options.arguments.begin(), options.arguments.end());
  args.push_back("--threads");
  args.push_back(std::to_string(options.threads));
  // stdin/stdout are the protocol's pipes; the child dies with us (and exits at once if we are already gone);
  // no scheduler socket or file leaks into the executor (support::spawn closes every other descriptor on
  // exec).
  support::SpawnOptions so;
  so.argv = std::move(args);
  so.in = support::Stream::pipe();
  so.out = support::Stream::pipe();
  so.parentDeathSignal = SIGKILL;
  auto child = support::spawn(so);
  if (!child) {
    if (error) *error = "cannot start the executor: " + llvm::toString(child.takeError());
    return nullptr;
  }
  p->pid_ = child->pid;
  p->begin(child->stdinFd, child->stdoutFd);
  return p;
}

void ExecutorProcess::begin(int writeFd, int readFd) {
  alive_ = true;
  in_.assign(writeFd);
  out_.assign(readFd);
  lastHeard_ = std::chrono::steady_clock::now();
  lastActivity_ = lastHeard_.time_since_epoch().count();
  auto self = shared_from_this();
  asio::post(strand_, [self] {
    self->send(Json{{"type", "hello"}, {"protocol", kProtocolVersion}, {"key", self->key_}});
    self->readMore();
    self->armHeartbeat();
  });
}

std::shared_ptr<ExecutorProcess> ExecutorProcess::attach(asio::any_io_executor executor, std::string key,
                                                         int fd, const ExecutorOptions& options,
                                                         FileProvider files, std::string label) {
  signal(SIGPIPE, SIG_IGN);
  std::shared_ptr<ExecutorProcess> p(
      new ExecutorProcess(executor, std::move(key), options, std::move(files)));
  p->label_ = std::move(label);
  int writeFd = ::dup(fd);
  if (writeFd < 0) {
    ::close(fd);
    return nullptr;
  }
  p->begin(writeFd, fd);
  return p;
}

void ExecutorProcess::forceStop() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
  } else if (alive_) {
    boost::system::error_code ignored;
    out_.cancel(ignored); // the pending read completes with an error: the death path
    ::shutdown(out_.native_handle(), SHUT_RDWR);
  }
}

std::string ExecutorProcess::who() const {
  return label_.empty() ? "executor process " + std::to_string(pid_) + " for " + key_ : label_;
}

void ExecutorProcess::whenDead(std::function<void()> f) {
  auto self = shared_from_this();
  asio::post(strand_, [self, f = std::move(f)]() mutable {
    if (!self->alive_) return f();
    self->onReaped_.push_back(std::move(f));
  });
}

ExecutorProcess::~ExecutorProcess() { terminateNow(); }

void ExecutorProcess::terminateNow() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
  }
}

void ExecutorProcess::send(Json message) {
  if (!alive_) return;
  writeQueue_.push_back(encodeFrame(message));
  if (!writing_) writeNext();
}

void ExecutorProcess::sendBody(const std::string& body) {
  if (!alive_) return;
  writeQueue_.push_back(encodeFrameBody(body));
  if (!writing_) writeNext();
}

void ExecutorProcess::writeNext() {
  if (writeQueue_.empty() || !alive_) {
    writing_ = false;
    return;
  }
  writing_ = true;
  auto self = shared_from_this();
  asio::async_write(in_, asio::buffer(writeQueue_.front()), [self](boost::system::error_code ec, size_t) {
    self->writeQueue_.pop_front();
    if (ec) {
      self->writing_ = false;
      return; // the read side reports the death
    }
    self->writeNext();
  });
}

void ExecutorProcess::readMore() {
  auto self = shared_from_this();
  out_.async_read_some(asio::buffer(readBuffer_), [self](boost::system::error_code ec, size_t n) {
    if (ec) return self->onDeath("");
    self->decoder_.feed(self->readBuffer_.data(), n);
    self->lastHeard_ = std::chrono::steady_clock::now();
    try {
      while (self->alive_) {
        std::optional<std::string_view> body = self->decoder_.nextBody();
        if (!body) break;
        // One result frame per resource: read without a JSON tree when it has the usual shape.
        ActionResult fast;
        if (decodeResultFrame(*body, fast)) {
          self->onResult(fast);
          continue;
        }
        std::string logsText;
        Json msg = decodeFrameBody(*body, &logsText);
        self->onMessage(msg, std::move(logsText));
      }
    } catch (const std::exception& e) {
      self->killCause_ = std::string("broke the protocol (") + e.what() + ")";
      self->forceStop();
      return self->onDeath("");
    }
    if (self->alive_) self->readMore();
  });
}

void ExecutorProcess::onMessage(const Json& msg, std::string logsText) {
  const std::string type = msg["type"].get<std::string>();
  if (type == "result" || type == "facts_result") {
    ActionResult r;
    try {
      r = ActionResult::fromJson(msg);
      r.logsText = std::move(logsText); // the log lines as received: stored verbatim, never parsed here
    } catch (const std::exception& e) {
      std::cerr << "executor " << pid_ << ": ignoring a malformed result: " << e.what() << "\n";
      return;
    }
    onResult(r);
  } else if (type == "get_file") {
    uint64_t id = msg.value("request", uint64_t(0));
    std::string hash = msg.value("hash", std::string());
    std::weak_ptr<ExecutorProcess> weak = weak_from_this();
    auto reply = [weak, id](std::optional<std::string> content) {
      auto self = weak.lock();
      if (!self) return;
      asio::post(self->strand_, [self, id, content = std::move(content)] {
        Json answer{{"type", "file"}, {"request", id}, {"found", content.has_value()}};
        if (content) answer["content_base64"] = base64Encode(*content);
        self->send(std::move(answer));
      });
    };
    if (files_) {
      try {
        files_(hash, reply);
      } catch (const std::exception& e) {
        send(Json{{"type", "file"}, {"request", id}, {"found", false}, {"error", e.what()}});
      }
    } else {
      send(Json{{"type", "file"}, {"request", id}, {"found", false}, {"error", "no file provider"}});
    }
  } else if (type == "get_code") {
    uint64_t id = msg.value("request", uint64_t(0));
    int version = msg.value("version", 0);
    std::string agent = msg.value("agent", std::string());
    std::weak_ptr<ExecutorProcess> weak = weak_from_this();
    auto reply = [weak, id](const Json& filesOrError) {
      auto self = weak.lock();
      if (!self) return;
      Json answer{{"type", "code"}, {"request", id}};
      if (filesOrError.is_array())
        answer["files"] = filesOrError;
      else
        answer["error"] = filesOrError.is_string() ? filesOrError.get<std::string>() : filesOrError.dump();
      asio::post(self->strand_,
                 [self, answer = std::move(answer)]() mutable { self->send(std::move(answer)); });
    };
    if (!code_) {
      reply(Json("this scheduler serves no handler code"));
    } else {
      try {
        code_(version, agent, reply);
      } catch (const std::exception& e) {
        reply(Json(std::string(e.what())));
      }
    }
  } else if (type == "put_file") {
    std::string hash = msg.value("hash", std::string());
    try {
      std::string content = base64Decode(msg.value("content_base64", std::string()));
      if (sink_ && sha1Hex(content) == hash)
        sink_(hash, content); // unverified content never reaches the store
    } catch (const std::exception& e) {
      std::cerr << "executor " << pid_ << ": ignoring a malformed put_file: " << e.what() << "\n";
    }
  } else if (type == "error") {
    lastError_ = msg.value("message", std::string());
    std::cerr << who() << ": " << lastError_ << "\n";
  } else if (type == "bye") {
    stopping_ = true;
  }
  // hello, heartbeat: lastHeard_ is all they update.
}

void ExecutorProcess::onResult(const ActionResult& r) {
  auto it = inFlight_.find(r.actionId);
  if (it == inFlight_.end()) return;
  std::shared_ptr<ResultCallback> cb = it->second.callback;
  inFlight_.erase(it);
  inFlightCount_ = inFlight_.size();
  lastActivity_ = std::chrono::steady_clock::now().time_since_epoch().count();
  (*cb)(r);
}

void ExecutorProcess::reap(bool force) {
  if (reaped_ || pid_ <= 0) return;
  int status = 0;
  pid_t r = 0;
  // The child closes stdout when it exits; give it a moment to become a zombie before forcing.
  for (int i = 0; i < 50; ++i) {
    r = waitpid(pid_, &status, WNOHANG);
    if (r != 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(4));
  }
  if (r == 0 && force) {
    ::kill(pid_, SIGKILL);
    while ((r = waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
    }
    if (killCause_.empty()) killCause_ = "closed its output without exiting and was killed";
  }
  reaped_ = true;
  if (deathCause_.empty()) deathCause_ = r == pid_ ? describeStatus(status) : "ended";
}

void ExecutorProcess::onDeath(const std::string&) {
  if (!alive_) return;
  alive_ = false;
  boost::system::error_code ignored;
  heartbeat_.cancel();
  grace_.cancel();
  in_.close(ignored);
  out_.close(ignored);
  reap(true);
  if (!label_.empty() && deathCause_.empty()) deathCause_ = "disconnected";
  std::string cause = killCause_.empty() ? deathCause_ : killCause_ + " (" + deathCause_ + ")";
  if (!lastError_.empty()) cause += "; its last error: " + lastError_;
  deathCause_ = cause;
  std::string message = who() + " " + cause + " while this resource was in flight";
  std::map<std::string, Pending> pending;
  pending.swap(inFlight_);
  inFlightCount_ = 0;
  for (auto& [actionId, p] : pending)
    (*p.callback)(ActionResult::unavailable(actionId, p.resourceId, message));
  std::vector<std::function<void()>> waiters;
  waiters.swap(onReaped_);
  for (auto& w : waiters) w();
}

void ExecutorProcess::armHeartbeat() {
  heartbeat_.expires_after(options_.heartbeatInterval);
  auto self = shared_from_this();
  heartbeat_.async_wait([self](boost::system::error_code ec) {
    if (ec || !self->alive_) return;
    auto silent = std::chrono::steady_clock::now() - self->lastHeard_;
    if (silent > self->options_.heartbeatTimeout) {
      double secs = std::chrono::duration<double>(silent).count();
      char buf[128];
      std::snprintf(buf, sizeof buf, "hung: no heartbeat answer for %.1f s (timeout %.1f s), killed", secs,
                    std::chrono::duration<double>(self->options_.heartbeatTimeout).count());
      self->killCause_ = buf;
      self->forceStop(); // EOF follows; onDeath fails the in-flight requests
      return;
    }
    self->send(Json{{"type", "heartbeat"}, {"seq", ++self->heartbeatSeq_}});
    self->armHeartbeat();
  });
}

void ExecutorProcess::submit(const char* type, std::vector<DeployRequest> requests, ResultCallback onResult) {
  auto cb = std::make_shared<ResultCallback>(std::move(onResult));
  auto self = shared_from_this();
  asio::post(strand_, [self, type, requests = std::move(requests), cb] {
    if (!self->alive_ || self->stopping_) {
      std::string message = self->alive_
                                ? self->who() + " is shutting down and takes no new work"
                                : self->who() + " " + self->deathCause_ + " before the request was sent";
      for (const DeployRequest& r : requests)
        (*cb)(ActionResult::unavailable(r.actionId, r.resourceId, message));
      return;
    }
    // The frame is built as text: requests may carry their attributes as stored JSON text (appendJson).
    std::string body = std::string("{\"type\":\"") + type + "\",\"requests\":[";
    bool first = true;
    for (const DeployRequest& r : requests) {
      self->inFlight_[r.actionId] = Pending{r.resourceId, cb};
      if (!first) body += ',';
      first = false;
      r.appendJson(body);
    }
    body += "]}";
    self->inFlightCount_ = self->inFlight_.size();
    self->lastActivity_ = std::chrono::steady_clock::now().time_since_epoch().count();
    self->sendBody(body);
  });
}

void ExecutorProcess::deploy(std::vector<DeployRequest> requests, ResultCallback onResult) {
  submit("deploy", std::move(requests), std::move(onResult));
}

void ExecutorProcess::facts(std::vector<DeployRequest> requests, ResultCallback onResult) {
  submit("facts", std::move(requests), std::move(onResult));
}

void ExecutorProcess::shutdown(std::function<void()> done) {
  auto self = shared_from_this();
  asio::post(strand_, [self, done = std::move(done)] {
    if (!self->alive_) {
      self->reap(true);
      if (done) done();
      return;
    }
    if (done) self->onReaped_.push_back(done);
    self->killCause_ = "was shut down";
    self->send(Json{{"type", "shutdown"}});
    self->grace_.expires_after(self->options_.shutdownGrace);
    self->grace_.async_wait([self](boost::system::error_code ec) {
      if (ec || !self->alive_) return;
      self->killCause_ = "did not stop within the shutdown grace period and was killed";
      self->forceStop();
    });
  });
}

void ExecutorProcess::kill(const std::string& cause) {
  auto self = shared_from_this();
  asio::post(strand_, [self, cause] {
    if (!self->alive_) return;
    self->killCause_ = cause;
    self->forceStop();
  });
}

ExecutorPool::~ExecutorPool() {
  for (auto& [key, p] : processes_) p->terminateNow();
}

std::shared_ptr<ExecutorProcess> ExecutorPool::get(const std::string& key, std::string* error) {
  auto it = processes_.find(key);
  if (it != processes_.end() && it->second->alive()) return it->second;
  if (it != processes_.end()) processes_.erase(it); // dead: its death path already reaped it
  std::shared_ptr<ExecutorProcess> p;
  if (options_.keyArguments) {
    ExecutorOptions opts = options_;
    for (std::string& a : options_.keyArguments(key)) opts.arguments.push_back(std::move(a));
    p = ExecutorProcess::start(executor_, key, opts, files_, error);
  } else {
    p = ExecutorProcess::start(executor_, key, options_, files_, error);
  }
  if (!p) return nullptr;
  p->setFileSink(sink_);
  ++started_;
  processes_[key] = p;
  return p;
}

void ExecutorPool::deploy(const std::string& key, std::vector<DeployRequest> requests,
                          ResultCallback onResult) {
  std::string error;
  std::shared_ptr<ExecutorProcess> p = get(key, &error);
  if (!p) {
    for (const DeployRequest& r : requests)
      onResult(ActionResult::unavailable(r.actionId, r.resourceId,
                                         "cannot start an executor for " + key + ": " + error));
    return;
  }
  p->deploy(std::move(requests), std::move(onResult));
}

void ExecutorPool::facts(const std::string& key, std::vector<DeployRequest> requests,
                         ResultCallback onResult) {
  std::string error;
  std::shared_ptr<ExecutorProcess> p = get(key, &error);
  if (!p) {
    for (const DeployRequest& r : requests)
      onResult(ActionResult::unavailable(r.actionId, r.resourceId,
                                         "cannot start an executor for " + key + ": " + error));
    return;
  }
  p->facts(std::move(requests), std::move(onResult));
}

size_t ExecutorPool::stopIdle(std::chrono::milliseconds idleFor) {
  size_t stopped = 0;
  auto now = std::chrono::steady_clock::now();
  for (auto it = processes_.begin(); it != processes_.end();) {
    std::shared_ptr<ExecutorProcess> p = it->second;
    if (!p->alive()) {
      it = processes_.erase(it);
    } else if (p->inFlight() == 0 && now - p->lastActivity() >= idleFor) {
      p->shutdown();
      ++stopped;
      it = processes_.erase(it);
    } else {
      ++it;
    }
  }
  return stopped;
}

void ExecutorPool::shutdown(std::function<void()> done) {
  auto remaining = std::make_shared<size_t>(processes_.size());
  auto finish = std::make_shared<std::function<void()>>(std::move(done));
  if (processes_.empty()) {
    if (*finish) asio::post(executor_, *finish);
    return;
  }
  for (auto& [key, p] : processes_)
    p->shutdown([remaining, finish] {
      if (--*remaining == 0 && *finish) (*finish)();
    });
}

} // namespace inm::executor
