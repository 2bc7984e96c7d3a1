// Golden vectors for the Connect group protocol, produced by the Java codec classes of Kafka.
//
// Usage (from the repository root; KAFKA_LIBS is the "libs" folder of the Kafka distribution):
//   jshell -q --class-path "$KAFKA_LIBS/*" tests/golden/protocol/generate.jsh > tests/golden/protocol/vectors.txt
//
// Output: one "name hex" line per vector ("name value" for the non-byte facts), then "java.version".
import java.nio.ByteBuffer;
import java.util.*;
import org.apache.kafka.connect.util.ConnectorTaskId;
import org.apache.kafka.connect.runtime.distributed.*;
import org.apache.kafka.common.utils.ExponentialBackoff;

String hex(ByteBuffer b) {
    ByteBuffer d = b.duplicate();
    StringBuilder s = new StringBuilder();
    while (d.hasRemaining()) s.append(String.format("%02x", d.get() & 0xff));
    return s.toString();
}
void out(String name, ByteBuffer b) { System.out.println(name + " " + (b == null ? "null" : hex(b))); }
ConnectorTaskId t(String c, int n) { return new ConnectorTaskId(c, n); }
List<String> cs(String... names) { return new ArrayList<>(Arrays.asList(names)); }
List<ConnectorTaskId> ts(ConnectorTaskId... ids) { return new ArrayList<>(Arrays.asList(ids)); }
List<String> many(String prefix, int n) { List<String> l = new ArrayList<>(); for (int i = 0; i < n; i++) l.add(prefix + i); return l; }

String URL = "http://w1:8083/";
ExtendedAssignment ext(short v, short err, String leader, String url, long off, Collection<String> c, Collection<ConnectorTaskId> t, Collection<String> rc, Collection<ConnectorTaskId> rt, int delay) {
    return new ExtendedAssignment(v, err, leader, url, off, c, t, rc, rt, delay);
}

// ---- metadata
out("metadata.v0.basic", ConnectProtocol.serializeMetadata(new ConnectProtocol.WorkerState(URL, 42L)));
out("metadata.v0.empty_offset", ConnectProtocol.serializeMetadata(new ConnectProtocol.WorkerState("http://[::1]:8083/", -1L)));
out("metadata.v1.no_assignment", IncrementalCooperativeConnectProtocol.serializeMetadata(new ExtendedWorkerState(URL, 42L, null), false));
out("metadata.v2.no_assignment", IncrementalCooperativeConnectProtocol.serializeMetadata(new ExtendedWorkerState(URL, 42L, null), true));
ExtendedAssignment held = ext((short) 2, (short) 0, "m1", URL, 40L, cs("c2", "c1"), ts(t("c1", 0), t("c2", 1), t("c3", 0)), cs("c4"), ts(t("c4", 1)), 0);
out("metadata.v1.with_assignment", IncrementalCooperativeConnectProtocol.serializeMetadata(new ExtendedWorkerState(URL, 42L, held), false));
out("metadata.v2.with_assignment", IncrementalCooperativeConnectProtocol.serializeMetadata(new ExtendedWorkerState(URL, 42L, held), true));
ExtendedAssignment heldEmpty = ext((short) 1, (short) 0, "m1", URL, 7L, cs(), ts(), cs(), ts(), 0);
out("metadata.v2.with_empty_holding", IncrementalCooperativeConnectProtocol.serializeMetadata(new ExtendedWorkerState("http://w\u00f6rker:8083/", 7L, heldEmpty), true));
for (ConnectProtocolCompatibility mode : ConnectProtocolCompatibility.values()) {
    ExtendedWorkerState st = new ExtendedWorkerState(URL, 42L, held);
    var coll = mode == ConnectProtocolCompatibility.EAGER ? ConnectProtocol.metadataRequest(st)
        : IncrementalCooperativeConnectProtocol.metadataRequest(st, mode == ConnectProtocolCompatibility.SESSIONED);
    int i = 0;
    for (var p : coll) {
        System.out.println("join." + mode.toString() + "." + i + ".name " + p.name());
        out("join." + mode.toString() + "." + i + ".metadata", ByteBuffer.wrap(p.metadata()));
        i++;
    }
}

// ---- V0 assignments
out("assignment.v0.basic", ConnectProtocol.serializeAssignment(new ConnectProtocol.Assignment((short) 0, "m1", URL, 42L, cs("c"), ts(t("c", 0)))));
out("assignment.v0.empty", ConnectProtocol.serializeAssignment(new ConnectProtocol.Assignment((short) 0, "m1", URL, 42L, cs(), ts())));
out("assignment.v0.config_mismatch", ConnectProtocol.serializeAssignment(new ConnectProtocol.Assignment((short) 1, "leader-1", URL, 99L, cs(), ts())));
out("assignment.v0.grouping", ConnectProtocol.serializeAssignment(new ConnectProtocol.Assignment((short) 0, "m1", URL, 5L,
        cs("zeta", "alpha", "mirror-source", "b"), ts(t("b", 2), t("other", 0), t("alpha", 1), t("b", 0), t("other", 3)))));

