// Byte splicing between two asio streams with C++20 coroutines: the server's relay between an external
// agent's socket and its scheduler's Unix socket, and `inmanta agent`'s pump between the server connection
// (plain or TLS) and its executor host. Invariant: `splice` returns only after both directions stopped, so
// the caller may destroy both streams afterwards; when one direction ends (EOF or error) `closeBoth` runs and
// ends the other.
#pragma once

// clang-format off
#include <utility> // first: std::exchange, used by asio's awaitable without including it
// clang-format on

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <functional>
#include <vector>

namespace inm::api {

/// Copies `from` to `to` until either side fails or ends.
template <typename From, typename To>
boost::asio::awaitable<void> pumpBytes(From& from, To& to) {
  namespace asio = boost::asio;
  std::vector<char> buf(1 << 16);
  for (;;) {
    boost::system::error_code ec;
    size_t n =
        co_await from.async_read_some(asio::buffer(buf), asio::redirect_error(asio::use_awaitable, ec));
    if (n > 0) {
      boost::system::error_code wec;
      co_await asio::async_write(to, asio::buffer(buf.data(), n),
                                 asio::redirect_error(asio::use_awaitable, wec));
      if (wec) co_return;
    }
    if (ec) co_return;
  }
}

namespace detail {
template <typename From, typename To>
boost::asio::awaitable<void> pumpAndSignal(From& from, To& to, const std::function<void()>& closeBoth,
                                           bool& done, boost::asio::steady_timer& signal) {
  co_await pumpBytes(from, to);
  closeBoth();
  done = true;
  signal.cancel();
}
} // namespace detail

/// Copies a -> b and b -> a until one direction ends, then closes both (`closeBoth`) and waits for the other.
template <typename A, typename B>
boost::asio::awaitable<void> splice(A& a, B& b, std::function<void()> closeBoth) {
  namespace asio = boost::asio;
  auto ex = co_await asio::this_coro::executor;
  asio::steady_timer signal(ex, asio::steady_timer::time_point::max());
  bool otherDone = false;
  asio::co_spawn(ex, detail::pumpAndSignal(a, b, closeBoth, otherDone, signal), asio::detached);
  co_await pumpBytes(b, a);
  closeBoth();
  // The other direction's coroutine sets otherDone (by reference) while this one waits on the timer.
  while (!otherDone) { // NOLINT(bugprone-infinite-loop): otherDone changes across co_await
    boost::system::error_code ec;
    co_await signal.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

} // namespace inm::api
