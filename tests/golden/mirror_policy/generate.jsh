// Golden vectors for the MirrorMaker 2 naming, filter, config and dedicated-mode logic, produced by the
// Kafka jars themselves.
//
// Usage (from the repository root; KAFKA_LIBS is the "libs" folder of the Kafka distribution):
//   jshell -q --class-path "$KAFKA_LIBS/*" tests/golden/mirror_policy/generate.jsh \
//     > tests/golden/mirror_policy/vectors.json
//
// Sections: "config_defs" (the MirrorSource/Checkpoint/Heartbeat ConfigDef rows that are not Connect
// framework keys, in declaration order), "policy" (every ReplicationPolicy method for many names and
// separators), "regex" (Pattern.compile(p).matcher(s).matches() for a patterns x names matrix; "error"
// when Java refuses the pattern), "filters" (Default*Filter decisions for whole configs),
// "client_configs" (the client maps MirrorConnectorConfig assembles) and "mm2" (MirrorMakerConfig
// cluster pairs, connector configs and worker configs for a few mm2.properties files).
import java.lang.reflect.*;
import java.util.*;
import java.util.regex.*;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.mirror.*;
import org.apache.kafka.connect.runtime.ConnectorConfig;

ObjectMapper MAPPER = new ObjectMapper().enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS);
Map<String, Object> OUT = new LinkedHashMap<>();

Object field(Class<?> c, String name) throws Exception {
    Field f = c.getDeclaredField(name);
    f.setAccessible(true);
    return f.get(null);
}

List<Map<String, Object>> keyRows(ConfigDef def) {
    Set<String> framework = ConnectorConfig.configDef().names();
    List<Map<String, Object>> rows = new ArrayList<>();
    for (ConfigDef.ConfigKey k : def.configKeys().values()) {
        if (framework.contains(k.name)) continue;
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("name", k.name);
        row.put("type", k.type.name());
        row.put("has_default", k.hasDefault());
        row.put("default", k.hasDefault() ? ConfigDef.convertToString(k.defaultValue, k.type) : null);
        row.put("importance", k.importance.name());
        row.put("documentation", k.documentation);
        row.put("validator", k.validator == null ? null : k.validator.toString());
        row.put("group", k.group);
        row.put("order_in_group", k.orderInGroup);
        row.put("width", k.width.name());
        row.put("display_name", k.displayName);
        rows.add(row);
    }
    return rows;
}

Map<String, Object> defs = new LinkedHashMap<>();
defs.put("source", keyRows((ConfigDef) field(MirrorSourceConfig.class, "CONNECTOR_CONFIG_DEF")));
defs.put("checkpoint", keyRows((ConfigDef) field(MirrorCheckpointConfig.class, "CONNECTOR_CONFIG_DEF")));
defs.put("heartbeat", keyRows((ConfigDef) field(MirrorHeartbeatConfig.class, "CONNECTOR_CONFIG_DEF")));
defs.put("source_task", keyRows((ConfigDef) field(MirrorSourceTaskConfig.class, "TASK_CONFIG_DEF")));
defs.put("checkpoint_task", keyRows((ConfigDef) field(MirrorCheckpointTaskConfig.class, "TASK_CONFIG_DEF")));
defs.put("client_config_names", new ArrayList<>(((ConfigDef) field(MirrorClientConfig.class, "CLIENT_CONFIG_DEF")).names()));
defs.put("topic_filter", keyRows((ConfigDef) field(Class.forName("org.apache.kafka.connect.mirror.DefaultTopicFilter$TopicFilterConfig"), "DEF")));
defs.put("group_filter", keyRows((ConfigDef) field(Class.forName("org.apache.kafka.connect.mirror.DefaultGroupFilter$GroupFilterConfig"), "DEF")));
defs.put("config_property_filter", keyRows((ConfigDef) field(Class.forName("org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter$ConfigPropertyFilterConfig"), "DEF")));
OUT.put("config_defs", defs);

