// Golden vectors for the Connect converters, produced by the Kafka jars themselves.
//
// Usage (from the repository root; KAFKA_LIBS is the "libs" folder of the Kafka distribution):
//   jshell -q -R-Duser.timezone=UTC --class-path "$KAFKA_LIBS/*" tests/golden/converters/generate.jsh \
//     > tests/golden/converters/vectors.json
//
// Every case has an "id" that tests/unit/test_converters.py rebuilds in Python. "from" cases hold the
// bytes fromConnectData/fromConnectHeader wrote ("out_b64", null for a null result) or the exception
// message ("error"). "to" cases feed "in_b64" to toConnectData/toConnectHeader and describe the result
// by re-encoding it with an envelope JsonConverter ("decoded"), plus the schema's type/name.
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.*;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import org.apache.kafka.connect.data.*;
import org.apache.kafka.connect.storage.*;
import org.apache.kafka.connect.json.*;
import org.apache.kafka.connect.converters.ByteArrayConverter;
import org.apache.kafka.common.config.ConfigDef;

ObjectMapper MAPPER = new ObjectMapper();
List<Map<String, Object>> CASES = new ArrayList<>();
Base64.Encoder B64 = Base64.getEncoder();

JsonConverter json(boolean schemas, String... kv) {
    Map<String, Object> conf = new HashMap<>();
    conf.put("schemas.enable", String.valueOf(schemas));
    for (int i = 0; i < kv.length; i += 2) conf.put(kv[i], kv[i + 1]);
    JsonConverter c = new JsonConverter();
    c.configure(conf, false);
    return c;
}
JsonConverter ENVELOPE = json(true);

Map<String, Object> base(String id, String converter, Map<String, String> config) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("id", id);
    m.put("converter", converter);
    m.put("config", config);
    CASES.add(m);
    return m;
}
void putBytes(Map<String, Object> m, byte[] out) {
    m.put("out_b64", out == null ? null : B64.encodeToString(out));
    m.put("out_text", out == null ? null : new String(out, StandardCharsets.UTF_8));
}
interface Thunk { byte[] get() throws Exception; }
void from(String id, String converter, Map<String, String> config, Thunk t) {
    Map<String, Object> m = base(id, converter, config);
    m.put("op", "from");
    try { putBytes(m, t.get()); } catch (Exception e) { m.put("error", e.getMessage()); }
}
void describe(Map<String, Object> m, SchemaAndValue sv) {
    if (sv == null) { m.put("returned_null", true); return; }
    m.put("schema_type", sv.schema() == null ? null : sv.schema().type().toString());
    m.put("schema_name", sv.schema() == null ? null : sv.schema().name());
    m.put("value_class", sv.value() == null ? null : sv.value().getClass().getSimpleName());
    m.put("value_string", sv.value() == null ? null : (sv.value() instanceof byte[] ? B64.encodeToString((byte[]) sv.value()) : sv.value().toString()));
    byte[] d = ENVELOPE.fromConnectData("t", sv.schema(), sv.value());
    m.put("decoded", d == null ? null : new String(d, StandardCharsets.UTF_8));
}
interface ToThunk { SchemaAndValue get(byte[] in) throws Exception; }
void to(String id, String converter, Map<String, String> config, byte[] in, ToThunk t) {
    Map<String, Object> m = base(id, converter, config);
    m.put("op", "to");
    m.put("in_b64", in == null ? null : B64.encodeToString(in));
    try { describe(m, t.get(in)); } catch (Exception e) { m.put("error", e.getMessage()); }
}
byte[] utf8(String s) { return s.getBytes(StandardCharsets.UTF_8); }
Map<String, String> cfg(String... kv) { Map<String, String> m = new LinkedHashMap<>(); for (int i = 0; i < kv.length; i += 2) m.put(kv[i], kv[i + 1]); return m; }

