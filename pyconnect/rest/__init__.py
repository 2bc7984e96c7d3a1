"""The only package that imports aiohttp: the Connect REST API, its error mapping and forwarding."""
