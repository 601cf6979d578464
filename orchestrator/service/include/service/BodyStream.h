// An answer body produced in pieces (service::Result::stream), for reads too big to build whole (GET
// /api/v1/version/<v> at 100k resources is 75 MB): the transport (api/HttpServer.cpp) asks for one piece at a
// time and writes each as an HTTP chunk before asking for the next, so memory holds a few pieces, not the
// answer. Invariant: the pieces joined are exactly the bytes the whole answer would have had; once a piece
// was handed out, a failure can no longer become an error status, so next() reports it and the transport
// ends the answer without its last chunk (the client sees a truncated transfer, never a short valid body).
#pragma once

// clang-format off
#include <utility> // first: std::exchange, used by asio's awaitable without including it
// clang-format on

#include <boost/asio/awaitable.hpp>
#include <llvm/Support/Error.h>

#include <string>

namespace inm::service {

/// A body read piece by piece; destroying it before the end abandons the rest (its producer stops).
class BodyStream {
 public:
  virtual ~BodyStream() = default;
  /// The next piece of the body, "" once it is complete (and on every later call), or the failure that
  /// keeps it from being completed.
  virtual boost::asio::awaitable<llvm::Expected<std::string>> next() = 0;
};

} // namespace inm::service
