"""Example pyconnect connectors.

* :class:`~pyconnect_example.sequence.SequenceSourceConnector` writes 0, 1, 2, ... to a topic and
  resumes after a restart from the offset the worker committed.
* :class:`~pyconnect_example.jsonlines.JsonLinesSinkConnector` appends every record it reads to a file
  as one JSON line and makes the file durable before the worker commits the consumer offsets.
"""

__version__ = "0.1.0"
