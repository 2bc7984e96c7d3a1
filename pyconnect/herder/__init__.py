"""The cluster brain: group membership, assignment handling and the herder tick loop."""
