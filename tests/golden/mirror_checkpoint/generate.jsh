// Writes tests/golden/mirror_checkpoint/java_vectors.json from the real Kafka 4.3.1 jars.
// Run from the repository root (Java 17+, jars cached by pyconnect.testing.distribution):
//   jshell -R-da --class-path '.cache/kafka-4.3.1/libs/*' tests/golden/mirror_checkpoint/generate.jsh
// Package-private members (recordKey/recordValue, the store's test constructor, handleRecord,
// syncFor, the readToEnd flags) are reached by reflection; nothing is re-implemented here.
import java.lang.reflect.*;
import java.nio.file.*;
import java.util.*;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.mirror.*;

StringBuilder out = new StringBuilder();
String hex(byte[] b) { StringBuilder s = new StringBuilder(); for (byte x : b) s.append(String.format("%02x", x)); return s.toString(); }
byte[] unhex(String h) { byte[] b = new byte[h.length() / 2]; for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16); return b; }
String js(String s) {
    if (s == null) return "null";
    if (s.length() > 64 && s.chars().distinct().count() == 1) return String.format("{\"repeat\": %s, \"count\": %d}", js(s.substring(0, 1)), s.length());
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
        if (c == '"' || c == '\\') b.append('\\').append(c);
        else if (c < 0x20 || c > 0x7e) b.append(String.format("\\u%04x", (int) c));
        else b.append(c);
    }
    return b.append('"').toString();
}
Object call(Object target, String name, Class<?>[] types, Object... args) throws Exception {
    Class<?> c = target instanceof Class ? (Class<?>) target : target.getClass();
    Method m = null;
    for (Class<?> k = c; m == null && k != null; k = k.getSuperclass()) {
        try { m = k.getDeclaredMethod(name, types); } catch (NoSuchMethodException e) { }
    }
    m.setAccessible(true);
    try { return m.invoke(target instanceof Class ? null : target, args); }
    catch (InvocationTargetException e) { throw (Exception) e.getCause(); }
}
String err(Throwable t) { return js(t.getClass().getSimpleName() + ": " + t.getMessage()); }

// ---------------------------------------------------------------- Checkpoint / Heartbeat encodings
String big = "m".repeat(32767);
Object[][] checkpoints = {
    {"g1", "A.orders", 3, 1000L, 997L, ""},
    {"", "", 0, 0L, 0L, ""},
    {"golden-group", "A.golden-orders", 0, 3L, 3L, "golden-meta"},
    {"gr\u00fcppe-\u00e9", "A.t\u00f3pic", Integer.MAX_VALUE, Long.MAX_VALUE, Long.MIN_VALUE, "meta \u2713"},
    {"neg", "B.A.x", -1, -1L, -1L, "-"},
    {"g\ud83d\ude00", "A.\u65e5\u672c", 7, 1L << 40, (1L << 40) + 1, "\u0000nul"},
    {"lone\ud800", "A.t", 1, 5L, 6L, "x\udfffy"},
    {"g", "A.t", 2, 10L, 11L, big},
    {"g", "A.t", 2, 10L, 11L, big + "m"},
    {"g", "A.t", 2, 10L, 11L, null},
};
out.append("{\n\"kafka_version\": \"4.3.1\",\n\"checkpoint_encode\": [\n");
for (int i = 0; i < checkpoints.length; i++) {
    Object[] c = checkpoints[i];
    Checkpoint cp = new Checkpoint((String) c[0], new TopicPartition((String) c[1], (Integer) c[2]), (Long) c[3], (Long) c[4], (String) c[5]);
    out.append(String.format("  {\"group\": %s, \"topic\": %s, \"partition\": %d, \"upstream\": %d, \"downstream\": %d, \"metadata\": %s, \"to_string\": %s, ",
        js((String) c[0]), js((String) c[1]), c[2], c[3], c[4], js((String) c[5]), js(cp.toString())));
    try {
        byte[] k = (byte[]) call(cp, "recordKey", new Class<?>[0]);
        byte[] v = (byte[]) call(cp, "recordValue", new Class<?>[0]);
        out.append(String.format("\"key\": \"%s\", \"value\": \"%s\"}", hex(k), hex(v)));
    } catch (Throwable t) { out.append("\"error\": " + err(t) + "}"); }
    out.append(i + 1 < checkpoints.length ? ",\n" : "\n");
}
Object[][] heartbeats = {
    {"A", "B", 1700000000000L}, {"", "", 0L}, {"us-west", "us-east", -1L},
    {"\u00e9\ud83d\ude00", "B", Long.MAX_VALUE}, {"A", "lone\ud800", Long.MIN_VALUE}, {null, "B", 1L},
};
out.append("],\n\"heartbeat_encode\": [\n");
for (int i = 0; i < heartbeats.length; i++) {
    Object[] h = heartbeats[i];
    Heartbeat hb = new Heartbeat((String) h[0], (String) h[1], (Long) h[2]);
    out.append(String.format("  {\"source\": %s, \"target\": %s, \"timestamp\": %d, \"to_string\": %s, ", js((String) h[0]), js((String) h[1]), h[2], js(hb.toString())));
    try {
        byte[] k = (byte[]) call(hb, "recordKey", new Class<?>[0]);
        byte[] v = (byte[]) call(hb, "recordValue", new Class<?>[0]);
        out.append(String.format("\"key\": \"%s\", \"value\": \"%s\"}", hex(k), hex(v)));
    } catch (Throwable t) { out.append("\"error\": " + err(t) + "}"); }
    out.append(i + 1 < heartbeats.length ? ",\n" : "\n");
}

