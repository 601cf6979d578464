# inmanta.agent: the handler API (handler.py) for Python resource handlers.
