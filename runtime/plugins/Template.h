// The Jinja2 subset of std::template (std.md §6): a lexer + recursive-descent parser producing a small
// tree (parsed once per template file and cached), and a renderer over runtime Values. Names resolve
// through a caller-supplied resolver (kwargs, or the call site's variables). Instance attributes are read
// through PluginContext::attr, so a render can end in "retry later" (an attribute is not final) or
// "unknown" (an unknown value was read) besides text or an error.
// Invariant: the tree is immutable after parsing; unsupported Jinja features are parse errors that say
// "… not supported in templates", never a silently different output.
#pragma once

#include "runtime/Plugins.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace inm::runtime::plugins::tmpl {

struct Expr;
struct Node;
using ExprP = std::unique_ptr<Expr>;
using NodeP = std::unique_ptr<Node>;

enum class LitKind : uint8_t { None, Bool, Int, Float, Str };

enum class EK : uint8_t {
  Lit,
  Name,
  Attr,
  Index,
  List,
  Dict,
  Not,
  Neg,
  Pos,
  Bin,
  Cmp,
  And,
  Or,
  Cond,
  Filter,
  Test,
  Call
};

struct Expr {
  EK kind = EK::Lit;
  int line = 1;
  LitKind lit = LitKind::None;
  std::string s;                    // name, attribute, operator, filter/test name, string literal
  int64_t i = 0;                    // int literal / bool
  double f = 0;                     // float literal
  bool negated = false;             // `is not`, `not in`
  std::vector<ExprP> kids;          // operands; Dict: k0 v0 k1 v1 …; Filter/Call: subject/callee then args
  std::vector<std::string> kwNames; // Filter/Call: names of the trailing keyword arguments
  Expr() = default;
  Expr(const Expr&) = delete;
  /// Tears the subtree down with a work list: a chain of a million `+` must not recurse a million deep.
  ~Expr();
};

enum class NK : uint8_t { Text, Output, If, For, Set };

struct Node {
  NK kind = NK::Text;
  int line = 1;
  std::string text;
  ExprP expr;                                                 // Output value, Set value, For iterable
  std::vector<std::string> targets;                           // For / Set names
  std::vector<std::pair<ExprP, std::vector<NodeP>>> branches; // If: (cond or null for else, body)
  std::vector<NodeP> body, elseBody;                          // For
  Node() = default;
  Node(const Node&) = delete;
  ~Node(); // iterative, as ~Expr
};

struct Template {
  std::vector<NodeP> nodes;
};

/// Parses template source; nullptr with `err` set on a syntax error, an unsupported feature or nesting
/// (blocks, brackets, operator chains) deeper than Limits::maxNesting.
std::unique_ptr<Template> parseTemplate(llvm::StringRef source, std::string& err);

/// How a name outside the template resolves: Found (value set), Missing (undefined), Retry.
enum class Lookup : uint8_t { Found, Missing, Retry };
using Resolver = std::function<Lookup(llvm::StringRef name, Value& out)>;

/// Result of a render.
struct RenderResult {
  enum Kind : uint8_t { Ok, Retry, Unknown, Error } kind = Ok;
  std::string text; // Ok: output; Error: message
};

/// Renders `t`; `plugins` (may be null) provides std plugins usable as filters (`std.name`).
RenderResult render(const Template& t, PluginContext& ctx, const Resolver& resolve,
                    const PluginRegistry* plugins);

} // namespace inm::runtime::plugins::tmpl
