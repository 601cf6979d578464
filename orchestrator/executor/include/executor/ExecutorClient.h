// The scheduler's side of the executor protocol: ExecutorProcess runs one `inmanta executor` child and
// ExecutorPool keeps one live process per key (environment + agent group + code version). Both live on the
// caller's asio executor (internally on a strand of it); every result is delivered through the batch's
// callback on that strand. Invariants: every request sent gets exactly one result — its own, or `unavailable`
// naming the cause when the process dies (EOF: killed, crashed, exited) or hangs (no heartbeat answer within
// the timeout, then it is killed); every child is reaped (on death, on shutdown, in the destructor) and gets
// PR_SET_PDEATHSIG, so no executor outlives the thread that started it.
#pragma once

#include "executor/Protocol.h"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace inm::executor {

/// How executor processes are started and watched.
struct ExecutorOptions {
  std::string executable; ///< default: this process's own binary (/proc/self/exe)
  std::vector<std::string> arguments = {"executor"};
  int threads = 4; ///< worker threads inside the executor (passed as --threads)
  std::chrono::milliseconds heartbeatInterval{1000};
  std::chrono::milliseconds heartbeatTimeout{10000}; ///< no answer for this long => hung => killed
  std::chrono::milliseconds shutdownGrace{5000};     ///< after `shutdown`, SIGKILL when still running
  /// ExecutorPool only: arguments appended for the process of a key (e.g. `--python-code DIR` of a code
  /// blueprint), asked each time a process for that key starts. Unset or empty: none.
  std::function<std::vector<std::string>(const std::string& key)> keyArguments;
};

/// Called once per request with its result.
using ResultCallback = std::function<void(const ActionResult&)>;
/// Answers a `get_file` from an executor: call `reply` (from any thread) with the content, nullopt when the
/// server has no such file. The scheduler reads the `file` table here.
using FileProvider =
    std::function<void(const std::string& sha1hex, std::function<void(std::optional<std::string>)> reply)>;

/// Receives content an executor offers for the file store (`put_file`: the current content of a changed
/// file).
using FileSink = std::function<void(const std::string& sha1hex, const std::string& content)>;

/// Answers a `get_code` from an external agent (docs/deploy.md "External agents and Python code"): call
/// `reply` (from any thread) with the handler code registered with `version` for `agent` as an array of
/// {module, path, hash}, or with a string naming why it cannot be read. The agent then fetches each file by
/// hash with `get_file` and verifies it.
using CodeProvider = std::function<void(int version, const std::string& agent,
                                        std::function<void(const Json& filesOrError)> reply)>;

/// One executor child process and its protocol connection.
class ExecutorProcess : public std::enable_shared_from_this<ExecutorProcess> {
 public:
  /// Spawns `<executable> <arguments…> --threads N` with stdin/stdout pipes and sends `hello`. On failure to
  /// spawn, returns nullptr and sets `error`.
  static std::shared_ptr<ExecutorProcess> start(boost::asio::any_io_executor executor, std::string key,
                                                const ExecutorOptions& options, FileProvider files,
                                                std::string* error = nullptr);
  /// An executor host at the other end of an already connected stream socket `fd` (an external agent relayed
  /// by the server, docs/deploy.md "External agents"); takes ownership of `fd` and sends `hello`. There is no
  /// child: killing it shuts the socket down, and results of a lost connection say "`label` disconnected".
  static std::shared_ptr<ExecutorProcess> attach(boost::asio::any_io_executor executor, std::string key,
                                                 int fd, const ExecutorOptions& options, FileProvider files,
                                                 std::string label);
  ~ExecutorProcess();

  /// Sends one batch; `onResult` runs once per request (on the strand). A dead process answers every request
  /// with `unavailable` at once.
  void deploy(std::vector<DeployRequest> requests, ResultCallback onResult);
  /// Fact checks (only action_id, id and attributes of each request are used).
  void facts(std::vector<DeployRequest> requests, ResultCallback onResult);
  /// Asks the process to stop; SIGKILL after the grace period; `done` runs once it is reaped.
  void shutdown(std::function<void()> done = nullptr);
  /// Where `put_file` content goes (default: dropped). Set before the first request.
  void setFileSink(FileSink sink) { sink_ = std::move(sink); }
  /// Where `get_code` requests go (external agents only; default: answered with an error). Set before the
  /// first request.
  void setCodeProvider(CodeProvider code) { code_ = std::move(code); }
  /// SIGKILL now (the death path then fails in-flight requests with `cause`).
  void kill(const std::string& cause);
  /// Synchronous SIGKILL + waitpid, for destructors and shutdown paths outside the strand.
  void terminateNow();

