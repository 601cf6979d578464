// Host IO (orchestrator/executor/include/executor/HostIo.h) without an ssh server: shell quoting of hostile
// arguments (checked by running them through a real sh), and that an ssh:// host that refuses the connection
// makes a std::File end `unavailable` (not `failed`) with a message naming the host, port and ssh's reason.
// Deploys against a real sshd are in test/integration/test_agentless_ssh.py.
#include "executor/Handler.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <unistd.h>

using namespace inm::executor;

namespace {

/// A loopback port nothing listens on (bound then closed).
int closedPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

} // namespace

TEST(HostIo, ShellQuoteSurvivesASh) {
  HostIo& io = localIo();
  for (std::string s : {"plain", "it's", "$(touch /tmp/inm-pwned) `id` ; rm -rf x", "a\nb", "", "'\"\\"}) {
    RunResult r = io.run({"sh", "-c", "printf %s " + shellQuote(s)});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_EQ(r.out, s);
  }
  EXPECT_EQ(access("/tmp/inm-pwned", F_OK), -1);
}

TEST(HostIo, LocalRunFeedsStdin) {
  std::string big(300000, 'x'); // larger than a pipe buffer: feeding and draining must interleave
  RunResult r = localIo().run({"cat"}, big);
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.out.size(), big.size());
}

TEST(HostIo, UnreachableSshHostMakesTheResourceUnavailable) {
  if (access("/usr/bin/ssh", X_OK) != 0) GTEST_SKIP() << "no OpenSSH client";
  int port = closedPort();
  auto uri = inm::model::parseAgentUri("ssh://nobody@127.0.0.1:" + std::to_string(port));
  ASSERT_TRUE(static_cast<bool>(uri));
  std::unique_ptr<HostIo> io = makeSshIo(*uri, {});
  EXPECT_TRUE(io->remote());
  try {
    io->lstat("/tmp");
    FAIL() << "lstat over a refused connection succeeded";
  } catch (const HostUnavailable& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("cannot reach ssh://nobody@127.0.0.1:" + std::to_string(port)), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("Connection refused"), std::string::npos) << msg;
  }
  HandlerRegistry registry;
  registerStdHandlers(registry);
  HandlerServices services;
  services.agent = "web";
  services.io = io.get();
  Resource r = Resource::fromId("std::File[web,path=/tmp/x],v=1",
                                Json{{"path", "/tmp/x"}, {"hash", sha1Hex("x")}, {"permissions", 644}});
  auto h = registry.create(r.type);
  h->attach(&services);
  HandlerContext ctx("a", false);
  h->deploy(ctx, r, {});
  ASSERT_TRUE(ctx.status().has_value());
  EXPECT_EQ(*ctx.status(), ResourceState::Unavailable);
  ASSERT_FALSE(ctx.logs().empty());
  EXPECT_NE(ctx.logs().back().msg.find("is unavailable: cannot reach ssh://nobody@127.0.0.1"),
            std::string::npos)
      << ctx.logs().back().msg;
}