// ---------------------------------------------------------------- policy
String[] NAMES = {
    "orders", "A.orders", "B.A.orders", "orders.", ".hidden", "A..orders", "A.orders.", "heartbeats",
    "A.heartbeats", "B.A.heartbeats", "myheartbeats", "A.myheartbeats", "heartbeats.internal",
    "A.heartbeats.x", "A.checkpoints.internal", "A_checkpoints_internal", "A__checkpoints__internal",
    "mm2-offset-syncs.B.internal", "mm2-offset-syncs_B_internal", "mm2-offset-syncs__B__internal",
    "mm2-configs.A.internal", "mm2-offsets.A.internal", "mm2foo.internal", "mm2_internal", "foo.internal",
    "foo-internal", "foo_internal", "internal", ".internal", "__consumer_offsets", "__transaction_state",
    "_schemas", "_confluent-metrics", ".", "..", "...", "", "A", "A.", ".A", "a_b.c", "A_orders",
    "B_A_orders", "A__orders", "A___orders", "B__A__orders", "_orders", "orders_", "__", "connect-offsets",
    "A-orders", "A-B-orders", "A|orders", "A\\orders", "A$orders", "A.b.c.d", "x.y_z-w",
    "\u00e9t\u00e9.orders", "A.\u00e9t\u00e9", "A.orders.replica", "A.checkpoints.internal.x",
    "checkpoints.internal", "B.A.checkpoints.internal", "A_heartbeats", "B_A_heartbeats", "A__heartbeats",
    "A-heartbeats", "A.mm2-offset-syncs.B.internal", "a.b", "a..b"
};
String[][] SEPARATORS = {
    {null, null}, {".", null}, {"_", null}, {"_", "true"}, {"_", "false"}, {"__", null}, {"__", "false"},
    {"-", null}, {"..", null}, {"|", null}, {"\\", null}, {"$", null}, {"", null}, {null, "false"}
};
String[] ALIASES = {"A", "B", "us-west", "", "a.b", "a_b"};

Map<String, Object> policyCase(ReplicationPolicy p, String kind, Map<String, String> conf) {
    Map<String, Object> c = new LinkedHashMap<>();
    c.put("policy", kind);
    c.put("config", conf);
    c.put("heartbeats_topic", p.heartbeatsTopic());
    Map<String, Object> aliases = new LinkedHashMap<>();
    for (String a : ALIASES) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("offset_syncs_topic", p.offsetSyncsTopic(a));
        m.put("checkpoints_topic", p.checkpointsTopic(a));
        m.put("format_remote_topic", Map.of("orders", p.formatRemoteTopic(a, "orders"),
            "heartbeats", p.formatRemoteTopic(a, "heartbeats"), "B.orders", p.formatRemoteTopic(a, "B.orders"),
            "myheartbeats", p.formatRemoteTopic(a, "myheartbeats")));
        aliases.put(a, m);
    }
    c.put("aliases", aliases);
    List<Map<String, Object>> topics = new ArrayList<>();
    for (String n : NAMES) {
        Map<String, Object> t = new LinkedHashMap<>();
        t.put("topic", n);
        t.put("topic_source", p.topicSource(n));
        t.put("upstream_topic", p.upstreamTopic(n));
        t.put("original_topic", p.originalTopic(n));
        t.put("is_heartbeats_topic", p.isHeartbeatsTopic(n));
        t.put("is_checkpoints_topic", p.isCheckpointsTopic(n));
        t.put("is_mm2_internal_topic", p.isMM2InternalTopic(n));
        t.put("is_internal_topic", p.isInternalTopic(n));
        topics.add(t);
    }
    c.put("topics", topics);
    return c;
}

