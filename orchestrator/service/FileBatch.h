// Private to service/: group commit of file uploads. Concurrent uploads (one HTTP request per file, as the
// reference's exporter sends them) each call submit() from a pool thread; whichever caller finds no write in
// progress becomes the writer and stores everything queued so far in one Store::putFiles statement, the
// others wait for the write that carries their file. No timer: the batch is whatever arrived during the
// previous write. Invariant: submit() returns only after its file's write committed (success) or failed (that
// write's error).
#pragma once

#include "store/Store.h"

#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

namespace inm::service {

class FileBatch {
 public:
  explicit FileBatch(store::Store& store) : store_(store) {}
  /// Blocks (call it on the pool) until `bytes` under `hash` is stored.
  llvm::Error submit(std::string hash, std::string bytes);

 private:
  struct Pending {
    std::pair<std::string, std::string> file;
    bool done = false;
    std::optional<std::pair<model::ErrorCode, std::string>> error;
  };
  store::Store& store_;
  std::mutex mutex_;
  std::condition_variable written_;
  std::vector<Pending*> queue_;
  bool writing_ = false;
};

} // namespace inm::service