  bool alive() const { return alive_.load(); }
  /// It said `bye` (an external agent that drains): still connected, but new requests are answered
  /// `unavailable` at once.
  bool stopping() const { return stopping_.load(); }
  pid_t pid() const { return pid_; }
  const std::string& key() const { return key_; }
  /// Requests sent whose result has not arrived yet.
  size_t inFlight() const { return inFlightCount_.load(); }
  /// When a request was last sent or a result last arrived (steady clock).
  std::chrono::steady_clock::time_point lastActivity() const {
    return std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(lastActivity_.load()));
  }
  /// Runs `f` (on the strand) once the process or connection is gone; at once when it already is.
  void whenDead(std::function<void()> f);
  /// Why the process ended ("" while alive).
  const std::string& deathCause() const { return deathCause_; }

 private:
  ExecutorProcess(boost::asio::any_io_executor executor, std::string key, ExecutorOptions options,
                  FileProvider files);
  /// Takes the two ends of the connection, sends `hello`, starts reading and the heartbeat.
  void begin(int writeFd, int readFd);
  void send(Json message);
  /// Queues one frame whose body is already serialised (the framing and the size limit still apply).
  void sendBody(const std::string& body);
  void writeNext();
  void readMore();
  void onMessage(const Json& msg, std::string logsText);
  /// A result (or facts result) arrived: hands it to its request's callback (unknown action ids are dropped).
  void onResult(const ActionResult& r);
  void onDeath(const std::string& cause);
  void reap(bool force);
  void armHeartbeat();
  void submit(const char* type, std::vector<DeployRequest> requests, ResultCallback onResult);
  /// SIGKILL for a child; shutting the socket down for an attached connection (its EOF path follows).
  void forceStop();
  /// "executor process PID for KEY" or the attached connection's label.
  std::string who() const;

  boost::asio::strand<boost::asio::any_io_executor> strand_;
  std::string key_;
  ExecutorOptions options_;
  FileProvider files_;
  FileSink sink_;
  CodeProvider code_;
  pid_t pid_ = -1;
  std::string label_; ///< set for an attached connection (no child process)
  std::atomic<bool> alive_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<bool> reaped_{false};
  std::string deathCause_;
  std::string killCause_; ///< set when we killed it (hung, explicit kill) to name the real cause
  std::string lastError_; ///< last `error` frame from the executor
  boost::asio::posix::stream_descriptor in_;  ///< the child's stdin (we write)
  boost::asio::posix::stream_descriptor out_; ///< the child's stdout (we read)
  boost::asio::steady_timer heartbeat_;
  boost::asio::steady_timer grace_;
  std::chrono::steady_clock::time_point lastHeard_;
  std::atomic<std::chrono::steady_clock::duration::rep> lastActivity_{0};
  std::atomic<size_t> inFlightCount_{0};
  uint64_t heartbeatSeq_ = 0;
  std::deque<std::string> writeQueue_;
  bool writing_ = false;
  std::vector<char> readBuffer_ = std::vector<char>(1 << 16);
  FrameDecoder decoder_; ///< many result frames per read: one async op per 64 KiB, not two per frame
  struct Pending {
    std::string resourceId;
    std::shared_ptr<ResultCallback> callback;
  };
  std::map<std::string, Pending> inFlight_;
  std::vector<std::function<void()>> onReaped_;
};

/// Live executor processes by key; a dead one is replaced on the next request.
class ExecutorPool {
 public:
  ExecutorPool(boost::asio::any_io_executor executor, ExecutorOptions options, FileProvider files)
      : executor_(std::move(executor)), options_(std::move(options)), files_(std::move(files)) {}
  /// Kills and reaps every remaining child.
  ~ExecutorPool();

  /// The live process for `key`, started (or restarted) as needed; nullptr when spawning failed (`error`
  /// set).
  std::shared_ptr<ExecutorProcess> get(const std::string& key, std::string* error = nullptr);
  /// get(key)->deploy(…); when spawning fails every request gets `unavailable` with the spawn error.
  void deploy(const std::string& key, std::vector<DeployRequest> requests, ResultCallback onResult);
  /// Where executors' `put_file` content goes (applies to processes started afterwards).
  void setFileSink(FileSink sink) { sink_ = std::move(sink); }
  /// The whole batch as one asynchronous operation: completes with every result (in arrival order) once the
  /// last one is in. Works with any completion token, e.g. `co_await pool.asyncDeploy(key, reqs,
  /// use_awaitable)`.
  template <typename CompletionToken>
  auto asyncDeploy(const std::string& key, std::vector<DeployRequest> requests, CompletionToken&& token) {
    return boost::asio::async_initiate<CompletionToken, void(std::vector<ActionResult>)>(
        [this, key](auto handler, std::vector<DeployRequest> reqs) {
          using Handler = decltype(handler);
          struct State {
            Handler handler;
            size_t left;
            std::vector<ActionResult> results;
          };
          auto ex = boost::asio::get_associated_executor(handler, executor_);
          auto state = std::make_shared<State>(State{std::move(handler), reqs.size(), {}});
          auto finish = [state, ex] {
            boost::asio::post(ex, [state] { std::move(state->handler)(std::move(state->results)); });
          };
          if (reqs.empty()) return finish();
          state->results.reserve(reqs.size());
          deploy(key, std::move(reqs), [state, finish](const ActionResult& r) {
            state->results.push_back(r);
            if (--state->left == 0) finish();
          });
        },
        token, std::move(requests));
  }
  /// get(key)->facts(…), with the same spawn-failure handling.
  void facts(const std::string& key, std::vector<DeployRequest> requests, ResultCallback onResult);
  /// Asks every process to stop; `done` runs when all are reaped.
  void shutdown(std::function<void()> done = nullptr);
  /// Shuts down the processes with nothing in flight and no activity for `idleFor` (the reference's
  /// executor-retention-time, 60 s); dead ones are dropped too. Returns how many were stopped.
  size_t stopIdle(std::chrono::milliseconds idleFor);
  /// How many processes were started so far (for tests and logs).
  size_t started() const { return started_; }

 private:
  boost::asio::any_io_executor executor_;
  ExecutorOptions options_;
  FileProvider files_;
  FileSink sink_;
  std::map<std::string, std::shared_ptr<ExecutorProcess>> processes_;
  size_t started_ = 0;
};

} // namespace inm::executor
