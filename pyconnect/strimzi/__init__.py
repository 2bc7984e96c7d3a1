"""Strimzi's contract for the images it runs as ``KafkaConnect`` and ``KafkaMirrorMaker2`` (``spec.image``).

What Strimzi's cluster operator (1.0 to 1.2) gives the container, and what this package does with it:

- the command ``/opt/kafka/kafka_connect_run.sh`` (KafkaConnect; KafkaMirrorMaker2 from 1.1) or
  ``/opt/kafka/kafka_mirror_maker_2_run.sh`` (KafkaMirrorMaker2 up to 1.0): the scripts of the same
  names in the image call :mod:`pyconnect.strimzi.launch`, which prepares what Strimzi's scripts prepare
  and then replaces itself with ``tini -w -e 143 -- pyconnect distributed /tmp/strimzi-connect.properties``
  (as Strimzi's scripts exec ``tini`` and ``connect-distributed.sh``);
- ``/opt/kafka/custom-config/kafka-connect.properties`` (the worker config, with ``${strimzienv:...}``,
  ``${strimzifile:...}`` and ``${strimzidir:...}`` variables the worker resolves with Kafka's providers)
  and ``log4j2.properties`` (its root level becomes ``--log-level``);
- MirrorMaker 2 up to 1.0: PEM certificates and keys mounted under ``/opt/kafka/mm2-certs/<alias>/<secret>/``
  and named by ``KAFKA_MIRRORMAKER_2_*`` variables, turned into the PKCS12 stores
  ``/tmp/kafka/clusters/<alias>.truststore.p12`` / ``.keystore.p12`` the connector configs name, under
  the generated password ``MIRRORMAKER_2_CERTS_STORE_PASSWORD`` (:mod:`pyconnect.strimzi.mm2_certs`,
  :mod:`pyconnect.strimzi.stores`; no keytool, no openssl);
- metrics: the Strimzi Metrics Reporter's keys (``metric.reporters`` naming its class,
  ``prometheus.metrics.reporter.*``; pyconnect.metrics.strimzi_reporter) or, with
  ``KAFKA_CONNECT_JMX_EXPORTER_ENABLED=true``, the JMX exporter's series on port 9404;
- what only Java can do (a tracing agent, interceptors, Strimzi's Kubernetes secret provider, JMX)
  is named in one WARN line each (:mod:`pyconnect.strimzi.java_only`), never a crash.

Bad input (a missing mounted file, a PEM that does not parse) is one line naming the file, exit code 1,
before any worker starts.
"""
