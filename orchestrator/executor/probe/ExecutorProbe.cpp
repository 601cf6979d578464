// inm-executor-probe: a test driver for test/integration/test_executor.py. It plays the scheduler's part with
// the real ExecutorPool: JSON commands arrive one per line on stdin, events leave one per line on stdout.
//   {"cmd":"put_file","content":"…"}             -> {"event":"file","hash":…}   (served to get_file)
//   {"cmd":"file_delay","ms":N}                  -> {"event":"ok"}   (answers to get_file wait N ms)
//   {"cmd":"pid","key":K}                        -> {"event":"pid","pid":…} (starts the process if needed)
//   {"cmd":"deploy","key":K,"requests":[…]}      -> {"event":"sent","pid":…}, then one {"event":"result",…}
//   each
//   {"cmd":"deploy",…,"await":true}             -> the same results, all after the last one (asyncDeploy +
//   co_await)
//   {"cmd":"deploy",…,"quiet":true}             -> {"event":"batch_done","statuses":{…},"seconds":…} instead
//   {"cmd":"stop_idle","ms":N}                   -> {"event":"stopped","count":…} (ExecutorPool::stopIdle)
//   {"cmd":"shutdown"}                           -> {"event":"bye","started":N,"pids":[…]} after every child
//   is reaped
// get_file requests are reported as {"event":"get_file","hash":…}, put_file offers as {"event":"put_file",…}.
// Options: --executable PATH (the inmanta binary), --threads N, --heartbeat-interval-ms N,
// --heartbeat-timeout-ms N.
#include "executor/ExecutorClient.h"
#include "executor/Handler.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <iostream>
#include <istream>
#include <map>
#include <memory>
#include <unistd.h>

namespace asio = boost::asio;
using namespace inm::executor;

namespace {
void emit(const Json& j) { std::cout << j.dump(-1, ' ', false, Json::error_handler_t::replace) << std::endl; }
} // namespace

int main(int argc, char** argv) {
  ExecutorOptions options;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--executable")
      options.executable = v;
    else if (a == "--threads")
      options.threads = std::stoi(v);
    else if (a == "--heartbeat-interval-ms")
      options.heartbeatInterval = std::chrono::milliseconds(std::stoi(v));
    else if (a == "--heartbeat-timeout-ms")
      options.heartbeatTimeout = std::chrono::milliseconds(std::stoi(v));
    else {
      std::cerr << "inm-executor-probe: unknown option " << a << "\n";
      return 2;
    }
  }
  asio::io_context io;
  std::map<std::string, std::string> files;
  int delayMs = 0;
  FileProvider provider = [&](const std::string& hash,
                              std::function<void(std::optional<std::string>)> reply) {
    emit(Json{{"event", "get_file"}, {"hash", hash}});
    std::optional<std::string> content;
    if (auto it = files.find(hash); it != files.end()) content = it->second;
    auto timer = std::make_shared<asio::steady_timer>(io, std::chrono::milliseconds(delayMs));
    timer->async_wait([timer, reply, content](boost::system::error_code) { reply(content); });
  };
  ExecutorPool pool(io.get_executor(), options, provider);
  pool.setFileSink([](const std::string& hash, const std::string& content) {
    emit(Json{{"event", "put_file"}, {"hash", hash}, {"size", content.size()}});
  });
  std::vector<int> pids;

  asio::posix::stream_descriptor in(io, dup(0));
  asio::streambuf buf;
  std::function<void()> readLine = [&] {
    asio::async_read_until(in, buf, '\n', [&](boost::system::error_code ec, size_t) {
      if (ec) { // stdin closed: stop everything
        pool.shutdown([&] { io.stop(); });
        return;
      }
      std::istream is(&buf);
      std::string line;
      std::getline(is, line);
      Json cmd = Json::parse(line, nullptr, false);
      if (cmd.is_discarded() || !cmd.is_object()) {
        emit(Json{{"event", "error"}, {"message", "not a JSON object: " + line}});
        return readLine();
      }
      std::string c = cmd.value("cmd", std::string());
      if (c == "put_file") {
        std::string content = cmd.value("content", std::string());
        std::string h = sha1Hex(content);
        files[h] = content;
        emit(Json{{"event", "file"}, {"hash", h}});
      } else if (c == "file_delay") {
        delayMs = cmd.value("ms", 0);
        emit(Json{{"event", "ok"}});
      } else if (c == "pid" || c == "deploy") {
        std::string key = cmd.value("key", std::string("default"));
        std::string error;
        auto p = pool.get(key, &error);
        if (!p) {
          emit(Json{{"event", "error"}, {"message", error}});
          return readLine();
        }
        pids.push_back(p->pid());
        if (c == "pid") {
          emit(Json{{"event", "pid"}, {"pid", p->pid()}});
        } else {
          std::vector<DeployRequest> reqs;
          for (const Json& r : cmd["requests"]) reqs.push_back(DeployRequest::fromJson(r));
          int pid = p->pid();
          if (cmd.value("await", false)) {
            // Coroutine mode: the batch as one awaitable; all results are emitted together at the end.
            asio::co_spawn(
                io,
                [&pool, key, pid, reqs = std::move(reqs)]() mutable -> asio::awaitable<void> {
                  std::vector<ActionResult> results =
                      co_await pool.asyncDeploy(key, std::move(reqs), asio::use_awaitable);
                  for (const ActionResult& r : results) {
                    Json j = r.toJson();
                    j["event"] = "result";
                    j["key"] = key;
                    j["pid"] = pid;
                    emit(j);
                  }
                  emit(Json{{"event", "batch_done"}, {"pid", pid}, {"count", results.size()}});
                },
                asio::detached);
            emit(Json{{"event", "sent"}, {"pid", pid}});
            return readLine();
          }
          if (cmd.value("quiet", false)) {
            // Benchmark mode: one summary event per batch (counts per status, seconds from send to last
            // result).
            struct Tally {
              size_t left;
              std::map<std::string, size_t> statuses;
              std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
            };
            auto tally = std::make_shared<Tally>(Tally{reqs.size(), {}});
            p->deploy(std::move(reqs), [tally, pid](const ActionResult& r) {
              ++tally->statuses[r.status];
              if (--tally->left == 0)
                emit(Json{
                    {"event", "batch_done"},
                    {"pid", pid},
                    {"statuses", tally->statuses},
                    {"seconds",
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - tally->t0).count()}});
            });
            emit(Json{{"event", "sent"}, {"pid", pid}});
            return readLine();
          }
          p->deploy(std::move(reqs), [key, pid](const ActionResult& r) {
            Json j = r.toJson();
            j["event"] = "result";
            j["key"] = key;
            j["pid"] = pid;
            emit(j);
          });
          emit(Json{{"event", "sent"}, {"pid", pid}});
        }
      } else if (c == "stop_idle") {
        emit(Json{{"event", "stopped"},
                  {"count", pool.stopIdle(std::chrono::milliseconds(cmd.value("ms", 0)))}});
      } else if (c == "shutdown") {
        pool.shutdown([&] {
          emit(Json{{"event", "bye"}, {"started", pool.started()}, {"pids", pids}});
          io.stop();
        });
        return;
      } else {
        emit(Json{{"event", "error"}, {"message", "unknown command " + c}});
      }
      readLine();
    });
  };
  readLine();
  io.run();
  return 0;
}
