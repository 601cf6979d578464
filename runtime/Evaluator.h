// Private header of the evaluation engine (runtime stage). The engine executes the IR as a dataflow
// program: every variable and attribute is a result slot, set once (lists accumulate and are frozen);
// statements are units that run when the slots they read are available, blocking (and being re-run from
// the start, with side-effecting sub-results memoised) otherwise. When nothing can run, one multi-valued
// slot is frozen by the reference's rules (§5.4 of the language spec) and execution resumes.
// Invariant: a unit never observes a partially written slot; every error aborts the run with exactly one
// diagnostic (end-of-run completeness errors are collected, several becoming a MultiException).
//
// Structure: the Evaluator runs statements and expressions (Statements.cpp, Expressions.cpp, Operators.cpp,
// Constructors.cpp, Finalize.cpp); its state lives in components with private state — SlotStore, UnitQueue,
// ScopeTable, FreezePolicy, IndexTables, Reporter (one header each in this folder). Handles are typed:
// SlotId, UnitId, ScopeId, InstanceId.
// Error idiom (one for the whole runtime):
//  - a step that may wait for a slot returns Status (Ok / Blocked / Error) and propagates it with TRY; Error
//    means the diagnostic was already reported (through the Reporter: failDiag, fail, failStmt, failRead);
//  - a check that cannot wait and whose error the caller places or wraps returns DiagOr<T> (support/DiagOr.h)
//    holding an unplaced Diagnostic, propagated with INM_TRY_DIAG / INM_TRY_ASSIGN; the caller places it at
//    its node (diagAt) and reports it, or wraps it (wrapAttrError);
//  - Reporter::Capture turns reported errors into collected ones while a typedef constraint is evaluated for
//    an attribute (they become the attribute error's cause); aborted() is read only by the scheduler loop.
#pragma once

#include "frontend/Ast.h"
#include "frontend/Frontend.h"
#include "ir/Ir.h"
#include "runtime/BigInt.h"
#include "runtime/Model.h"
#include "runtime/Plugins.h"
#include "support/ChunkedVector.h"
#include "support/CompactVec.h"
#include "support/DiagOr.h"
#include "support/Diagnostics.h"
#include "support/PairKey.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DenseSet.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringMap.h>
#include <re2/re2.h>

#include <deque>
#include <memory>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

