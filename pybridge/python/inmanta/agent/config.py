"""`inmanta.agent.config`: the agent option names modules read through `inmanta.config.Config` (section
`config`/`agent`); values as the reference's defaults when not configured."""

from inmanta.config import Option, is_str, is_time

agent_names = Option("config", "agent-names", "$node-name", "agent names", is_str)
environment = Option("config", "environment", None, "environment id", is_str)
agent_deploy_interval = Option("config", "agent-deploy-interval", 0, "deploy interval", is_time)
agent_repair_interval = Option("config", "agent-repair-interval", 600, "repair interval", is_time)
state_dir = Option("config", "state-dir", "/var/lib/inmanta", "state directory", is_str)
