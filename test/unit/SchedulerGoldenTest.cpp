// Scheduler goldens (issue #26): test/scheduler/*.sched are scripts of events for the pure state machine
// (orchestrator/scheduler/Scheduler.h) with, after each event, the effects it must produce — so a change in
// scheduling behaviour shows up as a reviewed diff of those files. One test per file
// (SchedulerGolden/<file>). INM_UPDATE_GOLDENS=1 rewrites the expected effects from what the state machine
// does now.
//
// Script lines (`#` lines and blank lines are kept as they are):
//   > settings [parallelism=N] [deploy=SECONDS|CRON] [repair=SECONDS|CRON]
//   > release V: SPEC; SPEC; …      one released version (SPEC = name[@agent] [hash=H] [requires=a,b@x]
//                                   [undefined] [fail] [noevent])
//   > run                           the executor answers every submitted task, round after round, until idle
//   > finish NAME[@agent] [STATUS]  the executor answers one running task (NullResource semantics, or STATUS)
//   > advance SECONDS               the clock moves on; due timers fire
//   > deploy|repair [AGENT…]        a user's deploy / repair
//   > pause|unpause AGENT  ·  > halt|resume  ·  > dryrun V
// After each event, indented, the effects it caused: `submit` (what the executor was handed), `start`,
// `finish`, `blocked`, `version`, `dryrun`, `log`, in the order the state machine recorded them; resources
// print as name@agent. The fake clock and executor are those of SchedulerFixture.h.
#include "SchedulerFixture.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace inm::scheduler::test {
namespace {

namespace fs = std::filesystem;

fs::path goldenDir() { return fs::path(INM_SOURCE_DIR) / "test" / "scheduler"; }

std::vector<std::string> goldenFiles() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(goldenDir(), ec))
    if (e.path().extension() == ".sched") names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

/// "t::R[agent,name=x]" -> "x@agent" (the fixture's ids), anything else as is.
std::string shortId(const std::string& id) {
  size_t open = id.find('['), comma = id.find(",name=");
  if (open == std::string::npos || comma == std::string::npos || id.back() != ']') return id;
  return id.substr(comma + 6, id.size() - comma - 7) + "@" + id.substr(open + 1, comma - open - 1);
}

/// "x" or "x@agent" -> the fixture's id.
std::string longId(const std::string& s) {
  size_t at = s.find('@');
  return at == std::string::npos ? rid(s) : rid(s.substr(0, at), s.substr(at + 1));
}

const char* kindName(TaskKind k) {
  return k == TaskKind::Deploy ? "deploy" : k == TaskKind::DryRun ? "dryrun" : "facts";
}

class Driver : public SchedulerTest {
 public:
  void TestBody() override {}
  using SchedulerTest::SetUp;

  /// Runs one event line; returns the effect lines it caused.
  std::vector<std::string> event(const std::string& line) {
    std::vector<std::string> w = words(line);
    std::vector<std::string> out;
    std::vector<std::string> submitted; // tasks handed to the executor by this event, in order
    auto collect = [&] {
      for (const WorkItem& item : exec.pending)
        if (handedOver_.insert(item.taskId).second)
          submitted.push_back(std::string(kindName(item.kind)) == "deploy"
                                  ? shortId(item.resourceId)
                                  : shortId(item.resourceId) + "(" + kindName(item.kind) + ")");
    };
    if (w.empty()) return {"error: empty event"};
    const std::string& cmd = w[0];
    if (cmd == "settings") {
      Settings st = s->settings();
      for (size_t i = 1; i < w.size(); ++i) {
        size_t eq = w[i].find('=');
        std::string k = w[i].substr(0, eq), v = eq == std::string::npos ? "" : w[i].substr(eq + 1);
        for (char& c : v)
          if (c == '_') c = ' '; // cron fields joined by '_' in the script
        if (k == "parallelism") {
          st.agentParallelism = std::stoi(v);
        } else if (k == "deploy" || k == "repair") {
          auto t = TimerSetting::parse(k, v);
          if (!t) return {"error: " + llvm::toString(t.takeError())};
          (k == "deploy" ? st.deployInterval : st.repairInterval) = *t;
        } else {
          return {"error: unknown setting " + k};
        }
      }
      s->setSettings(st);
    } else if (cmd == "release") {
      size_t colon = line.find(':');
      if (w.size() < 2 || colon == std::string::npos) return {"error: release V: SPEC; …"};
      int v = std::stoi(w[1]);
      std::vector<Spec> specs;
      std::istringstream in(line.substr(colon + 1));
      for (std::string item; std::getline(in, item, ';');) {
        std::vector<std::string> f = words(item);
        if (f.empty()) continue;
        Spec sp;
        size_t at = f[0].find('@');
        sp.name = f[0].substr(0, at);
        if (at != std::string::npos) sp.agent = f[0].substr(at + 1);
        for (size_t i = 1; i < f.size(); ++i) {
          if (f[i].rfind("hash=", 0) == 0)
            sp.hash = f[i].substr(5);
          else if (f[i].rfind("requires=", 0) == 0) {
            std::istringstream r(f[i].substr(9));
            for (std::string q; std::getline(r, q, ',');) sp.reqs.push_back(longId(q));
          } else if (f[i] == "undefined")
            sp.undefined = true;
          else if (f[i] == "fail")
            sp.fail = true;
          else if (f[i] == "noevent")
            sp.sendEvent = false;
          else
            return {"error: unknown resource flag " + f[i]};
        }
        specs.push_back(sp);
      }
      release(v, specs);
      versions_[v] = specs;
    } else if (cmd == "run") {
      // Like runAll, recording what each round handed over.
      for (int round = 0; round < 10000 && !exec.pending.empty(); ++round) {
        collect();
        std::vector<WorkItem> batch;
        batch.swap(exec.pending);
        std::vector<WorkResult> results;
        for (auto& item : batch) results.push_back(outcome(item));
        s->onResults(results);
      }
      if (!exec.pending.empty()) out.push_back("error: did not quiesce");
    } else if (cmd == "finish") {
      if (w.size() < 2) return {"error: finish NAME [STATUS]"};
      std::optional<WorkItem> taken = takePending(exec, longId(w[1]));
      if (!taken) return {"error: " + w[1] + " is not running"};
      WorkResult r = outcome(*taken);
      if (w.size() > 2) r.status = w[2];
      s->onResults({r});
    } else if (cmd == "advance") {
      if (w.size() != 2) return {"error: advance SECONDS"};
      clock.t += std::chrono::seconds(std::stoll(w[1]));
      s->fireTimers();
    } else if (cmd == "deploy" || cmd == "repair") {
      s->userDeploy(std::vector<std::string>(w.begin() + 1, w.end()), cmd == "repair");
    } else if (cmd == "pause" || cmd == "unpause") {
      if (w.size() != 2) return {"error: " + cmd + " AGENT"};
      s->setAgentPaused(w[1], cmd == "pause");
    } else if (cmd == "halt" || cmd == "resume") {
      s->setHalted(cmd == "halt");
    } else if (cmd == "dryrun") {
      if (w.size() != 2 || !versions_.count(std::stoi(w[1]))) return {"error: dryrun V (a released version)"};
      std::vector<Intent> res;
      for (const Spec& sp : versions_[std::stoi(w[1])]) res.push_back(intent(sp));
      s->requestDryrun("dryrun-" + w[1], std::stoi(w[1]), res);
    } else {
      return {"error: unknown event " + cmd};
    }
    collect(); // what runs now and was not reported yet
    std::set<uint64_t> running;
    for (const WorkItem& item : exec.pending) running.insert(item.taskId);
    handedOver_.swap(running);
    if (!submitted.empty()) {
      std::string l = "submit";
      for (const auto& id : submitted) l += " " + id;
      out.push_back(l);
    }
    describe(s->takeEffects(), out);
    return out;
  }