namespace inm::runtime {

using frontend::Expr;
using frontend::ExprId;
using frontend::ExprKind;
using frontend::Stmt;
using frontend::StmtId;

constexpr uint32_t kNone = UINT32_MAX;

// Typed handles of the engine's own tables. Raw uint32_t remains only inside the packed structs below where
// one field holds different kinds of index (Unit::aux, Unit::node, SlotMeta::attr) or where the layout is
// deliberate (SlotMeta::ext/setAt, Unit::memo/eager: indexes private to one component).
using SlotId = Id<struct SlotTag>;   // a result slot (SlotStore)
using UnitId = Id<struct UnitTag>;   // a unit of work (UnitQueue)
using ScopeId = Id<struct ScopeTag>; // a variable scope (ScopeTable)

enum class Status : uint8_t { Ok, Blocked, Error };

/// Propagates a non-Ok Status (Blocked or Error) to the caller.
#define TRY(x)                                                                                               \
  do {                                                                                                       \
    Status st_ = (x);                                                                                        \
    if (st_ != Status::Ok) return st_;                                                                       \
  } while (0)

enum class SlotKind : uint8_t { Var, Single, Optional, List };
enum SlotState : uint8_t { kOpen = 0, kSet = 1, kFrozen = 2 };

/// Where a value came from, for double-set messages ("set at file:line:col").
struct PackedLoc {
  uint32_t file = UINT32_MAX;
  uint32_t line = 0;
  uint32_t col = 0;
};

/// 8 bytes: there is one per attribute of every instance (2.7M on the 100k bench project). The owning
/// instance and the attribute are not stored: callers know them, or SlotStore::ownerOf / attrOf find them
/// from the slot number (messages and rare paths only). The ext reference has 24 bits; SlotStore keeps the
/// indexes that do not fit in a side table (extRef == kExtOverflow), so only SlotStore reads it.
struct SlotMeta {
  static constexpr uint32_t kNoExt = (1u << 24) - 1;       // no ext yet
  static constexpr uint32_t kExtOverflow = (1u << 24) - 2; // index in SlotStore's overflow table
  SlotKind kind : 2 = SlotKind::Var;
  uint8_t state : 2 = kOpen;
  bool queued : 1 = false;   // in the freeze candidate queue
  bool policy : 1 = false;   // relation mentioned in the precedence policy
  bool inZero : 1 = false;   // parked in zeroWaiters_
  bool lowBound : 1 = false; // a List relation end with a lower bound > 0 (not queued for freezing below it)
  uint32_t extRef : 24 = kNoExt; // index into SlotStore::exts_ (see SlotStore::extIndex)
  union {
    int32_t promises = 0; // List/Optional: outstanding providers
    uint32_t setAt;       // Var/Single: index into SlotStore::setLocs_ (where it was set), kNone if unknown
  };
  bool hasExt() const { return extRef != kNoExt; }
};
static_assert(sizeof(SlotMeta) == 8, "one SlotMeta per slot: keep it small");

/// 40 bytes (CompactVec: 16 per list instead of std::vector's 24); one per slot that has waiters or
/// subscribers (81k on the 100k bench project; a relation end's contents are in its value cell).
struct SlotExt {
  CompactVec<UnitId> waiters; // units blocked until the slot is set / frozen
  CompactVec<UnitId> gradual; // units subscribed to every change (for loops, forwards, is defined)
  uint32_t potential = 0;     // waiters that count as progress potential
};
static_assert(sizeof(SlotExt) == 40, "one SlotExt per waited-on slot: keep it small");

struct Scope {
  ScopeId parent;            // enclosing scope (if/for bodies), or the namespace scope (implementations)
  uint32_t instance = kNone; // implementation scope: the instance whose attributes are visible (raw: a
                             // static scope's index into its `self` table instead)
  uint32_t file = 0;
  uint32_t varBegin = 0;     // run [varBegin, varEnd) in ScopeTable::scopeVars_
  uint32_t varEnd : 31 = 0;  // (31 bits: the flag shares the word; 468k scopes at 100k resources)
  uint32_t isStatic : 1 = 0; // typedef constraint scope: `self` is ScopeTable::staticSelf_[instance]
};
static_assert(sizeof(Scope) == 20, "one Scope per block execution: keep it small");

enum class UnitKind : uint8_t {
  Stmt,       // a statement in a scope
  AttrAssign, // a constructor keyword argument / default written to a new instance
  Implement,  // an `implement … when` for one instance
  Forward,    // relation-to-relation assignment fed gradually
  Deferred,   // an expression evaluated for its value later (unused slot kinds)
};

/// 48 bytes (the flags share one byte): 342k units on the 100k bench project, nearly all alive at the end.
struct Unit {
  UnitKind kind = UnitKind::Stmt;
  bool queued : 1 = false;
  bool done : 1 = false;
  bool waited : 1 = false;       // was ever registered as a waiter/subscriber (its id may be held elsewhere)
  bool originIsExpr : 1 = false; // Forward: `origin` is an ExprId (constructor argument), else a StmtId
  ScopeId scope;
  uint32_t file = 0;
  uint32_t node = kNone;   // StmtId / ExprId index
  InstanceId inst;         // AttrAssign / Implement / ForGradual / Forward: the instance
  uint32_t aux = kNone;    // AttrAssign: slot index; Implement: ImplementId; ForGradual/Forward: source sid
  uint32_t progress = 0;   // values of the source already processed
  SlotId target;           // Forward: target sid
  SlotId promise;          // sid this unit holds a promise on
  uint32_t memo = kNone;   // index into UnitQueue::memos_
  uint32_t origin = kNone; // AttrAssign: constructor ExprId (for messages)
  uint32_t eager = kNone;  // index into UnitQueue::eagers_ (eager promises held)
};
static_assert(sizeof(Unit) == 48, "one Unit per statement execution: keep it small");

/// Evaluation context of one expression evaluation inside a unit.
struct Ctx {
  UnitId unit;
  ScopeId scope;
  uint32_t file = 0;
  const frontend::Ast* ast = nullptr;
  uint64_t iterKey = 0;      // distinguishes comprehension iterations for memoisation
  uint32_t hintAttr = kNone; // implicit inverse: relation end on the constructed entity
  InstanceId hintInst;       //   filled with this instance
  SlotId blockedOn;          // the slot a Blocked status waits for
  bool blockedGradual = false;
  uint32_t reportStmt = kNone; // statement being executed (for "reported in")
  uint32_t parent = kNone;     // the expression consuming the value being evaluated (error reports)
};

} // namespace inm::runtime

