// The embedded mode behind `inmanta deploy [--dry-run] [--project DIR]` (seeds 000/002; EmbeddedDeploy.h),
// moved out of tools/DeployMain.cpp. In a project directory it
// starts a private PostgreSQL (initdb on first use under data/deploy, reused after), `inmanta server` (which
// starts the environment's scheduler, which starts executors), creates the project/environment once, compiles
// and exports the project, lets auto_deploy release it, shows a live progress line, prints a table of the
// final resource states, and stops everything it started — also on Ctrl-C/SIGTERM and on failure. Exit 1 if
// any resource failed. As root, PostgreSQL runs as the `postgres` user and its cluster lives in a
// postgres-accessible folder recorded in data/deploy/cluster (the project may sit where postgres cannot
// traverse, e.g. /root).
#include "embedded/EmbeddedDeploy.h"

#include "client/Client.h"
#include "model/Vocabulary.h"
#include "store/EmbeddedDb.h"
#include "support/Spawn.h"

#include <llvm/Support/raw_ostream.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <grp.h>
#include <iostream>
#include <map>
#include <pwd.h>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace inm::embedded {

namespace {

using model::DeployStatus;
using model::is;

volatile std::sig_atomic_t gStop = 0;
void onSignal(int) { gStop = 1; }

int freePort() {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(s);
    return 0; // no free loopback port: the callers stop with an error
  }
  int port = ntohs(a.sin_port);
  ::close(s);
  return port;
}

std::string pgBindir() {
  for (const char* v : {"15", "16", "17"}) {
    std::string d = std::string("/usr/lib/postgresql/") + v + "/bin";
    if (fs::exists(d + "/postgres")) return d;
  }
  return "";
}

/// A child process in its own session, optionally run as another user, output appended to its log.
struct Child {
  pid_t pid = -1;
  std::string what;
  bool alive() {
    if (pid <= 0) return false;
    if (!support::tryWait(pid)) return true;
    pid = -1; // reaped: never signalled again
    return false;
  }
  /// `sig`, then SIGKILL to its session's process group after `seconds`.
  void stop(int sig, int seconds) {
    if (pid <= 0) return;
    support::stopProcess(pid, sig, std::chrono::seconds(seconds), true);
    pid = -1;
  }
};

