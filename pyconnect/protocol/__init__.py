"""Sans-IO wire formats and state machines; imports only the standard library."""