// The engine's components, each with private state and a small interface; declared after the records
// above, which they store.
#include "FreezePolicy.h"
#include "IndexTables.h"
#include "Reporter.h"
#include "ScopeTable.h"
#include "SlotStore.h"
#include "UnitQueue.h"

namespace inm::runtime {

class Evaluator;

/// The PluginContext handed to native plugins.
class EvalPluginContext final : public PluginContext {
 public:
  EvalPluginContext(Evaluator& ev, Ctx& ctx) : ev_(ev), ctx_(ctx) {}
  Model& model() override;
  const Value* attr(InstanceId id, llvm::StringRef name, bool* exists) override;
  void print(llvm::StringRef line) override;
  const std::string& projectDir() override;
  std::string moduleDir(llvm::StringRef module) override;
  std::string callerModule() override;
  ir::EntityId findEntity(llvm::StringRef fullName) override;
  const Value* lookupVariable(llvm::StringRef name) override;
  bool hasVariable(llvm::StringRef name) override;
  void warn(DiagKind kind, std::string message) override;
  bool argGiven(size_t i) override { return !given || i >= given->size() || (*given)[i] != 0; }
  bool checkTypedef(llvm::StringRef fullName, const Value& v, std::string& err) override;
  SlotId blockedOn;
  const std::vector<uint8_t>* given = nullptr; // per declared parameter: passed by the caller
  std::optional<Diagnostic> typedefFailure;    // the last failed checkTypedef, placed at the typedef

 private:
  const Value* keep(const Value& v) {
    kept_.push_back(v);
    return &kept_.back();
  }
  Evaluator& ev_;
  Ctx& ctx_;
  std::deque<Value> kept_; // values handed to the plugin during this call
};

class Evaluator {
 public:
  Evaluator(const ir::Program& program, DiagnosticEngine& diags, const EvalOptions& opts);
  Model run();
  /// Drops the tables the model and the exporter never read (see EvalOptions::skipTeardown).
  void releaseTables();

 private:
  friend class EvalPluginContext; // reads slots and variables for plugins, reports their warnings

  Model model_;
  const ir::Program& prog_;
  DiagnosticEngine& diags_;
  EvalOptions opts_;
  const StringTable& strings_;

  // ---- components (SlotStore.h, UnitQueue.h, ScopeTable.h, FreezePolicy.h, IndexTables.h, Reporter.h) ----
  SlotStore slots_;
  UnitQueue units_;
  ScopeTable scopes_;
  FreezePolicy freezer_;
  IndexTables indexes_;
  Reporter report_;

