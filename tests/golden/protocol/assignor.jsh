// Reference traces of Kafka's IncrementalCooperativeAssignor, for replay against our port.
//
// Usage (from the repository root; KAFKA_LIBS is the "libs" folder of the Kafka distribution):
//   jshell -q --class-path "$KAFKA_LIBS/*" tests/golden/protocol/assignor.jsh > tests/golden/protocol/assignor_traces.txt
//
// Each round runs the real assignor (performTaskAssignment over a ClusterConfigState, reached by
// reflection) on member metadata produced by the real codec; members then merge their assignment
// the way WorkerCoordinator.onJoinComplete does. Output, per round:
//   round <generation> <lastCompletedGeneration> <nowMs> <leader> <configOffset>
//   config <connector> <taskCount>        (one per configured connector)
//   member <memberId> <metadata hex>      (JoinGroup order)
//   expect <memberId> <V2 assignment hex> (as fillAssignments/serializeAssignments would send it)
//   state <delay> <scheduledRebalance>
import java.lang.reflect.*;
import java.nio.ByteBuffer;
import java.util.*;
import org.apache.kafka.common.utils.LogContext;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.connect.runtime.distributed.*;
import org.apache.kafka.connect.storage.ClusterConfigState;
import org.apache.kafka.connect.util.ConnectUtils;
import org.apache.kafka.connect.util.ConnectorTaskId;

String hex(ByteBuffer b) {
    if (b == null) return "null";
    ByteBuffer d = b.duplicate();
    StringBuilder s = new StringBuilder();
    while (d.hasRemaining()) s.append(String.format("%02x", d.get() & 0xff));
    return s.toString();
}

class ManualTime implements Time {
    long now = 1_000_000L;
    public long milliseconds() { return now; }
    public long nanoseconds() { return now * 1_000_000L; }
    public void sleep(long ms) { now += ms; }
    public void waitObject(Object o, java.util.function.Supplier<Boolean> c, long d) { }
}

Method perform;
Method newlyC, newlyT, revokedC, revokedT;
Field delayField, scheduledField;
{
    perform = IncrementalCooperativeAssignor.class.getDeclaredMethod("performTaskAssignment",
            ClusterConfigState.class, int.class, int.class, Map.class);
    perform.setAccessible(true);
    Class<?> ca = Class.forName("org.apache.kafka.connect.runtime.distributed.IncrementalCooperativeAssignor$ClusterAssignment");
    newlyC = ca.getMethod("newlyAssignedConnectors", String.class); newlyC.setAccessible(true);
    newlyT = ca.getMethod("newlyAssignedTasks", String.class); newlyT.setAccessible(true);
    revokedC = ca.getMethod("newlyRevokedConnectors", String.class); revokedC.setAccessible(true);
    revokedT = ca.getMethod("newlyRevokedTasks", String.class); revokedT.setAccessible(true);
    delayField = IncrementalCooperativeAssignor.class.getDeclaredField("delay"); delayField.setAccessible(true);
    scheduledField = IncrementalCooperativeAssignor.class.getDeclaredField("scheduledRebalance"); scheduledField.setAccessible(true);
}

class Sim {
    final ManualTime time = new ManualTime();
    final IncrementalCooperativeAssignor assignor;
    final List<String> order = new ArrayList<>();
    final Map<String, ExtendedAssignment> held = new HashMap<>();
    final Map<String, Integer> config = new LinkedHashMap<>();
    long offset = 10;
    int generation = 0;
    int lastCompleted = -1;

    Sim(String name, int maxDelay) {
        assignor = new IncrementalCooperativeAssignor(new LogContext(), time, maxDelay);
        System.out.println("scenario " + name + " " + maxDelay);
    }
    Sim join(String m) { order.add(m); held.put(m, null); return this; }
    Sim leave(String m) { order.remove(m); held.remove(m); return this; }
    Sim connector(String c, int tasks) { config.put(c, tasks); offset++; return this; }
    Sim delete(String c) { config.remove(c); offset++; return this; }
    Sim advance(long ms) { time.now += ms; return this; }
    Sim generationMismatch() { lastCompleted = -7; return this; }
    Sim duplicate(String from, String to) {
        ExtendedAssignment a = held.get(from), b = held.get(to);
        List<String> c = new ArrayList<>(b.connectors()); c.addAll(a.connectors());
        List<ConnectorTaskId> t = new ArrayList<>(b.tasks()); t.addAll(a.tasks());
        held.put(to, new ExtendedAssignment(b.version(), b.error(), b.leader(), b.leaderUrl(), b.offset(), c, t, new ArrayList<>(), new ArrayList<>(), 0));
        return this;
    }

