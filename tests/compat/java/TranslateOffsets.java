import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeSet;

import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.mirror.RemoteClusterUtils;

/**
 * Asks Java's RemoteClusterUtils about the cluster a consumer group fails over to, and writes the answers
 * to a file, one tab-separated fact per line (stdout belongs to the client's logging):
 *
 * <pre>
 * hops            &lt;replicationHops(remote alias)&gt;
 * upstream        &lt;alias&gt;             (one line per upstreamClusters() element, sorted)
 * checkpointTopic &lt;topic&gt;             (checkpointTopics(), sorted)
 * heartbeatTopic  &lt;topic&gt;             (heartbeatTopics(), sorted)
 * offset          &lt;topic&gt; &lt;partition&gt; &lt;offset&gt; &lt;metadata&gt;   (translateOffsets(...))
 * </pre>
 *
 * Usage: TranslateOffsets BOOTSTRAP REMOTE_ALIAS GROUP TIMEOUT_MS OUTPUT_FILE [key=value ...]; the extra
 * pairs go into the MirrorClientConfig (e.g. replication.policy.separator=_).
 */
public final class TranslateOffsets {

    private TranslateOffsets() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 5) {
            System.err.println("usage: TranslateOffsets BOOTSTRAP REMOTE_ALIAS GROUP TIMEOUT_MS OUTPUT_FILE [key=value ...]");
            System.exit(2);
        }
        Map<String, Object> props = new HashMap<>();
        props.put("bootstrap.servers", args[0]);
        for (int i = 5; i < args.length; i++) {
            int split = args[i].indexOf('=');
            props.put(args[i].substring(0, split), args[i].substring(split + 1));
        }
        String remoteAlias = args[1];
        String group = args[2];
        Duration timeout = Duration.ofMillis(Long.parseLong(args[3]));

        Map<TopicPartition, OffsetAndMetadata> offsets =
            RemoteClusterUtils.translateOffsets(props, remoteAlias, group, timeout);
        int hops = RemoteClusterUtils.replicationHops(props, remoteAlias);
        TreeSet<String> upstream = new TreeSet<>(RemoteClusterUtils.upstreamClusters(props));
        TreeSet<String> checkpointTopics = new TreeSet<>(RemoteClusterUtils.checkpointTopics(props));
        TreeSet<String> heartbeatTopics = new TreeSet<>(RemoteClusterUtils.heartbeatTopics(props));

        try (PrintWriter out = new PrintWriter(args[4], StandardCharsets.UTF_8)) {
            out.println("hops\t" + hops);
            upstream.forEach(alias -> out.println("upstream\t" + alias));
            checkpointTopics.forEach(topic -> out.println("checkpointTopic\t" + topic));
            heartbeatTopics.forEach(topic -> out.println("heartbeatTopic\t" + topic));
            for (Map.Entry<TopicPartition, OffsetAndMetadata> entry : offsets.entrySet()) {
                out.println("offset\t" + entry.getKey().topic() + "\t" + entry.getKey().partition() + "\t"
                    + entry.getValue().offset() + "\t" + entry.getValue().metadata());
            }
        }
    }
}
