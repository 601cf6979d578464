// Operators and string formatting of the engine: comparison and arithmetic with Python semantics (true
// division, floor modulo, left-associative power), membership, `{{ }}` interpolation and f-strings (a
// subset of Python's format-spec mini-language). Unknown operands make unknown results (spec §5.10).
#include "Evaluator.h"
#include "runtime/BigInt.h"
#include "support/CheckedMath.h"
#include "support/Limits.h"

#include <fmt/format.h>
#include <llvm/Support/ErrorHandling.h>

#include <cmath>

namespace inm::runtime {

static double num(const Value& v) {
  return v.kind == ValueKind::Float ? v.f : v.kind == ValueKind::Bool ? double(v.b) : double(v.i);
}
static int64_t inum(const Value& v) { return v.kind == ValueKind::Bool ? int64_t(v.b) : v.i; }

static const char* opSymbol(frontend::BinaryOp op) {
  switch (op) {
  case frontend::BinaryOp::Add: return "+";
  case frontend::BinaryOp::Sub: return "-";
  case frontend::BinaryOp::Mul: return "*";
  case frontend::BinaryOp::Div: return "/";
  case frontend::BinaryOp::Mod: return "%";
  case frontend::BinaryOp::Pow: return "**";
  default: return "?";
  }
}

static const char* opName(frontend::BinaryOp op) {
  switch (op) {
  case frontend::BinaryOp::Add: return "plus";
  case frontend::BinaryOp::Sub: return "minus";
  case frontend::BinaryOp::Mul: return "multiply";
  case frontend::BinaryOp::Div: return "divide";
  case frontend::BinaryOp::Mod: return "modulo";
  case frontend::BinaryOp::Pow: return "power";
  default: return "compare";
  }
}

Status Evaluator::evalBinary(Ctx& ctx, const Expr& e, ExprId id, Value& out) {
  Value l, r;
  uint32_t savedAttr = ctx.hintAttr;
  ctx.hintAttr = kNone;
  Status st = eval(ctx, e.a, l);
  if (st == Status::Ok) st = eval(ctx, e.b, r);
  ctx.hintAttr = savedAttr;
  if (st != Status::Ok) return st;
  if (l.isUnknown() || r.isUnknown()) {
    out = Value::unknown();
    return Status::Ok;
  }
  using frontend::BinaryOp;
  switch (e.op) {
  case BinaryOp::Eq: out = Value::boolean(valuesEqual(l, r)); return Status::Ok;
  case BinaryOp::Ne: out = Value::boolean(!valuesEqual(l, r)); return Status::Ok;
  case BinaryOp::Lt:
  case BinaryOp::Gt:
  case BinaryOp::Le:
  case BinaryOp::Ge: {
    if (!l.isNumber() || !r.isNumber()) return fail(ctx, id, DiagKind::CompareNonNumbers);
    bool res;
    bool lf = l.kind == ValueKind::Float, rf = r.kind == ValueKind::Float;
    if (lf && rf) {
      double a = l.f, b = r.f;
      res = e.op == BinaryOp::Lt   ? a < b
            : e.op == BinaryOp::Gt ? a > b
            : e.op == BinaryOp::Le ? a <= b
                                   : a >= b;
    } else {
      // Ints of any size, and ints against floats, compare exactly as in Python (no rounding to double).
      int c = lf ? -compareIntFloat(r, l.f) : rf ? compareIntFloat(l, r.f) : compareInts(l, r);
      if (c == 2 || c == -2)
        res = false; // NaN
      else
        res = e.op == BinaryOp::Lt   ? c < 0
              : e.op == BinaryOp::Gt ? c > 0
              : e.op == BinaryOp::Le ? c <= 0
                                     : c >= 0;
    }
    out = Value::boolean(res);
    return Status::Ok;
  }
  default: break;
  }
  if (e.op == BinaryOp::Add && l.kind == ValueKind::String) {
    if (r.kind != ValueKind::String)
      return fail(ctx, id, DiagKind::ConcatNonString, typeName(r), model_.repr(r));
    if (uint64_t(l.str().size()) + r.str().size() > limits().maxStringBytes)
      return fail(ctx, id, DiagKind::ConcatSizeLimit, l.str().size(), r.str().size(),
                  limits().maxStringBytes);
    out = model_.arena().str((l.str() + r.str()).str());
    return Status::Ok;
  }
  if (!l.isNumber() || !r.isNumber())
    return fail(ctx, id, DiagKind::UnsupportedOperands, opName(e.op), typeName(l), model_.repr(l),
                typeName(r), model_.repr(r));
  bool isFloat = l.kind == ValueKind::Float || r.kind == ValueKind::Float;
  if (l.kind == ValueKind::BigInt || r.kind == ValueKind::BigInt)
    return evalBigBinary(ctx, e, id, l, r, isFloat, out);
  // Ints are exact (Python ints): the fast path is one overflow-checked int64 operation; on overflow the
  // operation is redone exactly (runtime/BigInt.h). Float results must stay finite (docs/limits.md).
  auto exact = [&]() { return evalBigBinary(ctx, e, id, l, r, false, out); };
  auto real = [&](double d) {
    if (!std::isfinite(d) && std::isfinite(num(l)) && std::isfinite(num(r)))
      return fail(ctx, id, DiagKind::IntegerOverflow, model_.repr(l), opSymbol(e.op), model_.repr(r));
    out = Value::real(d);
    return Status::Ok;
  };
  int64_t res = 0;
  switch (e.op) {
  case BinaryOp::Add:
    if (isFloat) return real(num(l) + num(r));
    if (__builtin_add_overflow(inum(l), inum(r), &res)) return exact();
    out = Value::integer(res);
    return Status::Ok;
  case BinaryOp::Sub:
    if (isFloat) return real(num(l) - num(r));
    if (__builtin_sub_overflow(inum(l), inum(r), &res)) return exact();
    out = Value::integer(res);
    return Status::Ok;
  case BinaryOp::Mul:
    if (isFloat) return real(num(l) * num(r));
    if (__builtin_mul_overflow(inum(l), inum(r), &res)) return exact();
    out = Value::integer(res);
    return Status::Ok;
  case BinaryOp::Div:
    if (num(r) == 0) return fail(ctx, id, DiagKind::DivisionByZero);
    return real(num(l) / num(r));
  case BinaryOp::Mod:
    if (num(r) == 0) return fail(ctx, id, DiagKind::ModuloByZero);
    if (isFloat) {
      double a = num(l), b = num(r), m = std::fmod(a, b);
      if (m != 0 && ((m < 0) != (b < 0))) m += b;
      return real(m);
    } else {
      out = Value::integer(floorMod(inum(l), inum(r))); // INT64_MIN % -1 is 0, never a trap
    }
    return Status::Ok;
  case BinaryOp::Pow:
    if (!isFloat && inum(r) >= 0) {
      if (!checkedPow(inum(l), inum(r), res)) return exact();
      out = Value::integer(res);
    } else {
      if (num(l) == 0 && num(r) < 0) return fail(ctx, id, DiagKind::ZeroToNegativePower);
      if (num(l) < 0 && num(r) != std::floor(num(r)))
        return fail(ctx, id, DiagKind::NoRealPower, model_.repr(l), model_.repr(r));
      return real(std::pow(num(l), num(r)));
    }
    return Status::Ok;
  default: break;
  }
  llvm_unreachable("comparisons return above; every arithmetic operator has a case");
}

Status Evaluator::evalBigBinary(Ctx& ctx, const Expr& e, ExprId id, const Value& l, const Value& r,
                                bool isFloat, Value& out) {
  using frontend::BinaryOp;
  auto toFloat = [&](const Value& v, double& d) {
    if (v.kind == ValueKind::Float) {
      d = v.f;
      return true;
    }
    return intToDouble(v, d);
  };
  if (isFloat || e.op == BinaryOp::Div || (e.op == BinaryOp::Pow && intIsNegative(r))) {
    // Python converts the int to a float first (OverflowError when it is beyond the double range).
    double a, b;
    if (!toFloat(l, a) || !toFloat(r, b))
      return fail(ctx, id, DiagKind::IntToFloatOverflow, model_.repr(l), opSymbol(e.op), model_.repr(r));
    double d;
    switch (e.op) {
    case BinaryOp::Add: d = a + b; break;
    case BinaryOp::Sub: d = a - b; break;
    case BinaryOp::Mul: d = a * b; break;
    case BinaryOp::Div:
      if (b == 0) return fail(ctx, id, DiagKind::DivisionByZero);
      d = a / b;
      break;
    case BinaryOp::Mod:
      if (b == 0) return fail(ctx, id, DiagKind::ModuloByZero);
      d = std::fmod(a, b);
      if (d != 0 && ((d < 0) != (b < 0))) d += b;
      break;
    case BinaryOp::Pow:
      if (a == 0 && b < 0) return fail(ctx, id, DiagKind::ZeroToNegativePower);
      if (a < 0 && b != std::floor(b))
        return fail(ctx, id, DiagKind::NoRealPower, model_.repr(l), model_.repr(r));
      d = std::pow(a, b);
      break;
    default: llvm_unreachable("evalBinary sends only arithmetic operators here");
    }
    if (!std::isfinite(d))
      return fail(ctx, id, DiagKind::IntegerOverflow, model_.repr(l), opSymbol(e.op), model_.repr(r));
    out = Value::real(d);
    return Status::Ok;
  }
  IntOp op;
  switch (e.op) {
  case BinaryOp::Add: op = IntOp::Add; break;
  case BinaryOp::Sub: op = IntOp::Sub; break;
  case BinaryOp::Mul: op = IntOp::Mul; break;
  case BinaryOp::Mod: op = IntOp::Mod; break;
  case BinaryOp::Pow: op = IntOp::Pow; break;
  default: llvm_unreachable("Div takes the float path above; the other operators have a case");
  }
  if (op == IntOp::Mod && compareInts(r, Value::integer(0)) == 0)
    return fail(ctx, id, DiagKind::ModuloByZero);
  std::string err = intArith(model_.arena(), op, l, r, out);
  if (!err.empty())
    return fail(ctx, id, DiagKind::IntArithmeticLimit, reprShort(l), opSymbol(e.op), reprShort(r), err);
  return Status::Ok;
}

/// repr of an operand for a message; a huge int is abbreviated to its first and last digits.
std::string Evaluator::reprShort(const Value& v) {
  std::string s = model_.repr(v);
  if (s.size() <= 60) return s;
  return fmt::format("{}...{} ({} digits)", s.substr(0, 20), s.substr(s.size() - 20),
                     s.size() - (s[0] == '-'));
}

Status Evaluator::evalIn(Ctx& ctx, const Expr& e, ExprId id, Value& out) {
  Value needle, hay;
  uint32_t savedAttr = ctx.hintAttr;
  ctx.hintAttr = kNone;
  Status st = eval(ctx, e.a, needle);
  if (st == Status::Ok) st = eval(ctx, e.b, hay);
  ctx.hintAttr = savedAttr;
  if (st != Status::Ok) return st;
  bool negate = e.kind == ExprKind::NotIn;
  if (needle.isUnknown() || hay.isUnknown()) {
    out = Value::unknown();
    return Status::Ok;
  }
  if (hay.kind == ValueKind::Dict) {
    bool found = needle.kind == ValueKind::String && hay.d->find(needle.str()) != nullptr;
    out = Value::boolean(found != negate);
    return Status::Ok;
  }
  if (hay.kind != ValueKind::List) return fail(ctx, id, DiagKind::InOnNonCollection);
  bool sawUnknown = false;
  for (const Value& v : hay.items()) {
    if (v.isUnknown()) {
      sawUnknown = true;
      continue;
    }
    if (valuesEqual(v, needle)) {
      out = Value::boolean(!negate);
      return Status::Ok;
    }
  }
  out = sawUnknown ? Value::unknown() : Value::boolean(negate);
  return Status::Ok;
}

std::string Evaluator::formatValue(const Value& v) {
  if (v.kind == ValueKind::Float && std::isfinite(v.f) && v.f == std::floor(v.f) && std::fabs(v.f) < 1e16)
    return std::to_string(int64_t(v.f));
  if (v.kind == ValueKind::Null) return "null";
  return model_.display(v, true);
}

Status Evaluator::evalFormat(Ctx& ctx, const Expr& e, ExprId id, Value& out) {
  if (scopes_[ctx.scope].isStatic)
    return fail(ctx, id, DiagKind::DirectExecute, frontend::reprExpr(*ctx.ast, id, strings_));
  std::string s;
  bool unknown = false;
  uint32_t savedAttr = ctx.hintAttr;
  ctx.hintAttr = kNone;
  for (uint32_t i = e.partBegin; i < e.partEnd; ++i) {
    const frontend::FormatPart& p = ctx.ast->formatParts[i];
    if (!p.expr.valid()) {
      s += strings_.str(p.literal);
      continue;
    }
    Value v;
    Status st = eval(ctx, p.expr, v);
    if (st == Status::Error) {
      ctx.hintAttr = savedAttr;
      return st;
    }
    if (st != Status::Ok) {
      ctx.hintAttr = savedAttr;
      return st;
    }
    if (v.isUnknown())
      unknown = true;
    else if (v.kind == ValueKind::String)
      s += v.str(); // what formatValue shows for a string, without the temporary copy
    else
      s += formatValue(v);
  }
  ctx.hintAttr = savedAttr;
  out = unknown ? Value::unknown() : model_.arena().str(s);
  return checkValueSize(ctx, id, out);
}

namespace {

/// Applies a Python format spec ([[fill]align][sign][#][0][width][,][.precision][type]) to a value.
bool applySpec(const Model& model, const Value& v, llvm::StringRef spec, std::string& out, std::string& err) {
  char fill = ' ', align = 0, sign = '-';
  size_t i = 0;
  auto isAlign = [](char c) { return c == '<' || c == '>' || c == '^' || c == '='; };
  if (spec.size() >= 2 && isAlign(spec[1])) {
    fill = spec[0];
    align = spec[1];
    i = 2;
  } else if (!spec.empty() && isAlign(spec[0])) {
    align = spec[0];
    i = 1;
  }
  if (i < spec.size() && (spec[i] == '+' || spec[i] == '-' || spec[i] == ' ')) sign = spec[i++];
  bool alt = false;
  if (i < spec.size() && spec[i] == '#') {
    alt = true;
    ++i;
  }
  if (i < spec.size() && spec[i] == '0') {
    if (!align) {
      fill = '0';
      align = '=';
    }
    ++i;
  }
  // Width and precision are capped (Limits::maxFormatWidth): `{x:>99999999999}` would otherwise overflow or
  // allocate gigabytes.
  const uint64_t maxWidth = limits().maxFormatWidth;
  auto tooWide = [&]() {
    err = fmt::format("format width or precision in '{}' exceeds the limit of {} (--max-format-width)",
                      spec.str(), maxWidth);
    return false;
  };
  size_t width = 0;
  while (i < spec.size() && isdigit((unsigned char)spec[i])) {
    width = width * 10 + size_t(spec[i++] - '0');
    if (width > maxWidth) return tooWide();
  }
  bool comma = false;
  if (i < spec.size() && (spec[i] == ',' || spec[i] == '_')) {
    comma = true;
    ++i;
  }
  int precision = -1;
  if (i < spec.size() && spec[i] == '.') {
    ++i;
    precision = 0;
    while (i < spec.size() && isdigit((unsigned char)spec[i])) {
      precision = precision * 10 + (spec[i++] - '0');
      if (uint64_t(precision) > maxWidth || precision > 100000000) return tooWide();
    }
  }
  char type = 0;
  if (i < spec.size()) type = spec[i++];
  const char* typeName = v.kind == ValueKind::String  ? "str"
                         : v.isInt()                  ? "int"
                         : v.kind == ValueKind::Float ? "float"
                         : v.kind == ValueKind::Bool  ? "bool"
                                                      : "object";
  if (i != spec.size()) {
    err = fmt::format("Invalid format specifier '{}' for object of type '{}'", spec.str(), typeName);
    return false;
  }
  std::string body;
  bool numeric = v.isNumber();
  if (v.kind == ValueKind::String) {
    if (type && type != 's') {
      err = fmt::format("Unknown format code '{}' for object of type 'str'", type);
      return false;
    }
    body = v.str().str();
    if (precision >= 0 && body.size() > size_t(precision)) body.resize(size_t(precision));
  } else if (numeric) {
    double d = 0;
    if (v.kind == ValueKind::Float)
      d = v.f;
    else if (!intToDouble(v, d) && type && strchr("fFeEgG%", type)) {
      err = "int too large to convert to float";
      return false;
    }
    switch (type) {
    case 'f':
    case 'F': body = fmt::format("{:.{}f}", std::fabs(d), precision < 0 ? 6 : precision); break;
    case 'e':
    case 'E': body = fmt::format("{:.{}e}", std::fabs(d), precision < 0 ? 6 : precision); break;
    case '%': body = fmt::format("{:.{}f}%", std::fabs(d) * 100, precision < 0 ? 6 : precision); break;
    case 'g':
    case 'G': body = fmt::format("{:.{}g}", std::fabs(d), precision < 0 ? 6 : precision); break;
    case 'd':
      if (v.kind == ValueKind::Float) {
        err = "Unknown format code 'd' for object of type 'float'";
        return false;
      }
      body = intMagnitudeText(v, 10);
      break;
    case 'x':
    case 'X':
    case 'o':
    case 'b': {
      if (v.kind == ValueKind::Float) {
        err = fmt::format("Unknown format code '{}' for object of type 'float'", type);
        return false;
      }
      body = intMagnitudeText(v, type == 'o' ? 8 : type == 'b' ? 2 : 16, type == 'X');
      if (alt) body = std::string("0") + (type == 'X' ? 'X' : type) + body;
      break;
    }
    case 0:
      if (v.kind == ValueKind::Float) {
        body = precision >= 0 ? fmt::format("{:.{}g}", std::fabs(d), precision)
                              : model.display(Value::real(std::fabs(d)), true);
      } else {
        body = intMagnitudeText(v, 10);
      }
      break;
    default:
      err = fmt::format("Unknown format code '{}' for object of type '{}'", type, typeName);
      return false;
    }
    if (comma) {
      size_t dot = body.find_first_of(".e%");
      std::string intPart = body.substr(0, dot), rest = dot == std::string::npos ? "" : body.substr(dot);
      std::string grouped;
      for (size_t k = 0; k < intPart.size(); ++k) {
        if (k && (intPart.size() - k) % 3 == 0) grouped += ',';
        grouped += intPart[k];
      }
      body = grouped + rest;
    }
    bool neg = v.kind == ValueKind::Float ? d < 0 : intIsNegative(v);
    std::string signStr = neg ? "-" : sign == '+' ? "+" : sign == ' ' ? " " : "";
    if (align == '=') {
      size_t len = signStr.size() + body.size();
      if (len < width) body = std::string(width - len, fill) + body;
      out = signStr + body;
      return true;
    }
    body = signStr + body;
  } else {
    body = model.display(v, true);
  }
  if (body.size() < width) {
    size_t pad = width - body.size();
    char a = align ? align : (numeric ? '>' : '<');
    if (a == '<')
      body += std::string(pad, fill);
    else if (a == '>')
      body = std::string(pad, fill) + body;
    else
      body = std::string(pad / 2, fill) + body + std::string(pad - pad / 2, fill);
  }
  out = body;
  return true;
}
} // namespace

Status Evaluator::evalFString(Ctx& ctx, const Expr& e, ExprId id, Value& out) {
  std::string s;
  bool unknown = false;
  uint32_t savedAttr = ctx.hintAttr;
  ctx.hintAttr = kNone;
  std::function<Status(uint32_t, uint32_t, std::string&)> render = [&](uint32_t b, uint32_t en,
                                                                       std::string& into) -> Status {
    for (uint32_t i = b; i < en; ++i) {
      const frontend::FormatPart& p = ctx.ast->formatParts[i];
      if (!p.expr.valid()) {
        into += strings_.str(p.literal);
        continue;
      }
      Value v;
      TRY(eval(ctx, p.expr, v));
      if (v.isUnknown()) {
        unknown = true;
        continue;
      }
      std::string spec;
      if (p.specBegin != p.specEnd) TRY(render(p.specBegin, p.specEnd, spec));
      if (p.conversion == 'r') v = model_.arena().str(model_.repr(v));
      if (spec.empty()) {
        into += formatValue(v);
        continue;
      }
      std::string piece, err;
      if (!applySpec(model_, v, spec, piece, err)) return fail(ctx, id, DiagKind::InvalidFString, err);
      into += piece;
    }
    return Status::Ok;
  };
  Status st = render(e.partBegin, e.partEnd, s);
  ctx.hintAttr = savedAttr;
  if (st != Status::Ok) return st;
  out = unknown ? Value::unknown() : model_.arena().str(s);
  return checkValueSize(ctx, id, out);
}

} // namespace inm::runtime
