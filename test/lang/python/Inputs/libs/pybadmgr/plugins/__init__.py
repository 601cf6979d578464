"""A Python dependency manager that raises (test of the exporter's DependencyManagerFailed)."""

from inmanta.export import dependency_manager


@dependency_manager
def broken_manager(config_model, resource_model):
    raise RuntimeError("the manager is broken")
