// Golden vectors for the single message transformations and predicates, produced by the Kafka jars.
//
// Usage (from the repository root; KAFKA_LIBS is the "libs" folder of the Kafka distribution):
//   jshell -q -R-Duser.timezone=UTC --class-path "$KAFKA_LIBS/*" tests/golden/transforms/generate.jsh \
//     > tests/golden/transforms/vectors.json
//
// Records are described with an envelope JsonConverter (schemas.enable=true): "key", "value" and each
// header value are the JSON text that converter writes for (schema, value). Inputs are built by reading
// the same envelopes back, so tests/unit/test_transforms_golden.py can rebuild every input from this file.
import java.util.*;
import java.nio.charset.StandardCharsets;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.SerializationFeature;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.connect.data.*;
import org.apache.kafka.connect.header.*;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.transforms.Transformation;
import org.apache.kafka.connect.transforms.predicates.Predicate;
import org.apache.kafka.connect.runtime.ConnectorConfig;
import org.apache.kafka.connect.runtime.SourceConnectorConfig;
import org.apache.kafka.connect.runtime.isolation.Plugins;

ObjectMapper MAPPER = new ObjectMapper();
JsonConverter ENVELOPE = new JsonConverter();
ENVELOPE.configure(Map.of("schemas.enable", "true"), false);
String T = "org.apache.kafka.connect.transforms.";

String enc(Schema s, Object v) {
    byte[] b = ENVELOPE.fromConnectData("t", s, v);
    return b == null ? null : new String(b, StandardCharsets.UTF_8);
}
SchemaAndValue dec(String json) {
    if (json == null) return new SchemaAndValue(null, null);
    return ENVELOPE.toConnectData("t", json.getBytes(StandardCharsets.UTF_8));
}
Map<String, Object> describe(SourceRecord r) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("topic", r.topic());
    m.put("partition", r.kafkaPartition());
    m.put("timestamp", r.timestamp());
    m.put("key", enc(r.keySchema(), r.key()));
    m.put("value", enc(r.valueSchema(), r.value()));
    List<Object> hs = new ArrayList<>();
    for (Header h : r.headers()) {
        Map<String, Object> hm = new LinkedHashMap<>();
        hm.put("key", h.key());
        hm.put("value", enc(h.schema(), h.value()));
        hs.add(hm);
    }
    m.put("headers", hs);
    return m;
}
// An input record: topic, partition, timestamp, key/value envelopes, headers as key/envelope pairs.
Map<String, Object> rec(String topic, Integer partition, Long ts, String key, String value, String... headers) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("topic", topic); m.put("partition", partition); m.put("timestamp", ts);
    m.put("key", key); m.put("value", value);
    List<Object> hs = new ArrayList<>();
    for (int i = 0; i < headers.length; i += 2) {
        Map<String, Object> hm = new LinkedHashMap<>();
        hm.put("key", headers[i]); hm.put("value", headers[i + 1]);
        hs.add(hm);
    }
    m.put("headers", hs);
    return m;
}
SourceRecord build(Map<String, Object> in) {
    ConnectHeaders headers = new ConnectHeaders();
    for (Object o : (List<?>) in.get("headers")) {
        Map<?, ?> hm = (Map<?, ?>) o;
        SchemaAndValue sv = dec((String) hm.get("value"));
        headers.add((String) hm.get("key"), sv);
    }
    SchemaAndValue k = dec((String) in.get("key"));
    SchemaAndValue v = dec((String) in.get("value"));
    return new SourceRecord(Map.of("p", 0), Map.of("o", 1), (String) in.get("topic"), (Integer) in.get("partition"),
        k.schema(), k.value(), v.schema(), v.value(), (Long) in.get("timestamp"), headers);
}
Map<String, String> conf(String... kv) {
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) m.put(kv[i], kv[i + 1]);
    return m;
}
Map<String, Object> error(Throwable e) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("class", e.getClass().getSimpleName());
    m.put("message", e.getMessage());
    return m;
}

