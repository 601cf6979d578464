// The scheduler host (include/schedhost/SchedulerHost.h): the process loop of `inmanta scheduler`, moved out
// of tools/. It wires PostgreSQL (store/SchedulerStore.h), the state machine (scheduler/) and an executor
// behind scheduler::Executor (SchedulerExecutors.h, external agents in ExternalAgents.h). Threads: the state
// machine lives on the calling thread's io_context (its strand); a bounded pool of four threads runs the
// blocking database work: one LISTENs on `inmanta_scheduler`, one reads requests (and what they need:
// versions, agents, settings) and hands the results to the strand, one reads files for executors, one writes
// effects in order, batch after batch (a batch's deploy records split by resource over two connections, plus
// a short-lived thread for the second). Invariant: effects reach the writer in the order the state machine
// produced them, and a SIGTERM/SIGINT stops after the writer has flushed what it was given.
#include "schedhost/SchedulerHost.h"

#include "ExternalAgents.h"
#include "SchedulerExecutors.h"
#include "executor/ExecutorClient.h"
#include "executor/Handler.h"
#include "model/Vocabulary.h"
#include "scheduler/RunPair.h"
#include "scheduler/Scheduler.h"
#include "scheduler/WorkerPool.h"
#include "store/ExternalAgentRows.h"
#include "store/SchedulerStore.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <dlfcn.h>
#include <filesystem>
#include <iostream>
#include <malloc.h>
#include <map>
#include <thread>
#include <unistd.h>

namespace asio = boost::asio;

