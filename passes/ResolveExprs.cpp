// Pass 3: expression name resolution (language.md §3.4, §5.6 step 1). Walks every executable body —
// top-level statements, implementation bodies, `when` conditions, typedef constraints, relation
// annotations, defaults — and fills FileInfo::resolved for each Constructor, IndexLookup and Call:
// entity (with constructor type hinting for nested constructors), plugin, or primitive cast. Checks
// constructor attribute names and index completeness, and the namespace of `ns::x` references.
// Invariant: every Constructor/IndexLookup/Call reachable from executable code gets an entry or an error.
#include "Passes.h"
#include "frontend/Frontend.h"
#include "support/Suggest.h"

#include <algorithm>

namespace inm::passes {

using namespace ir;
using frontend::Expr;
using frontend::ExprId;
using frontend::ExprKind;

namespace {

/// What a constructor knows about the place its value goes to.
struct Hint {
  AttrId attr;          // kwarg of an enclosing constructor: the attribute (type hint + inverse)
  bool lhsAttr = false; // right-hand side of an attribute assignment / non-index kwarg
};

struct Resolver {
  Program& p;
  DiagnosticEngine& diags;
  uint32_t file = 0;
  NamespaceId ns;
  const frontend::Ast* ast = nullptr;
  /// The innermost statement of a block being resolved (top level or an implementation body); invalid in
  /// `when` conditions, typedef constraints, annotations and defaults.
  frontend::StmtId stmtCtx;

  const StringTable& strings() const { return *p.strings; }
  std::string str(StringId s) const { return p.strings->str(s).str(); }

  template <typename... Args>
  Diagnostic& exprError(DiagKind kind, ExprId id, Args&&... args) {
    Diagnostic& d = diags.error(kind, ast->exprs[id].range, std::forward<Args>(args)...);
    d.reportedIn = frontend::reprExpr(*ast, id, strings());
    d.locWithColumn = frontend::locationHasColumn(*ast, id); // a variable reference: line:col
    return d;
  }

  /// A type that cannot be resolved (TypeNotFound and its kinds MissingImport, AmbiguousType). Inside a block
  /// the reference attaches the error to the block's statement that holds the reference, and keeps the type
  /// reference's own position, with its column: `(reported in a = Construct(A) (main.cf:5:36))`.
  template <typename... Args>
  Diagnostic& typeError(DiagKind kind, ExprId id, Args&&... args) {
    Diagnostic& d = exprError(kind, id, std::forward<Args>(args)...);
    if (stmtCtx.valid()) {
      d.reportedIn = frontend::reprStmt(*ast, stmtCtx, strings());
      d.locWithColumn = true;
    }
    return d;
  }

  void setResolved(ExprId id, Resolved r) {
    auto& table = p.files[file].resolved;
    if (table.size() <= id.index) table.resize(ast->exprs.size());
    table[id.index] = r;
  }

  void stmts(uint32_t begin, uint32_t end) {
    for (uint32_t i = begin; i < end; ++i) stmt(ast->stmtLists[i]);
  }

  void stmt(frontend::StmtId id) {
    const frontend::Stmt& s = ast->stmts[id];
    frontend::StmtId outer = stmtCtx;
    stmtCtx = id;
    switch (s.kind) {
    case frontend::StmtKind::Assign: {
      expr(s.target, {});
      Hint h;
      h.lhsAttr = s.target.valid() && ast->exprs[s.target].kind == ExprKind::AttrRef;
      expr(s.value, h);
      break;
    }
    case frontend::StmtKind::For:
      expr(s.value, {});
      stmts(s.bodyBegin, s.bodyEnd);
      break;
    case frontend::StmtKind::If:
      expr(s.value, {});
      stmts(s.bodyBegin, s.bodyEnd);
      stmts(s.elseBegin, s.elseEnd);
      break;
    case frontend::StmtKind::ExprStmt: expr(s.value, {}); break;
    }
    stmtCtx = outer;
  }

