# inmanta.execute: the values a plugin sees (util: Unknown, NoneValue; proxy: instance/list/dict proxies).