void jsonFrom(String id, Schema schema, Object value, String... extra) {
    for (boolean schemas : new boolean[] {true, false}) {
        String[] kv = Arrays.copyOf(extra, extra.length);
        JsonConverter c = json(schemas, kv);
        Map<String, String> conf = cfg(kv);
        conf.put("schemas.enable", String.valueOf(schemas));
        from(id + (schemas ? ".env" : ".bare"), "JsonConverter", conf, () -> c.fromConnectData("t", schema, value));
    }
}
void jsonTo(String id, String text, boolean schemas, String... extra) {
    JsonConverter c = json(schemas, extra);
    Map<String, String> conf = cfg(extra);
    conf.put("schemas.enable", String.valueOf(schemas));
    to(id, "JsonConverter", conf, text == null ? null : utf8(text), in -> c.toConnectData("t", in));
}

// ---- JsonConverter: Connect data -> bytes
jsonFrom("json.null", null, null);
jsonFrom("json.int8", Schema.INT8_SCHEMA, (byte) -12);
jsonFrom("json.int16", Schema.INT16_SCHEMA, (short) 1234);
jsonFrom("json.int32", Schema.INT32_SCHEMA, -5);
jsonFrom("json.int64", Schema.INT64_SCHEMA, Long.MAX_VALUE);
jsonFrom("json.float32.1_5", Schema.FLOAT32_SCHEMA, 1.5f);
jsonFrom("json.float32.0_1", Schema.FLOAT32_SCHEMA, 0.1f);
jsonFrom("json.float32.1e10", Schema.FLOAT32_SCHEMA, 1e10f);
jsonFrom("json.float32.max", Schema.FLOAT32_SCHEMA, Float.MAX_VALUE);
jsonFrom("json.float32.small", Schema.FLOAT32_SCHEMA, 1.25e-5f);
jsonFrom("json.float64.0_1", Schema.FLOAT64_SCHEMA, 0.1);
jsonFrom("json.float64.1e20", Schema.FLOAT64_SCHEMA, 1e20);
jsonFrom("json.float64.1e7", Schema.FLOAT64_SCHEMA, 1e7);
jsonFrom("json.float64.1e-5", Schema.FLOAT64_SCHEMA, 1e-5);
jsonFrom("json.float64.neg_zero", Schema.FLOAT64_SCHEMA, -0.0);
jsonFrom("json.float64.frac", Schema.FLOAT64_SCHEMA, 123456789.125);
jsonFrom("json.float64.nan", Schema.FLOAT64_SCHEMA, Double.NaN);
jsonFrom("json.boolean", Schema.BOOLEAN_SCHEMA, true);
jsonFrom("json.string", Schema.STRING_SCHEMA, "h\u00e9llo \"q\" \\ / \n\t\b\f\r\u0001\u001f\u007f\u2028\ud83d\ude00");
jsonFrom("json.bytes", Schema.BYTES_SCHEMA, new byte[] {0, 1, 2, -1, -2});
jsonFrom("json.optional_null", Schema.OPTIONAL_INT32_SCHEMA, null);
jsonFrom("json.required_null", Schema.INT32_SCHEMA, null);
jsonFrom("json.wrong_type", Schema.INT32_SCHEMA, "x");
Schema INT_DEFAULT = SchemaBuilder.int32().optional().defaultValue(42).build();
jsonFrom("json.default.replace", INT_DEFAULT, null);
jsonFrom("json.default.keep_null", INT_DEFAULT, null, "replace.null.with.default", "false");
jsonFrom("json.primitive_metadata", SchemaBuilder.string().name("com.example.Name").version(3).doc("a doc").parameter("p1", "v1").parameter("a0", "v0").build(), "x");
jsonFrom("json.decimal.base64", Decimal.schema(2), new BigDecimal("12345.67"));
jsonFrom("json.decimal.numeric", Decimal.schema(2), new BigDecimal("12345.67"), "decimal.format", "NUMERIC");
jsonFrom("json.decimal.negative", Decimal.schema(2), new BigDecimal("-0.01"));
jsonFrom("json.decimal.negative.numeric", Decimal.schema(2), new BigDecimal("-0.01"), "decimal.format", "numeric");
jsonFrom("json.decimal.big", Decimal.schema(5), new BigDecimal("-123456789012345678901234567890.12345"));
jsonFrom("json.decimal.negscale.numeric", Decimal.schema(-3), new BigDecimal("1E+3"), "decimal.format", "NUMERIC");
jsonFrom("json.decimal.zero", Decimal.schema(0), new BigDecimal("0"));
jsonFrom("json.decimal.bad_scale", Decimal.schema(3), new BigDecimal("1.5"));
jsonFrom("json.date", org.apache.kafka.connect.data.Date.SCHEMA, new java.util.Date(19000L * 86400000L));
jsonFrom("json.time", Time.SCHEMA, new java.util.Date(45296789L));
jsonFrom("json.timestamp", Timestamp.SCHEMA, new java.util.Date(1700000000123L));
jsonFrom("json.array", SchemaBuilder.array(Schema.INT32_SCHEMA).build(), Arrays.asList(1, 2, 3));
jsonFrom("json.array.optional", SchemaBuilder.array(Schema.OPTIONAL_STRING_SCHEMA).build(), Arrays.asList("a", null, "c"));
Map<String, Long> smap = new LinkedHashMap<>(); smap.put("b", 2L); smap.put("a", 1L);
jsonFrom("json.map.string_keys", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT64_SCHEMA).build(), smap);
Map<Integer, String> imap = new LinkedHashMap<>(); imap.put(3, "three"); imap.put(1, "one");
jsonFrom("json.map.int_keys", SchemaBuilder.map(Schema.INT32_SCHEMA, Schema.STRING_SCHEMA).build(), imap);
Schema INNER = SchemaBuilder.struct().name("Inner").field("x", Schema.FLOAT64_SCHEMA).build();
Schema OUTER = SchemaBuilder.struct().name("com.example.Outer").version(2).doc("outer doc").field("id", Schema.INT64_SCHEMA).field("name", Schema.OPTIONAL_STRING_SCHEMA).field("flag", SchemaBuilder.bool().defaultValue(true).build()).field("inner", INNER).field("tags", SchemaBuilder.array(Schema.STRING_SCHEMA).optional().build()).field("amount", Decimal.builder(2).optional().build()).build();
Struct OUTER_VALUE = new Struct(OUTER).put("id", 7L).put("inner", new Struct(INNER).put("x", 2.5)).put("tags", Arrays.asList("p", "q")).put("amount", new BigDecimal("3.50"));
jsonFrom("json.struct", OUTER, OUTER_VALUE);
Map<String, Object> loose = new LinkedHashMap<>();
loose.put("s", "v"); loose.put("l", 5L); loose.put("d", 2.5); loose.put("b", false); loose.put("n", null);
loose.put("list", Arrays.asList(1, "two", 3.0)); loose.put("bytes", new byte[] {104, 105});
jsonFrom("json.schemaless.map", null, loose);
Map<Object, Object> mixed = new LinkedHashMap<>(); mixed.put(1, "a"); mixed.put("k", 2);
jsonFrom("json.schemaless.mixed_keys", null, mixed);
jsonFrom("json.schemaless.list", null, Arrays.asList(1L, null, "x"));
jsonFrom("json.schemaless.string", null, "plain");