  // ---- slot changes that wake units or feed the freeze policy (Evaluator.cpp) ----
  SlotId attrSid(InstanceId inst, uint32_t slot) const { return slots_.attrSid(inst, slot); }
  bool slotReady(SlotId sid) const { return slots_.ready(sid); }
  Value slotValue(SlotId sid) { return slots_.read(sid, model_); }
  void wake(SlotId sid); // state changed: run waiters and subscribers
  void wakeGradual(SlotId sid);
  void addWaiter(SlotId sid, UnitId unit, bool gradual);
  void acquirePromise(SlotId sid) {
    assert((slots_.meta(sid).kind == SlotKind::List || slots_.meta(sid).kind == SlotKind::Optional) &&
           "promises are kept on relation slots only (they share storage with setAt)");
    slots_.meta(sid).promises++;
  }
  /// The attribute of slot `slot` of instance `inst`.
  const ir::Attribute& slotAttr(InstanceId inst, uint32_t slot) const {
    return prog_.attrs[prog_.entities[model_.entityOf(inst)].slots[slot]];
  }
  /// The attribute of instance slot `sid` (a binary search: messages and rare paths only).
  const ir::Attribute& slotAttr(SlotId sid) const { return prog_.attrs[slots_.attrOf(sid, prog_)]; }
  InstanceId ownerOf(SlotId sid) const { return slots_.ownerOf(sid); }
  void releasePromise(SlotId sid);
  void freeze(SlotId sid);
  void maybeQueueForFreeze(SlotId sid) { freezer_.maybeQueue(slots_, sid); }
  /// `slot` (a variable) holds `v` from now on: loop and comprehension variables, set before their body runs.
  void bindVar(SlotId sid, const Value& v) {
    slots_.value(sid) = v;
    slots_.meta(sid).state = kSet;
  }

  // ---- units ----
  void enqueue(UnitId unit) { units_.enqueue(unit); }
  UnitId newUnit(UnitKind kind, ScopeId scope, uint32_t file, uint32_t node) {
    return units_.newUnit(kind, scope, file, node);
  }
  void emitBlock(ScopeId scope, uint32_t file, uint32_t begin, uint32_t end);
  void runUnit(UnitId unit);
  void finishUnit(UnitId unit);
  bool memoGet(Ctx& ctx, uint32_t node, Value& out) {
    return ctx.unit.valid() && units_.memoGet(ctx.unit, (uint64_t(node) << 32) ^ ctx.iterKey, out);
  }
  void memoPut(Ctx& ctx, uint32_t node, const Value& v) {
    if (ctx.unit.valid()) units_.memoPut(ctx.unit, (uint64_t(node) << 32) ^ ctx.iterKey, v);
  }
  bool freezeOne();
  void finalize();