List<Object> CASES = new ArrayList<>();
@SuppressWarnings("unchecked")
void tx(String id, String cls, Map<String, String> config, Map<String, Object> input) {
    Map<String, Object> c = new LinkedHashMap<>();
    c.put("id", id); c.put("class", cls); c.put("config", config); c.put("input", input);
    Transformation<SourceRecord> t;
    try {
        t = (Transformation<SourceRecord>) Class.forName(cls).getDeclaredConstructor().newInstance();
        t.configure(config);
    } catch (Exception e) {
        c.put("configure_error", error(e)); CASES.add(c); return;
    }
    SourceRecord out = null;
    try {
        out = t.apply(build(input));
        c.put("dropped", out == null);
    } catch (Exception e) {
        c.put("error", error(e));
    }
    // A result the envelope converter cannot write (e.g. a logical name on a cast schema) is recorded apart.
    if (out != null) {
        try { c.put("output", describe(out)); } catch (Exception e) { c.put("output_error", error(e)); }
    }
    t.close();
    CASES.add(c);
}
List<Object> PREDICATES = new ArrayList<>();
@SuppressWarnings("unchecked")
void pred(String id, String cls, Map<String, String> config, Map<String, Object> input) {
    Map<String, Object> c = new LinkedHashMap<>();
    c.put("id", id); c.put("class", cls); c.put("config", config); c.put("input", input);
    try {
        Predicate<SourceRecord> p = (Predicate<SourceRecord>) Class.forName(cls).getDeclaredConstructor().newInstance();
        p.configure(config);
        c.put("result", p.test(build(input)));
        p.close();
    } catch (Exception e) {
        c.put("configure_error", error(e));
    }
    PREDICATES.add(c);
}

// ------------------------------------------------------------------------------------------------
// Inputs
String PERSON_SCHEMA = "{\"type\":\"struct\",\"name\":\"person\",\"version\":3,\"doc\":\"a person\",\"fields\":[" +
      "{\"field\":\"id\",\"type\":\"int32\",\"optional\":false}," +
      "{\"field\":\"name\",\"type\":\"string\",\"optional\":true}," +
      "{\"field\":\"score\",\"type\":\"double\",\"optional\":true}," +
      "{\"field\":\"active\",\"type\":\"boolean\",\"optional\":true}," +
      "{\"field\":\"level\",\"type\":\"int16\",\"optional\":true,\"default\":7}," +
      "{\"field\":\"tags\",\"type\":\"array\",\"items\":{\"type\":\"string\"},\"optional\":true}," +
      "{\"field\":\"address\",\"type\":\"struct\",\"optional\":true,\"fields\":[" +
         "{\"field\":\"city\",\"type\":\"string\",\"optional\":true}," +
         "{\"field\":\"zip\",\"type\":\"int32\",\"optional\":true}]}," +
      "{\"field\":\"born\",\"type\":\"int64\",\"name\":\"org.apache.kafka.connect.data.Timestamp\",\"version\":1,\"optional\":true}," +
      "{\"field\":\"day\",\"type\":\"int32\",\"name\":\"org.apache.kafka.connect.data.Date\",\"version\":1,\"optional\":true}," +
      "{\"field\":\"price\",\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\",\"version\":1,\"parameters\":{\"scale\":\"2\"},\"optional\":true}" +
      "]}";
String person(String payload) { return "{\"schema\":" + PERSON_SCHEMA + ",\"payload\":" + payload + "}"; }
String PERSON = person("{\"id\":42,\"name\":\"Ada\",\"score\":9.5,\"active\":true,\"level\":null,\"tags\":[\"a\",\"b\"]," +
      "\"address\":{\"city\":\"Paris\",\"zip\":75001},\"born\":1700000000123,\"day\":19000,\"price\":\"MDk=\"}");
String PERSON_NULLS = person("{\"id\":1,\"name\":null,\"score\":null,\"active\":null,\"level\":null,\"tags\":null,\"address\":null,\"born\":null,\"day\":null,\"price\":null}");
String MAP = "{\"schema\":null,\"payload\":{\"id\":42,\"name\":\"Ada\",\"score\":9.5,\"active\":true,\"tags\":[\"a\",\"b\"],\"address\":{\"city\":\"Paris\",\"zip\":75001},\"born\":1700000000123,\"when\":\"2023-11-14 22:13:20\"}}";
String KEY_STR = "{\"schema\":{\"type\":\"string\",\"optional\":false},\"payload\":\"k1\"}";
String KEY_INT = "{\"schema\":{\"type\":\"int64\",\"optional\":false},\"payload\":123}";
String KEY_MAP = "{\"schema\":null,\"payload\":{\"kid\":7}}";
String NULL_VALUE = null;
String STR_VALUE = "{\"schema\":{\"type\":\"string\",\"optional\":true},\"payload\":\"hello\"}";
String SCHEMALESS_STR = "{\"schema\":null,\"payload\":\"hello\"}";
String H_STR = "{\"schema\":{\"type\":\"string\",\"optional\":false},\"payload\":\"v\"}";
String H_INT = "{\"schema\":{\"type\":\"int32\",\"optional\":false},\"payload\":5}";
long TS = 1700000000123L;

Map<String, Object> R_PERSON = rec("orders", 3, TS, KEY_STR, PERSON, "trace", H_STR, "n", H_INT, "trace", H_INT);
Map<String, Object> R_PERSON_NULLS = rec("orders", 0, TS, KEY_INT, PERSON_NULLS);
Map<String, Object> R_MAP = rec("orders", 1, TS, KEY_MAP, MAP, "trace", H_STR);
Map<String, Object> R_TOMB = rec("orders", 2, TS, KEY_STR, NULL_VALUE);
Map<String, Object> R_STR = rec("orders", null, null, null, STR_VALUE);
Map<String, Object> R_SCHEMALESS_STR = rec("orders", 0, TS, null, SCHEMALESS_STR);
Map<String, Object> R_OTHER = rec("other.topic", 0, 0L, KEY_STR, STR_VALUE, "drop", H_STR);