List<Map<String, Object>> policies = new ArrayList<>();
for (String[] s : SEPARATORS) {
    Map<String, String> conf = new LinkedHashMap<>();
    if (s[0] != null) conf.put("replication.policy.separator", s[0]);
    if (s[1] != null) conf.put("replication.policy.internal.topic.separator.enabled", s[1]);
    DefaultReplicationPolicy p = new DefaultReplicationPolicy();
    p.configure(conf);
    policies.add(policyCase(p, "default", conf));
}
for (String alias : new String[] {null, "A"}) {
    for (String sep : new String[] {null, "_"}) {
        Map<String, String> conf = new LinkedHashMap<>();
        if (alias != null) conf.put("source.cluster.alias", alias);
        if (sep != null) conf.put("replication.policy.separator", sep);
        IdentityReplicationPolicy p = new IdentityReplicationPolicy();
        p.configure(conf);
        policies.add(policyCase(p, "identity", conf));
    }
}
OUT.put("policy", policies);

// ---------------------------------------------------------------- regex
String[] PATTERNS = {
    ".*", "orders\\..*", "__.*", ".*[\\-\\.]internal", ".*\\.replica", "__consumer_offsets", "orders",
    "orders|payments", "(orders|payments)\\..*", "[a-z]+", "[a-z&&[^aeiou]]+", "[\\w&&[^\\d]]+",
    "[a-c[x-z]]+", "[^a-c[x-z]]+", "\\p{Lower}+", "\\p{Upper}.*", "\\p{Alpha}+", "\\p{Alnum}+",
    "\\p{Punct}", "\\p{L}+", "\\p{Lu}.*", "\\p{IsLatin}+", "\\p{javaLowerCase}+", "\\QA.B\\E", "\\Qa|b\\E.*",
    "(?i)orders", "(?i:ORDERS)\\..*", "a(?i)b|c", "x(?-i)y", "(?i)\\u00e9t\\u00e9", "(?iu)\\u00e9t\\u00e9",
    "a*+a", "a++b", "(?>a+)b", "(?>a|ab)c", "orders\\z", "orders\\Z", "\\Aorders", "^orders$",
    "\\d+", "\\w+", "\\s*x", "\\h", "\\v", "topic-\\d{1,3}", "topic-\\d{2,}", "a{2}", ".", "\\.",
    "prod\\.(?!internal).*", "(?<=a)b", ".*(?<!internal)", "(?<n>a)\\k<n>", "(a)\\1", "\\x41", "\\x{41}",
    "\\u0041", "\\0101", "\\t", "\\e", "\\cA", "[\\[\\]]", "[]a]", "[a-]", "[-a]", "[\\Q-]\\E]", "a\\R",
    "\\bword\\b", "[[:alpha:]]", "(?x) a b # comment", "(?s).*", "(?d).", "(?U)\\w+", "(?m)^a$",
    "\\N{LATIN SMALL LETTER A}", "\\G", "\\X", "\\p{InGreek}", "\\p{Nd}+", "\\p{IsDigit}+",
    "\\p{javaWhitespace}", "\\P{Lower}+", "[\\p{L}&&[^\\p{Lu}]]+", "a{,2}", "{", "a{1", "*a", "[", "(",
    "\\", "a)", "[z-a]", "\\p{Foo}", "\\y", "\\8", "(a(?i)b)c", "(?i)k", "(?iu)k", "[]a]", "(?<=a+)b",
    "x{2}{3}", ".*-internal", "prod\\..*|staging\\..*", "(?!_).*", "(?i)connect-.*", "[a-zA-Z0-9._-]+",
    "app-[0-9]+", ".*\\.(avro|json)", "\\p{javaUpperCase}.*", "orders-(eu|us)-\\d+", "(?!.*internal).*"
};
String[] SUBJECTS = {
    "orders", "Orders", "ORDERS", "orders.eu", "orders2", "payments", "payments.eu", "__consumer_offsets",
    "__transaction_state", "_schemas", "connect-configs", "mm2-offset-syncs.B.internal", "foo-internal",
    "A.orders.replica", "bcd", "bad", "abc", "xyz", "aab", "aaa", "ab", "abc", "A.B", "AxB", "a|b", "a|bc",
    "xY", "xy", "XY", "\u00e9t\u00e9", "\u00c9T\u00c9", "orders\n", "", "a", "b", "c", "Ab", "AB", "aB",
    "12", "abc_123", " x", "\t", "\n", "\u000b", "\u2028", "\u00a0", "topic-7", "topic-1234", "aa",
    "prod.internal", "prod.x", "x.internal", "aa", "A", "\u001b", "\u0001", "[", "]", "-", "word", "\u00e9",
    "\u03b1\u03b2", "\u0661\u0662", "a\r\n", "a\n", "a\u0085", "Ab1", "a b", "ab", "k", "K", "\u212a", "aBc", "aBC",
    "prod.orders", "staging.x", "app-12", "x.avro", "orders-eu-1", "orders-us-", "a.b.internal", "_x", "]"
};
List<Map<String, Object>> regex = new ArrayList<>();
for (String p : PATTERNS) {
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("pattern", p);
    try {
        Pattern pat = Pattern.compile(p);
        Map<String, Boolean> m = new LinkedHashMap<>();
        for (String s : SUBJECTS) m.put(s, pat.matcher(s).matches());
        r.put("matches", m);
    } catch (PatternSyntaxException e) {
        r.put("error", e.getDescription());
    }
    regex.add(r);
}
OUT.put("regex", regex);