  void formatParts(uint32_t begin, uint32_t end) {
    for (uint32_t i = begin; i < end; ++i) {
      const frontend::FormatPart& fp = ast->formatParts[i];
      if (fp.expr.valid()) expr(fp.expr, {});
      if (fp.specEnd > fp.specBegin) formatParts(fp.specBegin, fp.specEnd);
    }
  }

  void args(const Expr& e) {
    for (uint32_t i = e.argBegin; i < e.argEnd; ++i) expr(ast->args[i].value, {});
  }

  void expr(ExprId id, Hint hint) {
    if (!id.valid()) return;
    const Expr& e = ast->exprs[id];
    switch (e.kind) {
    case ExprKind::List:
      for (uint32_t i = e.begin; i < e.end; ++i) expr(ast->exprLists[i], hint);
      break;
    case ExprKind::Dict:
      for (uint32_t i = e.begin; i < e.end; ++i) expr(ast->exprLists[i], {});
      break;
    case ExprKind::ListComprehension:
      expr(e.a, hint);
      for (uint32_t i = e.loopBegin; i < e.loopEnd; ++i) expr(ast->loops[i].iterable, {});
      for (uint32_t i = e.begin; i < e.end; ++i) expr(ast->exprLists[i], {});
      break;
    case ExprKind::Conditional:
      expr(e.a, {});
      expr(e.b, hint);
      expr(e.c, hint);
      break;
    case ExprKind::StringFormat:
    case ExprKind::FString: formatParts(e.partBegin, e.partEnd); break;
    case ExprKind::Name: checkQualifiedName(id, e); break;
    case ExprKind::Call:
      call(id, e);
      args(e);
      break;
    case ExprKind::IndexLookup:
      indexLookup(id, e);
      args(e);
      break;
    case ExprKind::ShortIndexLookup:
      expr(e.a, {});
      args(e);
      break;
    case ExprKind::Constructor: constructor(id, e, hint); break;
    default:
      expr(e.a, {});
      expr(e.b, {});
      expr(e.c, {});
      break;
    }
  }

  void checkQualifiedName(ExprId id, const Expr& e) {
    llvm::StringRef name = strings().str(e.name);
    size_t sep = name.rfind("::");
    if (sep == llvm::StringRef::npos) return;
    llvm::StringRef prefix = name.substr(0, sep);
    StringId pid = strings().lookup(prefix);
    const Namespace& n = p.namespaces[ns];
    if (pid.valid() && n.visible.count(pid.index)) return;
    Suggester near(prefix);
    for (const auto& visible : n.visible) near.add(strings().str(StringId{visible.first}));
    addDidYouMean(exprError(DiagKind::NamespaceNotFound, id, prefix.str()), near.best());
  }

  /// TypeNotFound, or MissingImport with the import to add and the file to add it to.
  /// With a "did you mean" note naming a near type of the kind the expression needs.
  void typeMissError(LookupResult r, ExprId id, const TypeMiss& miss) {
    Diagnostic& d = r == LookupResult::MissingImport
                        ? typeError(DiagKind::MissingImport, id, miss.type, miss.ns, miss.module,
                                    diags.sources().path(ast->exprs[id].range.file))
                        : typeError(DiagKind::TypeNotFound, id, miss.type, miss.ns);
    ExprKind k = ast->exprs[id].kind;
    unsigned kinds = k == ExprKind::Call ? typeKindBit(TypeKind::Plugin) | typeKindBit(TypeKind::Primitive)
                     : k == ExprKind::Constructor || k == ExprKind::IndexLookup
                         ? typeKindBit(TypeKind::Entity)
                         : kAnyTypeKinds;
    addDidYouMean(d, suggestType(p, ns, strings().str(ast->exprs[id].name), kinds));
  }

