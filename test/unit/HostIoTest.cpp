// Host IO (orchestrator/executor/include/executor/HostIo.h) without an ssh server: shell quoting of hostile
// arguments (checked by running them through a real sh); every SshIo operation's shell script, run through a
// fake `ssh` on PATH that executes the remote command string locally (so the scripts, quoting and stdin
// streaming are checked, not OpenSSH); and that an ssh:// host that refuses the connection makes a std::File
// end `unavailable` (not `failed`) with a message naming the host, port and ssh's reason; the one-round-trip
// operations (describePath, createFile, makeDirectory), the session pool (concurrent operations on several
// sessions, `sessions=N`) and the replacement of a broken session. Deploys against a real sshd are in
// test/integration/test_agentless_ssh.py.
#include "executor/Handler.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

using namespace inm::executor;

namespace {

/// A loopback port nothing listens on (bound then closed).
int closedPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  bool bound = fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
               getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
  if (fd >= 0) close(fd);
  return bound ? ntohs(a.sin_port) : 1; // port 1: nothing listens there either
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

/// A directory with a fake `ssh` first on PATH: master start/check/exit succeed, a command runs locally.
class FakeSsh : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/inm-fakessh-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir = tmpl;
    std::ofstream(dir + "/ssh") << "#!/bin/sh\n"
                                   "printf '%s' \" $*\" | tr '\\n' ' ' >> \"$(dirname \"$0\")/calls\"\n"
                                   "echo >> \"$(dirname \"$0\")/calls\"\n"
                                   "for a in \"$@\"; do case \"$a\" in -M|-O) exit 0;; esac; done\n"
                                   "for a in \"$@\"; do last=\"$a\"; done\n"
                                   "[ -z \"$FAKE_REMOTE_PATH\" ] || PATH=$FAKE_REMOTE_PATH\n"
                                   "exec sh -c \"$last\"\n";
    chmod((dir + "/ssh").c_str(), 0755);
    oldPath = std::getenv("PATH");
    setenv("PATH", (dir + ":" + oldPath).c_str(), 1);
    auto uri = inm::model::parseAgentUri("ssh://me@example.invalid:2222");
    ASSERT_TRUE(static_cast<bool>(uri));
    io = makeSshIo(*uri, {});
  }
  void TearDown() override {
    io.reset();
    setenv("PATH", oldPath.c_str(), 1);
    (void)std::system(("rm -rf '" + dir + "'").c_str());
  }
  std::string dir, oldPath;
  std::unique_ptr<HostIo> io;
};

TEST_F(FakeSsh, EveryOperationsScript) {
  std::string f = dir + "/it's a $file";
  EXPECT_EQ(io->lstat(f).type, PathInfo::Type::Missing);
  std::string content("bin\0ary\nwith 'quotes' $(x)\n", 27);
  io->writeFile(f, content, 640, "", "");
  PathInfo info = io->lstat(f);
  EXPECT_EQ(info.type, PathInfo::Type::File);
  EXPECT_EQ(info.permissions, 640);
  EXPECT_EQ(info.owner, localIo().lstat(f).owner);
  EXPECT_EQ(io->readFile(f), content);
  io->chmod(f, 600);
  EXPECT_EQ(io->lstat(f).permissions, 600);
  io->chown(f, info.owner, info.group); // to itself: allowed for anyone
  std::string d = dir + "/sub dir";
  io->mkdir(d, 750);
  EXPECT_EQ(io->lstat(d).type, PathInfo::Type::Directory);
  EXPECT_EQ(io->lstat(d).permissions, 750);
  std::string l = dir + "/link";
  io->symlink(f, l);
  EXPECT_EQ(io->lstat(l).type, PathInfo::Type::Symlink);
  EXPECT_EQ(io->readlink(l), f);
  io->replaceSymlink(d, l); // pointing at a directory: the link is replaced, nothing moved into it
  EXPECT_EQ(io->readlink(l), d);
  EXPECT_EQ(io->lstat(d + "/link").type, PathInfo::Type::Missing);
  try {
    io->mkdir(d, 755);
    ADD_FAILURE() << "mkdir of an existing directory succeeded";
  } catch (const std::runtime_error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("cannot create directory " + d + " on ssh://me@example.invalid:2222"),
              std::string::npos)
        << msg;
  }
  io->unlink(l);
  io->unlink(l); // missing: not an error
  EXPECT_EQ(io->lstat(l).type, PathInfo::Type::Missing);
  io->rmdir(d);
  io->rmdir(d);
  EXPECT_EQ(io->lstat(d).type, PathInfo::Type::Missing);
  RunResult r = io->run({"sh", "-c", "cat; echo \"$0\" >&2; exit 3", "arg with 'quote'"}, "in");
  EXPECT_EQ(r.exitCode, 3);
  EXPECT_EQ(r.out, "in");
  EXPECT_EQ(r.err, "arg with 'quote'\n");
  EXPECT_TRUE(io->hasCommand("sh"));
  EXPECT_FALSE(io->hasCommand("no-such-command-inm"));
  std::vector<std::string> prefix = io->commandPrefix();
  ASSERT_FALSE(prefix.empty());
  EXPECT_EQ(prefix.back(), "--");
}