// ---------------------------------------------------------------- filters
String[] FILTER_SUBJECTS = {
    "orders", "orders.eu", "orders2", "payments", "__consumer_offsets", "_schemas", "A.orders",
    "mm2-offset-syncs.B.internal", "connect-offsets", "foo-internal", "foo.internal", "x.replica",
    "heartbeats", "A.heartbeats", "console-consumer-1234", "connect-mm2", "app-group", "__cg", "a{1,3}",
    "aaa", "follower.replication.throttled.replicas", "min.insync.replicas", "retention.ms",
    "cleanup.policy", "message.timestamp.type", "message.timestamp.difference.max.ms", "segment.bytes"
};
List<Map<String, Object>> filters = new ArrayList<>();
void filterCase(String kind, Map<String, String> conf) {
    Map<String, Object> f = new LinkedHashMap<>();
    f.put("filter", kind);
    f.put("config", conf);
    Map<String, Object> res = new LinkedHashMap<>();
    try {
        if (kind.equals("topic")) {
            DefaultTopicFilter t = new DefaultTopicFilter(); t.configure(conf);
            for (String s : FILTER_SUBJECTS) res.put(s, t.shouldReplicateTopic(s));
        } else if (kind.equals("group")) {
            DefaultGroupFilter t = new DefaultGroupFilter(); t.configure(conf);
            for (String s : FILTER_SUBJECTS) res.put(s, t.shouldReplicateGroup(s));
        } else {
            DefaultConfigPropertyFilter t = new DefaultConfigPropertyFilter(); t.configure(conf);
            for (String s : FILTER_SUBJECTS) res.put(s, t.shouldReplicateConfigProperty(s));
            f.put("source_default", t.shouldReplicateSourceDefault("retention.ms"));
        }
        f.put("decisions", res);
    } catch (Exception e) {
        f.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
    }
    filters.add(f);
}
filterCase("topic", Map.of());
filterCase("topic", Map.of("topics", "orders.*, payments"));
filterCase("topic", Map.of("topics", "orders\\..*", "topics.exclude", ""));
filterCase("topic", Map.of("topics", ""));
filterCase("topic", Map.of("topics", " .* ", "topics.exclude", "__.*, .*internal"));
filterCase("topic", Map.of("topics", "a{1,3}"));
filterCase("topic", Map.of("topics", "*"));
filterCase("topic", Map.of("topics", ".*", "topics.blacklist", "orders"));
filterCase("topic", Map.of("topics", "(?i)ORDERS, payments"));
filterCase("group", Map.of());
filterCase("group", Map.of("groups", "app-.*", "groups.exclude", ""));
filterCase("group", Map.of("groups", "*"));
filterCase("group", Map.of("groups", ".*", "groups.exclude", "console-consumer-.*"));
filterCase("config_property", Map.of());
filterCase("config_property", Map.of("config.properties.exclude", "retention\\..*", "use.defaults.from", "source"));
filterCase("config_property", Map.of("config.properties.exclude", ""));
filterCase("config_property", Map.of("use.defaults.from", "SOURCE"));
OUT.put("filters", filters);

