// Group commit of file uploads (see FileBatch.h).
#include "FileBatch.h"

namespace inm::service {

llvm::Error FileBatch::submit(std::string hash, std::string bytes) {
  Pending mine;
  mine.file = {std::move(hash), std::move(bytes)};
  std::unique_lock lock(mutex_);
  queue_.push_back(&mine);
  while (!mine.done) {
    if (writing_) {
      written_.wait(lock);
      continue;
    }
    writing_ = true;
    std::vector<Pending*> batch;
    batch.swap(queue_);
    lock.unlock();
    std::vector<std::pair<std::string, std::string>> files;
    files.reserve(batch.size());
    for (Pending* p : batch) files.push_back(std::move(p->file));
    std::optional<std::pair<model::ErrorCode, std::string>> error;
    if (llvm::Error e = store_.putFiles(files)) error = model::describe(std::move(e));
    lock.lock();
    for (Pending* p : batch) {
      p->done = true;
      p->error = error;
    }
    writing_ = false;
    written_.notify_all();
  }
  if (mine.error) return model::fail(mine.error->first, mine.error->second);
  return llvm::Error::success();
}

} // namespace inm::service
