"""The cluster brain of a worker: one herder for distributed, standalone and dedicated MirrorMaker mode.

Reading order: ``core.py`` (HerderCore, the sans-IO state machine: events in, effects out, time passed
in), ``effects.py`` (what it asks for), ``requests.py`` (REST writes as typed requests), ``herder.py``
(the asyncio loop that feeds the core and performs its effects, and the REST-facing API),
``membership.py`` and ``worker_coordinator.py`` (how a herder learns what it runs), ``modes.py`` (what
differs between the three modes), ``standalone.py`` (the standalone builder).
"""