// ------------------------------------------------------------------------------------------------
// Filter, routers
tx("filter", T + "Filter", conf(), R_PERSON);
tx("regex.rename", T + "RegexRouter", conf("regex", "orders", "replacement", "mirrored.orders"), R_PERSON);
tx("regex.groups", T + "RegexRouter", conf("regex", "(\\w+)\\.(\\w+)", "replacement", "$2-$1"), R_OTHER);
tx("regex.named", T + "RegexRouter", conf("regex", "(?<a>\\w+)\\.(?<b>\\w+)", "replacement", "${b}_x_$1\\$"), R_OTHER);
tx("regex.nomatch", T + "RegexRouter", conf("regex", "order", "replacement", "x"), R_PERSON);
tx("regex.lazy", T + "RegexRouter", conf("regex", "(o.*?)", "replacement", "[$1]"), R_PERSON);
tx("regex.badgroup", T + "RegexRouter", conf("regex", "orders", "replacement", "$3"), R_PERSON);
tx("regex.missing", T + "RegexRouter", conf("regex", "orders"), R_PERSON);
tx("regex.invalid", T + "RegexRouter", conf("regex", "(", "replacement", "x"), R_PERSON);
tx("tsrouter.default", T + "TimestampRouter", conf(), R_PERSON);
tx("tsrouter.format", T + "TimestampRouter", conf("topic.format", "${timestamp}/${topic}/${topic}", "timestamp.format", "yyyy-MM-dd'T'HH:mm:ss.SSS EEE MMM a"), R_PERSON);
tx("tsrouter.notimestamp", T + "TimestampRouter", conf(), R_STR);

String[] ROUTER_PATTERNS = {"yy-M-d H:m:s", "yyyy.DDD", "hh:mm a, EEEE d MMMM yyyy", "k K h H", "yyyyMMddHHmmssSSS",
    "'T'''yyyy''", "Z X z zzzz", "G yyyy", "S SS SSS SSSS", "u E EEE", "w W F", "MMM LLL"};
for (String fmt : ROUTER_PATTERNS) {
    tx("tsrouter.pattern." + fmt, T + "TimestampRouter", conf("topic.format", "${timestamp}", "timestamp.format", fmt), R_PERSON);
    tx("tsrouter.pattern.epoch." + fmt, T + "TimestampRouter", conf("topic.format", "${timestamp}", "timestamp.format", fmt), rec("t", 0, 0L, null, null));
    tx("tsrouter.pattern.midnight." + fmt, T + "TimestampRouter", conf("topic.format", "${timestamp}", "timestamp.format", fmt), rec("t", 0, 1704067200000L, null, null));
    tx("tsrouter.pattern.yearend." + fmt, T + "TimestampRouter", conf("topic.format", "${timestamp}", "timestamp.format", fmt), rec("t", 0, 1735689599999L, null, null));
    tx("tsrouter.pattern.newyear." + fmt, T + "TimestampRouter", conf("topic.format", "${timestamp}", "timestamp.format", fmt), rec("t", 0, 1640995200000L, null, null));
}
String[][] PARSED = {{"yyyyMMddHHmmss", "20231114221320"}, {"dd/MM/yy hh:mm a", "14/11/23 10:13 PM"},
    {"MMM d, yyyy", "Nov 14, 2023"}, {"yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2023-11-14T22:13:20.123+01:00"},
    {"yyyy-MM-dd HH:mm:ss", "2023-11-14 22:13"}, {"yyyy-MM-dd", "2024-02-29"}};
for (String[] p : PARSED) {
    tx("tsconv.parse." + p[0], T + "TimestampConverter$Value", conf("target.type", "unix", "format", p[0]),
        rec("t", 0, 0L, null, "{\"schema\":null,\"payload\":\"" + p[1] + "\"}"));
}

