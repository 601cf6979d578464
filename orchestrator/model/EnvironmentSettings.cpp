// The typed decoding of a stored environment settings object (see Settings.h): each value is coerced with its
// definition's type, a missing one takes the table's default, an invalid one takes the default and is
// reported. Invariant: no default value is written here; they all come from settingDefs().
#include "model/Settings.h"

#include <cassert>
#include <cstdint>

namespace inm::model {

namespace {

/// Stores the coerced value `v` of `def` into its field; false when the value is outside the field's range.
bool assign(EnvironmentSettings& out, const SettingDef& def, const nlohmann::json& v) {
  const std::string name = def.name;
  if (name == "agent_parallelism") {
    if (v.get<int64_t>() < 1 || v.get<int64_t>() > INT32_MAX) return false;
    out.agentParallelism = v.get<int64_t>();
  } else if (name == "agent_trigger_method_on_auto_deploy")
    out.agentTriggerMethodOnAutoDeploy = v.get<std::string>() == "push_full_deploy"
                                             ? TriggerMethod::PushFullDeploy
                                             : TriggerMethod::PushIncrementalDeploy;
  else if (name == "auto_deploy")
    out.autoDeploy = v.get<bool>();
  else if (name == "auto_full_compile")
    out.autoFullCompile = v.get<std::string>();
  else if (name == "autostart_agent_deploy_interval")
    out.autostartAgentDeployInterval = v.get<std::string>();
  else if (name == "autostart_agent_map")
    out.autostartAgentMap = v;
  else if (name == "autostart_agent_repair_interval")
    out.autostartAgentRepairInterval = v.get<std::string>();
  else if (name == "autostart_on_start")
    out.autostartOnStart = v.get<bool>();
  else if (name == "available_versions_to_keep")
    out.availableVersionsToKeep = v.get<int64_t>();
  else if (name == "environment_metrics_retention")
    out.environmentMetricsRetention = v.get<int64_t>();
  else if (name == "notification_retention")
    out.notificationRetention = v.get<int64_t>();
  else if (name == "protected_environment")
    out.protectedEnvironment = v.get<bool>();
  else if (name == "recompile_backoff")
    out.recompileBackoff = v.get<double>();
  else if (name == "reset_deploy_progress_on_start")
    out.resetDeployProgressOnStart = v.get<bool>();
  else if (name == "resource_action_logs_retention")
    out.resourceActionLogsRetention = v.get<int64_t>();
  else if (name == "server_compile")
    out.serverCompile = v.get<bool>();
  else
    assert(false && "a setting in settingDefs() has no EnvironmentSettings field");
  return true;
}

} // namespace

DecodedSettings decodeEnvironmentSettings(const nlohmann::json& stored) {
  DecodedSettings r{};
  for (const SettingDef& def : settingDefs()) {
    bool ok = assign(r.settings, def, def.defaultValue);
    assert(ok && "a default in settingDefs() is outside its own range");
    (void)ok;
    if (!stored.is_object()) continue;
    auto it = stored.find(def.name);
    if (it == stored.end()) continue;
    bool wrapped = std::string(def.type) != "dict" && it->is_object() && it->contains("value");
    const nlohmann::json& raw = wrapped ? (*it)["value"] : *it;
    llvm::Expected<nlohmann::json> v = coerceSetting(def, raw);
    if (!v) {
      r.errors.push_back(llvm::toString(v.takeError()));
      continue;
    }
    if (!assign(r.settings, def, *v))
      r.errors.push_back(std::string("invalid value for setting '") + def.name + "': " + raw.dump() +
                         " is out of range");
  }
  return r;
}

const EnvironmentSettings& defaultEnvironmentSettings() {
  static const EnvironmentSettings d = decodeEnvironmentSettings(nlohmann::json::object()).settings;
  return d;
}

} // namespace inm::model
