// model/Ids.h and model/Vocabulary.h: every typed id round-trips through its printed text (also with
// escaped `\`, `,`, `]` inside the id's parts), invalid text is refused with a message quoting it, the
// string_view helpers agree with the full parsers, and every .def spelling parses back to its enumerator.
#include "model/Ids.h"
#include "model/Vocabulary.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace {

using namespace inm::model;

template <class T>
std::string errorOf(llvm::Expected<T> v) {
  if (v) return "no error";
  return llvm::toString(v.takeError());
}

TEST(ModelIds, ResourceVersionIdRoundTrip) {
  for (std::string text : {"std::File[web1,path=/etc/motd],v=3", "a::B[ag,k=v],v=123456789012345678",
                           R"(std::File[a\\g\,x,p\=a\,th=va\]l\\ue,v=2],v=7)", "ns::sub::T[a,b=c],v=0"}) {
    llvm::Expected<ResourceVersionId> id = ResourceVersionId::parse(text);
    ASSERT_TRUE(bool(id)) << text << ": " << llvm::toString(id.takeError());
    EXPECT_EQ(id->str(), text);
    llvm::Expected<ResourceId> rid = ResourceId::parse(id->resourceId());
    ASSERT_TRUE(bool(rid)) << llvm::toString(rid.takeError());
    ResourceVersionId again(*rid, id->version());
    EXPECT_EQ(again, *id);
    EXPECT_EQ(again.str(), text);
    EXPECT_EQ(resourceVersionId(id->resourceId(), id->version()), text);
  }
}

TEST(ModelIds, EscapedPartsRoundTrip) {
  inm::artifact::ResourceId parts;
  parts.type = "std::File";
  parts.agent = "a\\g,e]nt";
  parts.attribute = "p=a,t]h";
  parts.value = "/x],v=3\\";
  ResourceId rid = ResourceId::of(parts);
  llvm::Expected<ResourceId> parsed = ResourceId::parse(rid.str());
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  EXPECT_EQ(parsed->parts(), parts);
  ResourceVersionId rvid(rid, VersionNumber{42});
  llvm::Expected<ResourceVersionId> back = ResourceVersionId::parse(rvid.str());
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  EXPECT_EQ(back->resourceId(), rid.str());
  EXPECT_EQ(back->version(), VersionNumber{42});
  // the value's own "],v=3" (its ']' escaped) is not taken for the suffix
  EXPECT_EQ(withoutVersion(rid.str()), rid.str());
  EXPECT_FALSE(splitResourceVersionId(rid.str()));
}

TEST(ModelIds, ResourceVersionIdErrors) {
  EXPECT_EQ(errorOf(ResourceVersionId::parse("std::File[a,p=x]")),
            "resource version id 'std::File[a,p=x]' has no ,v=<version> suffix");
  EXPECT_EQ(errorOf(ResourceVersionId::parse("std::File[a,p=x],v=")),
            "resource version id 'std::File[a,p=x],v=' has no ,v=<version> suffix");
  EXPECT_EQ(errorOf(ResourceVersionId::parse("std::File[a,p=x],v=1x")),
            "resource version id 'std::File[a,p=x],v=1x' has no ,v=<version> suffix");
  EXPECT_EQ(errorOf(ResourceVersionId::parse("std::File[a,p=x],v=1234567890123456789")),
            "resource version id 'std::File[a,p=x],v=1234567890123456789' has no ,v=<version> suffix");
  EXPECT_EQ(errorOf(ResourceVersionId::parse("File[a,p=x],v=1")),
            "invalid resource id 'File[a,p=x]': the type must look like 'module::Entity'");
  // The reference reads backslashes literally: this is version 1 of the id whose value is `x\`.
  EXPECT_EQ(errorOf(ResourceVersionId::parse(R"(std::File[a,p=x\],v=1)")), "no error");
  EXPECT_EQ(errorOf(ResourceId::parse("std::File[a,p=x],v=2")),
            "resource id 'std::File[a,p=x],v=2' has a version suffix; expected an id without ,v=<version>");
  EXPECT_EQ(errorOf(ResourceId::parse("std::File[a,p=]")),
            "invalid resource id 'std::File[a,p=]': empty id value");
}