// ---------------------------------------------------------------- client configs
Object call(Object target, Class<?> cls, String method, Class<?>[] types, Object... args) throws Exception {
    Method m = cls.getDeclaredMethod(method, types);
    m.setAccessible(true);
    return m.invoke(target, args);
}
Class<?>[] STR = {String.class};
List<Map<String, Object>> clients = new ArrayList<>();
Map<String, String> clientProps = new LinkedHashMap<>();
clientProps.put("name", "mm2-src");
clientProps.put("connector.class", "org.apache.kafka.connect.mirror.MirrorSourceConnector");
clientProps.put("source.cluster.alias", "A");
clientProps.put("target.cluster.alias", "B");
clientProps.put("source.cluster.bootstrap.servers", "a:9092");
clientProps.put("source.cluster.security.protocol", "SASL_SSL");
clientProps.put("source.cluster.sasl.mechanism", "PLAIN");
clientProps.put("source.cluster.ssl.truststore.location", "/a.jks");
clientProps.put("source.cluster.fetch.max.bytes", "1");
clientProps.put("source.cluster.client.id", "dropped");
clientProps.put("target.cluster.bootstrap.servers", "b:9092");
clientProps.put("target.cluster.linger.ms", "7");
clientProps.put("consumer.max.poll.records", "10");
clientProps.put("consumer.auto.offset.reset", "latest");
clientProps.put("consumer.enable.auto.commit", "true");
clientProps.put("source.consumer.max.poll.records", "20");
clientProps.put("target.consumer.max.poll.records", "30");
clientProps.put("producer.linger.ms", "5");
clientProps.put("source.producer.linger.ms", "6");
clientProps.put("admin.request.timeout.ms", "1000");
clientProps.put("target.admin.request.timeout.ms", "2000");
clientProps.put("source.admin.client.id", "my-admin");
clientProps.put("consumer.poll.timeout.ms", "500");
clientProps.put("consumer.isolation.level", "read_committed");
Map<String, Object> cc = new LinkedHashMap<>();
cc.put("props", clientProps);
Object srcConf = new MirrorSourceConfig(clientProps);
cc.put("sourceConsumerConfig", new TreeMap<>((Map<String, Object>) call(srcConf, MirrorConnectorConfig.class, "sourceConsumerConfig", STR, "replication-consumer")));
cc.put("sourceAdminConfig", new TreeMap<>((Map<String, Object>) call(srcConf, MirrorConnectorConfig.class, "sourceAdminConfig", STR, "replication-source-admin")));
cc.put("targetAdminConfig", new TreeMap<>((Map<String, Object>) call(srcConf, MirrorConnectorConfig.class, "targetAdminConfig", STR, "replication-target-admin")));
cc.put("sourceProducerConfig", new TreeMap<>((Map<String, Object>) call(srcConf, MirrorConnectorConfig.class, "sourceProducerConfig", STR, "offset-syncs-source-producer")));
cc.put("targetProducerConfig", new TreeMap<>((Map<String, Object>) call(srcConf, MirrorConnectorConfig.class, "targetProducerConfig", STR, "offset-syncs-target-producer")));
cc.put("targetConsumerConfig", new TreeMap<>((Map<String, Object>) call(srcConf, MirrorConnectorConfig.class, "targetConsumerConfig", STR, "checkpoints-target-consumer")));
cc.put("sourceAdminConfig_null_role", new TreeMap<>((Map<String, Object>) call(srcConf, MirrorConnectorConfig.class, "sourceAdminConfig", STR, (Object) null)));
Map<String, String> taskProps = new LinkedHashMap<>(clientProps);
taskProps.put("task.index", "3");
taskProps.put("task.assigned.partitions", "orders-0,orders-1");
Object taskConf = new MirrorSourceTaskConfig(taskProps);
cc.put("task_sourceConsumerConfig", new TreeMap<>((Map<String, Object>) call(taskConf, MirrorConnectorConfig.class, "sourceConsumerConfig", STR, "replication-consumer")));
Map<String, String> noIndex = new LinkedHashMap<>(clientProps);
noIndex.put("task.assigned.partitions", "orders-0");
Object taskConfNoIndex = new MirrorSourceTaskConfig(noIndex);
cc.put("task_no_index_sourceAdminConfig", new TreeMap<>((Map<String, Object>) call(taskConfNoIndex, MirrorConnectorConfig.class, "sourceAdminConfig", STR, "x")));
cc.put("offsetSyncsTopic", call(srcConf, MirrorSourceConfig.class, "offsetSyncsTopic", new Class<?>[0]));
Map<String, String> targetLoc = new LinkedHashMap<>(clientProps);
targetLoc.put("offset-syncs.topic.location", "target");
targetLoc.put("replication.policy.separator", "_");
Object tl = new MirrorSourceConfig(targetLoc);
cc.put("offsetSyncsTopic_target_underscore", call(tl, MirrorSourceConfig.class, "offsetSyncsTopic", new Class<?>[0]));
cc.put("checkpointsTopic_underscore", call(tl, MirrorSourceConfig.class, "checkpointsTopic", new Class<?>[0]));
cc.put("offsetSyncsTopicProducerConfig_target", new TreeMap<>((Map<String, Object>) call(tl, MirrorSourceConfig.class, "offsetSyncsTopicProducerConfig", new Class<?>[0])));
Map<String, String> chk = new LinkedHashMap<>(clientProps);
chk.put("name", "mm2-cp");
Object chkConf = new MirrorCheckpointConfig(chk);
cc.put("checkpoint_offsetSyncsTopicConsumerConfig", new TreeMap<>((Map<String, Object>) call(chkConf, MirrorCheckpointConfig.class, "offsetSyncsTopicConsumerConfig", new Class<?>[0])));
cc.put("checkpoint_validate", MirrorCheckpointConfig.validate(Map.of("emit.checkpoints.enabled", "false", "emit.offset-syncs.enabled", "false")));
cc.put("checkpoint_validate_disabled", MirrorCheckpointConfig.validate(Map.of("enabled", "false", "emit.checkpoints.enabled", "false")));
clients.add(cc);
OUT.put("client_configs", clients);

