// ExecutorProcess::attach (orchestrator/executor/include/executor/ExecutorClient.h): the scheduler's side of
// an external agent's session on a connected socket. The test plays the agent on the other end of a
// socketpair: a result comes back to its request; a closed connection fails in-flight work as `unavailable`
// naming the external agent, runs the `whenDead` callbacks and answers later work at once; a silent peer is
// cut off by the heartbeat timeout.
#include "executor/ExecutorClient.h"

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <unistd.h>

using namespace inm::executor;
namespace asio = boost::asio;

namespace {

/// Blocking frame I/O on the agent's end.
struct Peer {
  int fd;
  FrameDecoder decoder;
  Json read() {
    for (;;) {
      if (auto m = decoder.next()) return *m;
      char buf[4096];
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) return Json{{"type", "eof"}};
      decoder.feed(buf, size_t(n));
    }
  }
  /// The next frame that is not a heartbeat.
  Json readWork() {
    for (;;) {
      Json m = read();
      if (m["type"] != "heartbeat") return m;
    }
  }
  void write(const Json& m) {
    std::string bytes = encodeFrame(m);
    ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), ssize_t(bytes.size()));
  }
};

struct Session {
  asio::io_context ioc;
  std::thread runner;
  std::shared_ptr<ExecutorProcess> proc;
  Peer peer{-1, {}};
  explicit Session(ExecutorOptions options = {}) {
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    proc = ExecutorProcess::attach(ioc.get_executor(), "external-1", sv[0], options, nullptr,
                                   "external agent ext1");
    peer.fd = sv[1];
    auto guard =
        std::make_shared<asio::executor_work_guard<asio::io_context::executor_type>>(ioc.get_executor());
    work = guard;
    runner = std::thread([this] { ioc.run(); });
  }
  ~Session() {
    if (peer.fd >= 0) ::close(peer.fd);
    work.reset();
    proc->terminateNow();
    ioc.stop();
    runner.join();
  }
  std::shared_ptr<void> work;
};

DeployRequest request(const std::string& actionId) {
  DeployRequest r;
  r.actionId = actionId;
  r.resourceId = "std::testing::NullResource[ext1,name=a],v=1";
  return r;
}

} // namespace

TEST(ExecutorAttach, ResultTravelsBack) {
  Session s;
  Json hello = s.peer.read();
  EXPECT_EQ(hello["type"], "hello");
  EXPECT_EQ(hello["protocol"], kProtocolVersion);
  s.peer.write(Json{{"type", "hello"}, {"protocol", kProtocolVersion}});
  std::promise<ActionResult> got;
  s.proc->deploy({request("a1")}, [&](const ActionResult& r) { got.set_value(r); });
  Json deploy = s.peer.readWork();
  ASSERT_EQ(deploy["type"], "deploy");
  ASSERT_EQ(deploy["requests"].size(), 1u);
  ActionResult ok;
  ok.actionId = "a1";
  ok.resourceId = request("a1").resourceId;
  ok.status = "deployed";
  s.peer.write(ok.toJson());
  auto f = got.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(f.get().status, "deployed");
  EXPECT_TRUE(s.proc->alive());
}

TEST(ExecutorAttach, ClosedConnectionFailsInFlightWorkAsUnavailable) {
  Session s;
  s.peer.read(); // hello
  std::promise<ActionResult> inFlight;
  std::promise<void> dead;
  s.proc->whenDead([&] { dead.set_value(); });
  s.proc->deploy({request("a1")}, [&](const ActionResult& r) { inFlight.set_value(r); });
  ASSERT_EQ(s.peer.readWork()["type"], "deploy");
  ::close(s.peer.fd); // the agent is gone
  s.peer.fd = -1;
  auto f = inFlight.get_future();
  ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  ActionResult r = f.get();
  EXPECT_EQ(r.status, "unavailable");
  ASSERT_EQ(r.logs.size(), 1u);
  std::string msg = r.logs[0]["msg"];
  EXPECT_NE(msg.find("external agent ext1 disconnected"), std::string::npos) << msg;
  EXPECT_NE(msg.find("in flight"), std::string::npos) << msg;
  EXPECT_EQ(dead.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_FALSE(s.proc->alive());
  // Later work is answered at once, without a connection.
  std::promise<ActionResult> later;
  s.proc->deploy({request("a2")}, [&](const ActionResult& x) { later.set_value(x); });
  auto g = later.get_future();
  ASSERT_EQ(g.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  ActionResult l = g.get();
  EXPECT_EQ(l.status, "unavailable");
  EXPECT_NE(l.logs[0]["msg"].get<std::string>().find("before the request was sent"), std::string::npos);
}

TEST(ExecutorAttach, SilentPeerIsCutOffByTheHeartbeatTimeout) {
  ExecutorOptions o;
  o.heartbeatInterval = std::chrono::milliseconds(50);
  o.heartbeatTimeout = std::chrono::milliseconds(300);
  Session s(o);
  std::promise<ActionResult> inFlight;
  s.proc->deploy({request("a1")}, [&](const ActionResult& r) { inFlight.set_value(r); });
  auto f = inFlight.get_future(); // the peer never reads nor answers
  ASSERT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  ActionResult r = f.get();
  EXPECT_EQ(r.status, "unavailable");
  std::string msg = r.logs[0]["msg"];
  EXPECT_NE(msg.find("external agent ext1 hung"), std::string::npos) << msg;
}
