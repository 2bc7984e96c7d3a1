// Group clients for the group offset sync tests, run as a single-file program from the Kafka 4.3.1 jars
// (java -cp "<libs>/*" GroupClients.java MODE ...). aiokafka speaks only the classic group protocol;
// these are Java's own clients for the consumer protocol (KIP-848) and for share groups (KIP-932).
//
//   churn BOOTSTRAP SECONDS RECORDS TOPIC/GROUP/PROTOCOL...
//       For each TOPIC/GROUP/PROTOCOL, in a thread of its own, until SECONDS have passed: a consumer of
//       GROUP (group.protocol=PROTOCOL) subscribed to TOPIC joins, reads up to RECORDS records from the
//       group's committed offsets, commits its positions and leaves; then again. Prints
//       "GROUP visit N committed {tp=offset, ...}" per visit and "GROUP visits N" at the end.
//   share BOOTSTRAP TOPIC GROUP RECORDS SECONDS
//       A share consumer of GROUP reads (and accepts) RECORDS records, commits its acknowledgements,
//       prints "acknowledged N", then stays in the group polling for SECONDS (0: leaves at once).
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

public class GroupClients {
    static Properties base(String bootstrap, String group) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        props.put("group.id", group);
        props.put("key.deserializer", ByteArrayDeserializer.class.getName());
        props.put("value.deserializer", ByteArrayDeserializer.class.getName());
        return props;
    }

    static void churn(String bootstrap, String topic, String group, String protocol, long deadline, int records) {
        int visits = 0;
        while (System.currentTimeMillis() < deadline) {
            Properties props = base(bootstrap, group);
            props.put("group.protocol", protocol);
            props.put("enable.auto.commit", "false");
            props.put("auto.offset.reset", "earliest");
            props.put("max.poll.records", Integer.toString(records));
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
                consumer.subscribe(List.of(topic));
                long joinEnd = System.currentTimeMillis() + 15000;
                while (System.currentTimeMillis() < joinEnd && consumer.assignment().isEmpty()) {
                    consumer.poll(Duration.ofMillis(100));
                }
                long readEnd = System.currentTimeMillis() + 1000;
                int read = 0;
                while (System.currentTimeMillis() < readEnd && read < records) {
                    read += consumer.poll(Duration.ofMillis(100)).count();
                }
                Map<TopicPartition, OffsetAndMetadata> positions = new HashMap<>();
                for (TopicPartition tp : consumer.assignment()) {
                    positions.put(tp, new OffsetAndMetadata(consumer.position(tp), "churn"));
                }
                consumer.commitSync(positions);
                visits++;
                System.out.println(group + " visit " + visits + " committed " + positions);
            }
        }
        System.out.println(group + " visits " + visits);
    }

    static void share(String bootstrap, String topic, String group, int records, long seconds) {
        try (KafkaShareConsumer<byte[], byte[]> consumer = new KafkaShareConsumer<>(base(bootstrap, group))) {
            consumer.subscribe(List.of(topic));
            int read = 0;
            long readEnd = System.currentTimeMillis() + 60000;
            while (read < records && System.currentTimeMillis() < readEnd) {
                for (ConsumerRecord<byte[], byte[]> ignored : consumer.poll(Duration.ofMillis(200))) {
                    read++;
                }
                consumer.commitSync();
            }
            System.out.println("acknowledged " + read);
            long stayEnd = System.currentTimeMillis() + seconds * 1000;
            while (System.currentTimeMillis() < stayEnd) {
                consumer.poll(Duration.ofMillis(200));
                consumer.commitSync();
            }
        }
    }

    public static void main(String[] args) throws InterruptedException {
        if (args[0].equals("churn")) {
            long deadline = System.currentTimeMillis() + Long.parseLong(args[2]) * 1000;
            int records = Integer.parseInt(args[3]);
            List<Thread> threads = new java.util.ArrayList<>();
            for (int i = 4; i < args.length; i++) {
                String[] spec = args[i].split("/");
                Thread thread = new Thread(() -> churn(args[1], spec[0], spec[1], spec[2], deadline, records));
                thread.start();
                threads.add(thread);
            }
            for (Thread thread : threads) {
                thread.join();
            }
        } else if (args[0].equals("share")) {
            share(args[1], args[2], args[3], Integer.parseInt(args[4]), Long.parseLong(args[5]));
        } else {
            throw new IllegalArgumentException("unknown mode " + args[0]);
        }
    }
}