// ---- JsonConverter: bytes -> Connect data
jsonTo("json.to.null", null, true);
jsonTo("json.to.bare.int", "42", false);
jsonTo("json.to.bare.float", "1.5", false);
jsonTo("json.to.bare.object", "{\"a\":[1,2.0,\"x\",null,true],\"b\":{\"c\":-7}}", false);
jsonTo("json.to.bare.string", "\"h\\u00e9\"", false);
jsonTo("json.to.bare.null", "null", false);
jsonTo("json.to.env.int32", "{\"schema\":{\"type\":\"int32\",\"optional\":false},\"payload\":12}", true);
jsonTo("json.to.env.float32", "{\"schema\":{\"type\":\"float\"},\"payload\":0.1}", true);
jsonTo("json.to.env.bytes", "{\"schema\":{\"type\":\"bytes\"},\"payload\":\"AAEC\"}", true);
jsonTo("json.to.env.decimal.b64", "{\"schema\":{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\",\"version\":1,\"parameters\":{\"scale\":\"2\"}},\"payload\":\"EtaH\"}", true);
jsonTo("json.to.env.decimal.num", "{\"schema\":{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\",\"version\":1,\"parameters\":{\"scale\":\"2\"}},\"payload\":12345.67}", true);
jsonTo("json.to.env.timestamp", "{\"schema\":{\"type\":\"int64\",\"name\":\"org.apache.kafka.connect.data.Timestamp\",\"version\":1},\"payload\":1700000000123}", true);
jsonTo("json.to.env.date", "{\"schema\":{\"type\":\"int32\",\"name\":\"org.apache.kafka.connect.data.Date\",\"version\":1},\"payload\":19000}", true);
jsonTo("json.to.env.time", "{\"schema\":{\"type\":\"int32\",\"name\":\"org.apache.kafka.connect.data.Time\",\"version\":1},\"payload\":45296789}", true);
jsonTo("json.to.env.map_pairs", "{\"schema\":{\"type\":\"map\",\"keys\":{\"type\":\"int32\"},\"values\":{\"type\":\"string\"}},\"payload\":[[3,\"three\"],[1,\"one\"]]}", true);
jsonTo("json.to.env.struct", "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"int64\",\"field\":\"id\"},{\"type\":\"string\",\"optional\":true,\"field\":\"name\"},{\"type\":\"boolean\",\"default\":true,\"field\":\"flag\"}],\"name\":\"S\",\"optional\":false},\"payload\":{\"id\":7,\"name\":null}}", true);
jsonTo("json.to.env.struct.keep_null", "{\"schema\":{\"type\":\"struct\",\"fields\":[{\"type\":\"boolean\",\"optional\":true,\"default\":true,\"field\":\"flag\"}]},\"payload\":{\"flag\":null}}", true, "replace.null.with.default", "false");
jsonTo("json.to.env.missing_envelope", "{\"a\":1}", true);
jsonTo("json.to.env.bad_json", "{", true);
jsonTo("json.to.env.required_null", "{\"schema\":{\"type\":\"int32\"},\"payload\":null}", true);
jsonTo("json.to.schema_content", "{\"a\":5}", true, "schema.content", "{\"type\":\"struct\",\"fields\":[{\"type\":\"int32\",\"field\":\"a\"}]}");
jsonTo("json.to.schema_content.bare", "{\"a\":5}", false, "schema.content", "{\"type\":\"struct\",\"fields\":[{\"type\":\"int32\",\"field\":\"a\"}]}");