 private:
  std::map<int, std::vector<Spec>> versions_;
  std::set<uint64_t> handedOver_; ///< tasks already reported as submitted

  static void describe(const Effects& e, std::vector<std::string>& out) {
    if (e.version) {
      std::string l = "version " + std::to_string(e.version->version) + ":";
      for (const auto& r : e.version->rows)
        l += " " + shortId(r.resourceId) + (r.fresh ? "(new" : "(updated") +
             (r.undefined ? ",undefined" : "") + (r.blocked == Blocked::Blocked ? ",blocked" : "") + ")";
      for (const auto& o : e.version->orphans) l += " " + shortId(o.resourceId) + "(orphan)";
      out.push_back(l);
    }
    // Starts, finishes and blocked changes in the order the state machine recorded them.
    std::vector<std::pair<uint64_t, std::string>> ordered;
    for (const auto& st : e.starts) {
      nlohmann::json lines = st.lines();
      std::string reason = !lines.empty() && lines[0].is_object() ? lines[0].value("msg", "") : "";
      ordered.push_back({st.seq, "start " + std::string(kindName(st.kind)) + " " + shortId(st.resourceId) +
                                     " v" + std::to_string(st.version) +
                                     (reason.empty() ? "" : " | " + reason)});
    }
    for (const auto& f : e.finishes)
      ordered.push_back({f.seq, "finish " + shortId(f.resourceId) + " " + f.status + " change=" + f.change +
                                    (f.stale ? " stale" : "") + (f.removed ? " removed" : "") +
                                    (f.blocked == Blocked::Blocked ? " blocked" : "") +
                                    (f.sendEvent ? " event" : "")});
    for (const auto& b : e.blocked)
      ordered.push_back({b.seq, "blocked " + shortId(b.resourceId) + " " +
                                    (b.blocked == Blocked::Blocked ? "BLOCKED" : "NOT_BLOCKED")});
    std::stable_sort(ordered.begin(), ordered.end(), [](auto& a, auto& b) { return a.first < b.first; });
    for (auto& [seq, l] : ordered) out.push_back(l);
    for (const auto& d : e.dryruns)
      out.push_back("dryrun " + d.dryrunId + " " + shortId(d.resourceId) + " " + d.diffStatus);
    for (const auto& l : e.log) out.push_back("log " + l);
  }
};

class SchedulerGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(SchedulerGolden, Effects) {
  fs::path path = goldenDir() / GetParam();
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot read " << path;
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  Driver d;
  d.SetUp();
  // The script with the effects the state machine produces now in place of the file's indented lines.
  std::string actual;
  for (const std::string& l : lines) {
    if (l.rfind("  ", 0) == 0 && trim(l) != "") continue; // an expected effect line
    actual += l + "\n";
    if (l.rfind("> ", 0) == 0)
      for (const std::string& e : d.event(l.substr(2))) actual += "  " + e + "\n";
  }
  // Compare whole files: the file's text against the script with the effects the state machine produced.
  std::string fileText;
  for (const auto& l : lines) fileText += l + "\n";
  if (std::getenv("INM_UPDATE_GOLDENS")) {
    std::ofstream(path) << actual;
    return;
  }
  EXPECT_EQ(fileText, actual) << "scheduler golden " << GetParam()
                              << " differs (INM_UPDATE_GOLDENS=1 ctest -R SchedulerGolden rewrites it)";
}

INSTANTIATE_TEST_SUITE_P(Files, SchedulerGolden, ::testing::ValuesIn(goldenFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param.substr(0, info.param.size() - 6);
                           for (char& c : n)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

} // namespace
} // namespace inm::scheduler::test
