// The checked model IR: every declaration of the project resolved and type-checked, ready to execute.
// Produced by ir::lower (declarations) + passes::run (resolution, static checks); read by runtime and
// exporter. Statement and expression bodies are not copied: the IR keeps references (CodeRef) into the
// frontend ASTs, plus per-expression resolution tables (which entity a constructor builds, which plugin
// a call invokes). The Project (and its ASTs) must outlive the Program.
// Invariants after a successful passes::run: every Entity's computed fields (ancestors, slots,
// defaults, indexes, implements) are filled; every Constructor/IndexLookup/Call expression reachable
// from executable code has a valid entry in FileInfo::resolved.
#pragma once

#include "frontend/Ast.h"
#include "frontend/Project.h"
#include "support/Id.h"
#include "support/StringTable.h"

#include <llvm/ADT/DenseMap.h>

#include <string>
#include <vector>

namespace inm::ir {

using NamespaceId = Id<struct NamespaceTag>;
using EntityId = Id<struct EntityTag>;
using AttrId = Id<struct AttrTag>;
using TypedefId = Id<struct TypedefTag>;
using ImplId = Id<struct ImplTag>;
using ImplementId = Id<struct ImplementTag>;
using IndexId = Id<struct IndexTag>;
using PluginId = Id<struct PluginTag>;

/// A statement list or expression in one of the project's files.
struct CodeRef {
  uint32_t file = UINT32_MAX;          // index into Program::files
  frontend::ExprId expr;               // for expressions
  uint32_t stmtBegin = 0, stmtEnd = 0; // for blocks: run in that file's Ast::stmtLists
  bool valid() const { return file != UINT32_MAX; }
};

enum class BaseType : uint8_t { String, Int, Float, Number, Bool, List, Dict, Any, Typedef, Entity };

/// An attribute's or plugin parameter's declared type: base, `[]`, `?`.
struct Type {
  BaseType base = BaseType::Any;
  bool isList = false;
  bool nullable = false;
  TypedefId typedefId; // base == Typedef
  EntityId entity;     // base == Entity (relation ends, plugin parameters)
};

struct Typedef {
  StringId name;        // short name
  std::string fullName; // "mod::name"
  NamespaceId ns;
  BaseType base = BaseType::String; // a primitive
  CodeRef constraint;               // expression with `self` bound to the value (Regex exprs included)
  SourceRange range;
};

/// An attribute or a relation end of an entity.
struct Attribute {
  StringId name;
  EntityId owner;
  Type type; // for relations: base Entity, entity = target
  bool isRelation = false;
  frontend::Multiplicity mult;      // relations only
  AttrId inverse;                   // relations: the other end (may be itself); none if unidirectional
  CodeRef defaultValue;             // attribute default (none for relations)
  bool undefDefault = false;        // `= undef`
  std::vector<CodeRef> annotations; // relation annotations
  SourceRange range;                // the declaration (name position for messages)
  /// Relation slot kind: [1] single, [0:1] optional, otherwise a list.
  bool isMulti() const { return isRelation && !(mult.high == 1); }
  bool isOptional() const { return isRelation && mult.low == 0 && mult.high == 1; }
};

struct Index {
  EntityId entity;
  StringId writtenName; // the entity as written in the statement ("std::Entity", "A"): its reference repr
  std::vector<StringId> attrNames;
  SourceRange range;
};

struct Implementation {
  StringId name;
  std::string fullName;
  NamespaceId ns; // namespace where it is defined (its variable scope)
  EntityId entity;
  CodeRef body;
  SourceRange range;
};

/// `implement E using a, b [when c]`.
struct Implement {
  EntityId entity;
  std::vector<ImplId> impls;
  bool usesParents = false;
  CodeRef when;   // invalid = unconditional
  NamespaceId ns; // namespace of the implement statement (scope of `when`)
  SourceRange range;
};

struct Entity {
  StringId name;
  std::string fullName; // "__config__::Test"
  NamespaceId ns;
  std::vector<EntityId> parents; // declared order
  std::vector<AttrId> ownAttrs;
  StringId doc;
  SourceRange range;
  // ---- computed by passes ----
  std::vector<EntityId> ancestors;               // all ancestors incl. self, sorted by index (for isSubtype)
  std::vector<AttrId> slots;                     // every attribute incl. inherited: slot i of an instance
  llvm::DenseMap<uint32_t, uint32_t> slotByName; // StringId.index -> slot
  std::vector<CodeRef> defaults;                 // per slot: resolved default (invalid = none)
  std::vector<IndexId> indexes;                  // own and inherited
  std::vector<ImplementId> implements; // applicable implement statements (own + parents via `parents`)
  std::vector<EntityId> subtypes;      // direct children
};

/// A plugin's declared signature (native implementation lives in runtime, found by fullName).
struct PluginParam {
  StringId name;
  Type type;
  bool hasDefault = false;
  bool isVarArgs = false; // *args
  bool isKwArgs = false;  // **kwargs
  bool keywordOnly = false;
};
struct Plugin {
  StringId name;
  std::string fullName; // "std::print"
  NamespaceId ns;
  std::vector<PluginParam> params;
  Type returnType;
  bool allowUnknown = false;
  bool deprecated = false;
};

enum class TypeKind : uint8_t { Entity, Typedef, Implementation, Plugin, Primitive };
struct TypeEntry {
  TypeKind kind;
  uint32_t index; // into the matching store (BaseType for Primitive)
};

struct Namespace {
  std::string name; // "__config__", "std", "mod::sub"
  NamespaceId parent;
  uint32_t file = UINT32_MAX;                    // index into Program::files (one file per namespace)
  llvm::DenseMap<uint32_t, TypeEntry> types;     // short name StringId.index -> type
  llvm::DenseMap<uint32_t, NamespaceId> visible; // visible name (import/alias/self/std) -> namespace
};

/// What a Constructor / IndexLookup / Call / ShortIndexLookup expression resolves to.
struct Resolved {
  enum Kind : uint8_t { None, Entity, Plugin, Cast } kind = None;
  uint32_t index = 0; // EntityId / PluginId / BaseType
};

struct FileInfo {
  const frontend::SourceFile* source = nullptr;
  NamespaceId ns;
  std::vector<Resolved> resolved; // indexed by ExprId.index
};

/// `A.x before B.y` rules of project.yml, resolved.
struct PrecedenceRule {
  AttrId before, after;
};

struct Program {
  StringTable* strings = nullptr;
  const frontend::Project* project = nullptr;
  Store<NamespaceId, Namespace> namespaces;
  Store<EntityId, Entity> entities;
  Store<AttrId, Attribute> attrs;
  Store<TypedefId, Typedef> typedefs;
  Store<ImplId, Implementation> impls;
  Store<ImplementId, Implement> implements;
  Store<IndexId, Index> indexes;
  Store<PluginId, Plugin> plugins;
  std::vector<FileInfo> files;
  std::vector<PrecedenceRule> precedence;
  EntityId stdEntity; // std::Entity
  ImplId stdNone;     // std::none

  bool isSubtype(EntityId sub, EntityId super) const;
  const Attribute& attr(EntityId e, StringId name, bool* found) const;
  int slotOf(EntityId e, StringId name) const {
    auto it = entities[e].slotByName.find(name.index);
    return it == entities[e].slotByName.end() ? -1 : int(it->second);
  }
  const frontend::Ast& ast(uint32_t file) const { return files[file].source->ast; }
  NamespaceId findNamespace(llvm::StringRef name) const;
};

} // namespace inm::ir