  /// Plain type lookup from an expression; reports TypeNotFound/MissingImport.
  bool lookup(ExprId id, const Expr& e, TypeEntry& out, bool report = true) {
    TypeMiss miss;
    LookupResult r = lookupType(p, ns, strings().str(e.name), out, miss);
    if (r == LookupResult::Found) return true;
    if (report) typeMissError(r, id, miss);
    return false;
  }

  void call(ExprId id, const Expr& e) {
    TypeEntry t;
    if (!lookup(id, e, t)) return;
    if (t.kind == TypeKind::Plugin) {
      setResolved(id, Resolved{Resolved::Plugin, t.index});
      return;
    }
    if (t.kind == TypeKind::Primitive && BaseType(t.index) != BaseType::List &&
        BaseType(t.index) != BaseType::Dict) {
      setResolved(id, Resolved{Resolved::Cast, t.index});
      return;
    }
    exprError(DiagKind::NotCallable, id, str(e.name));
  }

  void indexLookup(ExprId id, const Expr& e) {
    TypeEntry t;
    if (!lookup(id, e, t)) return;
    if (t.kind != TypeKind::Entity) {
      exprError(DiagKind::IndexLookupOnNonEntity, id, str(e.name));
      return;
    }
    setResolved(id, Resolved{Resolved::Entity, t.index});
  }

  void collectDescendants(EntityId root, std::vector<EntityId>& out) {
    std::vector<EntityId> work{root};
    std::vector<bool> seen(p.entities.size(), false);
    seen[root.index] = true;
    while (!work.empty()) {
      EntityId cur = work.back();
      work.pop_back();
      out.push_back(cur);
      for (EntityId sub : p.entities[cur].subtypes)
        if (!seen[sub.index]) {
          seen[sub.index] = true;
          work.push_back(sub);
        }
    }
  }

  /// §3.4.3: resolves a constructor's type, using the enclosing kwarg's attribute as hint.
  bool constructorType(ExprId id, const Expr& e, const Hint& hint, EntityId& out) {
    TypeEntry t;
    TypeMiss miss;
    llvm::StringRef name = strings().str(e.name);
    LookupResult r = lookupType(p, ns, name, t, miss);
    bool found = r == LookupResult::Found && t.kind == TypeKind::Entity;
    if (r == LookupResult::Found && !found) {
      exprError(DiagKind::ConstructNonEntity, id, name.str());
      return false;
    }
    if (hint.attr.valid()) {
      const Attribute& a = p.attrs[hint.attr];
      if (!a.isRelation) {
        Type base = a.type;
        base.isList = base.nullable = false;
        exprError(DiagKind::AssignTypeMismatch, id, name.str(), typeName(p, base));
        return false;
      }
      if (found) {
        if (!p.isSubtype(EntityId{t.index}, a.type.entity)) {
          exprError(DiagKind::AssignTypeMismatch, id, p.entities[EntityId{t.index}].fullName,
                    p.entities[a.type.entity].fullName);
          return false;
        }
        out = EntityId{t.index};
        return true;
      }
      if (name.find("::") == llvm::StringRef::npos) {
        std::vector<EntityId> all, candidates;
        collectDescendants(a.type.entity, all);
        for (EntityId c : all)
          if (p.entities[c].name == e.name) candidates.push_back(c);
        if (candidates.size() == 1) {
          out = candidates[0];
          return true;
        }
        if (candidates.size() > 1) {
          std::vector<std::string> names;
          for (EntityId c : candidates) names.push_back(p.entities[c].fullName);
          std::sort(names.begin(), names.end());
          std::string list;
          for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
          typeError(DiagKind::AmbiguousType, id, name.str(), names.size(), list);
          return false;
        }
      }
    } else if (found) {
      out = EntityId{t.index};
      return true;
    }
    typeMissError(r, id, miss);
    return false;
  }

