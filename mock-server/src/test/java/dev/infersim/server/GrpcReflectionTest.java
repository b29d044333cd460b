package dev.infersim.server;

import com.google.protobuf.DescriptorProtos;
import dev.infersim.server.config.GrpcOptions;
import dev.infersim.server.fleet.MockServer;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpVersion;
import io.vertx.core.http.RequestOptions;
import io.vertx.grpc.reflection.v1.ServerReflectionRequest;
import io.vertx.grpc.reflection.v1.ServerReflectionResponse;
import io.vertx.grpc.reflection.v1.ServiceResponse;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * gRPC server reflection (v1), as grpcurl and Postman ask it: the service list names vLLM's engine service, and the
 * file that defines it comes back with its methods. Raw HTTP/2 frames from Vert.x's HTTP client (prior knowledge), the
 * messages from the reflection protocol's own classes.
 */
class GrpcReflectionTest {

    private static ServerReflectionResponse call(HttpClient client, int port, ServerReflectionRequest request) throws Exception {
        byte[] message = request.toByteArray();
        Buffer frame = Buffer.buffer().appendByte((byte) 0).appendInt(message.length).appendBytes(message);
        Buffer body = client.request(new RequestOptions().setHost("127.0.0.1").setPort(port).setMethod(HttpMethod.POST)
                        .setURI("/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"))
                .compose(r -> r.putHeader("content-type", "application/grpc").putHeader("te", "trailers").send(frame))
                .compose(HttpClientResponse::body).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        int length = body.getInt(1);
        return ServerReflectionResponse.parseFrom(body.getBytes(5, 5 + length));
    }

    @Test
    void reflectionListsTheEngineServiceAndServesItsDefinition() throws Exception {
        MockServer server = TestServers.start(TestServers.options(TestServers.llama8b(8), 50).grpc(GrpcOptions.ON_HTTP_PORT).build());
        Vertx vertx = Vertx.vertx();
        try {
            HttpClient client = vertx.createHttpClient(new HttpClientOptions().setProtocolVersion(HttpVersion.HTTP_2)
                    .setHttp2ClearTextUpgrade(false));
            List<String> services = call(client, server.grpcPort(), ServerReflectionRequest.newBuilder().setListServices("")
                    .build()).getListServicesResponse().getServiceList().stream().map(ServiceResponse::getName).toList();
            assertTrue(services.contains("vllm.grpc.engine.VllmEngine"), services.toString());
            ServerReflectionResponse file = call(client, server.grpcPort(), ServerReflectionRequest.newBuilder()
                    .setFileContainingSymbol("vllm.grpc.engine.VllmEngine").build());
            DescriptorProtos.FileDescriptorProto proto = DescriptorProtos.FileDescriptorProto.parseFrom(
                    file.getFileDescriptorResponse().getFileDescriptorProto(0));
            assertEquals("vllm.grpc.engine", proto.getPackage());
            assertEquals(List.of("Generate", "Embed", "HealthCheck", "Abort", "GetModelInfo", "GetServerInfo", "GetLoads"),
                    proto.getService(0).getMethodList().stream().map(DescriptorProtos.MethodDescriptorProto::getName).toList());
        } finally {
            vertx.close().await();
            TestServers.close(server);
        }
    }
}
