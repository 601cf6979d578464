// The environment setting table and value coercion (see Settings.h).
#include "model/Settings.h"

#include "cron/Cron.h"
#include "model/AgentUri.h"
#include "model/Failure.h"
#include "support/Suggest.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace inm::model {

const std::vector<SettingDef>& settingDefs() {
  static const std::vector<SettingDef> defs = [] {
    std::vector<SettingDef> d = {
        {"agent_parallelism",
         "int",
         1,
         "How many resources of one agent the scheduler deploys at the same time (1 = strictly serial, the "
         "reference's behaviour; see docs/deploy.md)",
         {},
         false,
         false},
        {"agent_trigger_method_on_auto_deploy",
         "enum",
         "push_incremental_deploy",
         "[legacy] the agent trigger method to use when auto_deploy is enabled",
         {"push_full_deploy", "push_incremental_deploy"}},
        {"auto_deploy",
         "bool",
         true,
         "When this boolean is set to true, the orchestrator will automatically release a new version that "
         "was compiled by the orchestrator itself.",
         {}},
        {"auto_full_compile",
         "str",
         "",
         "Periodically run a full compile following a cron-like time-to-run specification",
         {}},
        {"autostart_agent_deploy_interval",
         "str",
         "600",
         "The deployment interval of the scheduler: seconds or a cron-like expression",
         {},
         false,
         true},
        {"autostart_agent_map",
         "dict",
         nlohmann::json{{"internal", "local:"}},
         "A dict with key the name of agents and value their URI: local: (the default for an agent not in "
         "the "
         "map) or ssh://[user@]host[:port] (deploy on that host over SSH; docs/deploy.md)",
         {}},
        {"autostart_agent_repair_interval",
         "str",
         "86400",
         "The repair interval of the scheduler: seconds or a cron-like expression",
         {},
         false,
         true},
        {"autostart_on_start", "bool", true, "Automatically start the scheduler when the server starts", {}},
        {"available_versions_to_keep",
         "int",
         100,
         "The number of versions to keep stored in the database, excluding the latest released version",
         {}},
        {"environment_metrics_retention",
         "int",
         336,
         "The number of hours to retain environment metrics (0 = keep)",
         {}},
        {"notification_retention", "int", 365, "The number of days to retain notifications", {}},
        {"protected_environment",
         "bool",
         false,
         "When set to true, this environment cannot be cleared or deleted",
         {}},
        {"recompile_backoff",
         "positive_float",
         0.1,
         "The number of seconds to wait before the server may attempt to do a new recompile",
         {}},
        {"reset_deploy_progress_on_start",
         "bool",
         false,
         "Restart the scheduler from scratch on its next start",
         {}},
        {"resource_action_logs_retention", "int", 7, "The number of days to retain resource-action logs", {}},
        {"server_compile", "bool", true, "Allow the server to compile the configuration model", {}},
    };
    std::sort(d.begin(), d.end(),
              [](const SettingDef& a, const SettingDef& b) { return std::string(a.name) < b.name; });
    return d;
  }();
  return defs;
}

const SettingDef* findSetting(const std::string& name) {
  for (const auto& d : settingDefs())
    if (name == d.name) return &d;
  return nullptr;
}

std::string unknownSettingMessage(const std::string& name) {
  Suggester near(name);
  for (const auto& d : settingDefs()) near.add(d.name);
  return "setting '" + name + "' does not exist" + didYouMeanSuffix(near.best());
}

namespace {

llvm::Error bad(const SettingDef& def, const nlohmann::json& v) {
  return fail(
      ErrorCode::BadRequest,
      std::string("invalid value for setting '") + def.name + "': " + v.dump() + " is not a valid " +
          def.type +
          (def.allowedValues.empty() ? "" : " (allowed: " + nlohmann::json(def.allowedValues).dump() + ")"));
}

} // namespace