// ---- StringConverter
for (String enc : new String[] {"UTF-8", "UTF-16", "ISO-8859-1", "US-ASCII", "UTF-16LE"}) {
    StringConverter c = new StringConverter();
    c.configure(Map.of("converter.encoding", enc), false);
    from("string.from." + enc, "StringConverter", cfg("converter.encoding", enc), () -> c.fromConnectData("t", Schema.STRING_SCHEMA, "h\u00e9\u20ac!"));
    to("string.to." + enc, "StringConverter", cfg("converter.encoding", enc), "h\u00e9\u20ac!".getBytes(enc), in -> c.toConnectData("t", in));
}
StringConverter SC = new StringConverter();
SC.configure(Map.of(), true);
from("string.from.int", "StringConverter", cfg(), () -> SC.fromConnectData("t", Schema.INT32_SCHEMA, 12));
from("string.from.null", "StringConverter", cfg(), () -> SC.fromConnectData("t", Schema.OPTIONAL_STRING_SCHEMA, null));
to("string.to.null", "StringConverter", cfg(), null, in -> SC.toConnectData("t", in));
to("string.to.malformed", "StringConverter", cfg(), new byte[] {104, (byte) 0xc3, 105, (byte) 0xff}, in -> SC.toConnectData("t", in));

// ---- ByteArrayConverter
ByteArrayConverter BA = new ByteArrayConverter();
BA.configure(Map.of(), false);
from("bytearray.from", "ByteArrayConverter", cfg(), () -> BA.fromConnectData("t", Schema.BYTES_SCHEMA, new byte[] {1, 2, 3}));
from("bytearray.from.null", "ByteArrayConverter", cfg(), () -> BA.fromConnectData("t", null, null));
from("bytearray.from.wrong_schema", "ByteArrayConverter", cfg(), () -> BA.fromConnectData("t", Schema.STRING_SCHEMA, new byte[] {1}));
from("bytearray.from.wrong_value", "ByteArrayConverter", cfg(), () -> BA.fromConnectData("t", null, "x"));
to("bytearray.to", "ByteArrayConverter", cfg(), new byte[] {9, 8}, in -> BA.toConnectData("t", in));