// ---- V1/V2 assignments
for (int v = 1; v <= 2; v++) {
    boolean s = v == 2;
    short sv = (short) v;
    out("assignment.v" + v + ".basic", IncrementalCooperativeConnectProtocol.serializeAssignment(ext(sv, (short) 0, "m1", URL, 42L, cs("c"), ts(t("c", 0)), cs(), ts(), 0), s));
    out("assignment.v" + v + ".empty", IncrementalCooperativeConnectProtocol.serializeAssignment(ext(sv, (short) 0, "m1", URL, 42L, cs(), ts(), cs(), ts(), 0), s));
    out("assignment.v" + v + ".revoked_delay", IncrementalCooperativeConnectProtocol.serializeAssignment(ext(sv, (short) 0, "connect-1-6f1c", "http://10.0.0.1:8083/", 1234567890123L,
            cs("new-conn"), ts(t("new-conn", 0), t("old", 3)), cs("old", "gone", "old"), ts(t("gone", 1), t("old", 0), t("x", 2), t("gone", 0)), 300000), s));
    out("assignment.v" + v + ".config_mismatch", IncrementalCooperativeConnectProtocol.serializeAssignment(ext(sv, (short) 1, "m1", URL, 99L, cs(), ts(), cs(), ts(), 0), s));
    out("assignment.v" + v + ".duplicates", IncrementalCooperativeConnectProtocol.serializeAssignment(ext(sv, (short) 0, "m1", URL, 3L, cs("a", "b", "a"), ts(t("a", 0), t("a", 0)), cs(), ts(), 0), s));
    out("assignment.v" + v + ".many11", IncrementalCooperativeConnectProtocol.serializeAssignment(ext(sv, (short) 0, "m1", URL, 3L, many("connector-", 11), ts(), cs(), ts(), 0), s));
    out("assignment.v" + v + ".many12", IncrementalCooperativeConnectProtocol.serializeAssignment(ext(sv, (short) 0, "m1", URL, 3L, many("connector-", 12), ts(), cs(), ts(), 0), s));
    out("assignment.v" + v + ".many40", IncrementalCooperativeConnectProtocol.serializeAssignment(ext(sv, (short) 0, "m1", URL, 3L, many("mm2-", 40), ts(t("mm2-7", 1), t("mm2-3", 0)), cs(), ts(), 7), s));
    out("assignment.v" + v + ".unicode", IncrementalCooperativeConnectProtocol.serializeAssignment(ext(sv, (short) 0, "m\u00fc", "http://h\u00e9:1/", 0L, cs("\ud83d\ude00", "\uffff", "\u00e9"), ts(t("\ud83d\ude00", 0)), cs(), ts(), 0), s));
}
out("assignment.empty_instance.v2", IncrementalCooperativeConnectProtocol.serializeAssignment(ExtendedAssignment.empty(), true));

// ---- Java collection iteration orders the assignor depends on
{
    Map<String, Integer> members = new HashMap<>();
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < 30; i++) ids.add("connect-10.0.0." + i + ":8083-" + Integer.toHexString(i * 2654435761L > 0 ? (int) (i * 2654435761L) : i));
    for (String id : ids) members.put(id, 0);
    System.out.println("order.members.insert " + String.join(",", ids));
    System.out.println("order.members.hashmap " + String.join(",", members.keySet()));
    List<ConnectorTaskId> tasks = new ArrayList<>();
    for (int c = 0; c < 6; c++) for (int t = 0; t < 5; t++) tasks.add(new ConnectorTaskId("mm2-" + c, t));
    StringBuilder sb = new StringBuilder();
    for (ConnectorTaskId id : new HashSet<>(tasks)) sb.append(sb.length() == 0 ? "" : ",").append(id);
    System.out.println("order.tasks.hashset_copy " + sb);
}

// ---- facts
for (int maxDelay : new int[] {0, 1, 2, 1000, 60000, 300000, 2147483647}) {
    ExponentialBackoff b = new ExponentialBackoff(maxDelay == 0 ? 0 : 1, 40, maxDelay, 0);
    StringBuilder sb = new StringBuilder();
    for (int n = 1; n <= 8; n++) sb.append(n == 1 ? "" : ",").append(b.backoff(n));
    System.out.println("backoff." + maxDelay + " " + sb);
}
for (String str : new String[] {"", "a", "connector-0", "mm2-source->target", "\u00e9t\u00e9", "\ud83d\ude00x"})
    System.out.println("hash." + hex(ByteBuffer.wrap(str.getBytes(java.nio.charset.StandardCharsets.UTF_8))) + " " + str.hashCode());
System.out.println("java.version " + System.getProperty("java.version"));
/exit
