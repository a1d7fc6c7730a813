"""The test doubles of the repository (never shipped in the wheel): a loopback fake of both providers' HTTP and
batch APIs on one loopback server (:mod:`tests.doubles.fake_api`, :mod:`tests.doubles.loopback`), a
fault-injecting provider (:mod:`tests.doubles.faults`) and simulated question histories
(:mod:`tests.doubles.simulated_history`). The tests and the ``benchmarks/perf`` scripts use them; the scripted
world the package itself ships (the ``frameworks`` command, the notebooks) is :mod:`agent_providers.scripted_world`.
"""
