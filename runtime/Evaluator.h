// Private header of the evaluation engine (runtime stage). The engine executes the IR as a dataflow
// program: every variable and attribute is a result slot, set once (lists accumulate and are frozen);
// statements are units that run when the slots they read are available, blocking (and being re-run from
// the start, with side-effecting sub-results memoised) otherwise. When nothing can run, one multi-valued
// slot is frozen by the reference's rules (§5.4 of the language spec) and execution resumes.
// Invariant: a unit never observes a partially written slot; every error aborts the run with exactly one
// diagnostic (end-of-run completeness errors are collected, several becoming a MultiException).
#pragma once

#include "frontend/Ast.h"
#include "frontend/Frontend.h"
#include "ir/Ir.h"
#include "runtime/BigInt.h"
#include "runtime/Model.h"
#include "runtime/Plugins.h"
#include "support/ChunkedVector.h"
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

struct SlotMeta {
  SlotKind kind = SlotKind::Var;
  uint8_t state = kOpen;
  bool queued : 1 = false; // in the freeze candidate queue
  bool policy : 1 = false; // relation mentioned in the precedence policy
  bool inZero : 1 = false; // parked in zeroWaiters_
  uint32_t owner = kNone;  // instance index (kNone for variables)
  uint32_t attr = kNone;   // AttrId index (instance slots) or variable name StringId
  int32_t promises = 0;    // outstanding providers
  uint32_t ext = kNone;    // index into exts_
  uint32_t setAt = kNone;  // index into Evaluator::setLocs_ (where a single slot was set), kNone if unknown
};

struct SlotExt {
  std::vector<Value> values;     // list / optional contents
  std::vector<uint32_t> waiters; // units blocked until the slot is set / frozen
  std::vector<uint32_t> gradual; // units subscribed to every change (for loops, forwards, is defined)
  uint32_t potential = 0;        // waiters that count as progress potential
  bool sawUnknown = false;       // an unknown was assigned (dropped from values): `is defined` is unknown
};

struct Scope {
  uint32_t parent = kNone;   // enclosing scope (if/for bodies), or the namespace scope (implementations)
  uint32_t instance = kNone; // implementation scope: the instance whose attributes are visible
  uint32_t file = 0;
  uint32_t varBegin = 0, varEnd = 0; // run in Evaluator::scopeVars_
  bool isStatic = false;             // typedef constraint context: `self` is staticSelf_[instance]
};

enum class UnitKind : uint8_t {
  Stmt,       // a statement in a scope
  AttrAssign, // a constructor keyword argument / default written to a new instance
  Implement,  // an `implement … when` for one instance
  Forward,    // relation-to-relation assignment fed gradually
  Deferred,   // an expression evaluated for its value later (unused slot kinds)
};

struct Unit {
  UnitKind kind = UnitKind::Stmt;
  bool queued = false;
  bool done = false;
  bool waited = false;       // was ever registered as a waiter/subscriber (its id may be held elsewhere)
  bool originIsExpr = false; // Forward: `origin` is an ExprId (constructor argument), else a StmtId
  uint32_t scope = kNone;
  uint32_t file = 0;
  uint32_t node = kNone;    // StmtId / ExprId index
  uint32_t inst = kNone;    // AttrAssign / Implement / ForGradual / Forward: the instance
  uint32_t aux = kNone;     // AttrAssign: slot index; Implement: ImplementId; ForGradual/Forward: source sid
  uint32_t progress = 0;    // values of the source already processed
  uint32_t target = kNone;  // Forward: target sid
  uint32_t promise = kNone; // sid this unit holds a promise on
  uint32_t memo = kNone;    // index into memos_
  uint32_t origin = kNone;  // AttrAssign: constructor ExprId (for messages)
  uint32_t eager = kNone;   // index into eagers_ (eager promises held)
};

