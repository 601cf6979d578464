// Checks frontend/Keywords.def, the one keyword list both parsers use, against grammar/Inmanta.g4: the same
// spellings in the same order as the grammar's K_ lexer rules, and the AsId flag set exactly for the keywords
// of the grammar's keywordAsId rule. A keyword added to the grammar but not to the list (or the reverse)
// fails.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Keyword {
  std::string spelling;
  bool asId;
};

const std::vector<Keyword>& defKeywords() {
  static const std::vector<Keyword> kws = {
#define INM_KEYWORD(Tok, Spelling, AsId) {Spelling, AsId},
#include "../../frontend/Keywords.def"
  };
  return kws;
}

std::string grammarText() {
  std::ifstream in(INM_SOURCE_DIR "/grammar/Inmanta.g4");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(KeywordsTest, MatchesGrammarLexerRules) {
  std::string g = grammarText();
  ASSERT_FALSE(g.empty()) << "cannot read grammar/Inmanta.g4";
  std::vector<std::string> grammarKws;
  std::regex rule(R"(\bK_[A-Z_]+\s*:\s*'([a-z_]+)'\s*;)");
  for (std::sregex_iterator it(g.begin(), g.end(), rule), end; it != end; ++it)
    grammarKws.push_back((*it)[1]);
  std::vector<std::string> defKws;
  for (const Keyword& k : defKeywords()) defKws.push_back(k.spelling);
  EXPECT_EQ(grammarKws, defKws);
}

TEST(KeywordsTest, AsIdMatchesKeywordAsIdRule) {
  std::string g = grammarText();
  size_t at = g.find("\nkeywordAsId");
  ASSERT_NE(at, std::string::npos) << "no keywordAsId rule in the grammar";
  std::string body = g.substr(at, g.find(';', at) - at);
  std::set<std::string> grammarAsId;
  std::regex lit(R"('([a-z_]+)')");
  for (std::sregex_iterator it(body.begin(), body.end(), lit), end; it != end; ++it)
    grammarAsId.insert((*it)[1]);
  std::set<std::string> defAsId;
  for (const Keyword& k : defKeywords())
    if (k.asId) defAsId.insert(k.spelling);
  EXPECT_EQ(grammarAsId, defAsId);
}

} // namespace
