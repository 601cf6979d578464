// The std handlers (orchestrator/executor/handlers/) against a temporary directory: File (fetch + verify,
// atomic write, chmod only when needed, purge, missing user), Directory, Symlink, NullResource, AgentConfig,
// and the read path of Package (dpkg) and Service (systemd) where this machine has them.
#include "executor/Handler.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <grp.h>
#include <map>
#include <pwd.h>
#include <sstream>
#include <unistd.h>

using namespace inm::executor;

namespace {

struct MapFiles : FileSource {
  std::map<std::string, std::string> files;
  int fetches = 0;
  std::optional<std::string> getFile(const std::string& h) override {
    ++fetches;
    auto it = files.find(h);
    if (it == files.end()) return std::nullopt;
    return it->second;
  }
};

class StdHandlers : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/inm-handlers-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir = tmpl;
    registerStdHandlers(registry);
    services.agent = "localhost";
    services.files = &files;
    services.cache = &cache;
    user = getpwuid(geteuid())->pw_name;
    group = getgrgid(getegid())->gr_name;
  }
  void TearDown() override { (void)std::system(("rm -rf '" + dir + "'").c_str()); }

  HandlerContext run(const std::string& id, Json attrs, bool dryRun = false) {
    Resource r = Resource::fromId(id, std::move(attrs));
    auto h = registry.create(r.type);
    EXPECT_NE(h, nullptr) << r.type;
    h->attach(&services);
    HandlerContext ctx("action", dryRun);
    if (dryRun)
      h->execute(ctx, r, true);
    else
      h->deploy(ctx, r, {});
    h->close();
    return ctx;
  }
  std::string put(const std::string& content) {
    std::string h = sha1Hex(content);
    files.files[h] = content;
    return h;
  }
  Json fileAttrs(const std::string& path, const std::string& hash, int perms = 640, bool purged = false) {
    return Json{{"path", path},
                {"hash", hash},
                {"owner", user},
                {"group", group},
                {"permissions", perms},
                {"purged", purged},
                {"purge_on_delete", false},
                {"reload", false},
                {"send_event", false}};
  }
  static std::string slurp(const std::string& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::vector<std::string> entries() {
    std::vector<std::string> out;
    DIR* d = opendir(dir.c_str());
    while (dirent* e = readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") out.push_back(e->d_name);
    closedir(d);
    std::sort(out.begin(), out.end());
    return out;
  }
  static std::string lastMsg(const HandlerContext& c) { return c.logs().empty() ? "" : c.logs().back().msg; }

  std::string dir, user, group;
  HandlerRegistry registry;
  HandlerServices services;
  MapFiles files;
  HandlerCache cache;
};

} // namespace

TEST_F(StdHandlers, FileCreateUpdateRepairPurge) {
  std::string path = dir + "/a.txt";
  std::string id = "std::File[localhost,path=" + path + "],v=1";
  std::string h1 = put("hello\n");
  HandlerContext c1 = run(id, fileAttrs(path, h1));
  ASSERT_EQ(c1.status(), ResourceState::Deployed) << lastMsg(c1);
  EXPECT_EQ(c1.change(), Change::Created);
  EXPECT_EQ(slurp(path), "hello\n");
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(entries(), std::vector<std::string>{"a.txt"}); // no temp file left

  HandlerContext c2 = run(id, fileAttrs(path, h1)); // second run: nothing to do, no fetch
  EXPECT_EQ(c2.change(), Change::NoChange);
  EXPECT_TRUE(c2.changes().empty());
  EXPECT_EQ(files.fetches, 1);

  { // changed by hand -> repaired
    std::ofstream out(path);
    out << "tampered";
  }
  HandlerContext c3 = run(id, fileAttrs(path, h1));
  EXPECT_EQ(c3.change(), Change::Updated);
  EXPECT_EQ(c3.changes()["hash"]["current"], sha1Hex("tampered"));
  EXPECT_EQ(slurp(path), "hello\n");

  // permissions only: chmod in place (same inode), no fetch
  ino_t inode = (stat(path.c_str(), &st), st.st_ino);
  int fetches = files.fetches;
  HandlerContext c4 = run(id, fileAttrs(path, h1, 600));
  EXPECT_EQ(c4.change(), Change::Updated);
  EXPECT_EQ(c4.changes(), (Json{{"permissions", {{"current", 640}, {"desired", 600}}}}));
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_ino, inode);
  EXPECT_EQ(files.fetches, fetches);

  HandlerContext c5 = run(id, fileAttrs(path, h1, 600, true));
  EXPECT_EQ(c5.change(), Change::Purged);
  EXPECT_NE(access(path.c_str(), F_OK), 0);
  HandlerContext c6 = run(id, fileAttrs(path, h1, 600, true)); // absent and purged: nothing
  EXPECT_EQ(c6.status(), ResourceState::Deployed);
  EXPECT_EQ(c6.change(), Change::NoChange);
}

