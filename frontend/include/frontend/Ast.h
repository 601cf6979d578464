// The abstract syntax tree of one `.cf` file: the product of frontend::parseFile, read by ir::lower.
// Nodes live in Stores of the Ast and refer to one another by typed IDs; names and literal texts are
// interned in the session's StringTable. No ANTLR type appears here.
// Invariants: every node has a valid SourceRange; string literals are already escape-decoded; a
// `"…{{x}}…"` string is a StringFormat node (never a String); qualified names are kept whole
// ("a::b::C") and split by consumers at the last "::".
#pragma once

#include "support/Id.h"
#include "support/SourceManager.h"
#include "support/StringTable.h"

#include <cstdint>
#include <vector>

namespace inm::frontend {

using ExprId = Id<struct ExprTag>;
using StmtId = Id<struct StmtTag>;
using DeclId = Id<struct DeclTag>;

/// Expression node kinds. Fields used by each kind are listed beside it (see Expr).
enum class ExprKind : uint8_t {
  Int,               // intValue
  Float,             // floatValue
  String,            // name = decoded text (plain, raw or triple-quoted without placeholders)
  Bool,              // intValue = 0/1
  Null,              // -
  Regex,             // name = pattern (raw); a `matching /re/` constraint: matches `self` against it
  StringFormat,      // "…{{a.b}}…": name = original text (for messages); parts = formatParts
  FString,           // f"…": name = original text; parts = formatParts (specs may hold nested fields)
  List,              // items = elements
  Dict,              // items = values; keys = dictKeys (same length)
  ListComprehension, // a = element expr; loops = comprehension loops (outermost first); items = guards
  Name,              // name = "x" or "ns::x" (a variable reference)
  AttrRef,           // a = instance expr; name = attribute
  Call,              // name = function ("f" or "ns::f"); args
  Constructor,       // name = entity type ("T" or "ns::T"); args (Keyword/Spread only)
  IndexLookup,       // name = entity type; args (Keyword/Spread)
  ShortIndexLookup,  // a = instance expr; name = relation; args (Keyword/Spread)  -- x.rel[k=v]
  MapLookup,         // a = dict expr; b = key expr
  Binary,            // op; a, b
  Not,               // a
  And,               // a, b
  Or,                // a, b
  In,                // a (needle), b (haystack)
  NotIn,             // a, b  (≡ not (a in b))
  Conditional,       // a = condition, b = then, c = else
  IsDefined,         // a = Name or AttrRef being tested
};

enum class BinaryOp : uint8_t { Eq, Ne, Lt, Gt, Le, Ge, Add, Sub, Mul, Div, Mod, Pow };

/// Argument of a call, constructor or index lookup.
enum class ArgKind : uint8_t { Positional, Keyword, Spread };
struct Arg {
  ArgKind kind = ArgKind::Positional;
  StringId name; // keyword name (Keyword only)
  ExprId value;
  SourceRange range; // whole argument (for keyword: from name to end of value)
};

/// A piece of an interpolated string / f-string: literal text, or a field with an optional format spec.
struct FormatPart {
  StringId literal;       // literal text (valid when expr is none)
  ExprId expr;            // the field's reference (Name or AttrRef chain)
  StringId fieldText;     // the placeholder's original text, e.g. "a.b" (for messages)
  char conversion = 0;    // f-string `!r`/`!s`/`!a`, 0 if none
  uint32_t specBegin = 0; // format spec as a run of FormatParts in Ast::formatParts
  uint32_t specEnd = 0;   //   (empty run = no spec)
};

/// One `for x in iterable` clause of a list comprehension.
struct ComprehensionLoop {
  StringId var;
  ExprId iterable;
  SourceRange range;
};

struct Expr {
  ExprKind kind;
  BinaryOp op = BinaryOp::Eq;
  SourceRange range;
  StringId name;
  int64_t intValue = 0;
  double floatValue = 0;
  ExprId a, b, c;
  uint32_t begin = 0, end = 0;       // run in Ast::exprLists (List items, Dict values, comprehension guards)
  uint32_t argBegin = 0, argEnd = 0; // run in Ast::args (Call/Constructor/IndexLookup/ShortIndexLookup)
  uint32_t partBegin = 0, partEnd = 0; // run in Ast::formatParts (StringFormat/FString)
  uint32_t keyBegin = 0, keyEnd = 0;   // run in Ast::dictKeys (Dict)
  uint32_t loopBegin = 0, loopEnd = 0; // run in Ast::loops (ListComprehension)
  bool bigInt = false;                 // Int literal did not fit in int64 (intValue unusable)
};

/// Statement kinds (statements appear at top level and in implementation/for/if bodies).
enum class StmtKind : uint8_t {
  Assign,   // target = value  (target: Name or AttrRef expr); plusAssign for `+=`
  For,      // var, iterable, body
  If,       // cond, body (then), elseBody (for elif: a single nested If statement)
  ExprStmt, // expr (a call, constructor, or any expression used as a statement)
};

struct Stmt {
  StmtKind kind;
  SourceRange range;
  bool plusAssign = false;
  ExprId target; // Assign
  ExprId value;  // Assign value / ExprStmt expr / For iterable / If condition
  StringId var;  // For loop variable
  SourceRange varRange;
  uint32_t bodyBegin = 0, bodyEnd = 0; // run in Ast::stmtLists (For body, If then-branch)
  uint32_t elseBegin = 0, elseEnd = 0; // run in Ast::stmtLists (If else-branch)
};

/// A type reference in an attribute declaration: `base[]?`.
struct TypeRef {
  StringId name; // "string", "mod::port", ...
  bool isList = false;
  bool nullable = false;
  SourceRange range;
};

/// Multiplicity of a relation end: [low:high], high = kUnbounded for `n:`.
struct Multiplicity {
  static constexpr uint32_t kUnbounded = UINT32_MAX;
  uint32_t low = 0, high = kUnbounded;
};

struct AttrDecl {
  TypeRef type; // for `dict` attributes: name = "dict"
  StringId name;
  SourceRange nameRange;
  ExprId defaultValue; // none if no default
  bool undef = false;  // `= undef`
  SourceRange range;
};

enum class DeclKind : uint8_t { Entity, Implementation, Implement, Relation, Typedef, Index, Import };

/// A relation end: `Entity.name [mult]`.
struct RelationEnd {
  StringId entity; // type name as written
  SourceRange entityRange;
  StringId name; // none for the target side of a unidirectional relation
  SourceRange nameRange;
  Multiplicity mult;
};

struct Decl {
  DeclKind kind;
  SourceRange range;
  StringId name; // Entity/Implementation/Typedef name; Import path; Implement/Index entity
  SourceRange nameRange;
  StringId doc;         // docstring (MLS) if any
  StringId alias;       // Import `as` alias
  StringId forEntity;   // Implementation `for` entity; Typedef base type
  SourceRange forRange; // where forEntity is written
  ExprId expr;          // Typedef constraint; Implement `when`
  // Entity parents / Implement implementation names / Index attribute names: run in Ast::names
  uint32_t nameBegin = 0, nameEnd = 0;
  // Entity attributes: run in Ast::attrs
  uint32_t attrBegin = 0, attrEnd = 0;
  // Implementation body: run in Ast::stmtLists
  uint32_t bodyBegin = 0, bodyEnd = 0;
  // Relation: both ends (right.name invalid if unidirectional); annotations as a run in exprLists
  RelationEnd left, right;
  uint32_t annBegin = 0, annEnd = 0;
  bool hasAnnotations = false;
};

/// A name with its location (entity parents, implementation lists, index attributes).
struct NameRef {
  StringId name;
  SourceRange range;
};

/// One parsed file. Move-only; later stages keep ExprIds/StmtIds into it.
struct Ast {
  FileId file;
  StringId doc; // module docstring (leading MLS)
  Store<ExprId, Expr> exprs;
  Store<StmtId, Stmt> stmts;
  Store<DeclId, Decl> decls;
  std::vector<ExprId> exprLists;
  std::vector<StmtId> stmtLists;
  std::vector<Arg> args;
  std::vector<FormatPart> formatParts;
  std::vector<StringId> dictKeys;
  std::vector<ComprehensionLoop> loops;
  std::vector<NameRef> names;
  std::vector<AttrDecl> attrs;
  std::vector<StmtId> topLevel; // top-level statements in source order
  std::vector<DeclId> topDecls; // declarations in source order

  Ast() = default;
  Ast(Ast&&) = default;
  Ast& operator=(Ast&&) = default;
  Ast(const Ast&) = delete;
  Ast& operator=(const Ast&) = delete;
};

} // namespace inm::frontend
