// The streaming artifact reader (artifact/ArtifactScan.h): members and resources handed out as raw text in
// document order, nested values and strings with brackets or escaped quotes skipped intact, malformed text
// and trailing bytes refused with the byte offset, a callback's error returned as it is; and the put_version
// spelling of `undefined` equal to the orchestrator vocabulary's.
#include "artifact/ArtifactScan.h"

#include "artifact/PutVersion.h"
#include "model/Vocabulary.h"

#include <gtest/gtest.h>
#include <llvm/Support/xxhash.h>

#include <string>
#include <vector>

using namespace inm::artifact;

namespace {

std::string errorOf(llvm::Error e) { return e ? llvm::toString(std::move(e)) : std::string(); }

} // namespace

TEST(ArtifactScan, HandsOutMembersAndResourcesAsRawText) {
  std::string text = R"({"format_version": 1, "compile": {"a": [1, "]}\"{"]},
    "resources": [ {"id": "x::Y[h,k=v]", "s": "a]\\\"}"} , {"id": "x::Y[h,k=w]"} ],
    "files": {"ab": "c"}, "n": -1.5e3 }
)";
  std::vector<std::string> members, resources;
  ASSERT_EQ(errorOf(scanArtifact(text, {[&](std::string_view k, std::string_view raw) -> llvm::Error {
                                          members.push_back(std::string(k) + "=" + std::string(raw));
                                          return llvm::Error::success();
                                        },
                                        [&](size_t i, std::string_view raw) -> llvm::Error {
                                          EXPECT_EQ(i, resources.size());
                                          resources.emplace_back(raw);
                                          return llvm::Error::success();
                                        }})),
            "");
  EXPECT_EQ(members, (std::vector<std::string>{"format_version=1", R"(compile={"a": [1, "]}\"{"]})",
                                               R"(files={"ab": "c"})", "n=-1.5e3"}));
  EXPECT_EQ(resources, (std::vector<std::string>{R"({"id": "x::Y[h,k=v]", "s": "a]\\\"}"})",
                                                 R"({"id": "x::Y[h,k=w]"})"}));
}

TEST(ArtifactScan, RefusesMalformedTextWithTheOffset) {
  auto none = [](std::string_view, std::string_view) -> llvm::Error { return llvm::Error::success(); };
  auto skip = [](size_t, std::string_view) -> llvm::Error { return llvm::Error::success(); };
  EXPECT_NE(errorOf(scanArtifact(R"({"resources": [{"id": "x"})", {none, skip})).find("at byte"),
            std::string::npos);
  EXPECT_NE(errorOf(scanArtifact(R"({"resources": []} {})", {none, skip})).find("text after the end"),
            std::string::npos);
  EXPECT_NE(errorOf(scanArtifact(R"({"files": {}})", {none, skip})).find("no `resources` array"),
            std::string::npos);
  EXPECT_NE(errorOf(scanArtifact("[1]", {none, skip})).find("not a JSON object"), std::string::npos);
  EXPECT_NE(errorOf(scanArtifact(R"({"resources": {}})", {none, skip})).find("expected '['"),
            std::string::npos);
}

TEST(ArtifactScan, ACallbacksErrorStopsTheScan) {
  int seen = 0;
  std::string err = errorOf(
      scanArtifact(R"({"resources": [{}, {}, {}]})",
                   {[](std::string_view, std::string_view) -> llvm::Error { return llvm::Error::success(); },
                    [&](size_t i, std::string_view) -> llvm::Error {
                      ++seen;
                      if (i == 1) return llvm::createStringError(llvm::inconvertibleErrorCode(), "stop here");
                      return llvm::Error::success();
                    }}));
  EXPECT_EQ(err, "stop here");
  EXPECT_EQ(seen, 2);
}

TEST(ArtifactScan, MembersElementsAndStrings) {
  std::vector<std::string> keys;
  ASSERT_EQ(errorOf(inm::support::forEachMember(R"( {"a": 1, "b": {"c": [2]}} )", "obj",
                                                [&](std::string_view k, std::string_view) -> llvm::Error {
                                                  keys.emplace_back(k);
                                                  return llvm::Error::success();
                                                })),
            "");
  EXPECT_EQ(keys, (std::vector<std::string>{"a", "b"}));
  EXPECT_NE(errorOf(inm::support::forEachElement(
                        R"([1, 2)", "list",
                        [](size_t, std::string_view) -> llvm::Error { return llvm::Error::success(); }))
                .find("list is malformed"),
            std::string::npos);
  EXPECT_EQ(*inm::support::decodeString(R"("a\"b\\c")"), "a\"b\\c");
  EXPECT_EQ(*inm::support::decodeString(R"("plain")"), "plain");
  auto bad = inm::support::decodeString("plain");
  EXPECT_FALSE(bool(bad));
  llvm::consumeError(bad.takeError());
}

TEST(ArtifactScan, UndefinedIsTheVocabularysSpelling) {
  EXPECT_EQ(std::string_view(kUndefinedResourceState),
            inm::model::spelling(inm::model::DeployStatus::Undefined));
}

// The delta push compares these fingerprints with the ones an earlier export stored in
// `.inmanta_export/<env>.state`: their input text (each member but id and version as `"key"` US value RS)
// must not change, or every resource of an existing state would look changed once.
TEST(ArtifactScan, PutVersionFingerprintsKeepTheirStoredForm) {
  auto parts = toPutVersionBody(
      R"({"format_version": 1, "resources": [{"id": "x::Y[h,k=v],v=3", "version": 3, "a": [1, 2], "requires": []}],
          "files": {}, "resource_sets": {}})",
      4);
  ASSERT_TRUE(bool(parts)) << llvm::toString(parts.takeError());
  ASSERT_EQ(parts->entries.size(), 1u);
  std::string text = "\"a\"\x1f[1, 2]\x1e\"requires\"\x1f[]\x1e";
  EXPECT_EQ(parts->entries[0].fingerprint[0], llvm::xxHash64(text));
  EXPECT_EQ(parts->entries[0].fingerprint[1], llvm::xxHash64(text + "\x1d"));
  EXPECT_EQ(parts->entries[0].id, "x::Y[h,k=v]");
}
