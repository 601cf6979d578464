// model::decodeEnvironmentSettings: the one typed reading of a stored settings object. Missing settings take
// the settingDefs() default, each type is decoded (strings parsed as the type, {"value": v} unwrapped), and
// an invalid stored value keeps the default and is reported naming the setting.
#include "model/Settings.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace {

using inm::model::decodeEnvironmentSettings;
using inm::model::defaultEnvironmentSettings;
using inm::model::findSetting;
using inm::model::TriggerMethod;
using nlohmann::json;

TEST(EnvironmentSettings, EmptyObjectGivesTheTableDefaults) {
  auto d = decodeEnvironmentSettings(json::object());
  EXPECT_TRUE(d.errors.empty());
  const auto& s = d.settings;
  EXPECT_EQ(s.agentParallelism, findSetting("agent_parallelism")->defaultValue.get<int64_t>());
  EXPECT_EQ(s.agentTriggerMethodOnAutoDeploy, TriggerMethod::PushIncrementalDeploy);
  EXPECT_EQ(s.autoDeploy, findSetting("auto_deploy")->defaultValue.get<bool>());
  EXPECT_EQ(s.autostartAgentDeployInterval,
            findSetting("autostart_agent_deploy_interval")->defaultValue.get<std::string>());
  EXPECT_EQ(s.autostartAgentRepairInterval,
            findSetting("autostart_agent_repair_interval")->defaultValue.get<std::string>());
  EXPECT_EQ(s.autostartAgentMap, findSetting("autostart_agent_map")->defaultValue);
  EXPECT_EQ(s.availableVersionsToKeep,
            findSetting("available_versions_to_keep")->defaultValue.get<int64_t>());
  EXPECT_DOUBLE_EQ(s.recompileBackoff, findSetting("recompile_backoff")->defaultValue.get<double>());
  EXPECT_EQ(s.serverCompile, true);
  EXPECT_EQ(s.protectedEnvironment, false);
  EXPECT_EQ(defaultEnvironmentSettings().autoFullCompile, "");
}

TEST(EnvironmentSettings, NotAnObjectHoldsNoSetting) {
  auto d = decodeEnvironmentSettings(json("garbage"));
  EXPECT_TRUE(d.errors.empty());
  EXPECT_EQ(d.settings.autostartAgentRepairInterval,
            defaultEnvironmentSettings().autostartAgentRepairInterval);
}

TEST(EnvironmentSettings, EachTypeIsDecoded) {
  auto d = decodeEnvironmentSettings(json{{"agent_parallelism", "4"},
                                          {"agent_trigger_method_on_auto_deploy", "push_full_deploy"},
                                          {"auto_deploy", "false"},
                                          {"auto_full_compile", "*/5 * * * *"},
                                          {"autostart_agent_repair_interval", 600},
                                          {"autostart_agent_map", {{"a", "local:"}}},
                                          {"recompile_backoff", {{"value", 2.5}}},
                                          {"server_compile", false},
                                          {"protected_environment", true},
                                          {"notification_retention", 10.0},
                                          {"unknown_key", 1}});
  EXPECT_TRUE(d.errors.empty()) << d.errors.front();
  const auto& s = d.settings;
  EXPECT_EQ(s.agentParallelism, 4);
  EXPECT_EQ(s.agentTriggerMethodOnAutoDeploy, TriggerMethod::PushFullDeploy);
  EXPECT_FALSE(s.autoDeploy);
  EXPECT_EQ(s.autoFullCompile, "*/5 * * * *");
  EXPECT_EQ(s.autostartAgentRepairInterval, "600");
  EXPECT_EQ(s.autostartAgentMap, (json{{"a", "local:"}}));
  EXPECT_DOUBLE_EQ(s.recompileBackoff, 2.5);
  EXPECT_FALSE(s.serverCompile);
  EXPECT_TRUE(s.protectedEnvironment);
  EXPECT_EQ(s.notificationRetention, 10);
}

TEST(EnvironmentSettings, InvalidValuesKeepTheDefaultAndNameTheSetting) {
  auto d = decodeEnvironmentSettings(json{{"auto_deploy", "maybe"},
                                          {"agent_trigger_method_on_auto_deploy", "push_sideways"},
                                          {"recompile_backoff", -1},
                                          {"agent_parallelism", 0},
                                          {"available_versions_to_keep", "many"}});
  ASSERT_EQ(d.errors.size(), 5u);
  const auto& s = d.settings;
  const auto& def = defaultEnvironmentSettings();
  EXPECT_EQ(s.autoDeploy, def.autoDeploy);
  EXPECT_EQ(s.agentTriggerMethodOnAutoDeploy, def.agentTriggerMethodOnAutoDeploy);
  EXPECT_DOUBLE_EQ(s.recompileBackoff, def.recompileBackoff);
  EXPECT_EQ(s.agentParallelism, def.agentParallelism);
  EXPECT_EQ(s.availableVersionsToKeep, def.availableVersionsToKeep);
  std::string all;
  for (const auto& e : d.errors) all += e + "\n";
  for (const char* name : {"auto_deploy", "agent_trigger_method_on_auto_deploy", "recompile_backoff",
                           "agent_parallelism", "available_versions_to_keep"})
    EXPECT_NE(all.find(std::string("setting '") + name + "'"), std::string::npos) << name << "\n" << all;
}

} // namespace
