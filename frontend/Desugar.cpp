// Shared Ast rewrites of the two parsers; see Desugar.h. Node order is part of the contract.
#include "Desugar.h"

namespace inm::frontend {

namespace {
Expr node(ExprKind k, SourceRange r) {
  Expr e;
  e.kind = k;
  e.range = r;
  return e;
}
} // namespace

ExprId desugarMapIsDefined(Ast& ast, ExprId lookup, SourceRange r) {
  Expr in = node(ExprKind::In, r);
  in.a = ast.exprs[lookup].b;  // the key
  in.b = ast.exprs[lookup].a;  // the map
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
