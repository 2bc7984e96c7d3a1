// Writes tests/golden/mirror_checkpoint/client_vectors.json: MirrorClient's per-topic helpers of Kafka 4.3.1
// (countHopsForTopic, allSources, isRemoteTopic, isHeartbeatTopic, isCheckpointTopic) for several policies.
// Run from the repository root:
//   jshell -R-da --class-path '.cache/kafka-4.3.1/libs/*' tests/golden/mirror_checkpoint/generate_client.jsh
// The package-private helpers need no admin client, so MirrorClient's test constructor gets null for it.
import java.lang.reflect.*;
import java.nio.file.*;
import java.util.*;
import org.apache.kafka.connect.mirror.*;

String js(String s) { return s == null ? "null" : "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\""; }
Object call(Object target, String name, Class<?>[] types, Object... args) throws Exception {
    Method m = target.getClass().getDeclaredMethod(name, types); m.setAccessible(true);
    try { return m.invoke(target, args); } catch (InvocationTargetException e) { throw (Exception) e.getCause(); }
}
Object client(ReplicationPolicy policy) throws Exception {
    Constructor<?> c = MirrorClient.class.getDeclaredConstructor(org.apache.kafka.clients.admin.Admin.class, ReplicationPolicy.class, Map.class);
    c.setAccessible(true);
    return c.newInstance(null, policy, Map.of());
}
String[] topics = {
    "heartbeats", "A.heartbeats", "B.A.heartbeats", "C.B.A.heartbeats", "A.B.A.heartbeats", "A.A.heartbeats",
    "orders", "A.orders", "B.A.orders", "A.checkpoints.internal", "B.checkpoints.internal", "mm2-offset-syncs.B.internal",
    "__consumer_offsets", ".hidden", "A.orders.internal", "orders-internal", "A_heartbeats", "B_A_heartbeats",
    "A_orders", "A_checkpoints_internal", "myheartbeats", "A.myheartbeats", "x.heartbeats.y", "A..heartbeats", "heartbeats.",
};
String[] aliases = {"A", "B", "C", "D", ""};
Object[][] policies = {
    {"default", Map.of(), "{}"},
    {"default-underscore", Map.of("replication.policy.separator", "_"), "{\"replication.policy.separator\": \"_\"}"},
    {"identity", Map.of(), "{}"},
    {"identity-source-A", Map.of("source.cluster.alias", "A"), "{\"source.cluster.alias\": \"A\"}"},
};
StringBuilder out = new StringBuilder("{\n\"kafka_version\": \"4.3.1\",\n\"aliases\": [\"A\", \"B\", \"C\", \"D\", \"\"],\n\"policies\": [\n");
for (int p = 0; p < policies.length; p++) {
    String name = (String) policies[p][0];
    ReplicationPolicy policy = name.startsWith("identity") ? new IdentityReplicationPolicy() : new DefaultReplicationPolicy();
    ((org.apache.kafka.common.Configurable) policy).configure((Map<String, ?>) policies[p][1]);
    Object mc = client(policy);
    out.append(String.format("  {\"name\": %s, \"config\": %s, \"topics\": [\n", js(name), policies[p][2]));
    for (int t = 0; t < topics.length; t++) {
        String topic = topics[t];
        StringBuilder hops = new StringBuilder();
        for (String a : aliases) hops.append(hops.length() == 0 ? "" : ", ").append(call(mc, "countHopsForTopic", new Class<?>[]{String.class, String.class}, topic, a));
        Set<String> sources = new TreeSet<String>();
        for (Object o : (Set<?>) call(mc, "allSources", new Class<?>[]{String.class}, topic)) sources.add((String) o);
        out.append(String.format("    {\"topic\": %s, \"hops\": [%s], \"all_sources\": [%s], \"remote\": %s, \"heartbeat\": %s, \"checkpoint\": %s, \"topic_source\": %s}%s\n",
            js(topic), hops, String.join(", ", sources.stream().map(s -> js(s)).toList()),
            call(mc, "isRemoteTopic", new Class<?>[]{String.class}, topic), call(mc, "isHeartbeatTopic", new Class<?>[]{String.class}, topic),
            call(mc, "isCheckpointTopic", new Class<?>[]{String.class}, topic), js(policy.topicSource(topic)), t + 1 < topics.length ? "," : ""));
    }
    out.append(p + 1 < policies.length ? "  ]},\n" : "  ]}\n");
}
out.append("]\n}\n");
Files.writeString(Path.of("tests/golden/mirror_checkpoint/client_vectors.json"), out.toString());
System.out.println("wrote " + out.length() + " chars");
/exit