TEST_F(StdHandlers, FileDryRunChangesNothing) {
  std::string path = dir + "/dry.txt";
  HandlerContext c = run("std::File[localhost,path=" + path + "],v=1", fileAttrs(path, put("x")), true);
  EXPECT_EQ(c.status(), ResourceState::Dry);
  EXPECT_EQ(c.changes(), (Json{{"purged", {{"current", true}, {"desired", false}}}}));
  EXPECT_TRUE(entries().empty());
}

TEST_F(StdHandlers, FileCorruptOrMissingContentFails) {
  std::string path = dir + "/c.txt";
  std::string id = "std::File[localhost,path=" + path + "],v=1";
  std::string h = sha1Hex("expected");
  files.files[h] = "something else";
  HandlerContext c1 = run(id, fileAttrs(path, h));
  EXPECT_EQ(c1.status(), ResourceState::Failed);
  EXPECT_NE(lastMsg(c1).find("corrupt"), std::string::npos) << lastMsg(c1);
  HandlerContext c2 = run(id, fileAttrs(path, sha1Hex("nowhere")));
  EXPECT_EQ(c2.status(), ResourceState::Failed);
  EXPECT_NE(lastMsg(c2).find("is not stored on the server"), std::string::npos) << lastMsg(c2);
  EXPECT_TRUE(entries().empty());
}

TEST_F(StdHandlers, FileMissingUserIsAClearFailure) {
  std::string path = dir + "/u.txt";
  Json attrs = fileAttrs(path, put("u"));
  attrs["owner"] = "no-such-user-inm";
  HandlerContext c = run("std::File[localhost,path=" + path + "],v=1", attrs);
  EXPECT_EQ(c.status(), ResourceState::Failed);
  EXPECT_NE(lastMsg(c).find("user 'no-such-user-inm' does not exist"), std::string::npos) << lastMsg(c);
  EXPECT_TRUE(entries().empty());
}

TEST_F(StdHandlers, Directory) {
  std::string path = dir + "/d";
  std::string id = "std::Directory[localhost,path=" + path + "],v=1";
  Json a{{"path", path}, {"owner", user}, {"group", group}, {"permissions", 750}, {"purged", false}};
  HandlerContext c1 = run(id, a);
  ASSERT_EQ(c1.change(), Change::Created) << lastMsg(c1);
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  a["permissions"] = 700;
  HandlerContext c2 = run(id, a);
  EXPECT_EQ(c2.change(), Change::Updated);
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  a["purged"] = true;
  HandlerContext c3 = run(id, a);
  EXPECT_EQ(c3.change(), Change::Purged);
  EXPECT_NE(access(path.c_str(), F_OK), 0);
}

TEST_F(StdHandlers, Symlink) {
  std::string target = dir + "/link";
  std::string id = "std::Symlink[localhost,target=" + target + "],v=1";
  Json a{{"source", "/etc/hostname"}, {"target", target}, {"purged", false}};
  HandlerContext c1 = run(id, a);
  ASSERT_EQ(c1.change(), Change::Created) << lastMsg(c1);
  char buf[256];
  ssize_t n = readlink(target.c_str(), buf, sizeof buf);
  EXPECT_EQ(std::string(buf, n > 0 ? n : 0), "/etc/hostname");
  a["source"] = "/etc/passwd";
  HandlerContext c2 = run(id, a);
  EXPECT_EQ(c2.change(), Change::Updated);
  n = readlink(target.c_str(), buf, sizeof buf);
  EXPECT_EQ(std::string(buf, n > 0 ? n : 0), "/etc/passwd");
  EXPECT_EQ(entries(), std::vector<std::string>{"link"});

  std::string plain = dir + "/plain";
  std::ofstream(plain) << "x";
  HandlerContext c3 = run("std::Symlink[localhost,target=" + plain + "],v=1",
                          Json{{"source", "/etc/passwd"}, {"target", plain}, {"purged", false}});
  EXPECT_EQ(c3.status(), ResourceState::Failed);
  EXPECT_NE(lastMsg(c3).find("exists and is not a symlink"), std::string::npos) << lastMsg(c3);
  EXPECT_EQ(slurp(plain), "x");
}

