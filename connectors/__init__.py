"""Connectors hosted by the pyconnect runtime."""
