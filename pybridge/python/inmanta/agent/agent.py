"""`inmanta.agent.agent`: `AgentInstance`, the type of a handler's `self._agent` (name, environment, uri).
Handlers receive theirs from the executor; creating one in module code is not supported here."""


class AgentInstance:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("AgentInstance cannot be created by module code here; a handler's "
                                  "self._agent offers name, environment and uri")


class Agent(AgentInstance):
    pass
