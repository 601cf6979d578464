// Unit tests for support/Diagnostics.h: the compiler-style text (location, class, source line, caret),
// the reference-style trace ("reported in", "caused by:", MultiException's "error i:" blocks) and the JSON
// mode. Users and the conformance runner match these texts, so their exact shape is pinned here.
#include "support/Diagnostics.h"

#include <gtest/gtest.h>
#include <llvm/Support/raw_ostream.h>
#include <nlohmann/json.hpp>

#include <string>

namespace inm {
namespace {

struct DiagFixture : ::testing::Test {
  SourceManager sm;
  DiagnosticEngine diags{sm};
  FileId file = sm.addBuffer("/p/main.cf", "entity A:\nend\nt1.a = 3\n");

  std::string renderText() {
    std::string out;
    llvm::raw_string_ostream os(out);
    diags.render(os, DiagFormat::Text);
    return os.str();
  }
};

TEST_F(DiagFixture, KindInfoComesFromDefFile) {
  const DiagKindInfo& info = diagKindInfo(DiagKind::DoubleSet);
  EXPECT_STREQ(info.name, "DoubleSet");
  EXPECT_STREQ(info.className, "DoubleSetException");
  EXPECT_EQ(info.severity, Severity::Error);
  EXPECT_EQ(diagKindInfo(DiagKind::ModuleLoading).severity, Severity::Error);
  EXPECT_STREQ(diagKindInfo(DiagKind::FirstDefinedHere).className, "None");
}

TEST_F(DiagFixture, FormatsArguments) {
  Diagnostic d = makeDiag(DiagKind::ModuleLoading, SourceRange{}, "badmodule");
  EXPECT_EQ(d.message, "Failed to load module badmodule");
  EXPECT_EQ(d.severity, Severity::Error);
}

TEST_F(DiagFixture, TextHasLocationClassAndCaret) {
  diags.report(diagWithText(DiagKind::DoubleSet, SourceRange{file, 3, 1, 3, 5}, "value set twice"));
  EXPECT_EQ(renderText(), "/p/main.cf:3:1: error: value set twice [DoubleSetException]\n"
                          "  t1.a = 3\n"
                          "  ^~~~\n");
  EXPECT_EQ(diags.errorCount(), 1u);
  EXPECT_TRUE(diags.hasErrors());
}

TEST_F(DiagFixture, CaretFollowsColumn) {
  diags.report(diagWithText(DiagKind::Runtime, SourceRange{file, 3, 8, 3, 9}, "bad"));
  std::string text = renderText();
  EXPECT_NE(text.find("  t1.a = 3\n         ^\n"), std::string::npos) << text;
}

TEST_F(DiagFixture, NoLocationNoSourceLine) {
  diags.report(diagWithText(DiagKind::ProjectNotFound, SourceRange{}, "no project here"));
  EXPECT_EQ(renderText(), "error: no project here [ProjectNotFoundException]\n");
}

TEST_F(DiagFixture, NotesAndCausesAreRendered) {
  Diagnostic& d = diags.report(
      diagWithText(DiagKind::DuplicateTypeNoLoc, SourceRange{file, 1, 8, 1, 9}, "entity A defined twice"));
  d.note(makeDiag(DiagKind::FirstDefinedHere, SourceRange{file, 1, 1, 1, 7}));
  d.causedBy(diagWithText(DiagKind::InvalidModule, SourceRange{}, "inner"));
  std::string text = renderText();
  EXPECT_NE(text.find("  caused by: error: inner [InvalidModuleException]\n"), std::string::npos) << text;
  EXPECT_NE(text.find("/p/main.cf:1:1: note: first defined here\n"), std::string::npos) << text;
}

TEST_F(DiagFixture, WarningsDoNotCountAndCanBeDisabled) {
  diags.report(diagWithText(DiagKind::VariableShadow, SourceRange{}, "shadowed"));
  EXPECT_FALSE(diags.hasErrors());
  EXPECT_EQ(diags.all().size(), 1u);
  diags.setWarningsEnabled(false);
  diags.report(diagWithText(DiagKind::VariableShadow, SourceRange{}, "shadowed again"));
  EXPECT_EQ(diags.all().size(), 1u);
}

TEST_F(DiagFixture, ReferenceTextWithReportedIn) {
  Diagnostic d = makeDiag(DiagKind::ModuleLoading, SourceRange{file, 1, 1, 1, 17}, "badmodule");
  d.reportedIn = "import badmodule";
  d.causedBy(diagWithText(DiagKind::InvalidMetadata, SourceRange{},
                          "Metadata file /p/libs/badmodule/module.yml does not exist"));
  EXPECT_EQ(diags.referenceText(d),
            "Failed to load module badmodule (reported in import badmodule (/p/main.cf:1))");
  EXPECT_EQ(diags.referenceTrace(d),
            "Failed to load module badmodule (reported in import badmodule (/p/main.cf:1))\n"
            "caused by:\n"
            "  Metadata file /p/libs/badmodule/module.yml does not exist\n");
}

TEST_F(DiagFixture, ReferenceLocationWithColumn) {
  Diagnostic d = diagWithText(DiagKind::DuplicateTypeNoLoc, SourceRange{file, 1, 8, 1, 9}, "dup");
  d.locWithColumn = true;
  EXPECT_EQ(diags.referenceText(d), "dup (/p/main.cf:1:8)");
  d.locWithColumn = false;
  EXPECT_EQ(diags.referenceText(d), "dup (/p/main.cf:1)");
}

TEST_F(DiagFixture, MultiExceptionTrace) {
  Diagnostic multi = makeDiag(DiagKind::Multi, SourceRange{}, 3);
  multi.causedBy(diagWithText(DiagKind::Runtime, SourceRange{file, 3, 1, 3, 2}, "first"));
  multi.causedBy(
      diagWithText(DiagKind::Unset, SourceRange{file, 4, 1, 4, 2}, "unset")); // reference: no location
  multi.causedBy(diagWithText(DiagKind::Unset, SourceRange{}, "second\nmore"));
  EXPECT_EQ(diags.referenceTrace(multi), "Reported 3 errors\n"
                                         "error 0:\n"
                                         "  first (/p/main.cf:3)\n"
                                         "error 1:\n"
                                         "  unset\n"
                                         "error 2:\n"
                                         "  second\n"
                                         "  more\n");
}

TEST_F(DiagFixture, JsonMode) {
  Diagnostic& d = diags.report(diagWithText(DiagKind::DoubleSet, SourceRange{file, 3, 1, 3, 5}, "twice"));
  d.reportedIn = "t1.a = 3";
  d.causedBy(diagWithText(DiagKind::Runtime, SourceRange{}, "inner"));
  std::string out;
  llvm::raw_string_ostream os(out);
  diags.render(os, DiagFormat::Json);
  os.flush();
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out.back(), '\n');
  nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j["kind"], "DoubleSet");
  EXPECT_EQ(j["class"], "DoubleSetException");
  EXPECT_EQ(j["severity"], "error");
  EXPECT_EQ(j["message"], "twice");
  EXPECT_EQ(j["file"], "/p/main.cf");
  EXPECT_EQ(j["line"], 3);
  EXPECT_EQ(j["column"], 1);
  EXPECT_EQ(j["reported_in"], "t1.a = 3");
  ASSERT_EQ(j["causes"].size(), 1u);
  EXPECT_EQ(j["causes"][0]["message"], "inner");
}

TEST_F(DiagFixture, ErrorCapCountsButDrops) {
  diags.setErrorCap(2);
  for (int i = 0; i < 5; ++i) diags.report(diagWithText(DiagKind::Runtime, SourceRange{}, "e"));
  EXPECT_EQ(diags.errorCount(), 5u);
  EXPECT_EQ(diags.all().size(), 2u);
  EXPECT_NE(renderText().find("note: 3 more errors not shown"), std::string::npos);
}

} // namespace
} // namespace inm
