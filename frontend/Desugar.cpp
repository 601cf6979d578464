// Shared Ast rewrites of the two parsers; see Desugar.h. Node order is part of the contract.
#include "Desugar.h"

#include "Strings.h"

#include <llvm/ADT/SmallVector.h>

namespace inm::frontend {

namespace {
Expr node(ExprKind k, SourceRange r) {
  Expr e;
  e.kind = k;
  e.range = r;
  return e;
}
} // namespace

ExprId dottedRef(Ast& ast, StringTable& strings, llvm::StringRef text, SourceRange r) {
  llvm::SmallVector<llvm::StringRef, 4> parts;
  text.split(parts, '.');
  // The reference strips whitespace around each part of an f-string field: f"{ a . b }" reads a.b.
  for (llvm::StringRef& part : parts) part = part.trim();
  Expr n = node(ExprKind::Name, r);
  n.name = strings.intern(parts[0]);
  ExprId cur = ast.exprs.add(n);
  for (size_t i = 1; i < parts.size(); ++i) {
    Expr a = node(ExprKind::AttrRef, r);
    a.a = cur;
    a.name = strings.intern(parts[i]);
    cur = ast.exprs.add(a);
  }
  return cur;
}

bool mentionsSelf(const Ast& ast, const StringTable& strings, ExprId id, StringId typedefName) {
  const Expr& e = ast.exprs[id];
  if (e.kind == ExprKind::Name && (strings.str(e.name) == "self" || e.name == typedefName)) return true;
  if (e.kind == ExprKind::Regex) return true;
  auto sub = [&](ExprId x) { return mentionsSelf(ast, strings, x, typedefName); };
  for (ExprId x : {e.a, e.b, e.c})
    if (x.valid() && sub(x)) return true;
  for (uint32_t i = e.begin; i < e.end; ++i)
    if (sub(ast.exprLists[i])) return true;
  for (uint32_t i = e.argBegin; i < e.argEnd; ++i)
    if (sub(ast.args[i].value)) return true;
  for (uint32_t i = e.partBegin; i < e.partEnd; ++i)
    if (ast.formatParts[i].expr.valid() && sub(ast.formatParts[i].expr)) return true;
  for (uint32_t i = e.loopBegin; i < e.loopEnd; ++i)
    if (sub(ast.loops[i].iterable)) return true;
  return false;
}

ExprId stringLiteral(Ast& ast, StringTable& strings, const std::string& decoded, llvm::StringRef original,
                     SourceRange r) {
  std::vector<Placeholder> ph;
  if (llvm::StringRef(decoded).contains("{{")) ph = findPlaceholders(decoded);
  if (ph.empty()) {
    Expr e = node(ExprKind::String, r);
    e.name = strings.intern(decoded);
    return ast.exprs.add(e);
  }
  std::vector<FormatPart> parts;
  size_t pos = 0;
  for (const Placeholder& p : ph) {
    if (p.begin > pos) {
      FormatPart lit;
      lit.literal = strings.intern(llvm::StringRef(decoded).substr(pos, p.begin - pos));
      parts.push_back(lit);
    }
    FormatPart f;
    f.fieldText = strings.intern(p.name);
    f.expr = dottedRef(ast, strings, p.name, r);
    parts.push_back(f);
    pos = p.end;
  }
  if (pos < decoded.size()) {
    FormatPart lit;
    lit.literal = strings.intern(llvm::StringRef(decoded).substr(pos));
    parts.push_back(lit);
  }
  Expr e = node(ExprKind::StringFormat, r);
  e.name = strings.intern(original);
  e.partBegin = uint32_t(ast.formatParts.size());
  ast.formatParts.insert(ast.formatParts.end(), parts.begin(), parts.end());
  e.partEnd = uint32_t(ast.formatParts.size());
  return ast.exprs.add(e);
}

ExprId desugarMapIsDefined(Ast& ast, ExprId lookup, SourceRange r) {
  Expr in = node(ExprKind::In, r);
  in.a = ast.exprs[lookup].b; // the key
  in.b = ast.exprs[lookup].a; // the map
  ExprId inId = ast.exprs.add(in);
  Expr ne1 = node(ExprKind::Binary, r);
  ne1.op = BinaryOp::Ne;
  ne1.a = lookup;
  ne1.b = ast.exprs.add(node(ExprKind::Null, r));
  Expr emptyList = node(ExprKind::List, r);
  emptyList.begin = emptyList.end = uint32_t(ast.exprLists.size());
  Expr ne2 = node(ExprKind::Binary, r);
  ne2.op = BinaryOp::Ne;
  ne2.a = lookup;
  ne2.b = ast.exprs.add(emptyList);
  Expr and1 = node(ExprKind::And, r);
  and1.a = inId;
  and1.b = ast.exprs.add(ne1);
  Expr and2 = node(ExprKind::And, r);
  and2.a = ast.exprs.add(and1);
  and2.b = ast.exprs.add(ne2);
  return ast.exprs.add(and2);
}

} // namespace inm::frontend
