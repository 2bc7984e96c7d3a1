"""The only package that imports aiokafka: client factories, the KafkaLog primitive, group driver."""