// ---- SimpleHeaderConverter
SimpleHeaderConverter SH = new SimpleHeaderConverter();
SH.configure(Map.of());
void header(String id, Schema schema, Object value) {
    from("header.from." + id, "SimpleHeaderConverter", cfg(), () -> SH.fromConnectHeader("t", "h", schema, value));
}
header("string", Schema.STRING_SCHEMA, "plain \"text\"");
header("int8", Schema.INT8_SCHEMA, (byte) 5);
header("int64", Schema.INT64_SCHEMA, -9000000000L);
header("float32", Schema.FLOAT32_SCHEMA, 2.5f);
header("float64", Schema.FLOAT64_SCHEMA, 0.1);
header("boolean", Schema.BOOLEAN_SCHEMA, false);
header("bytes", Schema.BYTES_SCHEMA, new byte[] {104, 105});
header("null", Schema.OPTIONAL_STRING_SCHEMA, null);
header("list", SchemaBuilder.array(Schema.STRING_SCHEMA).build(), Arrays.asList("a", "b\"c", "d\\e"));
Map<String, Integer> hmap = new LinkedHashMap<>(); hmap.put("k1", 1); hmap.put("k2", 2);
header("map", SchemaBuilder.map(Schema.STRING_SCHEMA, Schema.INT32_SCHEMA).build(), hmap);
Schema HS = SchemaBuilder.struct().field("a", Schema.INT32_SCHEMA).field("b", Schema.OPTIONAL_STRING_SCHEMA).build();
header("struct", HS, new Struct(HS).put("a", 1).put("b", "x"));
header("decimal", Decimal.schema(2), new BigDecimal("1.50"));
header("date", org.apache.kafka.connect.data.Date.SCHEMA, new java.util.Date(19000L * 86400000L));
header("time", Time.SCHEMA, new java.util.Date(45296789L));
header("timestamp", Timestamp.SCHEMA, new java.util.Date(1700000000123L));
for (String text : new String[] {"hello", "true", "false", "null", "42", "-129", "40000", "3000000000", "1.5", "0.1", "1e3", "12345678901234567890", "3.4E39", "2026-11-22", "12:34:56.789", "2026-11-22T12:34:56.789Z", "", " ", "true}", "x:y", "12:34:56.789Z", "[1,2,3]", "{\"a\":1}", "[1, 2, 3]", "[1,null]", "[null,null]", "[1,2.5]", "[128,1]", "[1,\"a\"]", "[]", "{}", "[\"2026-11-22\",\"x\"]", "[\"2026-11-22\",\"2026-11-23\"]", "{\"k\":[1,2],\"j\":[3]}", "[1,2] tail", "[1,,2]", "[1,2", "[1,2,", "[true,false]", "{\"a\":null}", "[\"a b\",\" c\"]", "[a]", "{1:\"x\",2:\"y\"}", "{1:2,", "[\"b\\\"c\"]", "[1.5,2.5]", "[1e3,1]", "[12:34:56.789Z]", "{\"a\":{\"b\":true}}", "[[1],[2,3]]", "[\"x\",1]", "[1,true]"}) {
    to("header.to." + text, "SimpleHeaderConverter", cfg(), utf8(text), in -> SH.toConnectHeader("t", "h", in));
}
to("header.to.<null>", "SimpleHeaderConverter", cfg(), null, in -> SH.toConnectHeader("t", "h", in));

