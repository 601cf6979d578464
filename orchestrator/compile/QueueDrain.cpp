// `inmanta compile-service-run`'s drain (include/compile/QueueDrain.h): the compile service on a private
// io_context until every queue is idle. Invariant: service.stop() runs before the io_context stops, so no
// run stays claimed.
#include "compile/QueueDrain.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <llvm/Support/raw_ostream.h>

namespace inm::compile {

namespace asio = boost::asio;

int drainQueues(CompileServiceOptions options, const DrainOptions& drain) {
  options.warn = [](const std::string& msg) {
    llvm::errs() << "inmanta compile-service-run: warning: " << msg << "\n";
  };
  asio::io_context ioc;
  asio::thread_pool pool(2);
  CompileService service(ioc.get_executor(), pool, std::move(options));
  int rc = 0;
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        auto failed = co_await service.start();
        if (!failed) {
          llvm::errs() << "inmanta compile-service-run: " << llvm::toString(failed.takeError()) << "\n";
          rc = 1;
          service.stop();
          ioc.stop();
          co_return;
        }
        if (*failed) llvm::outs() << "marked " << *failed << " unfinished compile(s) as failed\n";
        if (drain.retention >= 0) {
          auto purged = co_await service.purgeReports(std::chrono::seconds(drain.retention));
          if (!purged)
            llvm::errs() << "inmanta compile-service-run: " << llvm::toString(purged.takeError()) << "\n";
          else
            llvm::outs() << "purged " << *purged << " compile(s) past retention\n";
        }
        if (drain.request) {
          auto id = co_await service.request(*drain.request);
          if (!id) {
            llvm::errs() << "inmanta compile-service-run: " << llvm::toString(id.takeError()) << "\n";
            rc = 1;
          } else {
            llvm::outs() << "queued compile " << *id << "\n";
          }
        }
        llvm::outs().flush();
        asio::steady_timer t(ioc);
        auto until =
            std::chrono::steady_clock::now() + std::chrono::milliseconds(long(drain.serveSeconds * 1000));
        for (;;) {
          t.expires_after(std::chrono::milliseconds(50));
          co_await t.async_wait(asio::use_awaitable);
          if (std::chrono::steady_clock::now() >= until && co_await service.activeQueues() == 0) break;
        }
        service.stop();
        llvm::outs() << "idle\n";
        llvm::outs().flush();
        ioc.stop();
      },
      asio::detached);
  ioc.run();
  pool.join();
  return rc;
}

} // namespace inm::compile