llvm::Expected<nlohmann::json> coerceSetting(const SettingDef& def, const nlohmann::json& v) {
  std::string type = def.type;
  if (type == "bool") {
    if (v.is_boolean()) return v;
    if (v.is_string()) {
      std::string s = v.get<std::string>();
      std::transform(s.begin(), s.end(), s.begin(), ::tolower);
      if (s == "true" || s == "yes" || s == "on" || s == "1") return nlohmann::json(true);
      if (s == "false" || s == "no" || s == "off" || s == "0") return nlohmann::json(false);
    }
    if (v.is_number_integer() && (v.get<int64_t>() == 0 || v.get<int64_t>() == 1))
      return nlohmann::json(v.get<int64_t>() == 1);
    return bad(def, v);
  }
  if (type == "int") {
    if (v.is_number_integer()) return v;
    if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>())
      return nlohmann::json(int64_t(v.get<double>()));
    if (v.is_string()) {
      const std::string& s = v.get_ref<const std::string&>();
      char* end = nullptr;
      long long n = std::strtoll(s.c_str(), &end, 10);
      if (!s.empty() && end && *end == 0) return nlohmann::json(int64_t(n));
    }
    return bad(def, v);
  }
  if (type == "positive_float") {
    double d = 0;
    if (v.is_number())
      d = v.get<double>();
    else if (v.is_string()) {
      const std::string& s = v.get_ref<const std::string&>();
      char* end = nullptr;
      d = std::strtod(s.c_str(), &end);
      if (s.empty() || !end || *end != 0) return bad(def, v);
    } else
      return bad(def, v);
    if (!(d >= 0) || std::isinf(d)) return bad(def, v);
    return nlohmann::json(d);
  }
  if (type == "str") {
    if (!v.is_string() && !v.is_number()) return bad(def, v);
    nlohmann::json str = v.is_string() ? v : nlohmann::json(v.dump());
    // The timer settings are seconds or a cron expression, auto_full_compile a cron expression or empty (as
    // the reference validates them): what the scheduler or the compile service could not read is refused
    // here.
    const std::string name = def.name, text = str.get<std::string>();
    llvm::Error invalid = llvm::Error::success();
    if (name == "autostart_agent_deploy_interval" || name == "autostart_agent_repair_interval") {
      if (auto t = cron::TimerSetting::parse(name, text); !t) invalid = t.takeError();
    } else if (name == "auto_full_compile" && !text.empty()) {
      if (auto c = cron::CronSpec::parse(text); !c) invalid = c.takeError();
    }
    if (invalid) {
      std::string why = llvm::toString(std::move(invalid)), prefix = "setting " + name + ": ";
      if (why.rfind(prefix, 0) == 0) why.erase(0, prefix.size());
      return fail(ErrorCode::BadRequest,
                  "invalid value for setting '" + name + "': " + str.dump() + " is " +
                      (name == "auto_full_compile" ? "not a cron expression"
                                                   : "neither seconds nor a cron expression") +
                      " (" + why + ")");
    }
    return str;
  }
  if (type == "enum") {
    if (!v.is_string()) return bad(def, v);
    if (std::find(def.allowedValues.begin(), def.allowedValues.end(), v.get<std::string>()) ==
        def.allowedValues.end())
      return bad(def, v);
    return v;
  }
  if (type == "dict") {
    nlohmann::json p = v;
    if (v.is_string()) p = nlohmann::json::parse(v.get<std::string>(), nullptr, false);
    if (p.is_discarded() || !p.is_object()) return bad(def, v);
    if (std::string(def.name) == "autostart_agent_map")
      for (const auto& [agent, uri] : p.items()) {
        if (!uri.is_string())
          return fail(ErrorCode::BadRequest,
                      "invalid value for setting 'autostart_agent_map': the uri of agent '" + agent +
                          "' must be a string, got " + uri.dump());
        if (auto parsed = parseAgentUri(uri.get<std::string>()); !parsed)
          return fail(ErrorCode::BadRequest, "invalid value for setting 'autostart_agent_map': agent '" +
                                                 agent + "': " + llvm::toString(parsed.takeError()));
      }
    return p;
  }
  return bad(def, v);
}

nlohmann::json settingDefinitionJson(const SettingDef& def, bool isProtected) {
  nlohmann::json j = {{"name", def.name},
                      {"type", def.type},
                      {"default", def.defaultValue},
                      {"doc", def.doc},
                      {"recompile", def.recompile},
                      {"update_model", false},
                      {"agent_restart", def.agentRestart},
                      {"section", "environment"},
                      {"protected", isProtected},
                      {"protected_by", isProtected ? nlohmann::json("project.yml") : nlohmann::json()}};
  j["allowed_values"] = def.allowedValues.empty() ? nlohmann::json() : nlohmann::json(def.allowedValues);
  return j;
}

} // namespace inm::model
