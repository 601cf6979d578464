// Parser for builtin plugin signatures written in the language's own notation (ir::PluginSpec), e.g.
// "std::replace(string: string, old: string, new: string) -> string", with `name: T = default`,
// `*args: T`, `**kwargs: T` and a bare `*` starting keyword-only parameters. Used by ir::lower to register
// plugins as types of their namespace. Invariant: tolerant — unknown type names become `any`.
#include "LowerContext.h"

#include <llvm/ADT/SmallVector.h>

namespace inm::ir {

namespace {

Type parseTypeText(const Program& program, llvm::StringRef text) {
  Type t;
  text = text.trim();
  if (text.endswith("?")) {
    t.nullable = true;
    text = text.drop_back().trim();
  }
  if (text.endswith("[]")) {
    t.isList = true;
    text = text.drop_back(2).trim();
  }
  BaseType b;
  if (primitiveType(text, b)) {
    t.base = b;
  } else if (text == "null" || text == "None") {
    t.base = BaseType::Any;
    t.nullable = true;
  } else {
    t.base = BaseType::Any;
    for (uint32_t i = 0; i < program.entities.size(); ++i)
      if (program.entities[EntityId{i}].fullName == text) {
        t.base = BaseType::Entity;
        t.entity = EntityId{i};
      }
  }
  return t;
}

/// Splits at top-level commas (ignoring commas inside brackets and quotes).
llvm::SmallVector<llvm::StringRef, 8> splitParams(llvm::StringRef s) {
  llvm::SmallVector<llvm::StringRef, 8> out;
  int depth = 0;
  char quote = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quote) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '"' || c == '\'')
      quote = c;
    else if (c == '(' || c == '[' || c == '{')
      ++depth;
    else if (c == ')' || c == ']' || c == '}')
      --depth;
    else if (c == ',' && depth == 0) {
      out.push_back(s.slice(start, i).trim());
      start = i + 1;
    }
  }
  if (!s.substr(start).trim().empty()) out.push_back(s.substr(start).trim());
  return out;
}

} // namespace

bool parsePluginSignature(const Program& program, StringTable& strings, llvm::StringRef sig, Plugin& out,
                          std::string& fullName) {
  size_t open = sig.find('(');
  size_t close = sig.rfind(')');
  if (open == llvm::StringRef::npos || close == llvm::StringRef::npos || close < open) return false;
  fullName = sig.substr(0, open).trim().str();
  llvm::StringRef rest = sig.substr(close + 1).trim();
  if (rest.startswith("->"))
    out.returnType = parseTypeText(program, rest.drop_front(2));
  else
    out.returnType = Type{BaseType::Any, false, true, {}, {}};
  bool keywordOnly = false;
  for (llvm::StringRef param : splitParams(sig.slice(open + 1, close))) {
    if (param == "*") {
      keywordOnly = true;
      continue;
    }
    PluginParam pp;
    if (param.startswith("**")) {
      pp.isKwArgs = true;
      param = param.drop_front(2);
    } else if (param.startswith("*")) {
      pp.isVarArgs = true;
      keywordOnly = true;
      param = param.drop_front(1);
    }
    size_t eq = param.find('=');
    if (eq != llvm::StringRef::npos) {
      pp.hasDefault = true;
      param = param.substr(0, eq).trim();
    }
    size_t colon = param.find(':');
    llvm::StringRef name = colon == llvm::StringRef::npos ? param : param.substr(0, colon).trim();
    pp.type = colon == llvm::StringRef::npos ? Type{} : parseTypeText(program, param.substr(colon + 1));
    pp.name = strings.intern(name);
    pp.keywordOnly = keywordOnly && !pp.isVarArgs && !pp.isKwArgs;
    out.params.push_back(pp);
  }
  return true;
}

} // namespace inm::ir
