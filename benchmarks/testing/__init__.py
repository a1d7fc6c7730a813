"""The test doubles the package ships: the scripted world (deterministic answers for every role), a loopback fake of
both providers' HTTP and batch APIs on the one loopback server, a fault-injecting provider and simulated question
histories. Tests, notebooks, the perf scripts and the ``frameworks`` command use them.
"""
