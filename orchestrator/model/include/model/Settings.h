// Environment settings (orchestrator.md §10, §18): the definitions as data and the typed validation of a
// value. Types use the reference's names (bool, int, str, enum, dict, positive_float). Values arrive from
// clients as JSON of any type (the 11.5.5 CLI sends strings such as "false"); coerceSetting converts them to
// the setting's type or fails naming the setting. Invariant: a stored value always has its definition's JSON
// type. EnvironmentSettings is the one typed reading of a stored settings object: every reader (service,
// scheduler, compile service) decodes through decodeEnvironmentSettings, and every default is written once,
// in settingDefs().
#pragma once

#include <llvm/Support/Error.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace inm::model {

/// One setting's definition.
struct SettingDef {
  const char* name;
  const char* type; ///< bool|int|str|enum|dict|positive_float
  nlohmann::json defaultValue;
  const char* doc;
  std::vector<std::string> allowedValues; ///< enum only
  bool recompile = false;                 ///< a change requests a recompile (reported in the definition)
  bool agentRestart = false;              ///< a change restarts the scheduler
};

/// Every known setting, sorted by name.
const std::vector<SettingDef>& settingDefs();
/// The definition of `name`, or nullptr.
const SettingDef* findSetting(const std::string& name);
/// "setting 'x' does not exist", with "; did you mean 'y'?" when a defined setting has a near name.
std::string unknownSettingMessage(const std::string& name);
/// Converts `value` to the setting's type (strings parsed as the type); a Failure(BadRequest) names the
/// setting.
llvm::Expected<nlohmann::json> coerceSetting(const SettingDef& def, const nlohmann::json& value);
/// The definition as the API shows it (v2 `definition` entries and v1 `metadata` entries share these keys).
nlohmann::json settingDefinitionJson(const SettingDef& def, bool isProtected);

/// agent_trigger_method_on_auto_deploy.
enum class TriggerMethod { PushFullDeploy, PushIncrementalDeploy };

/// An environment's settings, typed; a setting the stored object does not hold has its settingDefs() default.
/// The intervals stay text (seconds or a cron expression, parsed by the scheduler's TimerSetting).
struct EnvironmentSettings {
  int64_t agentParallelism;
  TriggerMethod agentTriggerMethodOnAutoDeploy;
  bool autoDeploy;
  std::string autoFullCompile;
  std::string autostartAgentDeployInterval;
  nlohmann::json autostartAgentMap;
  std::string autostartAgentRepairInterval;
  bool autostartOnStart;
  int64_t availableVersionsToKeep;
  int64_t environmentMetricsRetention;
  int64_t notificationRetention;
  bool protectedEnvironment;
  double recompileBackoff;
  bool resetDeployProgressOnStart;
  int64_t resourceActionLogsRetention;
  bool serverCompile;
};

/// The decoded settings and one message per invalid stored value ("invalid value for setting 'x': ...");
/// an invalid value is replaced by its default, so a bad row never stops a reader.
struct DecodedSettings {
  EnvironmentSettings settings;
  std::vector<std::string> errors;
};

/// Decodes a stored settings object (values raw or wrapped as {"value": v}); a non-object holds no setting
/// and unknown keys are ignored.
DecodedSettings decodeEnvironmentSettings(const nlohmann::json& stored);
/// Every setting at its default.
const EnvironmentSettings& defaultEnvironmentSettings();

} // namespace inm::model