namespace inm::schedhost {

using namespace inm::scheduler;

namespace {

/// Gives the allocator's free memory back to the system after a version was loaded or written (issue #30):
/// the version's transient buffers (result pages, intents before they are moved, the rps write's rows and
/// statement text) are freed by then, and tcmalloc, which the scheduler runs on (tools/StartUp.cpp), keeps
/// freed spans mapped for reuse, so without this they stay in the resident set for the whole deploy that
/// follows. glibc malloc (sanitizer builds, INM_STARTUP_EXEC) gets malloc_trim. A few ms per version.
void releaseFreeMemory() {
  using Release = void (*)();
  static Release tcmallocRelease =
      reinterpret_cast<Release>(::dlsym(RTLD_DEFAULT, "MallocExtension_ReleaseFreeMemory"));
  if (tcmallocRelease)
    tcmallocRelease();
  else
    ::malloc_trim(0);
}

struct SystemClock : Clock {
  TimePoint now() const override { return std::chrono::system_clock::now(); }
};

void processLog(const std::string& env, const std::string& msg) {
  auto t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  std::fprintf(stderr, "%s scheduler[%s] %s\n", buf, env.substr(0, 8).c_str(), msg.c_str());
  std::fflush(stderr);
}

long peakRssKiB() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

} // namespace

int runScheduler(const HostOptions& o) {
  const std::string& env = o.environment;
  const pg::DbParams& db = o.db;
  const int verbose = o.verbose;
  const std::chrono::seconds stopGrace = o.stopGrace;
  // Five connections: start-up reads and handler code on the strand, the ordered writer's two (a batch is
  // split by resource and written by both in parallel), the listener, the request reader.
  std::unique_ptr<pg::SchedulerStore> conns[5];
  for (auto& c : conns) {
    auto s = pg::SchedulerStore::connect(db, env);
    if (!s) {
      std::cerr << "inmanta scheduler: " << llvm::toString(s.takeError()) << "\n";
      return 1;
    }
    c = std::move(*s);
  }
  pg::SchedulerStore& store = *conns[0];
  // One scheduler per environment, ever: a scheduler whose server was killed finishes its running deploys
  // (stop grace) before it exits, and a restarted server's new scheduler waits for it here instead of
  // deploying the same resources beside it.
  for (bool waited = false;;) {
    auto locked = store.tryLockEnvironment();
    if (!locked) {
      std::cerr << "inmanta scheduler: " << llvm::toString(locked.takeError()) << "\n";
      return 1;
    }
    if (*locked) {
      if (waited) processLog(env, "the previous scheduler of this environment stopped; starting");
      break;
    }
    if (!waited) processLog(env, "waiting for the previous scheduler of this environment to stop");
    waited = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  std::unique_ptr<pg::SchedulerStore>* writeStore = &conns[1];
  std::unique_ptr<pg::SchedulerStore>* listenStore = &conns[2];
  std::unique_ptr<pg::SchedulerStore>* writeStore2 = &conns[3];
  pg::SchedulerStore* readStore = conns[4].get();

  asio::io_context ioc;
  // The listener loop, the ordered writer, file reads for executors, request reads. The listener keeps one
  // thread for good and the others share the rest, so two threads do (slower), one does not. A refused thread
  // (EAGAIN under a process or thread limit) is a clear error or a warning, never an abort.
  scheduler::WorkerPool workers(4);
  if (workers.threads() < 2) {
    std::cerr << "inmanta scheduler: cannot start its database threads: " << workers.threads()
              << " of 4 started, at least 2 are needed (" << workers.refusal()
              << "; is a process or thread limit such as `ulimit -u` too low?)\n";
    return 1;
  }
  if (workers.threads() < 4)
    processLog(env, "warning: only " + std::to_string(workers.threads()) +
                        " of 4 database threads started (" + workers.refusal() +
                        "); the writer, the request reader and file reads share them");
  asio::io_context& pool = workers.context();
  auto writer = asio::make_strand(pool);
  auto reader = asio::make_strand(pool);
  std::atomic<bool> stopping{false};
  std::atomic<long> pendingWrites{0};
  SystemClock clock;
  ExecutorRef execRef;
  SchedulerState state(execRef, clock);
  state.setMaxInFlight(static_cast<size_t>(o.maxInFlight));
  asio::steady_timer timer(ioc);
  std::map<std::string, bool> agentsPaused;
  int exitCode = 0;

  auto say = [&](const std::string& m) { processLog(env, m); };

  std::function<void()> drain;
  std::function<void()> armTimer;
  // Effects are drained only when the writer is idle: while a transaction runs, everything the state machine
  // does accumulates into the next Effects, so the batch size adapts to the database's speed.
  bool writeInFlight = false, drainWanted = false;
  // Back-pressure: when this many start/finish records wait for the busy writer, nothing new starts until the
  // writer catches up (bounds memory; the database is the bottleneck then anyway).
  constexpr size_t kMaxPendingRecords = 20000;
  // Starts of deploys still running are held back this long (docs/deploy.md "Writing the action log"): most
  // finish meanwhile and are written as one completed row. The hold timer drains again for the rest.
  constexpr std::chrono::milliseconds kHoldStarts{300};
  std::atomic<int64_t> batchSeq{0}; // write batch keys of this process (epoch SchedulerStore::epoch())
  asio::steady_timer holdTimer(ioc);
  bool holdArmed = false;
  drain = [&] {
    if (writeInFlight) {
      drainWanted = true;
      if (state.pendingEffects() > kMaxPendingRecords) state.setBackpressure(true);
      return;
    }
    state.setBackpressure(false);
    Effects e = state.takeEffects(stopping ? std::chrono::milliseconds(0) : kHoldStarts);
    if (state.heldStarts() > 0 && !holdArmed && !stopping) {
      holdArmed = true;
      holdTimer.expires_after(kHoldStarts / 2);
      holdTimer.async_wait([&](const boost::system::error_code& ec) {
        holdArmed = false;
        if (!ec) drain();
      });
    }
    for (const auto& l : e.log)
      if (verbose > 0 || l.rfind("warning", 0) == 0) say(l);
    if (e.version)
      say("processed version " + std::to_string(e.version->version) + " (" +
          std::to_string(e.version->rows.size()) + " new or changed, " +
          std::to_string(e.version->orphans.size()) + " orphaned)");
    if (e.empty()) return;
    writeInFlight = true;
    pendingWrites++;
    asio::post(writer, [&, e = std::move(e)]() mutable {
      auto writeOne = [&](std::unique_ptr<pg::SchedulerStore>* conn, const Effects& part) {
        if (part.empty()) return;
        // One key per part, kept across the retries: a retry after a lost COMMIT answer is a no-op when
        // the first attempt landed (SchedulerStore::write, migration 009).
        const int64_t seq = batchSeq.fetch_add(1);
        for (int attempt = 0;; ++attempt) {
          auto t0 = std::chrono::steady_clock::now();
          auto err = (*conn)->write(part, seq);
          if (verbose > 1)
            say("wrote " + std::to_string(part.starts.size()) + " starts, " +
                std::to_string(part.finishes.size()) + " finishes in " +
                std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::steady_clock::now() - t0)
                                   .count()) +
                " ms");
          if (!err) {
            // Deleted or cleared under us (migration 008): stop like on SIGTERM; the supervisor starts a
            // fresh scheduler for a cleared environment.
            static std::atomic<bool> told{false};
            if (pg::SchedulerStore::environmentGone() && !stopping && !told.exchange(true)) {
              say("the environment was deleted or cleared; stopping (nothing more is written)");
              ::kill(::getpid(), SIGTERM);
            }
            break;
          }
          say("error: " + llvm::toString(std::move(err)) + (stopping ? "" : " (retrying)"));
          if (stopping && attempt > 3) break;
          std::this_thread::sleep_for(std::chrono::milliseconds(std::min(5000, 200 * (attempt + 1))));
          // Reconnect: the connection may be gone.
          if (auto fresh = pg::SchedulerStore::connect(db, env))
            *conn = std::move(*fresh);
          else
            llvm::consumeError(fresh.takeError());
        }
      };
      // The version part first and alone (it resets new resources' deploy columns), then the deploy records
      // split by resource over both writer connections; the batch is done when both committed.
      auto split = pg::splitForWriters(std::move(e), 2);
      if (split.version) {
        writeOne(writeStore, *split.version);
        split.version.reset();
        releaseFreeMemory(); // the version's rows and their statement texts
      }
      // A refused thread (EAGAIN: a process or thread limit): the second shard after the first, not an abort.
      scheduler::runPair([&] { writeOne(writeStore, split.shards[0]); },
                         [&] { writeOne(writeStore2, split.shards[1]); },
                         [&](const std::string& why) {
                           say("warning: cannot start the second writer thread (" + why +
                               "); writing the second part after the first");
                         });
      pendingWrites--;
      asio::post(ioc, [&] {
        writeInFlight = false;
        if (drainWanted) {
          drainWanted = false;
          drain();
        }
      });
    });
  };
  armTimer = [&] {
    auto next = state.nextTimer();
    if (!next) {
      timer.cancel();
      return;
    }
    auto delay = *next - std::chrono::system_clock::now();
    if (delay < std::chrono::milliseconds(0)) delay = std::chrono::milliseconds(0);
    timer.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(delay) +
                        std::chrono::milliseconds(1));
    timer.async_wait([&](const boost::system::error_code& ec) {
      if (ec) return;
      state.fireTimers();
      drain();
      armTimer();
    });
  };
  auto step = [&] {
    drain();
    armTimer();
  };

  auto deliver = [&](std::vector<WorkResult> results) {
    state.onResults(std::move(results));
    step();
  };
  // Files for executors (File content by hash) are read on their own connection, on the DB pool.
  auto fileStore = pg::SchedulerStore::connect(db, env);
  if (!fileStore) {
    std::cerr << "inmanta scheduler: " << llvm::toString(fileStore.takeError()) << "\n";
    return 1;
  }
  auto fileStrand = asio::make_strand(pool);
  executor::FileProvider files = [&](const std::string& hash,
                                     std::function<void(std::optional<std::string>)> reply) {
    asio::post(fileStrand, [&, hash, reply] {
      auto content = (*fileStore)->readFile(hash);
      if (!content) {
        say("error: " + llvm::toString(content.takeError()));
        reply(std::nullopt);
        return;
      }
      reply(std::move(*content));
    });
  };
  executor::ExecutorOptions exOptions;
  exOptions.threads = o.executorThreads;
  // ssh:// agents (docs/deploy.md "Agentless over SSH"): which known_hosts and key the executors' ssh uses.
  exOptions.arguments.insert(exOptions.arguments.end(), o.executorArguments.begin(),
                             o.executorArguments.end());
  InProcessNullExecutor nullExec(ioc, deliver);
  std::unique_ptr<ProcessExecutor> procExec;
  std::unique_ptr<ExternalAgents> externals;
  if (o.executorKind == "process") {
    // Handler code: read on the state machine's connection (once per version and agent), laid out under the
    // state dir the server uses.
    CodeSource code;
    code.load = [&](int version, const std::string& agent) { return store.loadCode(version, agent); };
    code.readFile = [&](const std::string& hash) { return store.readFile(hash); };
    std::error_code ec;
    std::filesystem::path codeDir = std::filesystem::absolute(o.stateDir, ec) / "executor-code";
    code.dir = codeDir.string();
    procExec = std::make_unique<ProcessExecutor>(ioc, exOptions, files, deliver, std::move(code));
    // Current contents that executors offer (a file handler's read) go to the file table, so dry-run reports
    // and the console can show content diffs (docs/server.md). ExecutorProcess checked the hash.
    procExec->setFileSink([&](const std::string& hash, const std::string& content) {
      asio::post(fileStrand, [&, hash, content] {
        if (llvm::Error err = (*fileStore)->storeFile(hash, content))
          say("error: " + llvm::toString(std::move(err)));
      });
    });
    // std::AgentConfig writes autostart_agent_map on the file connection (docs/deploy.md "Agentless over
    // SSH").
    procExec->setAgentUriWriter([&](const std::string& agent, std::optional<std::string> uri,
                                    std::function<void(std::string)> reply) {
      asio::post(fileStrand, [&, agent, uri, reply] {
        llvm::Error err = (*fileStore)->setAgentUri(agent, uri);
        reply(err ? llvm::toString(std::move(err)) : std::string());
      });
    });
    execRef.target = procExec.get();
    // External agents (docs/deploy.md): the server relays `inmanta agent` connections to this socket.
    std::vector<std::string> known;
    if (auto err = pg::resetExternalAgents(db.connString(), env, known); !err.empty()) {
      std::cerr << "inmanta scheduler: " << err << "\n";
      return 1;
    }
    // [agent] failover-timeout (docs/deploy.md "Failover"): an external session that does not answer the
    // heartbeat for this long is closed, so a standby takes over within it; a closed connection at once.
    executor::ExecutorOptions externalOptions = exOptions;
    externalOptions.heartbeatTimeout = o.failoverTimeout - externalOptions.heartbeatInterval;
    externals = std::make_unique<ExternalAgents>(
        ioc, externalOptions, files,
        [&](const std::vector<pg::ExternalAgentRecord>& records) {
          asio::post(fileStrand, [&, records] {
            auto err = pg::recordExternalAgents(db.connString(), env, records);
            if (!err.empty()) say("error: " + err);
          });
        },
        say,
        [&](const std::vector<std::string>& agents) {
          state.userDeploy(agents, false); // a (re)claimed agent catches up at once
          step();
        });
    externals->setKnown(known);
    // An external agent asks for the handler code of the versions it runs (`get_code`); read on the file
    // connection, off the state machine's thread. The files themselves follow as `get_file`.
    externals->setCodeProvider(
        [&](int version, const std::string& agent, std::function<void(const executor::Json&)> reply) {
          asio::post(fileStrand, [&, version, agent, reply] {
            auto code = (*fileStore)->loadCode(version, agent);
            if (!code)
              return reply(executor::Json("cannot read the handler code of version " +
                                          std::to_string(version) + ": " + llvm::toString(code.takeError())));
            executor::Json files = executor::Json::array();
            for (const auto& f : *code)
              files.push_back({{"module", f.module}, {"path", f.path}, {"hash", f.hash}});
            reply(files);
          });
        });
    if (!o.agentSocketPath.empty())
      if (auto err = externals->listen(o.agentSocketPath); !err.empty())
        say("warning: " + err + " (no external agents)");
    procExec->setExternalAgents(externals.get());
    // [agent] executor-retention-time (readConfig): an idle executor is kept this long; 0 keeps them.
    procExec->retireIdle(o.executorRetention, say);
  } else {
    execRef.target = &nullExec;
  }

  // Requests: the blocking reads (requests, versions, agents, settings, dry-run preparation) run on the
  // reader connection off the state machine's thread; what they found is applied on the strand, in request
  // order. `collectRequests` runs on the reader; the closures it returns run on the strand. One collection at
  // a time (readerBusy), so the managed version it reads after stays the one the state machine has.
  using Apply = std::function<void()>;
  std::map<std::string, bool> agentsPausedSnapshot; // for dry-run preparation on the reader (copy per round)
  auto applyAgents = [&](std::map<std::string, bool> agents) {
    for (const auto& [name, paused] : agents) {
      auto it = agentsPaused.find(name);
      if (it == agentsPaused.end() || it->second != paused) state.setAgentPaused(name, paused);
    }
    agentsPaused = std::move(agents);
  };
  auto readAgents = [&](pg::SchedulerStore& from) -> Apply {
    auto agents = from.loadAgents();
    if (!agents) {
      say("error: " + llvm::toString(agents.takeError()));
      return [] {};
    }
    return [&, a = std::move(*agents)]() mutable { applyAgents(std::move(a)); };
  };
  bool resetOnStart = false;
  auto readSettings = [&](pg::SchedulerStore& from) -> Apply {
    auto info = from.loadEnvironment();
    if (!info) {
      say("error: " + llvm::toString(info.takeError()));
      return [] {};
    }
    for (const auto& e : info->settingErrors) say("error: " + e + " (using the default)");
    return [&, i = std::move(*info)] {
      resetOnStart = i.resetDeployProgressOnStart;
      state.setSettings(i.settings);
      state.setHalted(i.halted);
      if (procExec) procExec->setAgentUris(i.agentUris);
    };
  };
  auto readVersions = [&](pg::SchedulerStore& from, int managed) -> Apply {
    auto versions = from.releasedVersionsAfter(managed);
    if (!versions) {
      say("error: " + llvm::toString(versions.takeError()));
      return [] {};
    }
    if (versions->empty()) return [] {};
    // The version's intents are moved, not copied: into the change set, then into the state machine.
    return [&, v = std::move(*versions)]() mutable {
      state.applyVersion(plan::foldVersions(state.managedLookup(), state.managedVersion(), std::move(v)));
      releaseFreeMemory(); // the rows, the snapshot and the change set are gone
    };
  };
  auto collectRequests = [&](pg::SchedulerStore& from, int managed,
                             const std::map<std::string, bool>& paused) -> std::vector<Apply> {
    std::vector<Apply> out;
    auto reqs = from.takeRequests();
    if (!reqs) {
      say("error: " + llvm::toString(reqs.takeError()));
      return out;
    }
    bool versionsRead = false;
    for (const auto& q : *reqs) {
      if (verbose > 0) say("request " + q.kind + " " + q.payload.dump());
      const auto& p = q.payload;
      std::optional<model::SchedulerRequestKind> kind = model::parseSchedulerRequestKind(q.kind);
      if (!kind) {
        say("error: unknown scheduler request kind '" + q.kind + "' (id " + std::to_string(q.id) + ")");
        continue;
      }
      using Kind = model::SchedulerRequestKind;
      switch (*kind) {
      case Kind::ReadVersion:
        if (!versionsRead) out.push_back(readVersions(from, managed));
        versionsRead = true;
        break;
      case Kind::Deploy: {
        std::vector<std::string> agents;
        if (p.is_object() && p.contains("agents") && p["agents"].is_array())
          for (const auto& a : p["agents"])
            if (a.is_string()) agents.push_back(a.get<std::string>());
        bool repair = p.is_object() && p.value("repair", false);
        out.push_back([&, agents, repair] { state.userDeploy(agents, repair); });
        break;
      }
      case Kind::Dryrun: {
        if (!p.is_object() || !p.contains("id") || !p.contains("version") || !p["id"].is_string() ||
            !p["version"].is_number_integer()) {
          say("error: dryrun request " + std::to_string(q.id) + " needs " +
              std::string(model::payloadShape(*kind)) + ", got " + p.dump());
          continue;
        }
        auto todo = from.prepareDryrun(p["id"].get<std::string>(), p["version"].get<int>(), paused);
        if (!todo) {
          say("error: " + llvm::toString(todo.takeError()));
          continue;
        }
        out.push_back([&, id = p["id"].get<std::string>(), version = p["version"].get<int>(),
                       t = std::move(*todo)] { state.requestDryrun(id, version, t); });
        break;
      }
      case Kind::AgentsChanged: out.push_back(readAgents(from)); break;
      case Kind::GetFact:
        if (p.is_object() && p.contains("resource_id") && p["resource_id"].is_string())
          out.push_back([&, id = p["resource_id"].get<std::string>()] { state.requestFacts(id); });
        else
          say("error: get_fact request " + std::to_string(q.id) + " needs " +
              std::string(model::payloadShape(*kind)) + ", got " + p.dump());
        break;
      case Kind::SettingsChanged: out.push_back(readSettings(from)); break;
      case Kind::Halt: out.push_back([&] { state.setHalted(true); }); break;
      case Kind::Resume:
        out.push_back([&] { state.setHalted(false); });
        out.push_back(readAgents(from));
        break;
      }
    }
    // cheap when nothing is new; catches a release whose request we missed
    if (!versionsRead) out.push_back(readVersions(from, managed));
    return out;
  };
  // Start: synchronous, on the strand (nothing runs yet).
  auto handleRequestsNow = [&] {
    for (auto& apply : collectRequests(store, state.managedVersion(), agentsPaused)) apply();
    step();
  };
  bool readerBusy = false, readerAgain = false;
  std::function<void()> handleRequests;
  handleRequests = [&] {
    if (readerBusy) {
      readerAgain = true;
      return;
    }
    readerBusy = true;
    agentsPausedSnapshot = agentsPaused;
    asio::post(reader, [&, managed = state.managedVersion()] {
      auto applies = collectRequests(*readStore, managed, agentsPausedSnapshot);
      asio::post(ioc, [&, applies = std::move(applies)] {
        for (auto& apply : applies) apply();
        step();
        readerBusy = false;
        if (readerAgain) {
          readerAgain = false;
          handleRequests();
        }
      });
    });
  };

  // ---- start (§6.10)
  auto managed = store.ensureSchedulerRow();
  if (!managed) {
    std::cerr << "inmanta scheduler: " << llvm::toString(managed.takeError()) << "\n";
    return 1;
  }
  auto persisted = store.loadPersistedAndClearDeploying();
  if (!persisted) {
    std::cerr << "inmanta scheduler: " << llvm::toString(persisted.takeError()) << "\n";
    return 1;
  }
  readSettings(store)();
  if (*managed > 0) {
    auto intents = store.loadVersion(*managed);
    if (!intents) {
      std::cerr << "inmanta scheduler: " << llvm::toString(intents.takeError()) << "\n";
      return 1;
    }
    if (resetOnStart) {
      say("reset_deploy_progress_on_start is set: every resource counts as new");
      persisted->clear();
    }
    state.restore(*managed, std::move(*intents), *persisted);
  }
  *persisted = {}; // read once: the state machine holds what it needs
  releaseFreeMemory();
  readAgents(store)();
  say("started; managing version " + std::to_string(*managed) + " with " +
      std::to_string(state.resourceCount()) + " resources");
  if (auto err = (*listenStore)->listen()) {
    std::cerr << "inmanta scheduler: " << llvm::toString(std::move(err)) << "\n";
    return 1;
  }
  handleRequestsNow();
  state.startDeploying();
  step();

  // ---- the listener: notifications (and a periodic poll as a safety net) post handleRequests to the strand
  asio::post(pool, [&] {
    int idle = 0;
    while (!stopping) {
      auto got = (*listenStore)->waitNotification(500);
      bool wake = false;
      if (!got) {
        say("error: " + llvm::toString(got.takeError()) + " (reconnecting)");
        std::this_thread::sleep_for(std::chrono::seconds(1));
        if (auto fresh = pg::SchedulerStore::connect(db, env)) {
          *listenStore = std::move(*fresh);
          if (auto e = (*listenStore)->listen()) llvm::consumeError(std::move(e));
        } else {
          llvm::consumeError(fresh.takeError());
        }
        wake = true;
      } else {
        wake = *got || ++idle >= 4;
      }
      if (wake) {
        idle = 0;
        asio::post(ioc, handleRequests);
      }
    }
  });

  // Stop: nothing new starts from the signal on; the deploys already running get `stopGrace` to report (their
  // results are written like any other), then the writer flushes and the executors are reaped. A deploy still
  // running at the deadline dies with its executor and is scheduled again by the next start (§17.6); a
  // finished one is never run again, since its record was written before the exit.
  asio::signal_set signals(ioc, SIGINT, SIGTERM);
  asio::steady_timer stopTimer(ioc);
  auto stopStarted = std::chrono::steady_clock::now();
  std::function<void()> waitRunning = [&] {
    if (state.inFlight() == 0 || std::chrono::steady_clock::now() - stopStarted >= stopGrace) {
      if (state.inFlight() > 0)
        say("stop grace of " + std::to_string(stopGrace.count()) + " s over; " +
            std::to_string(state.inFlight()) + " deploys still running are left for the next start");
      ioc.stop();
      return;
    }
    stopTimer.expires_after(std::chrono::milliseconds(50));
    stopTimer.async_wait([&](const boost::system::error_code& e) {
      if (!e) waitRunning();
    });
  };
  signals.async_wait([&](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    say(std::string("stopping on ") + (sig == SIGINT ? "SIGINT" : "SIGTERM") + "; " +
        std::to_string(state.inFlight()) + " deploys running");
    stopping = true;
    state.stopStarting();
    timer.cancel();
    holdTimer.cancel();
    stopStarted = std::chrono::steady_clock::now();
    waitRunning();
  });
  auto work = asio::make_work_guard(ioc);
  ioc.run();
  // Flush what the state machine produced since the last write.
  if (writeInFlight || drainWanted || true) {
    ioc.restart();
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (writeInFlight && std::chrono::steady_clock::now() < deadline)
      ioc.run_one_for(std::chrono::milliseconds(100));
    drainWanted = false;
    drain();
    while (writeInFlight && std::chrono::steady_clock::now() < deadline)
      ioc.run_one_for(std::chrono::milliseconds(100));
  }
  if (procExec) {
    // Reap the executors (in-flight work dies with them; restart redeploys it, §17.6).
    ioc.restart();
    bool down = false;
    procExec->shutdown([&] { down = true; });
    while (!down && ioc.run_one_for(std::chrono::seconds(10)) > 0) {
    }
    if (externals) {
      bool gone = false;
      externals->shutdown([&] { gone = true; });
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (!gone && std::chrono::steady_clock::now() < deadline &&
             ioc.run_one_for(std::chrono::seconds(1)) > 0) {
      }
    }
  }
  stopping = true;
  workers.join();
  say("stopped; " + std::to_string(state.stats().deploysFinished) + " deploys finished, peak RSS " +
      std::to_string(peakRssKiB() / 1024) + " MiB");
  return exitCode;
}

} // namespace inm::schedhost
