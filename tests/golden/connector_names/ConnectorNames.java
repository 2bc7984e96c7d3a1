// Golden vectors for connector names: what the Kafka 4.3.1 jars do with a name given to
// POST /connectors or PUT /connectors/{name}/config.
//
// Usage (from the repository root; KAFKA_LIBS is the "libs" folder of the Kafka distribution):
//   java -cp "$KAFKA_LIBS/*" tests/golden/connector_names/ConnectorNames.java \
//     tests/golden/connector_names/cases.json tests/golden/connector_names/vectors.json
//
// For every name of cases.json it records String.trim(), the "name" key's validator of
// ConnectorConfig's ConfigDef (on the name as given and on the trimmed name), the errors of
// ConfigDef.validate for {"name": <name>}, the bytes StringSerializer writes (the config topic key)
// and what StringDeserializer reads back from them, the bytes Jackson writes for the name as a JSON
// string (REST responses), and the Location URI of a created connector. For every body it records
// what Jackson makes of CreateConnectorRequest's "name". The output is pure ASCII (every non-ASCII
// char, lone surrogates included, is a \\u escape), so it is lossless.

import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import jakarta.ws.rs.core.UriBuilder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.connect.runtime.ConnectorConfig;
import org.apache.kafka.connect.runtime.rest.entities.CreateConnectorRequest;

public class ConnectorNames {
    private static final String NAME = ConnectorConfig.NAME_CONFIG;
    private static final HexFormat HEX = HexFormat.of();

    public static void main(String[] args) throws Exception {
        ObjectMapper reader = new ObjectMapper();
        JsonNode cases = reader.readTree(Files.readAllBytes(Path.of(args[0])));
        ConfigDef def = ConnectorConfig.configDef();
        ConfigDef.Validator validator = def.configKeys().get(NAME).validator;

        Map<String, Object> out = new LinkedHashMap<>();
        out.put("kafka_version", AppInfoParser.getVersion());
        out.put("java_version", System.getProperty("java.version"));
        out.put("validator", validator.toString());

        List<Object> names = new ArrayList<>();
        for (JsonNode c : cases.get("names")) {
            String name = buildName(c);
            String trimmed = name.trim();
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("id", c.get("id").asText());
            if (c.has("parts")) {
                row.put("parts", c.get("parts"));
            } else {
                row.put("name", name);
            }
            row.put("utf16_length", name.length());
            row.put("trimmed", trimmed);
            row.put("validator", ensureValid(validator, name));
            row.put("validator_on_trimmed", ensureValid(validator, trimmed));
            row.put("config_def_errors", configDefErrors(def, name));
            byte[] key = new StringSerializer().serialize("configs", name);
            row.put("utf8_hex", HEX.formatHex(key));
            row.put("utf8_read_back", new StringDeserializer().deserialize("configs", key));
            row.put("json_hex", HEX.formatHex(reader.writeValueAsBytes(name)));
            row.put("location", location(trimmed));
            names.add(row);
        }
        out.put("names", names);

        List<Object> bodies = new ArrayList<>();
        for (JsonNode b : cases.get("bodies")) {
            byte[] body = b.has("body_hex")
                ? HEX.parseHex(b.get("body_hex").asText())
                : b.get("body").asText().getBytes(StandardCharsets.UTF_8);
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("id", b.get("id").asText());
            row.put("body_hex", HEX.formatHex(body));
            try {
                CreateConnectorRequest request = reader.readValue(body, CreateConnectorRequest.class);
                row.put("name", request.name());
                row.put("error", null);
            } catch (JsonProcessingException e) {
                row.put("name", null);
                row.put("error", e.getClass().getName() + ": " + e.getOriginalMessage());
            }
            bodies.add(row);
        }
        out.put("bodies", bodies);

        ObjectMapper writer = JsonMapper.builder()
            .enable(JsonWriteFeature.ESCAPE_NON_ASCII)
            .enable(SerializationFeature.INDENT_OUTPUT)
            .build();
        Files.write(Path.of(args[1]), (writer.writeValueAsString(out) + "\n").getBytes(StandardCharsets.US_ASCII));
    }

    private static String buildName(JsonNode c) {
        if (!c.has("parts")) {
            return c.get("name").asText();
        }
        StringBuilder sb = new StringBuilder();
        for (JsonNode part : c.get("parts")) {
            sb.append(part.get(0).asText().repeat(part.get(1).asInt()));
        }
        return sb.toString();
    }

    private static String ensureValid(ConfigDef.Validator validator, String value) {
        try {
            validator.ensureValid(NAME, value);
            return null;
        } catch (ConfigException e) {
            return e.getMessage();
        }
    }

    private static List<String> configDefErrors(ConfigDef def, String name) {
        Map<String, String> props = new LinkedHashMap<>();
        props.put(NAME, name);
        for (ConfigValue value : def.validate(props)) {
            if (value.name().equals(NAME)) {
                return value.errorMessages();
            }
        }
        throw new IllegalStateException("no ConfigValue for " + NAME);
    }

    private static String location(String name) {
        try {
            return UriBuilder.fromUri("/connectors").path(name).build().toString();
        } catch (RuntimeException e) {
            return "error: " + e.getClass().getName() + ": " + e.getMessage();
        }
    }
}