  // ---- statements (Statements.cpp) ----
  Status execStmt(Ctx& ctx, UnitId unitId);
  Status execAssign(Ctx& ctx, const Stmt& s, UnitId unitId);
  Status execFor(Ctx& ctx, const Stmt& s, UnitId unitId);
  Status execIf(Ctx& ctx, const Stmt& s, UnitId unitId);
  Status runForward(Ctx& ctx, UnitId unitId);
  Status runAttrAssign(Ctx& ctx, UnitId unitId);
  Status runImplement(Ctx& ctx, UnitId unitId);
  /// If `id` names a list relation of an instance (x.rel, or a bare attribute name in an implementation),
  /// returns its slot without waiting for it to be frozen; invalid otherwise (Blocked if the base waits).
  Status gradualSource(Ctx& ctx, ExprId id, SlotId& sidOut);
  /// The value of a multi-relation assignment that can be fed gradually: a relation or list variable
  /// (`sidOut`), possibly chosen by conditional expressions, or a one-loop list comprehension over one
  /// (`mapOut` is then the comprehension, applied per value).
  Status gradualFeed(Ctx& ctx, ExprId id, SlotId& sidOut, uint32_t& mapOut);
  /// `for x in [e for v in list if g]` where some element `e` is a relation: each such relation is iterated
  /// gradually by a unit of its own (as `for v in list: if g: for x in e:`). `handled` is false when no
  /// element is a relation (the caller evaluates the comprehension eagerly).
  Status forOverComprehension(Ctx& ctx, const Stmt& s, UnitId unitId, bool& handled);
  /// `x.rel = [a, b.rel, …]` where some item can be fed gradually (gradualFeed): those items get a Forward
  /// unit each, the others are assigned at once. `handled` is false when no item can (eager assignment).
  Status feedListLiteral(Ctx& ctx, UnitId unitId, InstanceId inst, uint32_t slot, ExprId valueExpr,
                         uint32_t origin, bool originIsExpr, bool& handled);
  /// Forward units that apply a comprehension to each value: unit -> comprehension ExprId (rare, so kept out
  /// of Unit; Forward units are never recycled).
  std::unordered_map<UnitId, uint32_t> forwardMaps_;
  /// a comprehension over a comprehension over a relation: inner comprehension ExprId of each map level
  std::unordered_map<uint32_t, uint32_t> innerMaps_;
  /// Starts a Forward unit feeding slot `slot` of `inst` from `src` (see gradualFeed).
  void startForward(Ctx& ctx, UnitId unitId, InstanceId inst, uint32_t slot, SlotId src, uint32_t mapExpr,
                    uint32_t origin, bool originIsExpr);
  /// Reports "could not set attribute" for slot `slot` of `inst` at `node`, caused by `cause` (placed).
  Status wrapAttrError(Ctx& ctx, InstanceId inst, uint32_t slot, uint32_t node, bool nodeIsStmt,
                       Diagnostic cause);
  /// Promises on the relations a block about to be emitted assigns through outer variables (§5.4).
  Status takeEagerPromises(Ctx& ctx, UnitId unitId, uint32_t begin, uint32_t end);
  void releaseEager(UnitId unitId);
  /// Writes `v` into attribute slot of an instance (validating, syncing inverses); gradual sources for list
  /// relations are handled by the caller. `stmtNode` / `isStmt` name the reporting node for messages.
  Status assignAttr(Ctx& ctx, InstanceId inst, uint32_t slot, const Value& v, SourceRange at, uint32_t node,
                    bool nodeIsStmt);
  /// Writes to a list/optional relation slot of an instance: adds one instance (or null / a list), and
  /// the other end of a bidirectional relation unless `reverse`. The error is unplaced.
  DiagOr<void> addToRelation(InstanceId inst, uint32_t slot, const Value& v, SourceRange at, bool reverse);
  void appendToRelation(SlotId sid, const ir::Attribute& attr, const Value& v);
  /// Sets a single-valued slot (an equal value again is fine). The error (set twice) is unplaced.
  DiagOr<void> setSingle(SlotId sid, const Value& v, SourceRange at);
  Status setVariable(Ctx& ctx, SlotId sid, const Value& v, SourceRange at, uint32_t node, bool nodeIsStmt);
  /// Checks `v` against an attribute type. The error is unplaced, except a typedef constraint's (at the
  /// typedef); an error evaluating a constraint is reported by eval, the check then fails without a message.
  DiagOr<void> validate(const ir::Type& t, const Value& v, Ctx* ctx);
  DiagOr<void> checkTypedef(ir::TypedefId td, const Value& v);

