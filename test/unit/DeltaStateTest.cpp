// The delta push's data (issue #30): resource fingerprints from the artifact rewrite ignore the id's version
// and the version key but see every other member, entries point at their rewritten objects, and the
// exporter's state file round-trips (ids with tabs, backslashes and newlines included) and is refused when
// foreign.
#include "client/DeltaState.h"

#include "artifact/PutVersion.h"

#include <gtest/gtest.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Path.h>
#include <nlohmann/json.hpp>

#include <fstream>

using namespace inm::client;

namespace {

std::string artifact(int version, const std::string& b) {
  std::string v = std::to_string(version);
  return R"({"format_version": 1, "version": )" + v + R"(, "resources": [
    {"id": "std::testing::NullResource[h,name=a],v=)" +
         v + R"(", "name": "a", "requires": [], "undefined": false, "version": )" + v + R"(},
    {"id": "std::testing::NullResource[h,name=b],v=)" +
         v + R"(", "name": ")" + b +
         R"(", "requires": ["std::testing::NullResource[h,name=a]"], "undefined": true, "version": )" + v +
         R"(}
  ], "resource_sets": {}, "files": {}})";
}

} // namespace

TEST(DeltaFingerprint, IgnoresTheVersionSeesEveryOtherMember) {
  auto v1 = inm::artifact::toPutVersionBody(artifact(1, "b"), 1, false);
  auto v2 = inm::artifact::toPutVersionBody(artifact(2, "b"), 2, false);
  auto v3 = inm::artifact::toPutVersionBody(artifact(3, "B"), 3, false);
  ASSERT_TRUE(v1 && v2 && v3);
  ASSERT_EQ(v1->entries.size(), 2u);
  EXPECT_EQ(v1->entries[0].id, "std::testing::NullResource[h,name=a]");
  EXPECT_FALSE(v1->entries[0].undefined);
  EXPECT_TRUE(v1->entries[1].undefined);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(v1->entries[i].fingerprint[0], v2->entries[i].fingerprint[0]);
    EXPECT_EQ(v1->entries[i].fingerprint[1], v2->entries[i].fingerprint[1]);
  }
  EXPECT_EQ(v1->entries[0].fingerprint[0], v3->entries[0].fingerprint[0]);
  EXPECT_NE(v1->entries[1].fingerprint[0], v3->entries[1].fingerprint[0]);
  EXPECT_NE(v1->entries[1].fingerprint[1], v3->entries[1].fingerprint[1]);
  // Each entry's range is its rewritten object, requires versioned.
  const inm::artifact::PutVersionEntry& b = v2->entries[1];
  auto obj = nlohmann::json::parse(v2->resourcesJson.substr(b.begin, b.end - b.begin));
  EXPECT_EQ(obj["id"], "std::testing::NullResource[h,name=b],v=2");
  EXPECT_EQ(obj["requires"][0], "std::testing::NullResource[h,name=a],v=2");
}

TEST(DeltaState, RoundTripsAndRefusesForeignFiles) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("delta-state", dir));
  std::string path = deltaStatePath(std::string(dir.str()), "env1");
  EXPECT_FALSE(readDeltaState(path)); // absent
  DeltaState st;
  st.server = "127.0.0.1:8888";
  st.environment = "env1";
  st.version = 42;
  st.token = "tok";
  st.resources["x::Y[a,name=p\tq\\r\ns]"] = DeltaResource{{1, 0xffffffffffffffffull}, "set\t1"};
  st.resources["x::Y[a,name=plain]"] = DeltaResource{{7, 8}, ""};
  st.files = {"abc", "def"};
  ASSERT_FALSE(bool(writeDeltaState(path, st)));
  auto back = readDeltaState(path);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->server, st.server);
  EXPECT_EQ(back->environment, "env1");
  EXPECT_EQ(back->version, 42);
  EXPECT_EQ(back->token, "tok");
  ASSERT_EQ(back->resources.size(), 2u);
  const DeltaResource& odd = back->resources.at("x::Y[a,name=p\tq\\r\ns]");
  EXPECT_EQ(odd.fingerprint[0], 1u);
  EXPECT_EQ(odd.fingerprint[1], 0xffffffffffffffffull);
  EXPECT_EQ(odd.resourceSet, "set\t1");
  EXPECT_EQ(back->files, st.files);
  std::ofstream(path) << "something else\n";
  EXPECT_FALSE(readDeltaState(path));
  std::ofstream(path) << "inmanta-delta-state 1\nR\tzz\t\tid\n";
  EXPECT_FALSE(readDeltaState(path));
  llvm::sys::fs::remove_directories(dir);
}
