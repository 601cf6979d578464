// Private to the runtime: where evaluation errors go. A model error aborts the run with exactly one
// diagnostic; while a caller captures (validation inside an attribute assignment, which wraps the inner
// error), errors are collected for it instead. Places diagnostics at a statement or expression node: its
// range and the reference's "reported in" rendering of the node.
// Invariant: once aborted, nothing more is reported to the engine (the first error wins).
#pragma once

#include "ir/Ir.h"
#include "support/Diagnostics.h"

#include <string>
#include <vector>

namespace inm::runtime {

class Reporter {
 public:
  Reporter(const ir::Program& prog, DiagnosticEngine& diags) : prog_(prog), diags_(diags) {}

  /// Reports (or captures) `d`; always Status::Error so callers can `return report(...)`.
  Status report(Diagnostic d);
  /// Reports an error outside any node (e.g. the iteration limit) and aborts.
  void abort(Diagnostic d) {
    diags_.report(std::move(d));
    aborted_ = true;
  }
  bool aborted() const { return aborted_; }

  /// Places an already formatted diagnostic at a node: its range and "reported in" text.
  Diagnostic at(uint32_t file, uint32_t node, bool isStmt, Diagnostic d) const;
  std::string reprNode(uint32_t file, uint32_t node, bool isStmt) const;
  SourceRange rangeOf(uint32_t file, uint32_t node, bool isStmt) const;

  /// True while a caller collects errors (see Capture).
  bool capturing() const { return capture_ != nullptr; }
  /// Adds `d` to the active capture (only while capturing()).
  void captured(Diagnostic d) { capture_->push_back(std::move(d)); }

  /// Redirects errors into `into` (or, with nullptr, reports them again) until destroyed.
  class Capture {
   public:
    Capture(Reporter& r, std::vector<Diagnostic>* into) : r_(r), saved_(r.capture_) { r.capture_ = into; }
    ~Capture() { r_.capture_ = saved_; }
    Capture(const Capture&) = delete;
    Capture& operator=(const Capture&) = delete;

   private:
    Reporter& r_;
    std::vector<Diagnostic>* saved_;
  };

 private:
  const ir::Program& prog_;
  DiagnosticEngine& diags_;
  std::vector<Diagnostic>* capture_ = nullptr; // when set, errors are collected here instead of reported
  bool aborted_ = false;
};

} // namespace inm::runtime