  // ---- expressions (Expressions.cpp, Operators.cpp, Format.cpp) ----
  Status eval(Ctx& ctx, ExprId id, Value& out); // tracks the consumer, then evalNode
  Status evalNode(Ctx& ctx, ExprId id, Value& out);
  Status evalName(Ctx& ctx, const Expr& e, ExprId id, Value& out);
  Status evalAttrRef(Ctx& ctx, const Expr& e, ExprId id, Value& out, uint32_t consumer);
  Status readAttr(Ctx& ctx, InstanceId inst, StringId name, ExprId id, Value& out, bool* missing,
                  uint32_t consumer);
  Status evalCall(Ctx& ctx, const Expr& e, ExprId id, Value& out);
  Status evalConstructor(Ctx& ctx, const Expr& e, ExprId id, Value& out);
  Status evalIndexLookup(Ctx& ctx, const Expr& e, ExprId id, Value& out);
  Status evalBinary(Ctx& ctx, const Expr& e, ExprId id, Value& out);
  /// `l op r` when an operand is a big int or an int64 operation overflowed (exact, or float when mixed).
  Status evalBigBinary(Ctx& ctx, const Expr& e, ExprId id, const Value& l, const Value& r, bool isFloat,
                       Value& out);
  std::string reprShort(const Value& v);
  Status evalIn(Ctx& ctx, const Expr& e, ExprId id, Value& out);
  Status evalIsDefined(Ctx& ctx, const Expr& e, ExprId id, Value& out);
  Status evalComprehension(Ctx& ctx, const Expr& e, ExprId id, Value& out);
  /// The guards and element of the innermost loop of comprehension `e` (loop variables bound in ctx.scope):
  /// appends the element (flattened) or an unknown to `result`. `id` is `e`'s id (errors are reported in it).
  Status comprehensionElement(Ctx& ctx, const Expr& e, ExprId id, uint32_t hintAttr, bool unknownItem,
                              llvm::SmallVectorImpl<Value>& result);
  Status evalFormat(Ctx& ctx, const Expr& e, ExprId id, Value& out);
  Status evalFString(Ctx& ctx, const Expr& e, ExprId id, Value& out);
  Status evalMapLookup(Ctx& ctx, const Expr& e, ExprId id, Value& out);
  Status castValue(Ctx& ctx, ir::BaseType to, const Value& v, ExprId id, Value& out);
  Status evalKwargs(Ctx& ctx, const Expr& e, ExprId id,
                    llvm::SmallVectorImpl<std::pair<StringId, Value>>& out, bool allKeywordsNow);
  /// A value rendered as interpolation does: str(), with integral floats shown as ints.
  std::string formatValue(const Value& v);

  // ---- constructors and indexes (Constructors.cpp) ----
  std::vector<uint32_t> firstImplDone_;            // instance -> first ImplId emitted for it (kNone: none)
  llvm::DenseSet<uint64_t, PairKeyInfo> implDone_; // (instance, ImplId) emitted after the first one
  std::vector<uint8_t> instHasImpl_;
  InstanceId createInstance(Ctx& ctx, ir::EntityId e, SourceRange at);
  void scheduleImplements(InstanceId inst);
  void emitImplementation(InstanceId inst, ir::ImplId impl);
  void blockOnIndex(Ctx& ctx, llvm::ArrayRef<Value> key, ir::EntityId e, uint32_t index,
                    const std::string& keyText, ExprId node);