/// Evaluation context of one expression evaluation inside a unit.
struct Ctx {
  uint32_t unit = kNone;
  uint32_t scope = kNone;
  uint32_t file = 0;
  const frontend::Ast* ast = nullptr;
  uint64_t iterKey = 0;       // distinguishes comprehension iterations for memoisation
  uint32_t hintAttr = kNone;  // implicit inverse: relation end on the constructed entity
  uint32_t hintInst = kNone;  //   filled with this instance
  uint32_t blockedOn = kNone; // the slot a Blocked status waits for
  bool blockedGradual = false;
  uint32_t reportStmt = kNone; // statement being executed (for "reported in")
  uint32_t parent = kNone;     // the expression consuming the value being evaluated (error reports)
};

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
  void warn(std::string message) override;
  bool argGiven(size_t i) override { return !given || i >= given->size() || (*given)[i] != 0; }
  bool checkTypedef(llvm::StringRef fullName, const Value& v, std::string& err) override;
  uint32_t blockedOn = kNone;
  const std::vector<uint8_t>* given = nullptr; // per declared parameter: passed by the caller

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

  // ---- shared with the plugin context ----
  Model model_;
  const ir::Program& prog_;
  DiagnosticEngine& diags_;
  EvalOptions opts_;
  const StringTable& strings_;

  // ---- slots ----
  ChunkedVector<Value> vals_;
  ChunkedVector<SlotMeta> meta_;
  ChunkedVector<SlotExt> exts_;
  std::vector<uint32_t> instBase_; // instance index -> first sid

  // Locations slots were set at, interned: millions of slots are set from a few hundred source positions, so
  // a 4-byte index in SlotMeta instead of the 12-byte location keeps every slot 8 bytes smaller.
  std::vector<PackedLoc> setLocs_;
  llvm::DenseMap<uint64_t, uint32_t> setLocIndex_;
  uint64_t lastSetLocKey_ = ~uint64_t(0);
  uint32_t lastSetLoc_ = kNone;
  uint32_t internSetLoc(const SourceRange& at);

  uint32_t newSlot(SlotKind kind, uint32_t owner, uint32_t attr);
  SlotExt& ext(uint32_t sid);
  uint32_t attrSid(uint32_t inst, uint32_t slot) const { return instBase_[inst] + slot; }
  bool slotReady(uint32_t sid) const; // set (single/var) or frozen (multi)
  Value slotValue(uint32_t sid);      // list slots: a List of the values
  void wake(uint32_t sid);            // state changed: run waiters and subscribers
  void wakeGradual(uint32_t sid);
  void addWaiter(uint32_t sid, uint32_t unit, bool gradual);
  void acquirePromise(uint32_t sid);
  void releasePromise(uint32_t sid);
  void freeze(uint32_t sid);
  void maybeQueueForFreeze(uint32_t sid);

  // ---- scopes ----
  ChunkedVector<Scope> scopes_;
  std::vector<std::pair<uint32_t, uint32_t>> scopeVars_; // (name StringId, sid)
  std::vector<uint32_t> nsScope_;                        // file index -> top-level scope
  llvm::DenseMap<uint64_t, std::vector<StringId>, PairKeyInfo>
      declared_; // (file, stmtBegin) -> assigned names
  const std::vector<StringId>& declaredNames(uint32_t file, uint32_t begin, uint32_t end);
  uint32_t newScope(uint32_t parent, uint32_t file, uint32_t instance, uint32_t begin, uint32_t end,
                    StringId loopVar = StringId{});
  /// Finds the slot of variable `name` visible from `scope`; kNone if none. `*selfOut` set for `self`.
  uint32_t lookupVar(uint32_t scope, StringId name, Value* selfOut, bool* isSelf);

  // ---- units ----
  ChunkedVector<Unit> units_;
  std::vector<Value> staticSelf_; // static scopes' `self` (indexed by Scope::instance)
  std::vector<uint32_t> freeUnits_;
  std::vector<uint32_t> freeMemos_; // memos_ entries of finished units (cleared, capacity kept)   // finished
                                    // units nobody refers to: reused by newUnit
  std::deque<uint32_t> runQueue_;
  std::vector<std::vector<std::pair<uint64_t, Value>>> memos_;
  std::vector<std::vector<uint32_t>> eagers_;
  uint32_t newUnit(UnitKind kind, uint32_t scope, uint32_t file, uint32_t node);
  void enqueue(uint32_t unit);
  void emitBlock(uint32_t scope, uint32_t file, uint32_t begin, uint32_t end);
  void runUnit(uint32_t unit);
  void finishUnit(uint32_t unit);
  bool memoGet(Ctx& ctx, uint32_t node, Value& out);
  void memoPut(Ctx& ctx, uint32_t node, const Value& v);

  // ---- statements (Statements.cpp) ----
  Status execStmt(Ctx& ctx, uint32_t unitId);
  Status execAssign(Ctx& ctx, const Stmt& s, uint32_t unitId);
  Status execFor(Ctx& ctx, const Stmt& s, uint32_t unitId);
  Status execIf(Ctx& ctx, const Stmt& s, uint32_t unitId);
  Status runForward(Ctx& ctx, uint32_t unitId);
  Status runAttrAssign(Ctx& ctx, uint32_t unitId);
  Status runImplement(Ctx& ctx, uint32_t unitId);
  /// If `id` names a list relation of an instance (x.rel, or a bare attribute name in an implementation),
  /// returns its slot without waiting for it to be frozen; kNone otherwise (Blocked if the base waits).
  Status gradualSource(Ctx& ctx, ExprId id, uint32_t& sidOut);
  /// The value of a multi-relation assignment that can be fed gradually: a relation or list variable
  /// (`sidOut`), possibly chosen by conditional expressions, or a one-loop list comprehension over one
  /// (`mapOut` is then the comprehension, applied per value).
  Status gradualFeed(Ctx& ctx, ExprId id, uint32_t& sidOut, uint32_t& mapOut);
  /// `for x in [e for v in list if g]` where some element `e` is a relation: each such relation is iterated
  /// gradually by a unit of its own (as `for v in list: if g: for x in e:`). `handled` is false when no
  /// element is a relation (the caller evaluates the comprehension eagerly).
  Status forOverComprehension(Ctx& ctx, const Stmt& s, uint32_t unitId, bool& handled);
  /// `x.rel = [a, b.rel, …]` where some item can be fed gradually (gradualFeed): those items get a Forward
  /// unit each, the others are assigned at once. `handled` is false when no item can (eager assignment).
  Status feedListLiteral(Ctx& ctx, uint32_t unitId, uint32_t inst, uint32_t slot, ExprId valueExpr,
                         uint32_t origin, bool originIsExpr, bool& handled);
  /// Forward units that apply a comprehension to each value: unit -> comprehension ExprId (rare, so kept out
  /// of Unit; Forward units are never recycled).
  std::unordered_map<uint32_t, uint32_t> forwardMaps_;
  /// a comprehension over a comprehension over a relation: inner comprehension ExprId of each map level
  std::unordered_map<uint32_t, uint32_t> innerMaps_;
  /// Starts a Forward unit feeding slot `slot` of `inst` from `src` (see gradualFeed).
  void startForward(Ctx& ctx, uint32_t unitId, uint32_t inst, uint32_t slot, uint32_t src, uint32_t mapExpr,
                    uint32_t origin, bool originIsExpr);
  Status wrapAttrError(Ctx& ctx, uint32_t inst, uint32_t slot, uint32_t node, bool nodeIsStmt, DiagKind kind,
                       std::string message);
  std::vector<Diagnostic>* capture_ = nullptr; // when set, errors are collected here instead of reported
  std::vector<uint32_t> staticScope_;          // file -> reusable scope for typedef constraints
  void takeEagerPromises(Ctx& ctx, uint32_t unitId, uint32_t begin, uint32_t end);
  void releaseEager(uint32_t unitId);
  /// Writes `v` into attribute slot of an instance (validating, syncing inverses); gradual sources for list
  /// relations are handled by the caller. `stmtNode` / `isStmt` name the reporting node for messages.
  Status assignAttr(Ctx& ctx, uint32_t inst, uint32_t slot, const Value& v, SourceRange at, uint32_t node,
                    bool nodeIsStmt);
  /// Writes to a list/optional relation slot of an instance: adds one instance (or null / a list).
  Status addToRelation(Ctx& ctx, uint32_t inst, uint32_t slot, const Value& v, SourceRange at, bool reverse,
                       std::string& err, DiagKind& errKind);
  Status setSingle(uint32_t sid, const Value& v, SourceRange at, std::string& err, DiagKind& errKind);
  Status setVariable(Ctx& ctx, uint32_t sid, const Value& v, SourceRange at, uint32_t node, bool nodeIsStmt);
  /// Checks `v` against an attribute type; on failure fills `err` (and errKind).
  bool validate(const ir::Type& t, const Value& v, std::string& err, DiagKind& errKind, Ctx* ctx);
  bool checkTypedef(ir::TypedefId td, const Value& v, std::string& err, DiagKind& errKind);

  // ---- expressions (Expressions.cpp, Operators.cpp, Format.cpp) ----
  Status eval(Ctx& ctx, ExprId id, Value& out); // tracks the consumer, then evalNode
  Status evalNode(Ctx& ctx, ExprId id, Value& out);
  Status evalName(Ctx& ctx, const Expr& e, ExprId id, Value& out);
  Status evalAttrRef(Ctx& ctx, const Expr& e, ExprId id, Value& out, uint32_t consumer);
  Status readAttr(Ctx& ctx, uint32_t inst, StringId name, ExprId id, Value& out, bool* missing,
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
  /// appends the element (flattened) or an unknown to `result`.
  Status comprehensionElement(Ctx& ctx, const Expr& e, uint32_t hintAttr,
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
  std::vector<llvm::StringMap<uint32_t>> indexTables_; // IndexId -> key -> instance
  struct PendingLookup {
    ir::EntityId entity;
    uint32_t index;
    std::string key;
    std::string keyText;
    uint32_t unit;
    uint32_t file;
    uint32_t node;
  };
  std::unordered_multimap<std::string, uint32_t> lookupWaiters_; // "index#key" -> unit
  std::vector<PendingLookup> pendingLookups_;
  std::string indexKey(const std::vector<Value>& values);
  llvm::DenseSet<uint64_t, PairKeyInfo> implDone_; // (instance, ImplId) already emitted
  std::vector<uint8_t> instHasImpl_;
  uint32_t createInstance(Ctx& ctx, ir::EntityId e, SourceRange at);
  void scheduleImplements(uint32_t inst);
  void emitImplementation(uint32_t inst, ir::ImplId impl);
  uint32_t blockOnIndex(Ctx& ctx, const std::string& key, ir::EntityId e, uint32_t index,
                        const std::string& keyText, ExprId node);

  // ---- errors ----
  bool aborted_ = false;
  /// Reports `kind` at `node` with the kind's format filled from `args` (DiagnosticKinds.def), reported in
  /// node.
  template <typename... Args>
  Status fail(Ctx& ctx, ExprId node, DiagKind kind, Args&&... args) {
    return failDiag(
        diagAt(ctx.file, node.index, false, makeDiag(kind, SourceRange{}, std::forward<Args>(args)...)));
  }
  Status failTypeNotFound(Ctx& ctx, const Expr& e, ExprId id); // "could not find type X in namespace Y"
  /// `ns::var` as seen from `file`: false when `ns` is not visible there; else sid = the variable or kNone.
  bool qualifiedVar(uint32_t file, llvm::StringRef name, uint32_t& sid);
  static std::string namespaceNotFound(llvm::StringRef qualifiedName);
  template <typename... Args>
  Status failStmt(Ctx& ctx, uint32_t stmt, DiagKind kind, Args&&... args) {
    return failDiag(diagAt(ctx.file, stmt, true, makeDiag(kind, SourceRange{}, std::forward<Args>(args)...)));
  }
  /// Keeps a value built by `node` within the limits (Limits.h): nesting depth, string bytes, list items.
  Status checkValueSize(Ctx& ctx, ExprId node, const Value& v);
  Status failDiag(Diagnostic d);
  /// `message` is the kind's text, made by diagText(kind, ...).
  Diagnostic diagAt(uint32_t file, uint32_t node, bool isStmt, DiagKind kind, std::string message);
  /// Places an already formatted diagnostic at a node: its range and "reported in" text.
  Diagnostic diagAt(uint32_t file, uint32_t node, bool isStmt, Diagnostic d);
  std::string reprNode(uint32_t file, uint32_t node, bool isStmt);
  SourceRange rangeOf(uint32_t file, uint32_t node, bool isStmt);
  std::string describeInst(uint32_t inst) { return model_.describe(InstanceId{inst}); }
  std::string typeName(const Value& v); // Python class names: 'int', 'str', …
  std::string reprValue(const Value& v) { return model_.repr(v); }
  /// A value as the reference shows it in messages: str() with null as `null`.
  std::string msgValue(const Value& v) { return v.isNull() ? "null" : model_.display(v, true); }
  /// Reports a failed read at the node consuming it (the reference's "reported in" convention).
  Status failRead(Ctx& ctx, ExprId self, uint32_t consumer, DiagKind kind, std::string message);

  // ---- scheduling and finalisation (Evaluator.cpp, Finalize.cpp) ----
  std::deque<uint32_t> freezeQueue_;
  std::vector<uint32_t> zeroWaiters_;
  bool freezeOne();
  void finalize();
  std::vector<uint32_t> multiSlots_; // every optional/list slot, in creation order
  size_t forceCursor_ = 0;           // multiSlots_ before this index are frozen (last-resort freezing)
  // Deadlock candidates (multi slots someone waits on), lowest sid first; [0] non-policy, [1] policy slots.
  // Lazy: entries that were frozen or lost their waiters are dropped when they reach the top.
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<uint32_t>> waitedOn_[2];
  bool zeroDirty_ = false; // a parked zero-waiter slot gained a waiter or lost its last promise

  // misc caches
  std::vector<std::vector<Value>> constCache_; // file -> ExprId -> literal value
  std::unordered_map<uint64_t, std::unique_ptr<RE2>> regexCache_;
  const PluginRegistry& plugins_;
  std::vector<const PluginFn*> pluginFns_; // PluginId -> implementation
  StringId selfName_;
  StringId requiresName_;
};

} // namespace inm::runtime
