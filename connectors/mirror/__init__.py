"""Python ports of MirrorMaker 2's source, checkpoint and heartbeat connectors."""
