// The example handler of docs/deploy.md ("Handler API"), compiled and run so the documentation cannot rot: a
// CRUD handler for a made-up `demo::Setting` resource (one `key=value` line in a file), with structured logs,
// the scratch store, a cached helper and a dry run.
#include "executor/Handler.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <unistd.h>

using namespace inm::executor;

// --- begin docs/deploy.md example ---
namespace demo {

/// Reads `path` as key=value lines.
std::map<std::string, std::string> readSettings(const std::string& path) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (auto eq = line.find('='); eq != std::string::npos) out[line.substr(0, eq)] = line.substr(eq + 1);
  return out;
}

void writeSettings(const std::string& path, const std::map<std::string, std::string>& settings) {
  std::ofstream out(path, std::ios::trunc);
  for (const auto& [k, v] : settings) out << k << "=" << v << "\n";
  if (!out) throw std::runtime_error("cannot write " + path);
}

/// demo::Setting[agent,key=K]: attributes path, key, value, purged.
class SettingHandler : public CRUDHandler {
 public:
  void readResource(HandlerContext& ctx, Resource& current) override {
    std::string path = current.get("path").get<std::string>();
    std::string key = current.get("key").get<std::string>();
    // @cache equivalent: one parse of the file per agent for 5 s, keyed by method name + path.
    CacheOptions opts;
    opts.evictAfterCreation = 5;
    auto settings = services().cache->getAs<std::map<std::string, std::string>>(
        HandlerCache::key("readSettings", {path}), opts, [&] { return readSettings(path); });
    auto it = settings.find(key);
    if (it == settings.end()) throw ResourcePurged(); // absent => create (or nothing when purged)
    current.attributes["value"] = it->second;
    ctx.set("file", path); // scratch: shared with create/update/delete of this action
  }

  void createResource(HandlerContext& ctx, const Resource& desired) override {
    apply(desired, false);
    ctx.info("Added %(key)s to %(path)s", {{"key", desired.get("key")}, {"path", desired.get("path")}});
    ctx.setCreated();
  }

  void updateResource(HandlerContext& ctx, const Json& changes, const Resource& desired) override {
    apply(desired, false);
    ctx.info("Changed %(key)s from %(old)r to %(new)r", {{"key", desired.get("key")},
                                                         {"old", changes["value"]["current"]},
                                                         {"new", changes["value"]["desired"]}});
    ctx.setUpdated();
  }

  void deleteResource(HandlerContext& ctx, const Resource& desired) override {
    apply(desired, true);
    ctx.setPurged();
  }

 private:
  void apply(const Resource& r, bool remove) {
    std::string path = r.get("path").get<std::string>();
    auto settings = readSettings(path);
    if (remove)
      settings.erase(r.get("key").get<std::string>());
    else
      settings[r.get("key").get<std::string>()] = r.get("value").get<std::string>();
    writeSettings(path, settings);
    services().cache->clear(); // the cached parse is stale now
  }
};

void registerHandlers(HandlerRegistry& registry) {
  registry.add("demo::Setting", [] { return std::make_unique<SettingHandler>(); });
}

} // namespace demo
// --- end docs/deploy.md example ---

TEST(ExampleHandler, DeployDryRunAndPurge) {
  char tmpl[] = "/tmp/inm-example-XXXXXX";
  int fd = mkstemp(tmpl);
  ASSERT_GE(fd, 0);
  close(fd);
  std::string path = tmpl;
  HandlerRegistry registry;
  demo::registerHandlers(registry);
  HandlerCache cache;
  HandlerServices services{"agent1", nullptr, &cache};
  auto run = [&](const std::string& value, bool purged, bool dry) {
    Resource r =
        Resource::fromId("demo::Setting[agent1,key=port],v=1",
                         Json{{"path", path}, {"key", "port"}, {"value", value}, {"purged", purged}});
    auto h = registry.create(r.type);
    h->attach(&services);
    HandlerContext ctx("a", dry);
    if (dry)
      h->execute(ctx, r, true);
    else
      h->deploy(ctx, r, {});
    return ctx;
  };
  HandlerContext c1 = run("80", false, false);
  EXPECT_EQ(c1.change(), Change::Created);
  EXPECT_EQ(demo::readSettings(path)["port"], "80");
  HandlerContext c2 = run("8080", false, true);
  EXPECT_EQ(c2.status(), ResourceState::Dry);
  EXPECT_EQ(c2.changes()["value"], (Json{{"current", "80"}, {"desired", "8080"}}));
  EXPECT_EQ(demo::readSettings(path)["port"], "80");
  HandlerContext c3 = run("8080", false, false);
  EXPECT_EQ(c3.change(), Change::Updated);
  EXPECT_EQ(c3.logs().back().msg, "Changed port from '80' to '8080'");
  HandlerContext c4 = run("8080", true, false);
  EXPECT_EQ(c4.change(), Change::Purged);
  EXPECT_EQ(demo::readSettings(path).count("port"), 0u);
  unlink(path.c_str());
}