    Sim round(String... failingSync) throws Exception {
        Set<String> failing = new HashSet<>(Arrays.asList(failingSync));
        generation++;
        String leader = order.get(0);
        System.out.println("round " + generation + " " + lastCompleted + " " + time.now + " " + leader + " " + offset);
        Map<String, Map<String, String>> connectorConfigs = new HashMap<>();
        Map<String, Integer> taskCounts = new HashMap<>();
        for (var e : config.entrySet()) {
            System.out.println("config " + e.getKey() + " " + e.getValue());
            connectorConfigs.put(e.getKey(), Map.of("name", e.getKey()));
            taskCounts.put(e.getKey(), e.getValue());
        }
        ClusterConfigState snapshot = new ClusterConfigState(offset, null, taskCounts, connectorConfigs,
                new HashMap<>(), new HashMap<>(), new HashMap<>(), new HashMap<>(), new HashMap<>(), new HashSet<>(), new HashSet<>());
        Map<String, ExtendedWorkerState> memberConfigs = new HashMap<>();
        for (String m : order) {
            ByteBuffer md = IncrementalCooperativeConnectProtocol.serializeMetadata(
                    new ExtendedWorkerState("http://" + m + ":8083/", offset, held.get(m)), true);
            System.out.println("member " + m + " " + hex(md));
            memberConfigs.put(m, IncrementalCooperativeConnectProtocol.deserializeMetadata(md));
        }
        Map<String, WorkerCoordinator.ConnectorsAndTasks> memberAssignments = ConnectUtils.transformValues(memberConfigs,
                s -> new WorkerCoordinator.ConnectorsAndTasks.Builder().with(s.assignment().connectors(), s.assignment().tasks()).build());
        Object cluster = perform.invoke(assignor, snapshot, lastCompleted, generation, memberAssignments);
        int delay = delayField.getInt(assignor);
        for (String m : order) {
            @SuppressWarnings("unchecked")
            ExtendedAssignment a = new ExtendedAssignment((short) 2, (short) 0, leader, "http://" + leader + ":8083/", offset,
                    (Collection<String>) newlyC.invoke(cluster, m), (Collection<ConnectorTaskId>) newlyT.invoke(cluster, m),
                    (Collection<String>) revokedC.invoke(cluster, m), (Collection<ConnectorTaskId>) revokedT.invoke(cluster, m), delay);
            ByteBuffer bytes = IncrementalCooperativeConnectProtocol.serializeAssignment(a, true);
            System.out.println("expect " + m + " " + hex(bytes));
            if (failing.contains(m)) continue;
            ExtendedAssignment received = IncrementalCooperativeConnectProtocol.deserializeAssignment(bytes);
            ExtendedAssignment previous = held.get(m);
            if (previous != null) {
                previous.connectors().removeAll(received.revokedConnectors());
                previous.tasks().removeAll(received.revokedTasks());
                received.connectors().addAll(previous.connectors());
                received.tasks().addAll(previous.tasks());
            }
            held.put(m, received);
        }
        System.out.println("state " + delay + " " + scheduledField.getLong(assignor));
        lastCompleted = generation;
        return this;
    }
    Sim rounds(int n) throws Exception { for (int i = 0; i < n; i++) round(); return this; }
}

// A worker joins a loaded one: revoke, then assign (two rounds), then a third joins.
{ new Sim("join_two_rounds", 300000).join("worker-a-11").connector("mirror-source", 4).connector("heartbeats", 4)
    .round().join("worker-b-22").rounds(3).join("connect-3-f00d").rounds(3); }