/// One session carries every operation: binary content with NUL bytes and no trailing newline, content larger
/// than a pipe buffer, and output that looks like the session's answer header all round-trip exactly.
TEST_F(FakeSsh, OneSessionCarriesBinaryLargeAndMarkerLikeContent) {
  std::string f = dir + "/bin";
  std::string bin("\0\x01\xff\nno newline\0", 15);
  io->writeFile(f, bin, 600, "", "");
  EXPECT_EQ(io->readFile(f), bin);
  std::string big;
  for (size_t i = 0; big.size() < (1u << 20) + 7; ++i) big += static_cast<char>(i * 131 % 256);
  io->writeFile(f, big, 600, "", "");
  EXPECT_EQ(io->readFile(f), big);
  RunResult r = io->run({"cat"}, big);
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.out, big);
  // Text shaped like an answer header (marker rc outlen errlen), on stdout and stderr, without newline.
  r = io->run({"sh", "-c", "printf 'inm-end-0 0 999 999\\ninm-end-1 7 0 0'; printf 'x 0 1 1\\n' >&2; exit 4"},
              "");
  EXPECT_EQ(r.exitCode, 4);
  EXPECT_EQ(r.out, "inm-end-0 0 999 999\ninm-end-1 7 0 0");
  EXPECT_EQ(r.err, "x 0 1 1\n");
  r = io->run({"sh", "-c", "exit 255"}, ""); // a command's own 255 is not a dead connection
  EXPECT_EQ(r.exitCode, 255);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(io->lstat(f).type, PathInfo::Type::File);
  // The master start plus ONE session client, not one ssh per operation.
  std::ifstream calls(dir + "/calls");
  int sessions = 0;
  for (std::string line; std::getline(calls, line);)
    if (line.find(" -M ") == std::string::npos && line.find(" -O ") == std::string::npos) ++sessions;
  EXPECT_EQ(sessions, 1);
}