// Headers
tx("insertheader.string", T + "InsertHeader", conf("header", "h", "value.literal", "hello world"), R_PERSON);
tx("insertheader.int", T + "InsertHeader", conf("header", "h", "value.literal", "42"), R_MAP);
tx("insertheader.map", T + "InsertHeader", conf("header", "h", "value.literal", "{\"a\":1,\"b\":2}"), R_STR);
tx("insertheader.missing", T + "InsertHeader", conf("header", "h"), R_STR);
tx("dropheaders", T + "DropHeaders", conf("headers", "trace,other"), R_PERSON);
tx("dropheaders.empty", T + "DropHeaders", conf("headers", ""), R_PERSON);
for (String op : new String[] {"copy", "move"}) {
    tx("headerfrom.value." + op, T + "HeaderFrom$Value", conf("fields", "name,address", "headers", "h_name,h_addr", "operation", op), R_PERSON);
    tx("headerfrom.value.schemaless." + op, T + "HeaderFrom$Value", conf("fields", "name,missing", "headers", "h_name,h_missing", "operation", op), R_MAP);
    tx("headerfrom.key.schemaless." + op, T + "HeaderFrom$Key", conf("fields", "kid", "headers", "h_kid", "operation", op), R_MAP);
}
tx("headerfrom.default", T + "HeaderFrom$Value", conf("fields", "level", "headers", "h", "operation", "copy"), R_PERSON_NULLS);
tx("headerfrom.nodefault", T + "HeaderFrom$Value", conf("fields", "level", "headers", "h", "operation", "move", "replace.null.with.default", "false"), R_PERSON_NULLS);
tx("headerfrom.mismatch", T + "HeaderFrom$Value", conf("fields", "a,b", "headers", "h", "operation", "copy"), R_PERSON);
tx("headerfrom.badop", T + "HeaderFrom$Value", conf("fields", "a", "headers", "h", "operation", "steal"), R_PERSON);

// InsertField
tx("insertfield.value.all", T + "InsertField$Value", conf("topic.field", "t", "partition.field", "p!", "timestamp.field", "ts", "static.field", "s", "static.value", "sv"), R_PERSON);
tx("insertfield.value.schemaless", T + "InsertField$Value", conf("topic.field", "t", "partition.field", "p", "timestamp.field", "ts?", "static.field", "s", "static.value", "sv"), R_MAP);
tx("insertfield.value.tombstone", T + "InsertField$Value", conf("topic.field", "t"), R_TOMB);
tx("insertfield.value.nulls", T + "InsertField$Value", conf("topic.field", "t", "replace.null.with.default", "false"), R_PERSON_NULLS);
tx("insertfield.value.nopartition", T + "InsertField$Value", conf("partition.field", "p", "timestamp.field", "ts"), rec("t", null, null, null, PERSON));
tx("insertfield.key.schemaless", T + "InsertField$Key", conf("topic.field", "t"), R_MAP);
tx("insertfield.offset", T + "InsertField$Value", conf("offset.field", "o"), R_PERSON);
tx("insertfield.none", T + "InsertField$Value", conf(), R_PERSON);
tx("insertfield.primitive", T + "InsertField$Value", conf("topic.field", "t"), R_STR);

// ReplaceField
tx("replacefield.value", T + "ReplaceField$Value", conf("exclude", "score,tags", "renames", "name:full_name,id:ident"), R_PERSON);
tx("replacefield.include", T + "ReplaceField$Value", conf("include", "id,name,level", "exclude", "name"), R_PERSON_NULLS);
tx("replacefield.nodefault", T + "ReplaceField$Value", conf("include", "id,level", "replace.null.with.default", "false"), R_PERSON_NULLS);
tx("replacefield.schemaless", T + "ReplaceField$Value", conf("exclude", "score", "renames", "name:n"), R_MAP);
tx("replacefield.key", T + "ReplaceField$Key", conf("renames", "kid:key_id"), R_MAP);
tx("replacefield.badrename", T + "ReplaceField$Value", conf("renames", "a:b:c"), R_MAP);
tx("replacefield.tombstone", T + "ReplaceField$Value", conf("exclude", "a"), R_TOMB);

// MaskField
tx("maskfield.value", T + "MaskField$Value", conf("fields", "name,score,active,level,tags,address,born,id"), R_PERSON);
tx("maskfield.schemaless", T + "MaskField$Value", conf("fields", "name,score,active,tags,address,id,absent"), R_MAP);
tx("maskfield.replacement", T + "MaskField$Value", conf("fields", "name,id,score", "replacement", "12"), R_PERSON);
tx("maskfield.replacement.nonnumber", T + "MaskField$Value", conf("fields", "id", "replacement", "abc"), R_PERSON);
tx("maskfield.replacement.boolean", T + "MaskField$Value", conf("fields", "active", "replacement", "x"), R_PERSON);
tx("maskfield.nulls", T + "MaskField$Value", conf("fields", "name,level"), R_PERSON_NULLS);
tx("maskfield.empty", T + "MaskField$Value", conf("fields", ""), R_PERSON);

