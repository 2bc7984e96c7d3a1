"""``pyconnect failback``: the way back to the original cluster after a failover (see :mod:`.command`)."""
