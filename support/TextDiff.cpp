// Unified diffs of file contents (see support/TextDiff.h): the common head and tail are set aside, Myers'
// O((N+M)·D) greedy search runs on the middle keeping only the 2d+1 live diagonals of each step for the
// walk back, and the edit script is cut into hunks with three lines of context, as GNU diff -u prints them.
#include "support/TextDiff.h"

#include <algorithm>
#include <string_view>
#include <vector>

namespace inm {
namespace {

/// The lines with their '\n' (the last one may lack it, so "x" and "x\n" differ as lines do).
std::vector<std::string_view> splitLines(const std::string& s) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start < s.size()) {
    size_t nl = s.find('\n', start);
    size_t end = nl == std::string::npos ? s.size() : nl + 1;
    out.emplace_back(s.data() + start, end - start);
    start = end;
  }
  return out;
}

std::string thousands(size_t n) {
  std::string d = std::to_string(n), out;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i && (d.size() - i) % 3 == 0) out += ',';
    out += d[i];
  }
  return out;
}

enum class Op : char { Equal, Delete, Insert };

/// Myers' shortest edit script between a and b; false when it needs more than `maxD` changes.
bool myers(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b, size_t maxD,
           std::vector<Op>& ops) {
  const long n = long(a.size()), m = long(b.size());
  std::vector<std::vector<long>> trace; // trace[d][k + d] = furthest x on diagonal k after d changes
  long found = -1;
  for (long d = 0; d <= n + m && d <= long(maxD); ++d) {
    std::vector<long> v(size_t(2 * d + 1));
    const std::vector<long>* prev = d ? &trace.back() : nullptr;
    auto at = [&](long k) { return (*prev)[size_t(k + d - 1)]; };
    for (long k = -d; k <= d; k += 2) {
      long x;
      if (d == 0)
        x = 0;
      else if (k == -d || (k != d && at(k - 1) < at(k + 1)))
        x = at(k + 1);
      else
        x = at(k - 1) + 1;
      long y = x - k;
      while (x < n && y < m && a[size_t(x)] == b[size_t(y)]) ++x, ++y;
      v[size_t(k + d)] = x;
      if (x >= n && y >= m) found = d;
    }
    trace.push_back(std::move(v));
    if (found >= 0) break;
  }
  if (found < 0) return false;
  std::vector<Op> rev;
  long x = n, y = m;
  for (long d = found; d > 0; --d) {
    const std::vector<long>& prev = trace[size_t(d - 1)];
    auto at = [&](long k) { return prev[size_t(k + d - 1)]; };
    long k = x - y;
    long pk = (k == -d || (k != d && at(k - 1) < at(k + 1))) ? k + 1 : k - 1;
    long px = at(pk), py = px - pk;
    while (x > px && y > py) --x, --y, rev.push_back(Op::Equal);
    rev.push_back(x == px ? Op::Insert : Op::Delete);
    x = px;
    y = py;
  }
  while (x > 0 && y > 0) --x, --y, rev.push_back(Op::Equal);
  ops.insert(ops.end(), rev.rbegin(), rev.rend());
  return true;
}

std::string range(size_t start, size_t count) {
  // GNU diff: 1-based first line; an empty range names the line before it; ",1" is left out.
  size_t first = count == 0 ? start : start + 1;
  return count == 1 ? std::to_string(first) : std::to_string(first) + "," + std::to_string(count);
}

} // namespace

bool looksBinary(const std::string& content) {
  if (content.find('\0') != std::string::npos) return true;
  for (size_t i = 0; i < content.size();) {
    auto c = static_cast<unsigned char>(content[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > content.size()) return true;
    for (size_t j = 1; j < len; ++j)
      if ((static_cast<unsigned char>(content[i + j]) >> 6) != 2) return true;
    i += len;
  }
  return false;
}

std::string contentDiff(const std::string& from, const std::string& to, const std::string& fromName,
                        const std::string& toName) {
  if (from == to) return "";
  const std::string sizes = thousands(from.size()) + " bytes -> " + thousands(to.size()) + " bytes";
  if (looksBinary(from) || looksBinary(to)) return "binary content differs: " + sizes + "\n";
  std::vector<std::string_view> a = splitLines(from), b = splitLines(to);
  if (a.size() > kMaxDiffLines || b.size() > kMaxDiffLines)
    return "content differs: " + sizes + " (" + thousands(a.size()) + " -> " + thousands(b.size()) +
           " lines, more than the " + thousands(kMaxDiffLines) + " lines a diff is shown for)\n";
  // The common head and tail, then the middle.
  size_t head = 0;
  while (head < a.size() && head < b.size() && a[head] == b[head]) ++head;
  size_t tail = 0;
  while (tail + head < a.size() && tail + head < b.size() && a[a.size() - 1 - tail] == b[b.size() - 1 - tail])
    ++tail;
  std::vector<std::string_view> ma(a.begin() + long(head), a.end() - long(tail));
  std::vector<std::string_view> mb(b.begin() + long(head), b.end() - long(tail));
  std::vector<Op> ops(head, Op::Equal);
  if (!myers(ma, mb, kMaxEditDistance, ops))
    return "content differs: " + sizes + " (more than " + thousands(kMaxEditDistance) +
           " changed lines, no diff shown)\n";
  ops.insert(ops.end(), tail, Op::Equal);

  std::string out = "--- " + fromName + "\n+++ " + toName + "\n";
  size_t shown = 0, hidden = 0;
  auto emit = [&](char sign, std::string_view line) {
    if (shown >= kMaxDiffOutputLines) {
      ++hidden;
      return;
    }
    out += sign;
    out.append(line);
    ++shown;
    if (line.empty() || line.back() != '\n') out += "\n\\ No newline at end of file\n";
  };
  const size_t context = 3;
  size_t i = 0;
  while (i < ops.size()) {
    while (i < ops.size() && ops[i] == Op::Equal) ++i;
    if (i == ops.size()) break;
    // A hunk: from `context` lines before this change to `context` after the last change that is at most
    // 2*context equal lines further.
    size_t start = i >= context ? i - context : 0, end = i;
    while (end < ops.size()) {
      size_t j = end;
      while (j < ops.size() && ops[j] != Op::Equal) ++j;
      size_t eq = j;
      while (eq < ops.size() && ops[eq] == Op::Equal) ++eq;
      if (eq == ops.size() || eq - j > 2 * context) {
        end = std::min(ops.size(), j + context);
        break;
      }
      end = eq;
    }
    size_t ai = 0, bi = 0; // line numbers at `start`
    for (size_t k = 0; k < start; ++k) {
      ai += ops[k] != Op::Insert;
      bi += ops[k] != Op::Delete;
    }
    size_t na = 0, nb = 0;
    for (size_t k = start; k < end; ++k) {
      na += ops[k] != Op::Insert;
      nb += ops[k] != Op::Delete;
    }
    if (shown < kMaxDiffOutputLines) out += "@@ -" + range(ai, na) + " +" + range(bi, nb) + " @@\n";
    for (size_t k = start; k < end; ++k) {
      if (ops[k] == Op::Equal) {
        emit(' ', a[ai]);
        ++ai, ++bi;
      } else if (ops[k] == Op::Delete) {
        emit('-', a[ai]);
        ++ai;
      } else {
        emit('+', b[bi]);
        ++bi;
      }
    }
    i = end;
  }
  if (hidden) out += "... " + thousands(hidden) + " more lines of diff not shown\n";
  return out;
}

} // namespace inm