  void constructor(ExprId id, const Expr& e, const Hint& hint) {
    EntityId ent;
    if (!constructorType(id, e, hint, ent)) {
      args(e);
      return;
    }
    setResolved(id, Resolved{Resolved::Entity, ent.index});
    const Entity& E = p.entities[ent];
    bool spread = false;
    llvm::SmallVector<StringId, 8> given;
    for (uint32_t i = e.argBegin; i < e.argEnd; ++i) {
      const frontend::Arg& a = ast->args[i];
      if (a.kind == frontend::ArgKind::Spread)
        spread = true;
      else if (a.kind == frontend::ArgKind::Keyword)
        given.push_back(a.name);
    }
    // Index completeness (§5.6 step 1).
    llvm::SmallVector<uint32_t, 4> missing;
    for (IndexId ix : E.indexes)
      for (StringId n : p.indexes[ix].attrNames) {
        int s = p.slotOf(ent, n);
        if (s < 0 || E.defaults[uint32_t(s)].valid()) continue;
        if (std::find(given.begin(), given.end(), n) != given.end()) continue;
        if (std::find(missing.begin(), missing.end(), uint32_t(s)) == missing.end())
          missing.push_back(uint32_t(s));
      }
    bool hasLhs = hint.lhsAttr || hint.attr.valid();
    if (!missing.empty() && !spread && (!hasLhs || missing.size() > 1)) {
      std::string msg;
      for (uint32_t s : missing) msg += missingIndexAttrLine(p, E, s);
      exprError(DiagKind::IndexAttributeMissing, id, msg);
    }
    // Attribute names and nested values.
    for (uint32_t i = e.argBegin; i < e.argEnd; ++i) {
      const frontend::Arg& a = ast->args[i];
      if (a.kind != frontend::ArgKind::Keyword) {
        expr(a.value, {});
        continue;
      }
      int s = p.slotOf(ent, a.name);
      if (s < 0) {
        Diagnostic& d = diags.error(DiagKind::NoAttribute, a.range, str(a.name), E.fullName);
        d.reportedIn = str(a.name);
        d.locWithColumn = true;
        addDidYouMean(d, suggestAttribute(p, ent, strings().str(a.name)));
        expr(a.value, {});
        continue;
      }
      bool isIndexAttr = false;
      for (IndexId ix : E.indexes)
        for (StringId n : p.indexes[ix].attrNames) isIndexAttr |= n == a.name;
      Hint sub;
      if (!isIndexAttr) {
        sub.attr = E.slots[uint32_t(s)];
        sub.lhsAttr = true;
      }
      expr(a.value, sub);
    }
  }

  void run() {
    for (uint32_t i = 0; i < p.files.size(); ++i) {
      file = i;
      ns = p.files[i].ns;
      ast = &p.ast(i);
      for (frontend::StmtId s : ast->topLevel) stmt(s);
    }
    auto code = [&](const CodeRef& c) {
      if (!c.valid()) return;
      file = c.file;
      ns = p.files[c.file].ns;
      ast = &p.ast(c.file);
      if (c.expr.valid())
        expr(c.expr, {});
      else
        stmts(c.stmtBegin, c.stmtEnd);
    };
    for (const Implementation& im : p.impls.items()) code(im.body);
    for (const Implement& im : p.implements.items()) code(im.when);
    for (const Typedef& t : p.typedefs.items()) code(t.constraint);
    for (uint32_t i = 0; i < p.attrs.size(); ++i) {
      const Attribute& a = p.attrs[AttrId{i}];
      // Both ends share the annotations: visit them once.
      if (!a.inverse.valid() || a.inverse.index >= i)
        for (const CodeRef& c : a.annotations) code(c);
      code(a.defaultValue);
    }
  }
};

} // namespace

void resolveExpressions(Program& p, DiagnosticEngine& diags) {
  Resolver r{p, diags, 0, NamespaceId{}, nullptr, {}};
  r.run();
}

} // namespace inm::passes