// ValueToKey, HoistField, ExtractField, SetSchemaMetadata
tx("valuetokey", T + "ValueToKey", conf("fields", "id,name,level"), R_PERSON_NULLS);
tx("valuetokey.schemaless", T + "ValueToKey", conf("fields", "id,absent"), R_MAP);
tx("valuetokey.missing", T + "ValueToKey", conf("fields", "nope"), R_PERSON);
tx("valuetokey.tombstone", T + "ValueToKey", conf("fields", "id"), R_TOMB);
tx("hoist.value", T + "HoistField$Value", conf("field", "wrapped"), R_PERSON);
tx("hoist.value.schemaless", T + "HoistField$Value", conf("field", "wrapped"), R_MAP);
tx("hoist.key", T + "HoistField$Key", conf("field", "k"), R_PERSON);
tx("hoist.tombstone", T + "HoistField$Value", conf("field", "w"), R_TOMB);
tx("extract.value", T + "ExtractField$Value", conf("field", "name"), R_PERSON);
tx("extract.value.struct", T + "ExtractField$Value", conf("field", "address"), R_PERSON);
tx("extract.value.v1dotted", T + "ExtractField$Value", conf("field", "address.city"), R_MAP);
tx("extract.value.nested", T + "ExtractField$Value", conf("field", "address.city", "field.syntax.version", "v2"), R_PERSON);
tx("extract.value.nested.schemaless", T + "ExtractField$Value", conf("field", "address.zip", "field.syntax.version", "V2"), R_MAP);
tx("extract.value.nested.null", T + "ExtractField$Value", conf("field", "address.city", "field.syntax.version", "V2"), R_PERSON_NULLS);
tx("extract.value.default", T + "ExtractField$Value", conf("field", "level"), R_PERSON_NULLS);
tx("extract.value.nodefault", T + "ExtractField$Value", conf("field", "level", "replace.null.with.default", "false"), R_PERSON_NULLS);
tx("extract.value.unknown", T + "ExtractField$Value", conf("field", "nope"), R_PERSON);
tx("extract.key.schemaless", T + "ExtractField$Key", conf("field", "kid"), R_MAP);
tx("extract.tombstone", T + "ExtractField$Value", conf("field", "a"), R_TOMB);
tx("extract.badpath", T + "ExtractField$Value", conf("field", "`a.b", "field.syntax.version", "V2"), R_MAP);
tx("extract.badversion", T + "ExtractField$Value", conf("field", "a", "field.syntax.version", "V3"), R_MAP);
tx("setschema.value", T + "SetSchemaMetadata$Value", conf("schema.name", "renamed", "schema.version", "9"), R_PERSON_NULLS);
tx("setschema.key", T + "SetSchemaMetadata$Key", conf("schema.name", "key.name"), R_PERSON);
tx("setschema.nodefault", T + "SetSchemaMetadata$Value", conf("schema.version", "2", "replace.null.with.default", "false"), R_PERSON_NULLS);
tx("setschema.schemaless", T + "SetSchemaMetadata$Value", conf("schema.name", "x"), R_MAP);
tx("setschema.tombstone", T + "SetSchemaMetadata$Value", conf("schema.name", "x"), rec("t", 0, 0L, null, null));
tx("setschema.none", T + "SetSchemaMetadata$Value", conf(), R_PERSON);

// Cast
tx("cast.whole", T + "Cast$Value", conf("spec", "string"), rec("t", 0, 0L, null, "{\"schema\":{\"type\":\"int32\",\"optional\":false},\"payload\":42}"));
tx("cast.fields", T + "Cast$Value", conf("spec", "id:int8,score:int32,active:string,level:float32,name:string,price:float64,born:string,day:string"), R_PERSON);
tx("cast.fields.nulls", T + "Cast$Value", conf("spec", "id:string,level:int64,score:boolean"), R_PERSON_NULLS);
tx("cast.nodefault", T + "Cast$Value", conf("spec", "level:int64", "replace.null.with.default", "false"), R_PERSON_NULLS);
tx("cast.schemaless", T + "Cast$Value", conf("spec", "id:string,score:int16,active:int32,name:string"), R_MAP);
tx("cast.strings", T + "Cast$Value", conf("spec", "a:int32,b:float64,c:boolean,d:boolean"),
    rec("t", 0, 0L, null, "{\"schema\":null,\"payload\":{\"a\":\"17\",\"b\":\"2.5\",\"c\":\"true\",\"d\":\"nope\"}}"));
tx("cast.bytes", T + "Cast$Value", conf("spec", "b:string"),
    rec("t", 0, 0L, null, "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"field\":\"b\",\"type\":\"bytes\",\"optional\":false}],\"optional\":false},\"payload\":{\"b\":\"AAEC\"}}"));
tx("cast.key", T + "Cast$Key", conf("spec", "int32"), R_PERSON_NULLS);
tx("cast.decimal.whole", T + "Cast$Value", conf("spec", "float64"),
    rec("t", 0, 0L, null, "{\"schema\":{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\",\"version\":1,\"parameters\":{\"scale\":\"2\"},\"optional\":false},\"payload\":\"MDk=\"}"));
