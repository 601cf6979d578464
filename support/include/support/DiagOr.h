// A value or the Diagnostic that explains why there is none: the return type of checks that cannot block
// and whose error the caller places or wraps (the runtime's attribute validation, typedef constraints,
// single-slot and relation writes). Environment failures use llvm::Expected instead (STYLE.md "Errors");
// evaluation steps that may block use runtime::Status with TRY.
// Invariant: exactly one of value and error is present; an error's range may be unset, in which case the
// caller places it (at the node it reports against) before reporting it.
#pragma once

#include "support/Diagnostics.h"

#include <cassert>
#include <memory>
#include <utility>
#include <variant>

namespace inm {

// The error is held by pointer: the success path, which is the hot one (every attribute write of a model),
// then costs one null pointer instead of a disengaged Diagnostic-sized object.
template <typename T>
class [[nodiscard]] DiagOr {
 public:
  DiagOr(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  DiagOr(Diagnostic error) : v_(std::in_place_index<1>, std::make_unique<Diagnostic>(std::move(error))) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& operator*() {
    assert(ok() && "reading the value of an error");
    return std::get<0>(v_);
  }
  const T& operator*() const {
    assert(ok() && "reading the value of an error");
    return std::get<0>(v_);
  }
  T* operator->() { return &**this; }
  Diagnostic& error() {
    assert(!ok() && "reading the error of a value");
    return *std::get<1>(v_);
  }
  Diagnostic takeError() { return std::move(error()); }

 private:
  std::variant<T, std::unique_ptr<Diagnostic>> v_;
};

/// Success or a Diagnostic.
template <>
class [[nodiscard]] DiagOr<void> {
 public:
  DiagOr() {} // user-provided: `return {};` must not zero anything beyond the pointer
  DiagOr(Diagnostic error) : error_(std::make_unique<Diagnostic>(std::move(error))) {}

  bool ok() const { return !error_; }
  explicit operator bool() const { return ok(); }
  Diagnostic& error() {
    assert(!ok() && "reading the error of a success");
    return *error_;
  }
  Diagnostic takeError() { return std::move(error()); }

 private:
  std::unique_ptr<Diagnostic> error_;
};

} // namespace inm

/// Returns the error of a DiagOr expression from the enclosing function (which returns a DiagOr).
#define INM_TRY_DIAG(x)                                                                                      \
  do {                                                                                                       \
    auto r_ = (x);                                                                                           \
    if (!r_) return r_.takeError();                                                                          \
  } while (0)

/// `INM_TRY_ASSIGN(T v, expr)`: declares v with the value of a DiagOr expression, or returns its error.
#define INM_TRY_ASSIGN(decl, x) INM_TRY_ASSIGN_IMPL(decl, x, INM_TRY_CONCAT(r_, __LINE__))
#define INM_TRY_CONCAT_IMPL(a, b) a##b
#define INM_TRY_CONCAT(a, b) INM_TRY_CONCAT_IMPL(a, b)
#define INM_TRY_ASSIGN_IMPL(decl, x, tmp)                                                                    \
  auto tmp = (x);                                                                                            \
  if (!tmp) return tmp.takeError();                                                                          \
  decl = std::move(*tmp)
