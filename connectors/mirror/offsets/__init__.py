"""How an offset gets translated, from the source task's copy to a consumer group resuming elsewhere.

Read :mod:`.translation` first: it is the whole answer to "which downstream offset does upstream offset
``u`` become", as pure logic. Then follow an offset through the rest, in the order it travels:

1. :mod:`.sync_writer` (source task): which ``(upstream, downstream)`` pairs of copied records become
   ``OffsetSync`` records (codec in :mod:`connectors.mirror.records`) on the offset-syncs topic.
2. :mod:`.translation` (checkpoint task): ``OffsetSyncStore`` indexes those syncs and translates a group's
   committed upstream offset (Java's algorithm, or the exact mode that never translates past the first
   copy of the group's next record, even when a rewind copied a run twice). :mod:`connectors.mirror.checkpoint`
   turns the answers into ``Checkpoint`` records (codec in :mod:`connectors.mirror.checkpoint_records`)
   and optional group-offset syncs.
3. :mod:`.remote_cluster_utils` (consumer side, pure): Java's ``RemoteClusterUtils``/``MirrorClient`` logic
   over the checkpoints and topic names a cluster holds.
4. :mod:`.mirror_client`: ``MirrorClient``, which fetches those checkpoints and topic names over Kafka.
5. :mod:`.failover`: the ``pyconnect offsets translate`` plan and commit, checking the checkpoints against
   the offset syncs to bound what a failed-over group re-reads.

:mod:`.translation` and :mod:`.sync_writer` import only the standard library and the record codecs;
:mod:`.remote_cluster_utils` adds the replication policy (``tests/unit/house/test_import_seams.py``).
"""
