// The ANTLR path's builder, literal rule family (AntlrBuilder.h): multi-line strings, strings with escapes
// and f-strings, raw strings, regexes, numbers, booleans, null. Invariant: decoded values are what the
// reference's lexer produces; a literal the reference rejects gets its diagnostic here.

#include "AntlrBuilder.h"
#include "support/PyRepr.h"

#include <fmt/format.h>

namespace inm::frontend {

std::string AntlrBuilder::mlsBody(const std::string& text, antlr4::Token* tok) {
  bool bad = false, badCp = false;
  std::string body = decodeEscapes(llvm::StringRef(text).drop_front(3).drop_back(3), &bad, &badCp);
  if (badCp) badCodePoint(tok);
  if (bad) warnEscape(tok);
  return body;
}

void AntlrBuilder::badCodePoint(antlr4::Token* tok) { error(DiagKind::UnencodableEscape, rangeOf(tok, tok)); }

void AntlrBuilder::warnEscape(antlr4::Token* tok) {
  Diagnostic d = makeDiag(DiagKind::InvalidEscape, rangeOf(tok, tok));
  diags_.report(std::move(d));
}

ExprId AntlrBuilder::regex(antlr4::tree::TerminalNode* n) {
  std::string text = n->getText();
  size_t b = text.find('/'), e = text.rfind('/');
  std::string pattern = text.substr(b + 1, e - b - 1);
  if (std::string err = checkRegex(pattern); !err.empty()) {
    error(DiagKind::RegexError, rangeOf(n), pattern, err);
    return ExprId{};
  }
  Expr x = mk(ExprKind::Regex, rangeOf(n));
  x.name = st_.intern(pattern);
  return addExpr(x);
}

ExprId AntlrBuilder::stringValue(const std::string& decoded, const std::string& original, SourceRange r) {
  return stringLiteral(ast_, st_, decoded, original, r);
}

bool AntlrBuilder::fparts(const std::vector<FField>& fields, SourceRange r, std::vector<FormatPart>& out,
                          llvm::StringRef raw) {
  for (const FField& f : fields) {
    FormatPart p;
    if (!f.isField) {
      p.literal = st_.intern(f.literal);
      out.push_back(p);
      continue;
    }
    if (f.name.empty()) {
      Diagnostic& d = error(DiagKind::FStringPositional, r);
      d.reportedIn = pyStrRepr(raw); // the reference reports it in the f-string literal
      return false;
    }
    p.fieldText = st_.intern(f.name);
    p.expr = dottedRef(f.name, r);
    p.conversion = f.conversion;
    std::vector<FormatPart> spec;
    if (!fparts(f.spec, r, spec, raw)) return false;
    // spec parts are stored after this field's slot; remember where
    p.specBegin = p.specEnd = 0;
    out.push_back(p);
    size_t idx = out.size() - 1;
    // Spec parts go to a separate run appended now (indices into ast_.formatParts)
    uint32_t sb = uint32_t(ast_.formatParts.size());
    ast_.formatParts.insert(ast_.formatParts.end(), spec.begin(), spec.end());
    out[idx].specBegin = sb;
    out[idx].specEnd = uint32_t(ast_.formatParts.size());
  }
  return true;
}

ExprId AntlrBuilder::constant(G::ConstantContext* c) {
  antlr4::Token* tok = c->getStart();
  SourceRange r = rangeOf(tok, tok);
  std::string text = tok->getText();
  switch (tok->getType()) {
  case grammar::InmantaLexer::INT: {
    Expr e = mk(ExprKind::Int, r);
    if (llvm::StringRef(text).getAsInteger(10, e.intValue)) {
      // does not fit in int64: keep the literal text (name) and an approximation (floatValue)
      e.bigInt = true;
      e.intValue = 0;
      e.name = st_.intern(text);
      e.floatValue = std::strtod(text.c_str(), nullptr);
    }
    return addExpr(e);
  }
  case grammar::InmantaLexer::FLOAT: {
    Expr e = mk(ExprKind::Float, r);
    e.floatValue = std::strtod(text.c_str(), nullptr);
    return addExpr(e);
  }
  case grammar::InmantaLexer::K_NULL: return addExpr(mk(ExprKind::Null, r));
  case grammar::InmantaLexer::K_TRUE:
  case grammar::InmantaLexer::K_FALSE: {
    Expr e = mk(ExprKind::Bool, r);
    e.intValue = tok->getType() == grammar::InmantaLexer::K_TRUE;
    return addExpr(e);
  }
  case grammar::InmantaLexer::REGEX: return regex(c->REGEX());
  case grammar::InmantaLexer::RSTRING: {
    Expr e = mk(ExprKind::String, r);
    e.name = st_.intern(text.substr(2, text.size() - 3));
    return addExpr(e);
  }
  case grammar::InmantaLexer::MLS: {
    std::string body = mlsBody(text, tok);
    return stringValue(body, body, r);
  }
  case grammar::InmantaLexer::STRING: {
    bool bad = false, badCp = false;
    std::string raw = text.substr(1, text.size() - 2);
    std::string body = decodeEscapes(raw, &bad, &badCp);
    if (badCp) badCodePoint(tok);
    if (bad) warnEscape(tok);
    return stringValue(body, raw, r);
  }
  case grammar::InmantaLexer::FSTRING: {
    bool bad = false, badCp = false;
    std::string raw = text.substr(2, text.size() - 3);
    std::string body = decodeEscapes(raw, &bad, &badCp);
    if (badCp) badCodePoint(tok);
    if (bad) warnEscape(tok);
    std::vector<FField> fields;
    std::string err;
    if (!parseFString(body, fields, err)) {
      error(DiagKind::InvalidFString, r, err);
      return ExprId{};
    }
    std::vector<FormatPart> parts;
    if (!fparts(fields, r, parts, raw)) return ExprId{};
    Expr e = mk(ExprKind::FString, r);
    e.name = st_.intern(raw);
    e.partBegin = uint32_t(ast_.formatParts.size());
    ast_.formatParts.insert(ast_.formatParts.end(), parts.begin(), parts.end());
    e.partEnd = uint32_t(ast_.formatParts.size());
    return addExpr(e);
  }
  }
  return ExprId{};
}

} // namespace inm::frontend
