"""Starts and stops connectors and tasks on this worker; plugin discovery."""
