// "Did you mean" suggestions (support library, used by the compiler stages, the tools and the server): the
// candidate nearest to a misspelt name by edit distance. Invariant: a suggestion is made only when it is
// unambiguous — one candidate at the smallest distance, that distance small relative to the name
// (at most max(1, len/3)) — and never the name itself.
#pragma once

#include "support/Diagnostics.h"

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>

#include <string>
#include <vector>

namespace inm {

/// Collects candidates one by one and keeps the unique nearest to `word`.
class Suggester {
 public:
  explicit Suggester(llvm::StringRef word);
  void add(llvm::StringRef candidate);
  /// The unique best candidate within the distance bound, or "" when there is none (or a tie).
  std::string best() const;

 private:
  std::string word_;
  unsigned bound_;
  unsigned bestDist_;
  std::string best_;
  bool tie_ = false;
};

/// The unique nearest of `candidates` to `word` (see Suggester), or "".
std::string suggestName(llvm::StringRef word, llvm::ArrayRef<std::string> candidates);

/// Attaches a DidYouMean note ("did you mean 'x'?") to `d` when `suggestion` is not empty.
void addDidYouMean(Diagnostic& d, const std::string& suggestion);

/// "; did you mean 'x'?" for appending to a one-line message, or "" when `suggestion` is empty.
std::string didYouMeanSuffix(const std::string& suggestion);

} // namespace inm