TEST_F(FakeSsh, TheSessionInheritsOnlyTheStandardDescriptors) {
  int leak = ::open("/dev/null", O_RDONLY); // no O_CLOEXEC: what a careless caller might hold
  ASSERT_GE(leak, 3);
  std::string fd = std::to_string(leak);
  RunResult r =
      io->run({"sh", "-c", "if [ -e /proc/$$/fd/" + fd + " ]; then echo kept; else echo closed; fi"}, "");
  ::close(leak);
  EXPECT_EQ(r.exitCode, 0);
  EXPECT_EQ(r.out, "closed\n") << "the ssh session process kept descriptor " << fd;
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

namespace {
/// Session clients the fake ssh started (every call but the master's -M start and -O exit).
int sessionsStarted(const std::string& dir) {
  std::ifstream calls(dir + "/calls");
  int sessions = 0;
  for (std::string line; std::getline(calls, line);)
    if (line.find(" -M ") == std::string::npos && line.find(" -O ") == std::string::npos) ++sessions;
  return sessions;
}
} // namespace

/// The one-round-trip operations: describePath's size and sha1, createFile refusing an existing path (and
/// draining its content, so the session stays usable), modes beyond rw-rw-rw- (the chmod path), writeFile
/// never moving a file into a directory at the path, makeDirectory undoing itself on a failed chown.
TEST_F(FakeSsh, OneRoundTripOperations) {
  std::string f = dir + "/new file";
  EXPECT_FALSE(io->describePath(f, true).exists());
  std::string big(200000, '\0'); // larger than a pipe buffer
  big += "tail";
  io->createFile(f, big, 755, "", "");
  PathInfo info = io->describePath(f, true);
  EXPECT_EQ(info.type, PathInfo::Type::File);
  EXPECT_EQ(info.permissions, 755);
  EXPECT_EQ(info.size, static_cast<long long>(big.size()));
  EXPECT_EQ(info.sha1, sha1Hex(big));
  EXPECT_TRUE(io->describePath(f, false).sha1.empty());
  try {
    io->createFile(f, big, 600, "", "");
    ADD_FAILURE() << "createFile over an existing file succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot create " + f +
                                         " on ssh://me@example.invalid:2222: the path "
                                         "already exists"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(io->readFile(f), big); // untouched, and the refused content did not desynchronise the session
  io->writeFile(f, "x", 4640, "", "");
  EXPECT_EQ(io->lstat(f).permissions, 4640);
  std::string text = "it's\n$(touch /tmp/inm-pwned) \\ `id`\n\n"; // small text: sent inside the script
  io->writeFile(f, text, 644, "", "");
  EXPECT_EQ(io->readFile(f), text);
  EXPECT_EQ(::access("/tmp/inm-pwned", F_OK), -1);
  std::string d = dir + "/a dir";
  io->makeDirectory(d, 700, "", "");
  EXPECT_EQ(io->lstat(d).permissions, 700);
  EXPECT_THROW(io->writeFile(d, "x", 644, "", ""), std::runtime_error);
  EXPECT_EQ(io->lstat(d).type, PathInfo::Type::Directory);
  std::string d2 = dir + "/owned";
  EXPECT_THROW(io->makeDirectory(d2, 755, "no-such-user-inm", ""), std::runtime_error);
  EXPECT_FALSE(io->lstat(d2).exists()) << "a directory whose chown failed was left behind";
  EXPECT_EQ(sessionsStarted(dir), 1);
  // Nothing but the files made here (no temp file left over).
  RunResult ls = io->run({"sh", "-c", "ls -A \"$0\" | grep -c inmanta", dir}, "");
  EXPECT_EQ(ls.out, "0\n");
}

/// A new small file (inline content, mode within rw-rw-rw-, no chown) is created in place with noclobber and
/// written by the printf builtin: no remote process at all (the remote PATH holds only what the session's
/// start needs, so an `mv` would fail), no temp file; an existing file or a dangling symlink at the path is
/// refused and left as it was; a missing directory fails naming the path. Other creates keep the temp file.
TEST_F(FakeSsh, ASmallNewFileTakesNoRemoteProcess) {
  std::string bare = dir + "/bare", files = dir + "/files";
  ASSERT_EQ(::mkdir(bare.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(files.c_str(), 0755), 0);
  for (const char* tool : {"sh", "mktemp", "rm"}) // the driver's start and its exit trap
    ASSERT_EQ(::symlink((std::string("/bin/") + tool).c_str(), (bare + "/" + tool).c_str()), 0) << tool;
  setenv("FAKE_REMOTE_PATH", bare.c_str(), 1);
  std::string f = files + "/new", text = "it's\n$(touch /tmp/inm-pwned) `id`\n";
  {
    auto uri = inm::model::parseAgentUri("ssh://me@example.invalid:2222");
    std::unique_ptr<HostIo> bareIo = makeSshIo(*uri, {}); // its session keeps the bare PATH
    EXPECT_FALSE(bareIo->describePath(f, true).exists());
    bareIo->createFile(f, text, 640, "", "");
  }
  unsetenv("FAKE_REMOTE_PATH");
  struct stat st {};
  ASSERT_EQ(::lstat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(io->readFile(f), text);
  EXPECT_EQ(::access("/tmp/inm-pwned", F_OK), -1);
  EXPECT_THROW(io->createFile(f, "other", 644, "", ""), std::runtime_error);
  EXPECT_EQ(io->readFile(f), text);
  std::string link = files + "/dangling";
  ASSERT_EQ(::symlink((files + "/nowhere").c_str(), link.c_str()), 0);
  EXPECT_THROW(io->createFile(link, "x", 644, "", ""), std::runtime_error);
  EXPECT_EQ(::access((files + "/nowhere").c_str(), F_OK), -1) << "created through a dangling symlink";
  try {
    io->createFile(files + "/no dir/f", "x", 644, "", "");
    ADD_FAILURE() << "a file in a missing directory was created";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot create " + files + "/no dir/f on ssh://"), std::string::npos)
        << e.what();
  }
  io->createFile(files + "/exec", "#!/bin/sh\n", 750, "", ""); // mode beyond rw-rw-rw-: temp file, chmod, mv
  EXPECT_EQ(io->lstat(files + "/exec").permissions, 750);
  EXPECT_THROW(io->createFile(files + "/owned", "x", 644, "no-such-user-inm", ""), std::runtime_error);
  EXPECT_FALSE(io->lstat(files + "/owned").exists()) << "a file whose chown failed was left behind";
  RunResult ls = io->run({"sh", "-c", "ls -A \"$0\" | grep -c inmanta", files}, "");
  EXPECT_EQ(ls.out, "0\n");
}

/// Operations from several threads run on several sessions at once (each op waits until all four are
/// running: serialised, they would time out) and all give correct results; `sessions=1` serialises them.
TEST_F(FakeSsh, ThePoolRunsOperationsConcurrently) {
  std::vector<std::thread> threads;
  std::vector<int> rcs(4, -1);
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      std::string mine = dir + "/b" + std::to_string(i);
      RunResult r = io->run({"sh", "-c",
                             "touch \"$0\"; n=0; while [ $(ls \"$1\" | grep -c '^b') -lt 4 ]; do "
                             "n=$((n+1)); [ $n -lt 200 ] || exit 9; sleep 0.05; done",
                             mine, dir},
                            "");
      rcs[i] = r.exitCode;
      for (int k = 0; k < 5; ++k) {
        std::string f = dir + "/t" + std::to_string(i) + "-" + std::to_string(k);
        std::string content = f + std::string(1, '\0') + std::to_string(k);
        io->writeFile(f, content, 600, "", "");
        if (io->readFile(f) != content || io->describePath(f, true).sha1 != sha1Hex(content))
          rcs[i] = 100 + k;
      }
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(rcs[i], 0) << "thread " << i;
  EXPECT_EQ(sessionsStarted(dir), 4);

  ::unlink((dir + "/calls").c_str());
  auto uri = inm::model::parseAgentUri("ssh://me@example.invalid:2222?sessions=1");
  ASSERT_TRUE(static_cast<bool>(uri));
  std::unique_ptr<HostIo> one = makeSshIo(*uri, {});
  threads.clear();
  for (int i = 0; i < 3; ++i)
    threads.emplace_back([&, i] { rcs[i] = one->run({"sh", "-c", "sleep 0.1"}, "").exitCode; });
  for (auto& t : threads) t.join();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(rcs[i], 0);
  EXPECT_EQ(sessionsStarted(dir), 1);

  auto bad = inm::model::parseAgentUri("ssh://me@example.invalid:2222?sessions=0");
  ASSERT_TRUE(static_cast<bool>(bad));
  try {
    makeSshIo(*bad, {})->lstat("/");
    ADD_FAILURE() << "sessions=0 accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(
        std::string(e.what()).find("option sessions=0 of ssh://me@example.invalid:2222 is not a number"),
        std::string::npos)
        << e.what();
  }
}

/// A session whose remote side dies between operations is replaced: the next operation succeeds on a new one.
TEST_F(FakeSsh, ABrokenSessionIsReplaced) {
  // The session's processes are the ancestors whose command line holds "inmanta-io" (the driver, its
  // subshell, a wrapping sh; the pattern keeps this script's own command line from matching).
  RunResult r = io->run({"sh", "-c",
                         "p=$$; while [ \"$p\" -gt 1 ]; do "
                         "if tr '\\0' ' ' < /proc/$p/cmdline | grep -q 'inmanta[-]io'; then echo $p; fi; "
                         "p=$(cut -d' ' -f4 /proc/$p/stat); done"},
                        "");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::istringstream pids(r.out);
  int killed = 0;
  for (pid_t pid; pids >> pid;) killed += ::kill(pid, SIGKILL) == 0;
  ASSERT_GT(killed, 0) << r.out;
  std::string f = dir + "/after";
  io->writeFile(f, "still works", 644, "", "");
  EXPECT_EQ(io->readFile(f), "still works");
  EXPECT_EQ(sessionsStarted(dir), 2);
}

/// URI option run_as: every session runs under `sudo -n -u USER` (a fake sudo on PATH records its arguments
/// and runs the rest); a sudo asking for a password and a host without sudo fail (std::runtime_error, so
/// `failed`, not `unavailable`) with messages naming the user and the host, at once (one session start).
TEST_F(FakeSsh, RunAsGoesThroughSudo) {
  std::ofstream(dir + "/sudo") << "#!/bin/sh\n"
                                  "printf '%s %s %s %s %s %s\\n' \"$1\" \"$2\" \"$3\" \"$4\" \"$5\" \"$6\" "
                                  ">> \"$(dirname \"$0\")/sudo-calls\"\n"
                                  "if [ -e \"$(dirname \"$0\")/sudo-wants-password\" ]; then\n"
                                  "  echo 'sudo: a password is required' >&2; exit 1; fi\n"
                                  "[ \"$1\" = -n ] && [ \"$2\" = -u ] && [ \"$4\" = -- ] || exit 99\n"
                                  "shift 4; exec \"$@\"\n";
  chmod((dir + "/sudo").c_str(), 0755);
  auto uri = inm::model::parseAgentUri("ssh://me@example.invalid:2222?run_as=root");
  ASSERT_TRUE(static_cast<bool>(uri));
  std::unique_ptr<HostIo> sudoIo = makeSshIo(*uri, {});
  EXPECT_EQ(sudoIo->runAs(), "root");
  EXPECT_EQ(sudoIo->uri(), "ssh://me@example.invalid:2222?run_as=root");
  std::string f = dir + "/through sudo";
  sudoIo->writeFile(f, "as root", 600, "", "");
  EXPECT_EQ(sudoIo->readFile(f), "as root");
  std::ifstream calls(dir + "/sudo-calls");
  std::string line;
  ASSERT_TRUE(static_cast<bool>(std::getline(calls, line)));
  EXPECT_EQ(line, "-n -u root -- sh -c");
  EXPECT_FALSE(std::getline(calls, line)) << "more than one sudo for one session: " << line;
  // run_as the login user itself: no sudo at all.
  auto same = inm::model::parseAgentUri("ssh://me@example.invalid:2222?run_as=me");
  ASSERT_TRUE(static_cast<bool>(same));
  EXPECT_EQ(makeSshIo(*same, {})->runAs(), "");

  std::ofstream(dir + "/sudo-wants-password") << "";
  std::unique_ptr<HostIo> needsPassword = makeSshIo(*uri, {});
  try {
    needsPassword->lstat(f);
    ADD_FAILURE() << "a sudo that wants a password was accepted";
  } catch (const HostUnavailable& e) {
    ADD_FAILURE() << "unavailable instead of failed: " << e.what();
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()),
              "sudo needs a password for me on ssh://me@example.invalid:2222 (configure NOPASSWD)");
  }

  std::string bare = dir + "/bare";
  ASSERT_EQ(::mkdir(bare.c_str(), 0755), 0);
  ASSERT_EQ(::symlink("/bin/sh", (bare + "/sh").c_str()), 0);
  setenv("FAKE_REMOTE_PATH", bare.c_str(), 1);
  std::unique_ptr<HostIo> noSudo = makeSshIo(*uri, {});
  try {
    noSudo->lstat(f);
    ADD_FAILURE() << "a host without sudo was accepted";
  } catch (const HostUnavailable& e) {
    ADD_FAILURE() << "unavailable instead of failed: " << e.what();
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "sudo is not installed on ssh://me@example.invalid:2222");
  }
  unsetenv("FAKE_REMOTE_PATH");
  noSudo.reset();
  needsPassword.reset();
}