// ---------------------------------------------------------------- dedicated mode
List<Map<String, Object>> mm2 = new ArrayList<>();
void mm2Case(String id, Map<String, String> props) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("id", id);
    m.put("props", new TreeMap<>(props));
    try {
        MirrorMakerConfig conf = new MirrorMakerConfig(props);
        List<String> clusters = new ArrayList<>(conf.clusters()); Collections.sort(clusters);
        m.put("clusters", clusters);
        List<String> pairs = new ArrayList<>();
        Map<String, Object> flows = new LinkedHashMap<>();
        for (SourceAndTarget st : conf.clusterPairs()) {
            pairs.add(st.toString());
            Map<String, Object> flow = new LinkedHashMap<>();
            flow.put("worker", new TreeMap<>(conf.workerConfig(st)));
            flow.put("MirrorSourceConnector", new TreeMap<>(conf.connectorBaseConfig(st, MirrorSourceConnector.class)));
            flow.put("MirrorCheckpointConnector", new TreeMap<>(conf.connectorBaseConfig(st, MirrorCheckpointConnector.class)));
            flow.put("MirrorHeartbeatConnector", new TreeMap<>(conf.connectorBaseConfig(st, MirrorHeartbeatConnector.class)));
            flows.put(st.toString(), flow);
        }
        Collections.sort(pairs);
        m.put("pairs", pairs);
        m.put("flows", flows);
        Map<String, Object> clientConfs = new LinkedHashMap<>();
        for (String c : clusters) {
            MirrorClientConfig mc = conf.clientConfig(c);
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("admin", new TreeMap<>(mc.adminConfig()));
            x.put("consumer", new TreeMap<>(mc.consumerConfig()));
            x.put("producer", new TreeMap<>(mc.producerConfig()));
            clientConfs.put(c, x);
        }
        m.put("client_configs", clientConfs);
    } catch (Exception e) {
        m.put("error", e.getClass().getSimpleName() + ": " + e.getMessage());
    }
    mm2.add(m);
}
Map<String, String> ads = new LinkedHashMap<>();
ads.put("clusters", "A, B");
ads.put("A.bootstrap.servers", "a1:9092,a2:9092");
ads.put("B.bootstrap.servers", "b1:9092");
ads.put("A->B.enabled", "true");
ads.put("A->B.topics", ".*");
ads.put("groups", "*");
ads.put("replication.policy.separator", "_");
ads.put("emit.heartbeats.interval.seconds", "5");
mm2Case("ads_guide", ads);

