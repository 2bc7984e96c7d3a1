"""Python ports of MirrorMaker 2's source, checkpoint and heartbeat connectors.

The three connectors are :mod:`.source`, :mod:`.checkpoint` and :mod:`.heartbeat`; their config tables and
typed configs are :mod:`.config`, the dedicated mode's ``mm2.properties`` is :mod:`.mm2_properties`, and
:mod:`.scheduler` runs their periodic jobs. Offset translation has its own package, :mod:`.offsets`.
"""
