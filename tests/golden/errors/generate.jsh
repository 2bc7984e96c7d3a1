// Golden scenarios for retries and error tolerance, produced by the Kafka jars' RetryWithToleranceOperator.
//
// Usage (from the repository root; KAFKA_LIBS is the "libs" folder of the Kafka distribution):
//   jshell -q --class-path "$KAFKA_LIBS/*" tests/golden/errors/generate.jsh > tests/golden/errors/scenarios.json
//
// Each scenario runs one operation (or one executeFailed) on a fresh operator with a manual clock: the
// operation raises the listed errors in turn ("retriable": RetriableException, "other": DataException)
// and then returns "ok". Backoff waits go through a latch that advances the clock by the wait instead
// of sleeping. Recorded: the waits, the result, the exception the operator threw, what its reporter
// saw, and every task-error-metrics value.
import java.util.*;
import java.util.concurrent.*;
import java.util.function.Supplier;
import java.lang.reflect.Constructor;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.connect.errors.*;
import org.apache.kafka.connect.runtime.ConnectMetrics;
import org.apache.kafka.connect.runtime.standalone.StandaloneConfig;
import org.apache.kafka.connect.runtime.errors.*;
import org.apache.kafka.connect.util.ConnectorTaskId;

class ManualTime implements Time {
    long now = 0;
    public long milliseconds() { return now; }
    public long nanoseconds() { return now * 1_000_000L; }
    public void sleep(long ms) { now += ms; }
    public void waitObject(Object o, Supplier<Boolean> c, long d) { throw new UnsupportedOperationException(); }
}

class ClockLatch extends CountDownLatch {
    final ManualTime time; final List<Long> waits = new ArrayList<>();
    ClockLatch(ManualTime time) { super(1); this.time = time; }
    @Override public boolean await(long t, TimeUnit u) { waits.add(t); time.now += t; return false; }
}

ObjectMapper MAPPER = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
Map<String, String> WORKER = Map.of(
    "bootstrap.servers", "127.0.0.1:9",
    "key.converter", "org.apache.kafka.connect.storage.StringConverter",
    "value.converter", "org.apache.kafka.connect.storage.StringConverter",
    "offset.storage.file.filename", "/dev/null");
Constructor<?> CTOR = RetryWithToleranceOperator.class.getDeclaredConstructor(
    long.class, long.class, ToleranceType.class, Time.class, ErrorHandlingMetrics.class, CountDownLatch.class);
CTOR.setAccessible(true);

