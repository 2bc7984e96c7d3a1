import io.swagger.v3.jaxrs2.integration.SwaggerLoader;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Apache Kafka's published Connect REST OpenAPI document, generated the way Kafka's build generates
 * it (the swagger-gradle-plugin's ResolveTask of `genConnectOpenAPIDocs`): swagger-jaxrs2 reads the
 * JAX-RS resources of `org.apache.kafka.connect.runtime.rest.resources` in the connect-runtime jar on
 * the classpath, over the `openapi.template` header given as the first argument, and prints the
 * sorted, pretty-printed document as JSON on standard output.
 */
public class ConnectOpenApi {
    public static void main(String[] args) throws Exception {
        SwaggerLoader loader = new SwaggerLoader();
        loader.setOutputFormat("JSON");
        loader.setPrettyPrint(true);
        loader.setSortOutput(true);
        loader.setResourcePackages("org.apache.kafka.connect.runtime.rest.resources");
        loader.setOpenapiAsString(Files.readString(Path.of(args[0])));
        System.out.println(loader.resolve().get("JSON"));
    }
}
