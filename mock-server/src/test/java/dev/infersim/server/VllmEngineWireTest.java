package dev.infersim.server;

import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Descriptors;
import dev.infersim.server.grpc.VllmEngineProto;
import dev.infersim.server.routes.VllmGrpcService;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * infersim's {@code vllm_engine.proto} against the published one field by field: same package and service, every
 * field infersim declares published with the same number, label and type (so the bytes mean the same on both sides),
 * and every published field of a message infersim declares there too unless it is one of those the proto's header
 * says are left out (protobuf skips them as unknown fields).
 */
class VllmEngineWireTest {
    /** Published fields infersim leaves out, each carrying something the mock does not produce or read. */
    private static final Set<String> LEFT_OUT = Set.of("GenerateRequest.mm_inputs", "GenerateStreamChunk.output_logprobs",
            "GenerateStreamChunk.input_logprobs", "GenerateComplete.output_logprobs", "GenerateComplete.input_logprobs",
            "GenerateComplete.kv_transfer_params");

    private static Map<String, String> published() throws IOException {
        Map<String, String> fields = new HashMap<>();
        try (InputStream in = VllmEngineWireTest.class.getResourceAsStream("/grpc/vllm_engine_published_fields.txt")) {
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (!line.isBlank() && !line.startsWith("#")) {
                    String[] p = line.split(" ");
                    fields.put(p[0], p[1] + " " + p[2] + " " + p[3]);
                }
            }
        }
        return fields;
    }

    private static String describe(FieldDescriptor f) {
        String label = f.isMapField() ? "singular" : f.isRepeated() ? "repeated" : f.toProto().getProto3Optional() ? "optional"
                : f.getRealContainingOneof() != null ? "oneof" : "singular";
        String type;
        if (f.isMapField()) {
            Descriptors.Descriptor entry = f.getMessageType();
            type = "map<" + typeName(entry.findFieldByName("key")) + "," + typeName(entry.findFieldByName("value")) + ">";
        } else {
            type = typeName(f);
        }
        return f.getNumber() + " " + label + " " + type;
    }

    private static String typeName(FieldDescriptor f) {
        return f.getJavaType() == FieldDescriptor.JavaType.MESSAGE ? f.getMessageType().getName()
                : f.getType().name().toLowerCase(Locale.ROOT);
    }

    @Test
    void everyFieldHasThePublishedNumberLabelAndType() throws IOException {
        Map<String, String> published = published();
        Descriptors.FileDescriptor file = VllmEngineProto.getDescriptor();
        assertEquals("vllm.grpc.engine", file.getPackage());
        int checked = 0;
        for (Descriptors.Descriptor message : file.getMessageTypes()) {
            for (FieldDescriptor f : message.getFields()) {
                String key = message.getName() + "." + f.getName();
                assertEquals(published.get(key), describe(f), key);
                checked++;
            }
            for (Map.Entry<String, String> p : published.entrySet()) {
                if (p.getKey().startsWith(message.getName() + ".") && !LEFT_OUT.contains(p.getKey())) {
                    assertNotNull(message.findFieldByName(p.getKey().substring(message.getName().length() + 1)),
                            "published field " + p.getKey() + " is missing");
                }
            }
        }
        assertTrue(checked > 100, "fields checked: " + checked);
    }

    @Test
    void theServiceHasVllmsMethodsWithTheirStreaming() {
        Descriptors.ServiceDescriptor service = VllmEngineProto.getDescriptor().findServiceByName("VllmEngine");
        assertEquals("vllm.grpc.engine.VllmEngine", service.getFullName());
        assertEquals(VllmGrpcService.NAME.fullyQualifiedName(), service.getFullName());
        Map<String, String> methods = new HashMap<>();
        for (Descriptors.MethodDescriptor m : service.getMethods()) {
            methods.put(m.getName(), m.getInputType().getName() + (m.isServerStreaming() ? " -> stream " : " -> ")
                    + m.getOutputType().getName());
        }
        assertEquals(Map.of("Generate", "GenerateRequest -> stream GenerateResponse",
                "Embed", "EmbedRequest -> EmbedResponse",
                "HealthCheck", "HealthCheckRequest -> HealthCheckResponse",
                "Abort", "AbortRequest -> AbortResponse",
                "GetModelInfo", "GetModelInfoRequest -> GetModelInfoResponse",
                "GetServerInfo", "GetServerInfoRequest -> GetServerInfoResponse",
                "GetLoads", "GetLoadsRequest -> GetLoadsResponse"), methods);
    }
}