// A worker leaves: its work is held for the delay, then goes to a returning (new id) worker.
{ new Sim("lost_then_returns", 300000).join("w1").join("w2").join("w3").connector("c1", 3).connector("c2", 3).connector("c3", 3)
    .rounds(3).leave("w2").advance(1000).round().advance(60000).round().join("w2-again").advance(10000).round()
    .advance(230000).round().rounds(3); }

// A worker leaves and never comes back: work is reassigned after the delay expires.
{ new Sim("lost_expires", 10000).join("m-1").join("m-2").join("m-3").connector("alpha", 5).connector("beta", 2)
    .rounds(3).leave("m-3").advance(5).round().advance(4000).round().advance(7000).round().rounds(3); }

// maxDelay 0: lost work is reassigned at once; successive revocations are not delayed.
{ new Sim("no_delay", 0).join("x").connector("a", 3).connector("b", 3).connector("c", 3).round()
    .join("y").join("z").rounds(3).leave("x").rounds(3); }

// Connector deleted, task count lowered and raised, connector added.
{ new Sim("config_changes", 300000).join("node-1").join("node-2").connector("keep", 4).connector("drop", 2).connector("shrink", 6)
    .rounds(2).delete("drop").round().connector("shrink", 2).round().connector("shrink", 5).connector("added", 3).rounds(3); }

// Two members report the same work (a missed sync); every copy is revoked and then reassigned.
{ new Sim("duplicates", 300000).join("dup-a").join("dup-b").connector("s1", 2).connector("s2", 2).rounds(2)
    .duplicate("dup-a", "dup-b").rounds(3); }

// A member misses its assignment; the leader reassigns the missing work as new.
{ new Sim("failed_sync", 300000).join("fs-1").join("fs-2").connector("k", 4).round().round("fs-2").rounds(3); }

// New leader (generation mismatch) forgets previous assignments.
{ new Sim("generation_mismatch", 300000).join("g1").join("g2").connector("q", 4).rounds(2).leave("g2").generationMismatch().rounds(3); }

// Many connectors and workers joining one at a time, with successive revocations backing off.
{
Sim big = new Sim("many_workers_backoff", 300000);
big.join("connect-10.0.0.1-8083-0c1b");
for (int i = 0; i < 12; i++) big.connector("mm2-" + i + "->target.MirrorSourceConnector", 1 + (i % 4));
big.round();
String[] joiners = {"connect-10.0.0.2-8083-77aa", "connect-10.0.0.3-8083-1f2e", "connect-10.0.0.4-8083-9d0c", "connect-10.0.0.5-8083-44b1"};
for (String j : joiners) { big.join(j).round(); }
big.advance(40).round().advance(1600).round().advance(64000).rounds(3);
}
// Seeded random walks: joins, departures, config changes, missed syncs, clock jumps.
{
for (long seed : new long[] {1L, 2L, 3L, 4L}) {
    Random rnd = new Random(seed);
    Sim sim = new Sim("random_" + seed, seed == 4L ? 0 : 30000);
    int workers = 0, connectors = 0;
    sim.join("rw-" + (workers++) + "-" + Integer.toHexString(rnd.nextInt()));
    for (int i = 0; i < 3; i++) sim.connector("conn-" + (connectors++), 1 + rnd.nextInt(5));
    for (int step = 0; step < 45; step++) {
        int op = rnd.nextInt(10);
        if (op == 0) sim.join("rw-" + (workers++) + "-" + Integer.toHexString(rnd.nextInt()));
        else if (op == 1 && sim.order.size() > 1) sim.leave(sim.order.get(1 + rnd.nextInt(sim.order.size() - 1)));
        else if (op == 2) sim.connector("conn-" + (connectors++), rnd.nextInt(6));
        else if (op == 3 && !sim.config.isEmpty()) sim.delete(new ArrayList<>(sim.config.keySet()).get(rnd.nextInt(sim.config.size())));
        else if (op == 4 && !sim.config.isEmpty()) sim.connector(new ArrayList<>(sim.config.keySet()).get(rnd.nextInt(sim.config.size())), rnd.nextInt(7));
        else if (op == 5) sim.advance(rnd.nextInt(40000));
        if (op == 6 && sim.order.size() > 1) sim.round(sim.order.get(rnd.nextInt(sim.order.size())));
        else sim.round();
    }
}
}
/exit
