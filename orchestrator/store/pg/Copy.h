// COPY … FROM STDIN in PostgreSQL's text format for the scheduler's bulk writes (private to
// inm_store_scheduler). Rows are built into one buffer (fields escaped: backslash, tab, newline, carriage
// return; `\N` for NULL) and sent in chunks through one libpqxx 6.4 tablewriter, so 10k rows are a few round
// trips, not 10k statements. Invariant: a CopyRows is sent at most once, inside the caller's transaction; an
// error throws (pqxx) and the caller's transaction aborts, so a half-sent COPY is never committed.
#pragma once

#include <pqxx/pqxx>
#include <pqxx/tablewriter>

#include <string>
#include <string_view>
#include <vector>

namespace inm::scheduler::pg {

class CopyRows {
 public:
  /// One field; appends a tab before every field but the first of a row.
  CopyRows& field(std::string_view s) {
    sep();
    for (char c : s) {
      switch (c) {
      case '\\': line_ += "\\\\"; break;
      case '\t': line_ += "\\t"; break;
      case '\n': line_ += "\\n"; break;
      case '\r': line_ += "\\r"; break;
      default: line_ += c;
      }
    }
    return *this;
  }
  CopyRows& null() {
    sep();
    line_ += "\\N";
    return *this;
  }
  CopyRows& boolean(bool b) { return field(b ? "t" : "f"); }
  CopyRows& integer(long long v) { return field(std::to_string(v)); }
  /// Ends the current row.
  void endRow() {
    line_ += '\n';
    first_ = true;
    ++rows_;
  }
  size_t rows() const { return rows_; }

  /// COPY `table` (`columns`) FROM STDIN with the rows built so far.
  void send(pqxx::transaction_base& tx, const std::string& table, const std::vector<std::string>& columns) {
    if (rows_ == 0) return;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    pqxx::tablewriter w(tx, table, columns.begin(), columns.end());
#pragma GCC diagnostic pop
    // write_raw_line appends a newline: send whole rows in ~1 MiB chunks without their last newline.
    constexpr size_t kChunk = 1 << 20;
    size_t pos = 0;
    while (pos < line_.size()) {
      size_t end = std::min(line_.size(), pos + kChunk);
      end = line_.find('\n', end == line_.size() ? end - 1 : end);
      if (end == std::string::npos) end = line_.size() - 1;
      w.write_raw_line(line_.substr(pos, end - pos));
      pos = end + 1;
    }
    w.complete();
  }

 private:
  void sep() {
    if (!first_) line_ += '\t';
    first_ = false;
  }
  std::string line_;
  bool first_ = true;
  size_t rows_ = 0;
};

/// A PostgreSQL text-array literal of one element (for text[] columns written by COPY).
inline std::string oneElementArray(const std::string& item) {
  std::string out = "{\"";
  for (char c : item) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"}";
}

} // namespace inm::scheduler::pg
