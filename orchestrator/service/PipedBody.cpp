// The pool-to-reader queue of a streamed answer (see PipedBody.h). The producer wakes the reader by posting
// to the reader's executor a handler that sets the reader's timer to an expired time point: a wait already
// pending ends at once, and one that starts later does not wait at all, so no wake-up is lost. The timer is
// touched only on the reader's executor (single-threaded), the queue only under the mutex.
#include "PipedBody.h"

#include "model/Failure.h"

#include <boost/asio/post.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

namespace inm::service {

namespace asio = boost::asio;

struct PipedBody::Shared {
  explicit Shared(asio::any_io_executor reader)
      : reader(reader), wake(reader, asio::steady_timer::time_point::max()) {}
  asio::any_io_executor reader;
  asio::steady_timer wake; ///< on `reader` only
  std::mutex m;
  std::condition_variable space;
  std::deque<std::string> pieces;
  bool done = false;      ///< the producer returned
  bool abandoned = false; ///< the reader is gone (or stalled): the producer stops at its next hand-off
  std::optional<std::pair<model::ErrorCode, std::string>> failure;

  static void notify(const std::shared_ptr<Shared>& s) {
    asio::post(s->reader, [s] { s->wake.expires_at(asio::steady_timer::time_point::min()); });
  }
};

std::shared_ptr<PipedBody> PipedBody::start(asio::thread_pool& pool, asio::any_io_executor reader,
                                            Producer produce) {
  auto shared = std::make_shared<Shared>(reader);
  asio::post(pool, [s = shared, produce = std::move(produce)] {
    Sink sink = [&s](std::string& piece) {
      if (piece.empty()) return true; // "" means the end to the reader
      std::unique_lock<std::mutex> lock(s->m);
      if (!s->space.wait_for(lock, kStall, [&] { return s->abandoned || s->pieces.size() < kDepth; }))
        s->abandoned = true; // the reader stopped reading: give the pool thread back
      if (s->abandoned) return false;
      s->pieces.push_back(std::move(piece));
      piece = std::string();
      lock.unlock();
      Shared::notify(s);
      return true;
    };
    llvm::Error e = produce(sink);
    {
      std::lock_guard<std::mutex> lock(s->m);
      s->done = true;
      if (e) s->failure = model::describe(std::move(e));
    }
    Shared::notify(s);
  });
  return std::shared_ptr<PipedBody>(new PipedBody(std::move(shared)));
}

PipedBody::~PipedBody() {
  {
    std::lock_guard<std::mutex> lock(shared_->m);
    shared_->abandoned = true;
  }
  shared_->space.notify_all();
}

asio::awaitable<void> PipedBody::settle() {
  for (;;) {
    shared_->wake.expires_at(asio::steady_timer::time_point::max());
    {
      std::lock_guard<std::mutex> lock(shared_->m);
      if (!shared_->pieces.empty() || shared_->done) co_return;
    }
    boost::system::error_code ec; // expired or cancelled: either way, look again
    co_await shared_->wake.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

asio::awaitable<llvm::Error> PipedBody::ready() {
  co_await settle();
  std::lock_guard<std::mutex> lock(shared_->m);
  if (shared_->pieces.empty() && shared_->failure)
    co_return model::fail(shared_->failure->first, shared_->failure->second);
  co_return llvm::Error::success();
}

asio::awaitable<llvm::Expected<std::string>> PipedBody::next() {
  co_await settle();
  std::string piece;
  {
    std::lock_guard<std::mutex> lock(shared_->m);
    if (shared_->pieces.empty()) {
      if (shared_->failure) co_return model::fail(shared_->failure->first, shared_->failure->second);
      co_return std::string(); // complete
    }
    piece = std::move(shared_->pieces.front());
    shared_->pieces.pop_front();
  }
  shared_->space.notify_one();
  co_return piece;
}

} // namespace inm::service
