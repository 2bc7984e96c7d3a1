// The Java twin of tests/plugins/flaky.py, loaded by a Java worker from its plugin.path in
// tests/compat/test_error_retries_compat.py: each record whose value (as text) is one of "values"
// fails with a RetriableException the first "failures" times this instance sees it, then passes.
package org.pyconnect.test;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.errors.RetriableException;
import org.apache.kafka.connect.transforms.Transformation;

public class FlakyTransformation<R extends ConnectRecord<R>> implements Transformation<R> {
    private static final ConfigDef CONFIG_DEF = new ConfigDef()
        .define("values", ConfigDef.Type.LIST, "", ConfigDef.Importance.HIGH, "values that fail")
        .define("failures", ConfigDef.Type.INT, 1, ConfigDef.Importance.HIGH, "failures per value")
        .define("attempts.file", ConfigDef.Type.STRING, "", ConfigDef.Importance.LOW, "unused here");

    private final Set<String> values = new HashSet<>();
    private final Map<String, Integer> seen = new HashMap<>();
    private int failures;

    @Override
    public void configure(Map<String, ?> configs) {
        Map<String, Object> parsed = CONFIG_DEF.parse(configs);
        @SuppressWarnings("unchecked")
        List<String> list = (List<String>) parsed.get("values");
        values.addAll(list);
        failures = (Integer) parsed.get("failures");
    }

    @Override
    public R apply(R record) {
        String value = String.valueOf(record.value());
        if (!values.contains(value)) return record;
        int count = seen.merge(value, 1, Integer::sum);
        if (count <= failures) {
            throw new RetriableException("flaky on demand: " + value + " (attempt " + count + ")");
        }
        return record;
    }

    @Override
    public ConfigDef config() {
        return CONFIG_DEF;
    }

    @Override
    public void close() {
    }
}