tx("cast.nested", T + "Cast$Value", conf("spec", "address:string"), R_PERSON);
tx("cast.badspec", T + "Cast$Value", conf("spec", "a:uint8"), R_PERSON);
tx("cast.bytestype", T + "Cast$Value", conf("spec", "a:bytes"), R_PERSON);
tx("cast.tombstone", T + "Cast$Value", conf("spec", "int64"), R_TOMB);
tx("cast.overflow", T + "Cast$Value", conf("spec", "int8"), rec("t", 0, 0L, null, "{\"schema\":{\"type\":\"int64\",\"optional\":false},\"payload\":300}"));
tx("cast.float.string", T + "Cast$Value", conf("spec", "string"), rec("t", 0, 0L, null, "{\"schema\":{\"type\":\"double\",\"optional\":false},\"payload\":1.0E10}"));

tx("cast.narrowing", T + "Cast$Value", conf("spec", "a:int8,b:int16,c:int32,d:int64,e:float32,f:boolean,g:int8,h:string,i:string"),
    rec("t", 0, 0L, null, "{\"schema\":null,\"payload\":{\"a\":300,\"b\":1e20,\"c\":-2.7,\"d\":1.5e19,\"e\":0.1,\"f\":0.5,\"g\":-129,\"h\":1e-5,\"i\":123456789.0}}"));
tx("cast.string.space", T + "Cast$Value", conf("spec", "a:int32"), rec("t", 0, 0L, null, "{\"schema\":null,\"payload\":{\"a\":\" 12\"}}"));
tx("cast.string.float", T + "Cast$Value", conf("spec", "a:float64,b:float32,c:int64"), rec("t", 0, 0L, null, "{\"schema\":null,\"payload\":{\"a\":\" 1.5e3 \",\"b\":\"2.5f\",\"c\":\"-9223372036854775808\"}}"));
tx("cast.decimal.fields", T + "Cast$Value", conf("spec", "price:int8"), R_PERSON);
tx("cast.decimal.string", T + "Cast$Value", conf("spec", "price:string,score:float32,level:string"), R_PERSON);
tx("cast.logical.numbers", T + "Cast$Value", conf("spec", "born:int64,day:int32"), R_PERSON);
tx("cast.array", T + "Cast$Value", conf("spec", "tags:string"), R_PERSON);

// TimestampConverter
String TS_FMT = "yyyy-MM-dd HH:mm:ss";
for (String target : new String[] {"string", "unix", "Date", "Time", "Timestamp"}) {
    tx("tsconv.field." + target, T + "TimestampConverter$Value", conf("field", "born", "target.type", target, "format", TS_FMT), R_PERSON);
    tx("tsconv.schemaless.unix." + target, T + "TimestampConverter$Value", conf("field", "born", "target.type", target, "format", TS_FMT), R_MAP);
    tx("tsconv.schemaless.string." + target, T + "TimestampConverter$Value", conf("field", "when", "target.type", target, "format", TS_FMT), R_MAP);
    tx("tsconv.whole.date." + target, T + "TimestampConverter$Value", conf("target.type", target, "format", TS_FMT),
        rec("t", 0, 0L, null, "{\"schema\":{\"type\":\"int32\",\"name\":\"org.apache.kafka.connect.data.Date\",\"version\":1,\"optional\":false},\"payload\":19000}"));
    tx("tsconv.whole.string." + target, T + "TimestampConverter$Value", conf("target.type", target, "format", TS_FMT),
        rec("t", 0, 0L, null, "{\"schema\":{\"type\":\"string\",\"optional\":false},\"payload\":\"2023-11-14 22:13:20\"}"));
}
tx("tsconv.unix.precision", T + "TimestampConverter$Value", conf("field", "born", "target.type", "unix", "unix.precision", "microseconds"), R_PERSON);
tx("tsconv.unix.seconds.in", T + "TimestampConverter$Value", conf("target.type", "Timestamp", "unix.precision", "seconds"),
    rec("t", 0, 0L, null, "{\"schema\":{\"type\":\"int64\",\"optional\":false},\"payload\":1700000000}"));
tx("tsconv.nullfield", T + "TimestampConverter$Value", conf("field", "born", "target.type", "string", "format", TS_FMT), R_PERSON_NULLS);
tx("tsconv.key", T + "TimestampConverter$Key", conf("target.type", "Timestamp"), R_PERSON_NULLS);
tx("tsconv.badtype", T + "TimestampConverter$Value", conf("target.type", "century"), R_PERSON);
tx("tsconv.noformat", T + "TimestampConverter$Value", conf("target.type", "string"), R_PERSON);
tx("tsconv.unparseable", T + "TimestampConverter$Value", conf("target.type", "unix", "format", TS_FMT),
    rec("t", 0, 0L, null, "{\"schema\":null,\"payload\":\"yesterday\"}"));