Map<String, Object> run(String name, long timeout, long maxDelay, String tolerance, String stage,
                        List<String> errors, boolean executeFailed) throws Exception {
    ManualTime time = new ManualTime();
    time.now = 1_000_000;
    ConnectMetrics metrics = new ConnectMetrics("w", new StandaloneConfig(WORKER), Time.SYSTEM, "cluster");
    ErrorHandlingMetrics errorMetrics = new ErrorHandlingMetrics(new ConnectorTaskId("c", 0), metrics);
    ClockLatch latch = new ClockLatch(time);
    @SuppressWarnings("unchecked")
    RetryWithToleranceOperator<String> op = (RetryWithToleranceOperator<String>) CTOR.newInstance(
        timeout, maxDelay, ToleranceType.valueOf(tolerance.toUpperCase()), time, errorMetrics, latch);
    List<Map<String, Object>> reported = new ArrayList<>();
    op.reporters(List.of(ctx -> {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("stage", ctx.stage().name());
        r.put("attempt", ctx.attempt());
        r.put("error", ctx.error() == null ? null : ctx.error().getClass().getSimpleName());
        reported.add(r);
        return CompletableFuture.completedFuture(null);
    }));
    Iterator<String> plan = errors.iterator();
    int[] calls = {0};
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("name", name);
    out.put("retry_timeout_ms", timeout);
    out.put("retry_delay_max_ms", maxDelay);
    out.put("tolerance", tolerance);
    out.put("stage", stage);
    out.put("errors", errors);
    out.put("execute_failed", executeFailed);
    ProcessingContext<String> context = new ProcessingContext<>("record");
    try {
        Object result;
        if (executeFailed) {
            op.executeFailed(context, Stage.valueOf(stage), Object.class, new DataException("failed outside"));
            result = "reported";
        } else {
            result = op.execute(context, () -> {
                calls[0]++;
                if (plan.hasNext()) {
                    String e = plan.next();
                    if (e.equals("retriable")) throw new RetriableException("retriable " + calls[0]);
                    throw new DataException("other " + calls[0]);
                }
                return "ok";
            }, Stage.valueOf(stage), Object.class);
        }
        out.put("result", result);
        out.put("raised", null);
    } catch (org.apache.kafka.connect.errors.ConnectException e) {
        out.put("result", null);
        out.put("raised", e.getMessage());
        out.put("raised_cause", e.getCause() == null ? null : e.getCause().getClass().getSimpleName());
    }
    out.put("calls", calls[0]);
    out.put("waits_ms", latch.waits);
    out.put("elapsed_ms", time.now - 1_000_000);
    out.put("context_failed", context.failed());
    out.put("reported", reported);
    Map<String, Object> values = new TreeMap<>();
    for (Map.Entry<MetricName, ? extends org.apache.kafka.common.Metric> m : metrics.metrics().metrics().entrySet()) {
        if (m.getKey().group().equals("task-error-metrics")) {
            Object v = m.getValue().metricValue();
            values.put(m.getKey().name(), m.getKey().name().equals("last-error-timestamp") ? (((Number) v).longValue() > 0) : v);
        }
    }
    out.put("metrics", values);
    metrics.stop();
    return out;
}

List<Map<String, Object>> all = new ArrayList<>();
List<String> R1 = List.of("retriable");
List<String> R3 = List.of("retriable", "retriable", "retriable");
List<String> R8 = Collections.nCopies(8, "retriable");
List<String> R20 = Collections.nCopies(20, "retriable");
all.add(run("succeeds", 6000, 60000, "none", "VALUE_CONVERTER", List.<String>of(), false));
all.add(run("retried-once", 6000, 60000, "none", "VALUE_CONVERTER", R1, false));
all.add(run("retried-thrice", 6000, 60000, "all", "TRANSFORMATION", R3, false));
all.add(run("retried-forever", -1, 60000, "none", "KEY_CONVERTER", R8, false));
all.add(run("deadline-all", 6000, 60000, "all", "TRANSFORMATION", R20, false));
all.add(run("deadline-none", 6000, 60000, "none", "TRANSFORMATION", R20, false));
all.add(run("no-retry-all", 0, 60000, "all", "VALUE_CONVERTER", R1, false));
all.add(run("no-retry-none", 0, 60000, "none", "VALUE_CONVERTER", R1, false));
all.add(run("other-error-all", 6000, 60000, "all", "HEADER_CONVERTER", List.of("other"), false));
all.add(run("other-error-none", 6000, 60000, "none", "HEADER_CONVERTER", List.of("other"), false));
all.add(run("retriable-then-other-all", 6000, 60000, "all", "TRANSFORMATION", List.of("retriable", "other"), false));
all.add(run("other-error-in-put-all", 6000, 60000, "all", "TASK_PUT", List.of("other"), false));
all.add(run("retriable-in-poll-all", 0, 60000, "all", "TASK_POLL", R1, false));
all.add(run("retriable-in-produce-none", 1000, 60000, "none", "KAFKA_PRODUCE", R20, false));
all.add(run("execute-failed-all", 0, 60000, "all", "TASK_PUT", List.<String>of(), true));
all.add(run("execute-failed-none", 0, 60000, "none", "KAFKA_PRODUCE", List.<String>of(), true));
all.add(run("delay-capped-by-deadline", 1000, 60000, "all", "VALUE_CONVERTER", R20, false));
Map<String, Object> doc = new LinkedHashMap<>();
doc.put("kafka", org.apache.kafka.common.utils.AppInfoParser.getVersion());
doc.put("scenarios", all);
System.out.println(MAPPER.writeValueAsString(doc));
/exit
