// Unit tests for artifact/: the attribute hash against Python's json.dumps text and md5 (values computed with
// CPython 3.11), and the artifact reader's checks (format_version, sha1 of files, closed requires).
#include "artifact/Artifact.h"

#include "artifact/AttributeHash.h"

#include <gtest/gtest.h>

namespace inm::artifact {
namespace {

TEST(AttributeHashTest, DumpsLikePython) {
  auto v = nlohmann::json::parse(
      R"({"b": [1, 2.5, null, true], "a": "x\u00e9\ud83d\ude00\n", "z": {"y": 1e16, "x": 0.00001}})");
  EXPECT_EQ(pythonJsonDumps(v),
            R"({"a": "x\u00e9\ud83d\ude00\n", "b": [1, 2.5, null, true], "z": {"x": 1e-05, "y": 1e+16}})");
  EXPECT_EQ(
      pythonJsonDumps(nlohmann::json::parse(R"([1e15, 1.5e15, 0.0001, 123.456, "\u007f\u0001", -0.0, {}])")),
      R"([1000000000000000.0, 1500000000000000.0, 0.0001, 123.456, "\u007f\u0001", -0.0, {}])");
}

TEST(AttributeHashTest, DumpsIndentedLikePython) {
  // json.dumps({"b": [1, {"c": None}], "a": {}, "d": []}, indent=4, sort_keys=True)
  EXPECT_EQ(pythonJsonDumps(nlohmann::json::parse(R"({"b": [1, {"c": null}], "a": {}, "d": []})"), 4),
            "{\n    \"a\": {},\n    \"b\": [\n        1,\n        {\n            \"c\": null\n        }\n    "
            "],\n    \"d\": []\n}");
}

TEST(AttributeHashTest, MatchesPythonMd5AndIgnoresEnvelope) {
  auto attrs = nlohmann::json::parse(
      R"({"b": [1, 2.5, null, true], "a": "x\u00e9\ud83d\ude00\n", "z": {"y": 1e16, "x": 0.00001},
          "requires": ["q"], "version": 3})");
  EXPECT_EQ(attributeHash("std::File[h,path=/x]", attrs), "e6ea9d7c8845ded813a63e356e7eeaa9");
  auto other = attrs;
  other["requires"] = nlohmann::json::array({"std::File[h,path=/y]"});
  EXPECT_EQ(attributeHash("std::File[h,path=/x]", other), attributeHash("std::File[h,path=/x]", attrs));
  other["send_event"] = true;
  EXPECT_NE(attributeHash("std::File[h,path=/x]", other), attributeHash("std::File[h,path=/x]", attrs));
}

std::string doc(const std::string& files, int formatVersion = 1) {
  return R"({"format_version": )" + std::to_string(formatVersion) +
         R"(, "version": 0, "agents": ["h"], "resources": [
    {"id": "std::File[h,path=/a],v=0", "requires": ["std::File[h,path=/b]"], "undefined": false, "version": 0, "hash": "x"},
    {"id": "std::File[h,path=/b],v=0", "requires": [], "undefined": true, "version": 0}],
    "resource_sets": {"s": ["std::File[h,path=/a]"]}, "files": )" +
         files + "}";
}

TEST(ArtifactTest, ReadsAndVerifies) {
  llvm::Expected<Artifact> a =
      readArtifact(doc(R"({"f572d396fae9206628714fb2ce00f72e94f2258f": "hello\n"})"), "t.json");
  ASSERT_TRUE(!!a) << llvm::toString(a.takeError());
  ASSERT_EQ(a->resources.size(), 2u);
  EXPECT_EQ(a->resources[0].unversionedId, "std::File[h,path=/a]");
  EXPECT_EQ(a->resources[0].requires_, std::vector<std::string>{"std::File[h,path=/b]"});
  EXPECT_EQ(a->resources[0].attributes, nlohmann::json::parse(R"({"hash": "x"})"));
  EXPECT_TRUE(a->resources[1].undefined);
  EXPECT_EQ(a->resourceSets["s"].size(), 1u);
  EXPECT_EQ(a->files.size(), 1u);
}

std::string errorOf(const std::string& text) {
  llvm::Expected<Artifact> a = readArtifact(text, "t.json");
  if (a) return "";
  return llvm::toString(a.takeError());
}

TEST(ArtifactTest, RejectsBadDocuments) {
  EXPECT_NE(
      errorOf(doc(R"({"0000000000000000000000000000000000000000": "hello\n"})")).find("content has sha1"),
      std::string::npos);
  EXPECT_NE(errorOf(doc("{}", 2)).find("format_version 2 is not supported"), std::string::npos);
  EXPECT_NE(errorOf("[1]").find("not a JSON object"), std::string::npos);
  EXPECT_NE(
      errorOf(
          R"({"format_version": 1, "resources": [{"id": "std::File[h,path=/a],v=0", "requires": ["std::File[h,path=/z]"]}]})")
          .find("which is not in the document"),
      std::string::npos);
  EXPECT_NE(errorOf(R"({"format_version": 1, "resources": [{"id": "File[h]"}]})").find("resources[0].id"),
            std::string::npos);
}

} // namespace
} // namespace inm::artifact