tx("tsconv.tombstone", T + "TimestampConverter$Value", conf("target.type", "unix"), R_TOMB);

// Flatten
tx("flatten.value", T + "Flatten$Value", conf(), R_PERSON);
tx("flatten.value.delim", T + "Flatten$Value", conf("delimiter", "_"), R_PERSON_NULLS);
tx("flatten.schemaless", T + "Flatten$Value", conf(), R_MAP);
tx("flatten.deep", T + "Flatten$Value", conf("delimiter", "/"),
    rec("t", 0, 0L, null, "{\"schema\":null,\"payload\":{\"a\":{\"b\":{\"c\":1,\"d\":[1,2]},\"e\":null},\"f\":\"x\"}}"));
tx("flatten.key", T + "Flatten$Key", conf(), R_MAP);
tx("flatten.tombstone", T + "Flatten$Value", conf(), R_TOMB);
tx("flatten.primitive", T + "Flatten$Value", conf(), R_SCHEMALESS_STR);
tx("flatten.optional.parent", T + "Flatten$Value", conf(),
    rec("t", 0, 0L, null, "{\"schema\":{\"type\":\"struct\",\"optional\":false,\"fields\":[{\"field\":\"o\",\"type\":\"struct\",\"optional\":true,\"fields\":[{\"field\":\"x\",\"type\":\"int32\",\"optional\":false,\"default\":3}]}]},\"payload\":{\"o\":null}}"));

// ------------------------------------------------------------------------------------------------
// Predicates
pred("topic.match", T + "predicates.TopicNameMatches", conf("pattern", "ord.*"), R_PERSON);
pred("topic.partial", T + "predicates.TopicNameMatches", conf("pattern", "ord"), R_PERSON);
pred("topic.dots", T + "predicates.TopicNameMatches", conf("pattern", "other\\.\\w+"), R_OTHER);
pred("topic.empty", T + "predicates.TopicNameMatches", conf("pattern", ""), R_PERSON);
pred("topic.invalid", T + "predicates.TopicNameMatches", conf("pattern", "[a-"), R_PERSON);
pred("header.present", T + "predicates.HasHeaderKey", conf("name", "trace"), R_PERSON);
pred("header.absent", T + "predicates.HasHeaderKey", conf("name", "nope"), R_PERSON);
pred("header.missing", T + "predicates.HasHeaderKey", conf(), R_PERSON);
pred("tombstone.true", T + "predicates.RecordIsTombstone", conf(), R_TOMB);
pred("tombstone.false", T + "predicates.RecordIsTombstone", conf(), R_PERSON);

// ------------------------------------------------------------------------------------------------
// Config definitions of every plugin (ConfigKeyInfo-like rows in ConfigDef order) and validators
Map<String, Object> keyInfo(ConfigDef.ConfigKey k) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("name", k.name);
    m.put("type", k.type.name());
    m.put("required", !k.hasDefault());
    m.put("default_value", k.hasDefault() ? ConfigDef.convertToString(k.defaultValue, k.type) : null);
    m.put("importance", k.importance.name());
    m.put("documentation", k.documentation);
    m.put("group", k.group);
    m.put("order_in_group", k.orderInGroup);
    m.put("width", k.width.name());
    m.put("display_name", k.displayName);
    m.put("dependents", k.dependents);
    m.put("validator", k.validator == null ? null : k.validator.toString());
    return m;
}
Plugins PLUGINS = new Plugins(Map.of());
PLUGINS.compareAndSwapWithDelegatingLoader();
Map<String, Object> DEFS = new LinkedHashMap<>();
Map<String, Object> LISTING = new LinkedHashMap<>();
List<Object> TRANSFORMATIONS = new ArrayList<>();
for (var p : PLUGINS.transformations()) {
    if (!p.className().startsWith(T)) continue;
    TRANSFORMATIONS.add(Map.of("class", p.className(), "version", p.version()));
    List<Object> rows = new ArrayList<>();
    for (ConfigDef.ConfigKey k : ((Transformation<?>) p.pluginClass().getDeclaredConstructor().newInstance()).config().configKeys().values()) rows.add(keyInfo(k));
    DEFS.put(p.className(), rows);
}
List<Object> PREDICATE_LIST = new ArrayList<>();
for (var p : PLUGINS.predicates()) {
    if (!p.className().startsWith(T)) continue;
    PREDICATE_LIST.add(Map.of("class", p.className(), "version", p.version()));
    List<Object> rows = new ArrayList<>();
    for (ConfigDef.ConfigKey k : ((Predicate<?>) p.pluginClass().getDeclaredConstructor().newInstance()).config().configKeys().values()) rows.add(keyInfo(k));
    DEFS.put(p.className(), rows);
}
LISTING.put("transformations", TRANSFORMATIONS);
LISTING.put("predicates", PREDICATE_LIST);

