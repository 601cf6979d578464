// Service::blocking: run a blocking call on the bounded pool and resume on the awaiting coroutine's executor
// (STYLE.md "Concurrency"). The result is held in an optional owned by the coroutine frame, so the value type
// need not be default-constructible (llvm::Expected is not).
#pragma once

#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <optional>

namespace inm::service {

template <typename F>
asio::awaitable<std::invoke_result_t<F>> Service::blocking(F fn) {
  using R = std::invoke_result_t<F>;
  auto ex = co_await asio::this_coro::executor;
  std::optional<R> out;
  co_await asio::async_initiate<decltype(asio::use_awaitable), void()>(
      [&](auto handler) {
        asio::post(pool_, [&out, &fn, ex, h = std::move(handler)]() mutable {
          out.emplace(fn());
          asio::post(ex, std::move(h));
        });
      },
      asio::use_awaitable);
  co_return std::move(*out);
}

} // namespace inm::service
