#!/usr/bin/env bash
# Strimzi's entry point of KafkaConnect (and, from Strimzi 1.1, of KafkaMirrorMaker2) in the pyconnect
# image: the same files and variables as Strimzi's script of this name (see pyconnect.strimzi.launch).
set -e
# Clean-up /tmp from files left by a previous run of the container, as Strimzi's script does
rm -rf /tmp/* 2>/dev/null || true
exec python3 -m pyconnect.strimzi connect
