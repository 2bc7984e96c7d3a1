"""Real Kafka on demand: the pinned distribution, local KRaft clusters and Java reference processes."""