TEST_F(StdHandlers, NullResource) {
  Json a{{"name", "n"}, {"agentname", "internal"}, {"fail", false}, {"managed", true}, {"purged", false}};
  HandlerContext c1 = run("std::testing::NullResource[internal,name=n],v=1", a);
  EXPECT_EQ(c1.status(), ResourceState::Deployed);
  EXPECT_EQ(c1.change(), Change::NoChange);
  a["fail"] = true;
  HandlerContext c2 = run("std::testing::NullResource[internal,name=n],v=1", a);
  EXPECT_EQ(c2.status(), ResourceState::Failed);
  EXPECT_NE(lastMsg(c2).find("This resource is set to fail"), std::string::npos);
}

TEST_F(StdHandlers, AgentConfigIsANoOp) {
  HandlerContext c =
      run("std::AgentConfig[internal,agentname=a1],v=1",
          Json{{"agentname", "a1"}, {"uri", "local:"}, {"autostart", true}, {"purged", false}});
  EXPECT_EQ(c.status(), ResourceState::Deployed);
}

TEST_F(StdHandlers, PackageReadPathOfAnInstalledPackage) {
  if (access("/usr/bin/dpkg-query", X_OK) != 0) GTEST_SKIP() << "dpkg-query is not installed on this machine";
  // Dry runs only: tests never install or remove packages.
  HandlerContext c1 =
      run("std::Package[localhost,name=bash],v=1", Json{{"name", "bash"}, {"state", "installed"}}, true);
  EXPECT_EQ(c1.status(), ResourceState::Dry) << lastMsg(c1);
  EXPECT_TRUE(c1.changes().empty()) << c1.changes().dump();
  HandlerContext c2 =
      run("std::Package[localhost,name=bash],v=1", Json{{"name", "bash"}, {"state", "removed"}}, true);
  EXPECT_EQ(c2.changes(), (Json{{"state", {{"current", "installed"}, {"desired", "removed"}}}}));
  HandlerContext c3 = run("std::Package[localhost,name=inm-no-such-package],v=1",
                          Json{{"name", "inm-no-such-package"}, {"state", "installed"}}, true);
  EXPECT_EQ(c3.changes()["state"]["current"], "removed");
  HandlerContext c4 =
      run("std::Package[localhost,name=x],v=1", Json{{"name", "Bad Name;rm"}, {"state", "installed"}}, true);
  EXPECT_EQ(c4.status(), ResourceState::Failed);
}

TEST_F(StdHandlers, ServiceWithoutSystemdFailsClearly) {
  struct stat st;
  if (stat("/run/systemd/system", &st) == 0)
    GTEST_SKIP() << "systemd runs here; the no-systemd message is only checked where systemd is absent";
  HandlerContext c = run("std::Service[localhost,name=cron],v=1",
                         Json{{"name", "cron"}, {"state", "running"}, {"onboot", true}}, true);
  EXPECT_EQ(c.status(), ResourceState::Failed);
  EXPECT_NE(lastMsg(c).find("handler not available on this host"), std::string::npos) << lastMsg(c);
}

TEST_F(StdHandlers, ServiceReadPathWithSystemd) {
  struct stat st;
  if (stat("/run/systemd/system", &st) != 0)
    GTEST_SKIP() << "no systemd in this sandbox (no /run/systemd/system)";
  HandlerContext c = run("std::Service[localhost,name=inm-no-such-unit],v=1",
                         Json{{"name", "inm-no-such-unit"}, {"state", "stopped"}, {"onboot", false}}, true);
  EXPECT_EQ(c.status(), ResourceState::Dry) << lastMsg(c);
  EXPECT_TRUE(c.changes().empty());
}