  // ---- errors (Reporter.h) ----
  bool aborted() const { return report_.aborted(); }
  /// Reports `kind` at `node` with the kind's format filled from `args` (DiagnosticKinds.def), reported in
  /// node.
  template <typename... Args>
  Status fail(Ctx& ctx, ExprId node, DiagKind kind, Args&&... args) {
    return failDiag(
        diagAt(ctx.file, node.index, false, makeDiag(kind, SourceRange{}, std::forward<Args>(args)...)));
  }
  // Not-found errors with a "did you mean" note (Suggestions.cpp).
  Status failTypeNotFound(Ctx& ctx, const Expr& e, ExprId id); // "could not find type X in namespace Y"
  /// `kind` (AttributeNotFound, NoAttribute) for attribute `name` of `ent`, placed at `node`.
  Status failAttrMissing(Ctx& ctx, uint32_t node, bool isStmt, DiagKind kind, ir::EntityId ent,
                         llvm::StringRef name);
  /// `kind` (VariableNotFound, NamespaceNotFound) with its text, for the variable reference `name`.
  Status failVarMissing(Ctx& ctx, uint32_t node, bool isStmt, DiagKind kind, std::string text,
                        llvm::StringRef name);
  /// The nearest name to variable reference `name` (`x` or `ns::x`) visible from ctx's scope, or "".
  std::string nearVariable(Ctx& ctx, llvm::StringRef name);
  /// `ns::var` as seen from `file`: false when `ns` is not visible there; else sid = the variable or invalid.
  bool qualifiedVar(uint32_t file, llvm::StringRef name, SlotId& sid);
  /// Whether `name` is qualified (`ns::x`), cached per name: variable references are evaluated millions of
  /// times on large models.
  bool isQualified(StringId name) {
    if (name.index >= qualified_.size()) qualified_.resize(name.index + 1, 0);
    uint8_t& q = qualified_[name.index];
    if (q == 0) q = strings_.str(name).contains("::") ? 2 : 1;
    return q == 2;
  }
  std::vector<uint8_t> qualified_; // StringId -> 0 not computed yet, 1 plain, 2 qualified
  static std::string namespaceNotFound(llvm::StringRef qualifiedName);
  template <typename... Args>
  Status failStmt(Ctx& ctx, uint32_t stmt, DiagKind kind, Args&&... args) {
    return failDiag(diagAt(ctx.file, stmt, true, makeDiag(kind, SourceRange{}, std::forward<Args>(args)...)));
  }
  /// Keeps a value built by `node` within the limits (Limits.h): nesting depth, string bytes, list items.
  Status checkValueSize(Ctx& ctx, ExprId node, const Value& v);
  Status failDiag(Diagnostic d) { return report_.report(std::move(d)); }
  /// `message` is the kind's text, made by diagText(kind, ...).
  Diagnostic diagAt(uint32_t file, uint32_t node, bool isStmt, DiagKind kind, std::string message) {
    return report_.at(file, node, isStmt, diagWithText(kind, SourceRange{}, std::move(message)));
  }
  /// Places an already formatted diagnostic at a node: its range and "reported in" text.
  Diagnostic diagAt(uint32_t file, uint32_t node, bool isStmt, Diagnostic d) {
    return report_.at(file, node, isStmt, std::move(d));
  }
  /// Where a value given by `expr` was set, as the reference records it ("set at file:line[:col]"): the
  /// expression's range, its column dropped unless the reference's location of that node has one.
  static SourceRange valueAt(const frontend::Ast& ast, ExprId expr) {
    SourceRange at = ast.exprs[expr].range;
    if (!frontend::locationHasColumn(ast, expr)) at.col = 0;
    return at;
  }
  /// An error setting the other end of a relation (`other`'s slot `oslot`), as the reference raises it:
  /// an attribute error of that instance, reported in the instance itself.
  Diagnostic inverseFailure(InstanceId other, uint32_t oslot, Diagnostic cause);
  /// Reports an error assigning `inst`'s slot at `node`: wrapped as that attribute's error, unless it already
  /// is an attribute error (of the other end), which passes with its causes placed at `node`.
  Status failAttrAssign(Ctx& ctx, InstanceId inst, uint32_t slot, uint32_t node, bool nodeIsStmt,
                        Diagnostic err);
  std::string reprNode(uint32_t file, uint32_t node, bool isStmt) {
    return report_.reprNode(file, node, isStmt);
  }
  SourceRange rangeOf(uint32_t file, uint32_t node, bool isStmt) {
    return report_.rangeOf(file, node, isStmt);
  }
  std::string describeInst(InstanceId inst) { return model_.describe(inst); }
  std::string typeName(const Value& v); // Python class names: 'int', 'str', …
  std::string reprValue(const Value& v) { return model_.repr(v); }
  /// A value as the reference shows it in messages: str() with null as `null`.
  std::string msgValue(const Value& v) { return v.isNull() ? "null" : model_.display(v, true); }
  /// Reports a failed read at the node consuming it (the reference's "reported in" convention).
  Status failRead(Ctx& ctx, ExprId self, uint32_t consumer, DiagKind kind, std::string message,
                  const std::string& suggestion = {});

  // misc caches
  std::vector<std::vector<Value>> constCache_; // file -> ExprId -> literal value
  std::unordered_map<uint64_t, std::unique_ptr<RE2>> regexCache_;
  const PluginRegistry& plugins_;
  std::vector<const PluginFn*> pluginFns_; // PluginId -> implementation
  StringId selfName_;
  StringId requiresName_;
};

} // namespace inm::runtime
