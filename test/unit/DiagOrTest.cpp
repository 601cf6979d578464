// DiagOr: a value or the Diagnostic explaining its absence, and the macros that propagate the error.
#include "support/DiagOr.h"

#include <gtest/gtest.h>

#include <string>

namespace inm {
namespace {

DiagOr<int> parsePositive(int x) {
  if (x <= 0) return makeDiag(DiagKind::Runtime, SourceRange{}, "not positive: " + std::to_string(x));
  return x;
}

DiagOr<int> doubled(int x) {
  INM_TRY_ASSIGN(int v, parsePositive(x));
  return 2 * v;
}

DiagOr<void> checkBoth(int a, int b) {
  INM_TRY_DIAG(parsePositive(a));
  INM_TRY_DIAG(parsePositive(b));
  return {};
}

TEST(DiagOrTest, HoldsValueOrError) {
  DiagOr<int> v = parsePositive(3);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 3);
  DiagOr<int> e = parsePositive(-1);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().kind, DiagKind::Runtime);
  EXPECT_EQ(e.error().message, "not positive: -1");
  EXPECT_FALSE(e.error().range.valid()); // unplaced: the caller places it
}

TEST(DiagOrTest, TryAssignPropagatesTheFirstError) {
  DiagOr<int> v = doubled(4);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 8);
  DiagOr<int> e = doubled(0);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().message, "not positive: 0");
}

TEST(DiagOrTest, VoidReportsSuccessOrTheFirstFailingCheck) {
  EXPECT_TRUE(checkBoth(1, 2).ok());
  DiagOr<void> e = checkBoth(5, -7);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.takeError().message, "not positive: -7");
}

} // namespace
} // namespace inm