Map<String, String> full = new LinkedHashMap<>();
full.put("clusters", "primary, backup, dr");
full.put("primary.bootstrap.servers", "p:9092");
full.put("primary.security.protocol", "SSL");
full.put("primary.ssl.truststore.location", "/p.jks");
full.put("primary.consumer.max.poll.records", "100");
full.put("primary.producer.linger.ms", "10");
full.put("primary.offset.storage.topic", "custom-offsets");
full.put("backup.bootstrap.servers", "b:9092");
full.put("backup.admin.request.timeout.ms", "5000");
full.put("backup.exactly.once.source.support", "enabled");
full.put("dr.bootstrap.servers", "d:9092");
full.put("sasl.mechanism", "PLAIN");
full.put("primary->backup.enabled", "true");
full.put("primary->backup.topics", "orders.*, payments");
full.put("primary->backup.sync.group.offsets.enabled", "true");
full.put("primary->backup.tasks.max", "4");
full.put("backup->primary.enabled", "false");
full.put("backup->primary.emit.heartbeats.enabled", "false");
full.put("primary->dr.enabled", "TRUE");
full.put("dr->primary.emit.heartbeats.enabled", "false");
full.put("topics.exclude", ".*internal");
full.put("transforms", "x");
full.put("transforms.x.type", "org.apache.kafka.connect.transforms.InsertField$Value");
full.put("replication.factor", "3");
full.put("replication.policy.class", "org.apache.kafka.connect.mirror.IdentityReplicationPolicy");
full.put("offset.storage.replication.factor", "1");
full.put("config.storage.replication.factor", "1");
full.put("status.storage.replication.factor", "1");
full.put("key.converter.schemas.enable", "false");
full.put("tasks.max", "2");
full.put("task.shutdown.graceful.timeout.ms", "1000");
full.put("worker.unknown", "x");
full.put("group.id", "ignored-top-level");
full.put("client.id", "top-client");
full.put("listeners", "http://:8083");
full.put("dedicated.mode.enable.internal.rest", "true");
full.put("emit.heartbeats.enabled", "true");
full.put("consumer.poll.timeout.ms", "250");
full.put("refresh.topics.interval.seconds", "30");
full.put("producer.override.acks", "all");
mm2Case("three_clusters", full);

Map<String, String> noHb = new LinkedHashMap<>();
noHb.put("clusters", "A,B");
noHb.put("A.bootstrap.servers", "a:9092");
noHb.put("B.bootstrap.servers", "b:9092");
noHb.put("emit.heartbeats.enabled", "false");
noHb.put("A->B.enabled", "true");
noHb.put("A->B.emit.heartbeats.enabled", "false");
noHb.put("bootstrap.servers", "top:9092");
mm2Case("no_heartbeats", noHb);
OUT.put("mm2", mm2);

System.out.println(MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(OUT));
/exit