TEST(ModelIds, HotPathHelpers) {
  auto split = splitResourceVersionId("std::File[a,p=x],v=12");
  ASSERT_TRUE(split);
  EXPECT_EQ(split->resourceId, "std::File[a,p=x]");
  EXPECT_EQ(split->version.value, 12);
  EXPECT_EQ(withoutVersion("std::File[a,p=x],v=12"), "std::File[a,p=x]");
  EXPECT_EQ(withoutVersion("std::File[a,p=x]"), "std::File[a,p=x]");
  EXPECT_EQ(withoutVersion("std::File[a,p=x],v="), "std::File[a,p=x],v=");
  std::string out = "prefix:";
  appendResourceVersionId(out, "std::File[a,p=x]", VersionNumber{9});
  EXPECT_EQ(out, "prefix:std::File[a,p=x],v=9");
  EXPECT_EQ(versionSuffix(VersionNumber{31}), ",v=31");
  EXPECT_EQ(sqlResourceVersionId("r.resource_id", "r.model"), "r.resource_id || ',v=' || r.model");
}

TEST(ModelIds, VersionsAndUuids) {
  EXPECT_EQ(parseVersionNumber("17")->value, 17);
  EXPECT_EQ(errorOf(parseVersionNumber("-1")), "version '-1' is not a number (1 to 18 decimal digits)");
  EXPECT_EQ(errorOf(parseVersionNumber("")), "version '' is not a number (1 to 18 decimal digits)");
  llvm::Expected<EnvironmentId> env = EnvironmentId::parse("6C66CA44-DA58-4924-AD17-151ABC2F3726");
  ASSERT_TRUE(bool(env));
  EXPECT_EQ(env->str(), "6c66ca44-da58-4924-ad17-151abc2f3726");
  EXPECT_EQ(EnvironmentId::parse(env->str())->str(), env->str());
  EXPECT_EQ(errorOf(EnvironmentId::parse("6c66ca44")),
            "environment id '6c66ca44' is not a uuid (8-4-4-4-12 hex digits)");
  EXPECT_EQ(errorOf(ActionId::parse("6c66ca44-da58-4924-ad17-151abc2f372g")),
            "action id '6c66ca44-da58-4924-ad17-151abc2f372g' is not a uuid (8-4-4-4-12 hex digits)");
}

template <class E, size_t N, class Parse>
void roundTrips(const E (&all)[N], Parse parse, const char* what) {
  std::set<std::string_view> seen;
  for (E e : all) {
    EXPECT_TRUE(seen.insert(spelling(e)).second) << what << " spelling repeated: " << spelling(e);
    EXPECT_EQ(parse(spelling(e)), e) << what << " " << spelling(e);
  }
  EXPECT_FALSE(parse("")) << what;
  EXPECT_FALSE(parse("no_such_word")) << what;
}

TEST(ModelVocabulary, EverySpellingRoundTrips) {
  roundTrips(kDeployStatuses, parseDeployStatus, "deploy status");
  roundTrips(kChanges, parseChange, "change");
  roundTrips(kActionKinds, parseActionKind, "action kind");
  roundTrips(kSchedulerRequestKinds, parseSchedulerRequestKind, "scheduler request kind");
  EXPECT_FALSE(parseDeployStatus("Deployed")); // case-sensitive, like the database
}

TEST(ModelVocabulary, WireSpellings) {
  // The spellings are a contract with the database and the reference's clients.
  EXPECT_EQ(spelling(DeployStatus::SkippedForUndefined), "skipped_for_undefined");
  EXPECT_EQ(spelling(DeployStatus::NonCompliant), "non_compliant");
  EXPECT_EQ(spelling(Change::NoChange), "nochange");
  EXPECT_EQ(spelling(ActionKind::Getfact), "getfact");
  EXPECT_EQ(spelling(SchedulerRequestKind::ReadVersion), "read_version");
  EXPECT_EQ(spelling(SchedulerRequestKind::SettingsChanged), "settings_changed");
  EXPECT_FALSE(isReferenceStatus(DeployStatus::SkippedForDependency));
  EXPECT_TRUE(isReferenceStatus(DeployStatus::Orphaned));
}

} // namespace
