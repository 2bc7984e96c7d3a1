"""The mirror status view: each MirrorMaker 2 flow (source alias -> target alias), in sync or not.

- :mod:`pyconnect.mirror_status.core` computes it (pure: connector statuses, configs and metric
  readings in, a JSON document out).
- :mod:`pyconnect.mirror_status.text` renders that document for a terminal (``pyconnect status``).
- :mod:`pyconnect.mirror_status.page` is the self-refreshing HTML page that renders it in a browser.

``GET /mirrors`` (pyconnect.rest.mirror_status) gathers the inputs and serves the document.
"""