/// Moves a directory tree: a rename, or across file systems a copy (owned by uid:gid) and a removal. Returns
/// the error, or "" on success.
std::string moveTree(const fs::path& from, const fs::path& to, uid_t uid, gid_t gid) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (!ec) return "";
  if (ec != std::errc::cross_device_link) return ec.message();
  fs::copy(from, to, fs::copy_options::recursive | fs::copy_options::copy_symlinks, ec);
  if (ec) return "copying " + from.string() + ": " + ec.message();
  if (uid) {
    ::lchown(to.c_str(), uid, gid);
    for (auto it = fs::recursive_directory_iterator(to, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
      ::lchown(it->path().c_str(), uid, gid);
  }
  fs::remove_all(from, ec);
  return "";
}

/// Starts `argv` in its own session with stdin /dev/null and stdout/stderr appended to `log`; it inherits
/// no other descriptor. A start that fails is written to the log and gives a Child that is not alive.
Child spawn(const std::vector<std::string>& argv, const std::string& log, const std::string& cwd,
            uid_t uid = 0, gid_t gid = 0, const std::vector<std::pair<std::string, std::string>>& env = {}) {
  Child c;
  c.what = argv[0];
  int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  support::SpawnOptions so;
  so.argv = argv;
  so.cwd = cwd;
  so.newSession = true;
  if (fd >= 0) so.out = so.err = support::Stream::to(fd);
  if (uid != 0) so.runAs = std::pair{uid, gid};
  so.setEnv = env;
  auto child = support::spawn(so);
  if (fd >= 0) ::close(fd);
  if (!child) {
    std::ofstream(log, std::ios::app) << "inmanta deploy: " << llvm::toString(child.takeError()) << "\n";
    return c;
  }
  c.pid = child->pid;
  return c;
}

int runToEnd(const std::vector<std::string>& argv, const std::string& log, const std::string& cwd,
             uid_t uid = 0, gid_t gid = 0) {
  Child c = spawn(argv, log, cwd, uid, gid);
  return c.pid > 0 ? support::exitCode(support::waitExit(c.pid)) : 127;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

int runDeploy(const DeployOptions& options) {
  const bool dryRun = options.dryRun;
  const std::string& projectDir = options.projectDir;
  const std::string& self = options.executable;
  std::error_code ec;
  fs::path project = fs::weakly_canonical(fs::absolute(projectDir, ec), ec);
  if (!fs::exists(project / "main.cf")) {
    std::cerr << "inmanta deploy: " << (project / "main.cf").string()
              << " does not exist: run it in a project directory\n";
    return 2;
  }
  std::string bindir = pgBindir();
  if (bindir.empty()) {
    std::cerr << "inmanta deploy: PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin\n";
    return 1;
  }
  fs::path data = project / "data" / "deploy";
  fs::create_directories(data, ec);
  if (ec) {
    std::cerr << "inmanta deploy: cannot create " << data.string() << ": " << ec.message() << "\n";
    return 1;
  }
  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);

  // ---- PostgreSQL: as root it runs as `postgres`, its cluster in a folder that user can reach.
  uid_t pgUid = 0;
  gid_t pgGid = 0;
  fs::path cluster = data / "pg";
  fs::path parkTo; // as root: where the cluster is kept between runs (cluster is then the /var/tmp folder)
  if (::geteuid() == 0) {
    passwd* pw = ::getpwnam("postgres");
    if (!pw) {
      std::cerr << "inmanta deploy: running as root needs the `postgres` user to run PostgreSQL\n";
      return 1;
    }
    pgUid = pw->pw_uid;
    pgGid = pw->pw_gid;
    // The cluster is kept in data/deploy/pg between runs and runs from /var/tmp (postgres may not be able to
    // reach the project, e.g. under /root): moved there now, moved back by park() at the end. A folder
    // recorded in data/deploy/cluster (a run that was killed, or a version that never moved it back) is taken
    // as it is.
    std::string recorded = slurp((data / "cluster").string());
    while (!recorded.empty() && (recorded.back() == '\n' || recorded.back() == ' ')) recorded.pop_back();
    std::hash<std::string> h;
    fs::path work = !recorded.empty() && fs::exists(recorded)
                        ? fs::path(recorded)
                        : fs::path("/var/tmp") /
                              ("inmanta-deploy-" + std::to_string(h(project.string()) % 1000000000ULL));
    fs::create_directories(work, ec);
    ::chown(work.c_str(), pgUid, pgGid);
    if (!fs::exists(work / "data" / "PG_VERSION") && fs::exists(cluster / "data" / "PG_VERSION")) {
      std::string err = moveTree(cluster / "data", work / "data", pgUid, pgGid);
      if (!err.empty()) {
        std::cerr << "inmanta deploy: cannot move the PostgreSQL cluster to " << work.string() << ": " << err
                  << "\n";
        return 1;
      }
    }
    std::ofstream(data / "cluster") << work.string() << "\n";
    parkTo = cluster;
    cluster = work;
  }
  fs::create_directories(cluster, ec);
  if (ec) {
    std::cerr << "inmanta deploy: cannot create " << cluster.string() << ": " << ec.message() << "\n";
    return 1;
  }
  std::string pgLog = (data / "postgres.log").string();
  if (pgUid) {
    std::ofstream(pgLog, std::ios::app).close();
    ::chown(pgLog.c_str(), pgUid, pgGid);
  }
  fs::path pgdata = cluster / "data";
  if (!fs::exists(pgdata / "PG_VERSION")) {
    std::cout << "initializing PostgreSQL in " << pgdata.string() << "\n";
    if (runToEnd({bindir + "/initdb", "-D", pgdata.string(), "-U", "postgres", "--auth=trust", "-E", "UTF8"},
                 pgLog, cluster.string(), pgUid, pgGid) != 0) {
      std::cerr << "inmanta deploy: initdb failed (log: " << pgLog << ")\n";
      return 1;
    }
  }
  int pgPort = freePort();
  if (pgPort == 0) {
    std::cerr << "inmanta deploy: cannot find a free loopback port for PostgreSQL: " << std::strerror(errno)
              << "\n";
    return 1;
  }
  Child pg = spawn({bindir + "/postgres", "-D", pgdata.string(), "-p", std::to_string(pgPort), "-k",
                    cluster.string(), "-c", "listen_addresses=127.0.0.1"},
                   pgLog, cluster.string(), pgUid, pgGid);
  Child server;
  int exitCode = 1;
  auto cleanup = [&] {
    if (server.pid > 0) server.stop(SIGTERM, 20);
    if (pg.pid > 0) pg.stop(SIGINT, 30);
    if (!parkTo.empty()) { // PostgreSQL has exited: its cluster goes back under data/deploy, /var/tmp is left
                           // clean
      std::error_code rm;
      fs::remove_all(parkTo / "data", rm);
      fs::create_directories(parkTo, rm);
      std::string err = moveTree(cluster / "data", parkTo / "data", pgUid, pgGid);
      if (err.empty()) {
        fs::remove_all(cluster, rm);
        fs::remove(data / "cluster", rm);
      } else {
        std::cerr << "inmanta deploy: the PostgreSQL cluster stays in " << cluster.string()
                  << " (recorded in data/deploy/cluster): " << err << "\n";
      }
    }
  };
  std::string conn = "host=127.0.0.1 port=" + std::to_string(pgPort) + " user=postgres dbname=";
  auto waitDb = [&](const std::string& db) {
    for (int i = 0; i < 300 && !gStop; ++i) {
      if (store::EmbeddedDb::reachable(conn + db)) return true;
      if (!pg.alive()) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  };
  try {
    if (!waitDb("postgres")) {
      std::cerr << "inmanta deploy: PostgreSQL did not start (log: " << pgLog << ")\n";
      cleanup();
      return 1;
    }
    store::EmbeddedDb::ensureDatabase(conn + "postgres", "inmanta");
    // ---- the server (it runs the scheduler and the executors)
    int port = freePort();
    if (port == 0) {
      std::cerr << "inmanta deploy: cannot find a free loopback port for the server: " << std::strerror(errno)
                << "\n";
      cleanup();
      return 1;
    }
    std::string cfg = (data / "server.cfg").string();
    fs::create_directories(data / "state");
    std::ofstream(cfg)
        << "[database]\nhost = 127.0.0.1\nport = " << pgPort
        << "\nname = inmanta\nusername = postgres\n[server]\nbind-address = 127.0.0.1\nbind-port = " << port
        << "\n[config]\nstate-dir = " << (data / "state").string() << "\n";
    server = spawn({self, "server", "-c", cfg}, (data / "server.log").string(), project.string());
    client::Endpoint ep;
    ep.host = "127.0.0.1";
    ep.port = static_cast<uint16_t>(port);
    client::Client http(ep);
    bool up = false;
    for (int i = 0; i < 300 && !gStop && server.alive(); ++i) {
      auto r = http.send(client::Request{"GET", "/api/v2/health", {}, "", false});
      if (r) {
        up = true;
        break;
      }
      llvm::consumeError(r.takeError());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!up)
      throw std::runtime_error("the server did not start (log: " + (data / "server.log").string() + ")");
    // ---- project + environment (created once, reused)
    std::string env = slurp((data / "environment").string());
    while (!env.empty() && (env.back() == '\n' || env.back() == ' ')) env.pop_back();
    auto jsonOf = [](llvm::Expected<nlohmann::json> j, const std::string& what) {
      if (!j) throw std::runtime_error(what + ": " + llvm::toString(j.takeError()));
      return *j;
    };
    if (env.empty()) {
      nlohmann::json pbody{{"name", "deploy"}};
      auto p = jsonOf(http.call("PUT", "/api/v2/project", &pbody), "creating the project");
      std::string pid = p["data"]["id"];
      nlohmann::json ebody{{"project_id", pid}, {"name", "deploy"}};
      auto e = jsonOf(http.call("PUT", "/api/v2/environment", &ebody), "creating the environment");
      env = e["data"]["id"];
      std::ofstream(data / "environment") << env << "\n";
    }
    client::Endpoint epEnv = ep;
    epEnv.environment = env;
    client::Client api(epEnv);
    // The embedded mode's timers (§2): deploy interval off, repair every 600 s; dry-run = no auto release.
    for (auto [k, v] :
         std::vector<std::pair<std::string, nlohmann::json>>{{"autostart_agent_deploy_interval", "0"},
                                                             {"autostart_agent_repair_interval", "600"},
                                                             {"auto_deploy", !dryRun}}) {
      nlohmann::json body{{"value", v}};
      jsonOf(api.call("POST", "/api/v2/environment_settings/" + k, &body), "setting " + k);
    }
    store::EmbeddedDb db(conn + "inmanta");
    int before = db.latestVersion(env);
    // Everything from here on counts for the progress and the "changed" total.
    std::string since = db.now();
    // ---- compile + export
    std::cout << "compiling and exporting " << project.string() << "\n";
    std::string exportLog = (data / "export.log").string();
    // The example model puts everything under <project>/managed, owned by whoever runs the deploy.
    fs::create_directories(project / "managed");
    std::string userName = "root", groupName = "root";
    if (passwd* pw = ::getpwuid(::geteuid())) userName = pw->pw_name;
    if (struct group* gr = ::getgrgid(::getegid())) groupName = gr->gr_name;
    Child ex = spawn(
        {self, "export", "-e", env, "--server_address", "127.0.0.1", "--server_port", std::to_string(port)},
        exportLog, project.string(), 0, 0,
        {{"INM_DEPLOY_ROOT", (project / "managed").string()},
         {"INM_DEPLOY_USER", userName},
         {"INM_DEPLOY_GROUP", groupName}});
    int rc = ex.pid > 0 ? support::exitCode(support::waitExit(ex.pid)) : 127;
    if (rc != 0) {
      std::cerr << slurp(exportLog) << "inmanta deploy: compile/export failed (exit " << rc << ")\n";
      cleanup();
      return 1;
    }
    int version = db.latestVersion(env);
    if (version <= before) throw std::runtime_error("the export stored no new version");
    if (dryRun) {
      // Through the server's API, printed as `inmanta-cli dryrun request --wait` prints it (each change, and
      // the unified diff of file contents). The candidate version the dry run needed is deleted afterwards,
      // so dry runs leave no unreleased versions behind.
      std::cout << std::flush;
      int rc = options.dryRunReport({"--host", "127.0.0.1", "--port", std::to_string(port), "--no-ssl",
                                     "dryrun", "request", "-e", env, "--wait", std::to_string(version)});
      llvm::outs().flush();
      if (auto del = api.call("DELETE", "/api/v1/version/" + std::to_string(version)); !del)
        std::cerr << "inmanta deploy: could not delete version " << version
                  << ", stored for the dry run: " << llvm::toString(del.takeError()) << "\n";
      else
        std::cout << "Version " << version << " was stored for this dry run only and is deleted again.\n";
      exitCode = rc;
      cleanup();
      return exitCode;
    }
    // ---- a full deploy (repair) of everything: unchanged resources are checked too, so a file changed by
    // hand is put back; handlers that find nothing to do report `nochange`.
    db.requestRepair(env);
    // ---- progress until every resource of the version is done
    std::map<std::string, std::string> final;
    int changedCount = 0;
    auto started = std::chrono::steady_clock::now();
    for (;;) {
      if (gStop) throw std::runtime_error("interrupted");
      if (!server.alive())
        throw std::runtime_error("the server exited (log: " + (data / "server.log").string() + ")");
      store::DeployProgress progress = db.progress(env, version, since);
      int lp = progress.lastProcessedVersion;
      const std::vector<store::DeployProgressRow>& rows = progress.rows;
      int done = 0, failed = 0;
      changedCount = 0;
      std::map<std::string, std::pair<int, int>> perAgent;
      final.clear();
      for (const store::DeployProgressRow& row : rows) {
        const std::string& st = row.status;
        final[row.resourceId] = st;
        changedCount += row.changed;
        bool isDone = !is(st, DeployStatus::Available) && !is(st, DeployStatus::Deploying);
        done += isDone;
        failed += is(st, DeployStatus::Failed) || is(st, DeployStatus::Unavailable);
        auto& pa = perAgent[row.agent];
        pa.first += isDone;
        pa.second++;
      }
      std::string line = "deploying version " + std::to_string(version) + ": " + std::to_string(done) + "/" +
                         std::to_string(rows.size()) + " done, " + std::to_string(failed) + " failed |";
      for (const auto& [a, p] : perAgent)
        line += " " + a + " " + std::to_string(p.first) + "/" + std::to_string(p.second);
      std::cout << "\r" << line << "   " << std::flush;
      if (lp >= version && done == static_cast<int>(rows.size())) break;
      if (std::chrono::steady_clock::now() - started > std::chrono::minutes(30))
        throw std::runtime_error("timed out after 30 minutes");
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    std::cout << "\n";
    int bad = 0;
    std::printf("%-16s %s\n", "STATE", "RESOURCE");
    for (const auto& [id, st] : final) {
      std::printf("%-16s %s\n", st.c_str(), id.c_str());
      bad += is(st, DeployStatus::Failed) || is(st, DeployStatus::Unavailable) ||
             is(st, DeployStatus::Skipped) || is(st, DeployStatus::SkippedForUndefined);
    }
    std::cout << changedCount << " of " << final.size() << " resources changed\n";
    exitCode = bad ? 1 : 0;
    if (bad)
      std::cout << bad << " resource(s) did not deploy; logs: " << (data / "server.log").string() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "\ninmanta deploy: " << e.what() << "\n";
    exitCode = 1;
  }
  cleanup();
  return exitCode;
}

} // namespace inm::embedded
