"""``pyconnect cutover``: the planned move of applications from A to B while both run (see :mod:`.command`)."""
