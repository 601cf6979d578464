// "Did you mean" suggestions by edit distance; see Suggest.h.
#include "support/Suggest.h"

#include <algorithm>

namespace inm {

Suggester::Suggester(llvm::StringRef word)
    : word_(word.str()), bound_(std::max<unsigned>(1, unsigned(word.size()) / 3)), bestDist_(bound_ + 1) {}

void Suggester::add(llvm::StringRef candidate) {
  if (candidate.empty() || candidate == word_) return;
  // Lengths further apart than the bound cannot be within it: skip the distance computation.
  size_t a = candidate.size(), b = word_.size();
  if ((a > b ? a - b : b - a) > bound_) return;
  unsigned d = llvm::StringRef(word_).edit_distance(candidate, /*AllowReplacements=*/true, bound_ + 1);
  if (d > bound_) return;
  if (d < bestDist_) {
    bestDist_ = d;
    best_ = candidate.str();
    tie_ = false;
  } else if (d == bestDist_ && candidate != best_) {
    tie_ = true;
  }
}

std::string Suggester::best() const { return tie_ ? std::string() : best_; }

std::string suggestName(llvm::StringRef word, llvm::ArrayRef<std::string> candidates) {
  Suggester s(word);
  for (const std::string& c : candidates) s.add(c);
  return s.best();
}

void addDidYouMean(Diagnostic& d, const std::string& suggestion) {
  if (!suggestion.empty()) d.note(makeDiag(DiagKind::DidYouMean, SourceRange{}, suggestion));
}

std::string didYouMeanSuffix(const std::string& suggestion) {
  return suggestion.empty() ? std::string() : "; did you mean '" + suggestion + "'?";
}

} // namespace inm