// ---- config definitions
List<Map<String, Object>> DEFS = new ArrayList<>();
void defs(String plugin, ConfigDef def) {
    for (ConfigDef.ConfigKey k : def.configKeys().values()) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("plugin", plugin);
        m.put("name", k.name);
        m.put("type", k.type.toString());
        m.put("default", k.hasDefault() ? ConfigDef.convertToString(k.defaultValue, k.type) : "<required>");
        m.put("importance", k.importance.toString());
        m.put("documentation", k.documentation);
        m.put("group", k.group);
        m.put("order_in_group", k.orderInGroup);
        m.put("width", k.width.toString());
        m.put("display_name", k.displayName);
        m.put("validator", k.validator == null ? null : k.validator.toString());
        DEFS.add(m);
    }
}
defs("JsonConverter", new JsonConverter().config());
defs("StringConverter", new StringConverter().config());
defs("ByteArrayConverter", new ByteArrayConverter().config());
defs("SimpleHeaderConverter", new SimpleHeaderConverter().config());

// ---- facts used by the verifiable source port
Map<String, Object> vsData = new HashMap<>();
vsData.put("name", "vs"); vsData.put("task", 0); vsData.put("topic", "out"); vsData.put("time_ms", 1700000000000L); vsData.put("seqno", 5L);
String vsLine = MAPPER.writeValueAsString(vsData);
vsData.put("committed", true);
String vsCommit = MAPPER.writeValueAsString(vsData);
JsonConverter INTERNAL = json(false);
Map<String, Object> FACTS = new LinkedHashMap<>();
FACTS.put("verifiable.poll_line", vsLine);
FACTS.put("verifiable.commit_line", vsCommit);
FACTS.put("verifiable.offset_key", new String(INTERNAL.fromConnectData("t", null, Arrays.asList("vs", Collections.singletonMap("id", 0))), StandardCharsets.UTF_8));
FACTS.put("verifiable.offset_value", new String(INTERNAL.fromConnectData("t", null, Collections.singletonMap("seqno", 5L)), StandardCharsets.UTF_8));
FACTS.put("plugin_info.source", MAPPER.writeValueAsString(new org.apache.kafka.connect.runtime.rest.entities.PluginInfo("a.B", org.apache.kafka.connect.runtime.isolation.PluginType.SOURCE, "4.3.1")));
FACTS.put("plugin_info.undefined_version", MAPPER.writeValueAsString(new org.apache.kafka.connect.runtime.rest.entities.PluginInfo("a.B", org.apache.kafka.connect.runtime.isolation.PluginType.HEADER_CONVERTER, "undefined")));
org.apache.kafka.connect.runtime.isolation.Plugins PLUGINS = new org.apache.kafka.connect.runtime.isolation.Plugins(Map.of("plugin.discovery", "only_scan"));
try { PLUGINS.connectorClass("Nope"); } catch (Exception e) { FACTS.put("plugins.unknown_connector", e.getMessage()); }
ConfigDef CONNECTOR_DEF = org.apache.kafka.connect.runtime.ConnectorConfig.configDef();
for (String[] kv : new String[][] {{"key.converter", "Nope"}, {"value.converter", "org.apache.kafka.connect.storage.SimpleHeaderConverter"}, {"header.converter", "org.apache.kafka.connect.storage.SimpleHeaderConverter"}}) {
    for (org.apache.kafka.common.config.ConfigValue cv : CONNECTOR_DEF.validate(Map.of(kv[0], kv[1])))
        if (cv.name().equals(kv[0])) FACTS.put("connector_config.errors." + kv[0] + "=" + kv[1], cv.errorMessages());
}
FACTS.put("connector_config.header_converter_validator", CONNECTOR_DEF.configKeys().get("header.converter").validator.toString());
FACTS.put("java.version", System.getProperty("java.version"));
FACTS.put("kafka.version", org.apache.kafka.common.utils.AppInfoParser.getVersion());

Map<String, Object> ROOT = new LinkedHashMap<>();
ROOT.put("facts", FACTS);
ROOT.put("cases", CASES);
ROOT.put("config_defs", DEFS);
System.out.println(MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(ROOT));
/exit