// ConnectorConfig.enrich + validateAll, as AbstractHerder.validateConnectorConfig runs them.
List<Object> ENRICH = new ArrayList<>();
void enrich(String id, Map<String, String> props) {
    Map<String, Object> c = new LinkedHashMap<>();
    props.put("connector.class", "org.apache.kafka.connect.mirror.MirrorSourceConnector");
    c.put("id", id); c.put("props", props);
    try {
        ConfigDef def = ConnectorConfig.enrich(PLUGINS, SourceConnectorConfig.configDef(), props, false);
        List<Object> keys = new ArrayList<>();
        for (ConfigDef.ConfigKey k : def.configKeys().values()) {
            if (k.name.startsWith("transforms.") || k.name.startsWith("predicates.")) keys.add(keyInfo(k));
        }
        c.put("keys", keys);
        c.put("groups", def.groups());
        Map<String, Object> values = new LinkedHashMap<>();
        for (ConfigValue v : def.validateAll(props).values()) {
            if (!v.name().startsWith("transforms") && !v.name().startsWith("predicates")) continue;
            Map<String, Object> vm = new LinkedHashMap<>();
            Object value = v.value();
            vm.put("value", value instanceof Class ? ((Class<?>) value).getName() : (value == null ? null : value.toString()));
            vm.put("errors", v.errorMessages());
            List<Object> rec = new ArrayList<>();
            for (Object o : v.recommendedValues()) rec.add(o instanceof Class ? ((Class<?>) o).getName() : String.valueOf(o));
            vm.put("recommended", rec.size());
            values.put(v.name(), vm);
        }
        c.put("values", values);
    } catch (Exception e) {
        c.put("error", error(e));
    }
    ENRICH.add(c);
}
enrich("none", conf("name", "c", "connector.class", "x"));
enrich("filter.with.predicate", conf("transforms", "drop,route", "transforms.drop.type", T + "Filter",
    "transforms.drop.predicate", "isTomb", "transforms.drop.negate", "true",
    "transforms.route.type", "RegexRouter", "transforms.route.regex", "(.*)", "transforms.route.replacement", "b.$1",
    "predicates", "isTomb", "predicates.isTomb.type", "RecordIsTombstone"));
enrich("unknown.type", conf("transforms", "x", "transforms.x.type", "com.example.Nope"));
enrich("missing.type", conf("transforms", "x"));
enrich("not.a.transformation", conf("transforms", "x", "transforms.x.type", T + "predicates.HasHeaderKey"));
enrich("nested.alias", conf("transforms", "x", "transforms.x.type", "Value"));
enrich("bad.transform.config", conf("transforms", "r", "transforms.r.type", T + "RegexRouter", "transforms.r.regex", "("));
enrich("missing.transform.config", conf("transforms", "m", "transforms.m.type", T + "MaskField$Value"));
enrich("negate.without.predicate", conf("transforms", "f", "transforms.f.type", "Filter", "transforms.f.negate", "true"));
enrich("unknown.predicate.alias", conf("transforms", "f", "transforms.f.type", "Filter", "transforms.f.predicate", "nope"));
enrich("predicate.bad.config", conf("transforms", "f", "transforms.f.type", "Filter", "transforms.f.predicate", "p",
    "predicates", "p", "predicates.p.type", "TopicNameMatches"));
enrich("predicate.unknown.type", conf("predicates", "p", "predicates.p.type", "Nope"));
enrich("duplicate.alias", conf("transforms", "a,a", "transforms.a.type", "Filter"));
enrich("insertfield", conf("transforms", "i", "transforms.i.type", T + "InsertField$Value", "transforms.i.topic.field", "t"));

enrich("version.pinned", conf("transforms", "f", "transforms.f.type", "Filter", "transforms.f.plugin.version", "4.3.1"));
enrich("version.range", conf("transforms", "f", "transforms.f.type", "Filter", "transforms.f.plugin.version", "[4.0,5.0)"));
enrich("version.missing", conf("transforms", "f", "transforms.f.type", "Filter", "transforms.f.plugin.version", "1.0"));
enrich("version.invalid", conf("transforms", "f", "transforms.f.type", "Filter", "transforms.f.plugin.version", "[1.0"));
enrich("predicate.version.missing", conf("predicates", "p", "predicates.p.type", "RecordIsTombstone", "predicates.p.plugin.version", "[1.0,2.0]"));

Map<String, Object> OUT = new LinkedHashMap<>();
OUT.put("cases", CASES);
OUT.put("predicates", PREDICATES);
OUT.put("config_defs", DEFS);
OUT.put("plugins", LISTING);
OUT.put("enrich", ENRICH);
System.out.println(MAPPER.enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(OUT));
/exit
