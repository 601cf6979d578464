// Private to service/: a BodyStream (service/BodyStream.h) fed by a blocking producer, for answers read from
// PostgreSQL in batches (GET /api/v1/version/<v>). The producer runs once on the bounded pool and hands each
// piece to a queue of at most kDepth pieces, waiting while it is full; the reader takes them on its executor.
// Invariant: memory holds at most kDepth + 2 pieces (the queue, the one being written, the one being built);
// a reader that goes away (the body destroyed) or stops reading for kStall makes the producer's next hand-off
// fail, so it abandons its read and frees its pool thread.
#pragma once

// clang-format off
#include <utility> // first: std::exchange, used by asio's awaitable without including it
// clang-format on

#include "service/BodyStream.h"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/thread_pool.hpp>

#include <chrono>
#include <functional>
#include <memory>

namespace inm::service {

class PipedBody : public BodyStream {
 public:
  /// Hands one piece on (the callee may take its buffer); false when the reader is gone: stop producing.
  using Sink = std::function<bool(std::string& piece)>;
  /// Produces the whole body through `sink`; its Error ends the body as failed.
  using Producer = std::function<llvm::Error(const Sink& sink)>;

  static constexpr size_t kDepth = 2;
  static constexpr std::chrono::seconds kStall{60};

  /// Starts `produce` on `pool`; the pieces are read on `reader`, a single-threaded executor (the server's
  /// io_context).
  static std::shared_ptr<PipedBody> start(boost::asio::thread_pool& pool, boost::asio::any_io_executor reader,
                                          Producer produce);
  ~PipedBody() override;

  /// Waits until the first piece is there or the producer ended: its failure when it failed before handing
  /// on anything (the answer can still be an error status then), else success.
  boost::asio::awaitable<llvm::Error> ready();
  boost::asio::awaitable<llvm::Expected<std::string>> next() override;

  struct Shared; ///< the queue, shared with the producer (PipedBody.cpp)

 private:
  explicit PipedBody(std::shared_ptr<Shared> shared) : shared_(std::move(shared)) {}
  boost::asio::awaitable<void> settle();
  std::shared_ptr<Shared> shared_;
};

} // namespace inm::service
