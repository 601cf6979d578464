// Native std plugins about the environment and the server (std.md §5 "Environment and server").
// This compiler runs without a server: server-side facts are unknown (or the given default), the
// environment id comes from INMANTA_ENVIRONMENT; get_env/get_env_int read the process environment.
#include "PluginUtil.h"

#include <cstdlib>

namespace inm::runtime::plugins {

namespace {
const char* envVar(llvm::StringRef name) { return std::getenv(name.str().c_str()); }
bool environmentConfigured() {
  const char* env = envVar("INMANTA_ENVIRONMENT");
  return env && *env;
}
// The std module's plugins raise a plain Exception with this text when config>environment is not set.
PluginResult noEnvironment() {
  return externalError("Exception: The environment of this model should be configured in config>environment");
}
} // namespace

void registerEnvPlugins(PluginRegistry& r) {
  r.add("std::environment", [](PluginContext& ctx, Args) {
    if (!environmentConfigured()) return noEnvironment();
    return okStr(ctx, envVar("INMANTA_ENVIRONMENT"));
  });
  r.add("std::environment_name", [](PluginContext& ctx, Args) {
    if (!environmentConfigured()) return noEnvironment();
    const char* env = envVar("INMANTA_ENVIRONMENT_NAME");
    return env ? okStr(ctx, env) : ok(Value::unknown());
  });
  r.add("std::environment_server", [](PluginContext& ctx, Args) {
    const char* env = envVar("INMANTA_SERVER_ADDRESS");
    return env ? okStr(ctx, env) : ok(Value::unknown());
  });
  r.add("std::server_ca", [](PluginContext& ctx, Args) { return okStr(ctx, ""); });
  r.add("std::server_ssl", [](PluginContext&, Args) { return okBool(false); });
  // Without a configured compiler_rest_transport token the std module returns "".
  r.add("std::server_token", [](PluginContext& ctx, Args) { return okStr(ctx, ""); });
  r.add("std::server_port", [](PluginContext&, Args) {
    const char* env = envVar("INMANTA_SERVER_PORT");
    int64_t port = 8888;
    if (env) llvm::StringRef(env).getAsInteger(10, port);
    return okInt(port);
  });
  r.add("std::getfact", [](PluginContext&, Args a) {
    if (!environmentConfigured()) return noEnvironment();
    return ok(isGiven(a, 2) ? a[2] : Value::unknown());
  });
  r.add("std::get_env", [](PluginContext& ctx, Args a) {
    const char* env = envVar(strArg(a, 0));
    if (env) return okStr(ctx, env);
    return ok(isGiven(a, 1) ? a[1] : Value::unknown());
  });
  r.add("std::get_env_int", [](PluginContext& ctx, Args a) {
    const char* env = envVar(strArg(a, 0));
    if (!env) return ok(isGiven(a, 1) ? a[1] : Value::unknown());
    int64_t v;
    if (llvm::StringRef(env).trim().getAsInteger(10, v))
      return externalError("ValueError: invalid literal for int() with base 10: '" + std::string(env) + "'");
    return okInt(v);
  });
}

} // namespace inm::runtime::plugins
