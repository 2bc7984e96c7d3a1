#!/usr/bin/env bash
# Strimzi's entry point of KafkaMirrorMaker2 up to Strimzi 1.0 in the pyconnect image: the stores of
# /tmp/kafka/clusters/ are made from the PEM files under /opt/kafka/mm2-certs/ (see pyconnect.strimzi).
set -e
rm -rf /tmp/* 2>/dev/null || true
exec python3 -m pyconnect.strimzi mirror-maker-2