// ---------------------------------------------------------------- decoding of crafted bytes
String CK = "00026731" + "0008412e6f7264657273" + "00000003"; // "g1", "A.orders", 3
String[][] checkpointDecode = {
    {CK, "0000" + "00000000000003e8" + "00000000000003e5" + "0000"},
    {CK, "0001" + "00000000000003e8" + "00000000000003e5" + "0000" + "deadbeef"},
    {CK, "7fff" + "00000000000003e8" + "00000000000003e5" + "00026869"},
    {CK + "ffff", "ffff" + "00000000000003e8" + "00000000000003e5" + "0000"},
    {CK, "0000" + "00000000000003e8" + "00000000000003e5"},
    {CK, "0000" + "00000000000003e8" + "00000000000003"},
    {CK, ""},
    {CK, "00"},
    {CK, "0000" + "00000000000003e8" + "00000000000003e5" + "ffff"},
    {CK, "0000" + "00000000000003e8" + "00000000000003e5" + "0005616263"},
    {"0002ff31" + "0003c328e2" + "00000001", "0000" + "0000000000000001" + "0000000000000002" + "0003edb080"},
    {"000267", "0000" + "0000000000000001" + "0000000000000002" + "0000"},
    {"0002673100084132", "0000" + "0000000000000001" + "0000000000000002" + "0000"},
    {"", "0000" + "0000000000000001" + "0000000000000002" + "0000"},
    {"fffe6731", "0000" + "0000000000000001" + "0000000000000002" + "0000"},
    {null, "0000" + "0000000000000001" + "0000000000000002" + "0000"},
    {CK, null},
};
out.append("],\n\"checkpoint_decode\": [\n");
for (int i = 0; i < checkpointDecode.length; i++) {
    String[] kv = checkpointDecode[i];
    out.append(String.format("  {\"key\": %s, \"value\": %s, ", js(kv[0]), js(kv[1])));
    try {
        Checkpoint c = Checkpoint.deserializeRecord(new ConsumerRecord<>("t", 0, 0L, kv[0] == null ? null : unhex(kv[0]), kv[1] == null ? null : unhex(kv[1])));
        out.append(String.format("\"group\": %s, \"topic\": %s, \"partition\": %d, \"upstream\": %d, \"downstream\": %d, \"metadata\": %s}",
            js(c.consumerGroupId()), js(c.topicPartition().topic()), c.topicPartition().partition(), c.upstreamOffset(), c.downstreamOffset(), js(c.metadata())));
    } catch (Throwable t) { out.append("\"error\": " + err(t) + "}"); }
    out.append(i + 1 < checkpointDecode.length ? ",\n" : "\n");
}
String[][] heartbeatDecode = {
    {"000141000142", "0000" + "0000018bcfe56800"},
    {"000141000142" + "00", "0003" + "0000018bcfe56800" + "ff"},
    {"000141000142", "0000" + "0000018bcfe568"},
    {"000141", "0000" + "0000018bcfe56800"},
    {"000141000142", "00"},
    {"0001ff0001c3", "0000" + "0000000000000000"},
    {"000141ffff", "0000" + "0000000000000000"},
    {null, "0000" + "0000000000000000"},
    {"000141000142", null},
};
out.append("],\n\"heartbeat_decode\": [\n");
for (int i = 0; i < heartbeatDecode.length; i++) {
    String[] kv = heartbeatDecode[i];
    out.append(String.format("  {\"key\": %s, \"value\": %s, ", js(kv[0]), js(kv[1])));
    try {
        Heartbeat h = Heartbeat.deserializeRecord(new ConsumerRecord<>("t", 0, 0L, kv[0] == null ? null : unhex(kv[0]), kv[1] == null ? null : unhex(kv[1])));
        out.append(String.format("\"source\": %s, \"target\": %s, \"timestamp\": %d}", js(h.sourceClusterAlias()), js(h.targetClusterAlias()), h.timestamp()));
    } catch (Throwable t) { out.append("\"error\": " + err(t) + "}"); }
    out.append(i + 1 < heartbeatDecode.length ? ",\n" : "\n");
}

