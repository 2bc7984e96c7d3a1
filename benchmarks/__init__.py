"""Side-by-side benchmarks of pyconnect against Java MirrorMaker 2 on the same brokers."""
