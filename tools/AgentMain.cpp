// `inmanta agent --server H --port P -e ENV --agent NAME [--agent NAME2 …] [--token T] [--ssl] [--ssl-ca-cert
// F] [-c FILE]…`: an external agent (docs/deploy.md "External agents"), the verb's entry. Reads the flags and
// the configuration ([config], [agent_rest_transport], [agent]; flags win) into agent::AgentOptions and runs
// the agent process of orchestrator/agent (agent::runAgent: connect, standby, session, retries, drain on
// SIGTERM/SIGINT). Invariant: a usage or configuration mistake prints one `inmanta agent: …` line and the
// usage and exits 2, before anything connects.
#include "Verbs.h"
#include "agent/Agent.h"
#include "config/Config.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

namespace inm::tools {

namespace {

int usage(const std::string& msg) {
  if (!msg.empty()) std::cerr << "inmanta agent: " << msg << "\n";
  std::cerr
      << "usage: inmanta agent --server HOST [--port PORT] -e ENV --agent NAME [--agent NAME…] [--token T]\n"
         "                     [--ssl] [--ssl-ca-cert FILE] [--threads N] [--state-dir DIR]\n"
         "                     [--shutdown-grace SECONDS] [-c FILE]…\n"
         "Config keys (flags win): [config] environment, agent-names (comma separated), state-dir;\n"
         "[agent_rest_transport] host, port, token, ssl, ssl_ca_cert_file; [agent] shutdown-grace (30).\n";
  return msg.empty() ? 0 : 2;
}

} // namespace

int agentMain(const std::vector<std::string>& args, int verbose) {
  (void)verbose;
  std::vector<std::string> cfgFiles;
  std::optional<std::string> host, port, env, token, caCert, threads, stateDir, grace;
  std::vector<std::string> agents;
  bool sslFlag = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= args.size()) return std::nullopt;
      return args[++i];
    };
    auto need = [&](std::optional<std::string>& slot) {
      slot = value();
      return slot.has_value();
    };
    if (a == "--server" || a == "--host") {
      if (!need(host)) return usage(a + " needs a value");
    } else if (a == "--port") {
      if (!need(port)) return usage("--port needs a value");
    } else if (a == "-e" || a == "--environment") {
      if (!need(env)) return usage(a + " needs a value");
    } else if (a == "--agent") {
      auto v = value();
      if (!v || v->empty()) return usage("--agent needs a name");
      agents.push_back(*v);
    } else if (a == "--token") {
      if (!need(token)) return usage("--token needs a value");
    } else if (a == "--ssl") {
      sslFlag = true;
    } else if (a == "--ssl-ca-cert") {
      if (!need(caCert)) return usage("--ssl-ca-cert needs a file");
    } else if (a == "--threads") {
      if (!need(threads)) return usage("--threads needs a value");
    } else if (a == "--shutdown-grace") {
      if (!need(grace)) return usage("--shutdown-grace needs a number of seconds");
    } else if (a == "--state-dir") {
      if (!need(stateDir)) return usage("--state-dir needs a directory");
    } else if (a == "-c" || a == "--config") {
      auto v = value();
      if (!v) return usage(a + " needs a file");
      cfgFiles.push_back(*v);
    } else if (a == "-h" || a == "--help") {
      return usage("");
    } else {
      return usage("unknown argument '" + a + "'");
    }
  }
  auto cfg = config::Config::load(cfgFiles);
  if (!cfg) {
    std::cerr << "inmanta agent: " << llvm::toString(cfg.takeError()) << "\n";
    return 2;
  }
  agent::AgentOptions o;
  o.host = host.value_or(cfg->getString("agent_rest_transport", "host", "localhost"));
  std::string portText = port.value_or(cfg->getString("agent_rest_transport", "port", "8888"));
  char* end = nullptr;
  long p = std::strtol(portText.c_str(), &end, 10);
  if (portText.empty() || *end || p < 1 || p > 65535)
    return usage("the port must be 1-65535, got '" + portText + "'");
  o.port = int(p);
  o.environment = env.value_or(cfg->getString("config", "environment", ""));
  if (o.environment.empty()) return usage("-e ENV (or [config] environment) is required");
  if (agents.empty()) {
    std::string list = cfg->getString("config", "agent-names", "");
    for (size_t i = 0; i <= list.size();) {
      size_t j = std::min(list.find(',', i), list.size());
      std::string name = list.substr(i, j - i);
      while (!name.empty() && name.front() == ' ') name.erase(0, 1);
      while (!name.empty() && name.back() == ' ') name.pop_back();
      if (!name.empty()) agents.push_back(name);
      i = j + 1;
    }
  }
  if (agents.empty()) return usage("at least one --agent NAME (or [config] agent-names) is required");
  for (const auto& a : agents)
    if (a.find(',') != std::string::npos) return usage("agent name '" + a + "' contains a comma");
  o.agents = agents;
  o.token = token.value_or(cfg->getString("agent_rest_transport", "token", ""));
  auto cfgSsl = cfg->getBool("agent_rest_transport", "ssl", false);
  if (!cfgSsl) {
    std::cerr << "inmanta agent: " << llvm::toString(cfgSsl.takeError()) << "\n";
    return 2;
  }
  o.ssl = sslFlag || *cfgSsl;
  o.caCert = caCert.value_or(cfg->getString("agent_rest_transport", "ssl_ca_cert_file", ""));
  if (threads) {
    long n = std::strtol(threads->c_str(), &end, 10);
    if (threads->empty() || *end || n < 1 || n > 256)
      return usage("--threads must be 1-256, got '" + *threads + "'");
    o.threads = int(n);
  }

  {
    std::string text = grace.value_or(cfg->getString("agent", "shutdown-grace", "30"));
    double seconds = std::strtod(text.c_str(), &end);
    if (text.empty() || *end || !(seconds >= 0) || seconds > 86400)
      return usage("the shutdown grace must be 0-86400 seconds, got '" + text + "'");
    o.shutdownGrace = std::chrono::milliseconds(int64_t(seconds * 1000));
  }

  // Handler code of the versions this agent runs is laid out (and kept, by blueprint) under the state dir.
  {
    std::error_code ec;
    o.codeDir = (std::filesystem::absolute(
                     stateDir.value_or(cfg->getString("config", "state-dir", "/var/lib/inmanta")), ec) /
                 "agent-code")
                    .string();
  }

  return agent::runAgent(o);
}

} // namespace inm::tools