// ---------------------------------------------------------------- OffsetSyncStore scenarios
TopicPartition TP = new TopicPartition("topic1", 2);
Class<?> STORE = Class.forName("org.apache.kafka.connect.mirror.OffsetSyncStore");
Object newStore(boolean mustReadToEnd) throws Exception {
    Constructor<?> ctor = STORE.getDeclaredConstructor(); ctor.setAccessible(true);
    Object s = ctor.newInstance();
    Field f = STORE.getDeclaredField("initializationMustReadToEnd"); f.setAccessible(true); f.setBoolean(s, mustReadToEnd);
    return s;
}
void markReadToEnd(Object s) throws Exception { Field f = STORE.getDeclaredField("readToEnd"); f.setAccessible(true); f.setBoolean(s, true); }
void sync(Object s, long up, long down) throws Exception {
    OffsetSync os = new OffsetSync(TP, up, down);
    byte[] k = (byte[]) call(os, "recordKey", new Class<?>[0]);
    byte[] v = (byte[]) call(os, "recordValue", new Class<?>[0]);
    call(s, "handleRecord", new Class<?>[]{ConsumerRecord.class}, new ConsumerRecord<>("mm2-offset-syncs.B.internal", 0, 0L, k, v));
}
String slots(Object s) throws Exception {
    StringBuilder b = new StringBuilder("[");
    Object prev = null;
    for (int i = 0; i < 64; i++) {
        OffsetSync o;
        try { o = (OffsetSync) call(s, "syncFor", new Class<?>[]{TopicPartition.class, int.class}, TP, i); }
        catch (IllegalArgumentException e) { return "null"; }
        if (o != prev) { if (b.length() > 1) b.append(","); b.append(String.format("[%d,%d,%d]", i, o.upstreamOffset(), o.downstreamOffset())); }
        prev = o;
    }
    return b.append("]").toString();
}
String translate(Object s, long[] queries) throws Exception {
    StringBuilder b = new StringBuilder("[");
    for (int i = 0; i < queries.length; i++) {
        OptionalLong r = ((OffsetSyncStore) s).translateDownstream("g", TP, queries[i]);
        b.append(String.format("%s%s", i == 0 ? "" : ",", r.isPresent() ? Long.toString(r.getAsLong()) : "null"));
    }
    return b.append("]").toString();
}
long[] queriesFor(List<long[]> syncs) {
    TreeSet<Long> q = new TreeSet<>();
    for (long[] s : syncs) for (long d = -1; d <= 1; d++) if (s[0] + d >= 0) q.add(s[0] + d);
    q.add(0L);
    return q.stream().mapToLong(Long::longValue).toArray();
}
boolean firstScenario = true;
void scenario(String name, String doc, boolean mustReadToEnd, List<long[]> initial, List<long[]> live, boolean everyStep, Set<Integer> translateAt) throws Exception {
    Object s = newStore(mustReadToEnd);
    List<long[]> all = new ArrayList<>(initial); all.addAll(live);
    long[] queries = queriesFor(all);
    StringBuilder steps = new StringBuilder();
    int n = 0;
    for (long[] x : initial) { sync(s, x[0], x[1]); }
    String afterInitialNotReady = translate(s, queries);
    markReadToEnd(s);
    steps.append(String.format("    {\"after\": %d, \"slots\": %s, \"translations\": %s}", initial.size(), slots(s), translate(s, queries)));
    for (long[] x : live) {
        sync(s, x[0], x[1]); n++;
        boolean tr = n == live.size() || translateAt.contains(n) || (everyStep && live.size() <= 10);
        if (everyStep || tr) steps.append(String.format(",\n    {\"after\": %d, \"slots\": %s, \"translations\": %s}", initial.size() + n, slots(s), tr ? translate(s, queries) : "null"));
    }
    StringBuilder in = new StringBuilder(); for (long[] x : initial) in.append(in.length() == 0 ? "" : ",").append(String.format("[%d,%d]", x[0], x[1]));
    StringBuilder lv = new StringBuilder(); for (long[] x : live) lv.append(lv.length() == 0 ? "" : ",").append(String.format("[%d,%d]", x[0], x[1]));
    out.append(firstScenario ? "" : ",\n").append(String.format("  {\"name\": %s, \"doc\": %s, \"must_read_to_end\": %b,\n   \"queries\": %s,\n   \"initial\": [%s],\n   \"live\": [%s],\n   \"before_ready\": %s,\n   \"states\": [\n%s]}",
        js(name), js(doc), mustReadToEnd, Arrays.toString(queries).replace(" ", ""), in, lv, afterInitialNotReady, steps));
    firstScenario = false;
}
List<long[]> seq(long from, long to, long step) { List<long[]> l = new ArrayList<>(); for (long o = from; o <= to; o += step) l.add(new long[]{o, o}); return l; }
List<long[]> pairs(long... v) { List<long[]> l = new ArrayList<>(); for (int i = 0; i < v.length; i += 2) l.add(new long[]{v[i], v[i + 1]}); return l; }

out.append("],\n\"offset_sync_store\": [\n");
scenario("testOffsetTranslation", "OffsetSyncStoreTest.testOffsetTranslation", true, List.of(), pairs(100, 200, 150, 251, 200, 10, 20, 20), true, Set.<Integer>of());
scenario("testNoTranslationIfStoreNotStarted", "OffsetSyncStoreTest.testNoTranslationIfStoreNotStarted", true, pairs(100, 200), List.of(), true, Set.<Integer>of());
{
    List<long[]> live = seq(1010, 10000, 10); live.add(new long[]{1500, 11000});
    scenario("testPastOffsetTranslation", "OffsetSyncStoreTest.testPastOffsetTranslation, translations before and after its upstream rewind (1500, 11000)", true, seq(0, 1000, 10), live, false, Set.of(live.size() - 1));
}
{
    List<long[]> live = seq(1000, 10000, 10); live.add(new long[]{1500, 11000});
    scenario("testPastOffsetTranslationWithoutInitializationReadToEnd", "OffsetSyncStoreTest.testPastOffsetTranslationWithoutInitializationReadToEnd, before and after the rewind", false, seq(0, 1000, 10), live, false, Set.of(live.size() - 1));
}
scenario("consistentlySpacedStep7", "testConsistentlySpacedSyncs shape: step 7 from offset 3", true, List.of(), seq(3, 3 + 7 * 150, 7), true, Set.of(40, 100));
Random random = new Random(20261122L);
for (int r = 0; r < 12; r++) {
    List<long[]> initial = new ArrayList<>(), live = new ArrayList<>();
    long up = random.nextInt(50), down = random.nextInt(50);
    int count = 40 + random.nextInt(160);
    int initialCount = r % 3 == 0 ? 0 : random.nextInt(count / 2);
    int maxBits = 1 + random.nextInt(r < 6 ? 8 : 20);
    for (int i = 0; i < count; i++) {
        double p = random.nextDouble();
        if (p < 0.03) { up = Math.max(0, up - random.nextInt(1 << Math.min(maxBits, 10))); }
        else if (p < 0.05) { down = Math.max(0, down - random.nextInt(1 << Math.min(maxBits, 10))); up += 1 + random.nextInt(4); }
        else if (p < 0.65) { long step = 1 + (long) random.nextInt(1 << maxBits); up += step; down += step; }
        else { up += 1 + random.nextInt(1 << maxBits); down += 1 + random.nextInt(1 << maxBits); }
        (i < initialCount ? initial : live).add(new long[]{up, down});
    }
    scenario("random-" + r, "seeded random walk (seed 20261122, scenario " + r + ")", r % 2 == 0, initial, live, true, Set.of(live.size() / 2));
}
out.append("\n]\n}\n");
Files.writeString(Path.of("tests/golden/mirror_checkpoint/java_vectors.json"), out.toString());
System.out.println("wrote " + out.length() + " chars");
/exit
