package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.server.json.Json;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;

import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * llm-d's routing sidecar in its NIXL v2 protocol, for tests: it sits before a decode server and, for a request that
 * names a prefill server in {@code x-prefiller-url}, runs the two steps of
 * https://github.com/llm-d/llm-d-inference-scheduler/blob/05399b3df7c213f21a28cc7631b6f2382ed56da6/pkg/sidecar/proxy/connector_nixlv2.go:
 * <ol>
 *   <li>to the prefiller: the request with {@code kv_transfer_params} {@code {do_remote_decode: true,
 *       do_remote_prefill: false, remote_engine_id: null, remote_block_ids: null, remote_host: null, remote_port:
 *       null}}, {@code stream: false}, no {@code stream_options}, {@code max_tokens} and {@code max_completion_tokens}
 *       1, header {@code x-request-id} a new UUID; a non-2xx answer ends the exchange with its status;</li>
 *   <li>to the decoder: the original request (its stream flags and token limits back) with the prefiller's
 *       {@code kv_transfer_params}, the same {@code x-request-id}; its answer, streamed or not, goes to the client.</li>
 * </ol>
 * A request without the header goes to the decoder as it is. The last prefill answer is kept for the test to read.
 */
final class SidecarProxy implements AutoCloseable {
    static final String PREFILLER_HEADER = "x-prefiller-url";

    private final Vertx vertx = Vertx.vertx();
    private final HttpClient client = vertx.createHttpClient();
    private final int decoderPort;
    private final HttpServer server;
    final AtomicReference<JsonNode> lastPrefill = new AtomicReference<>();

    SidecarProxy(int decoderPort) throws Exception {
        this.decoderPort = decoderPort;
        this.server = vertx.createHttpServer().requestHandler(this::handle).listen(0, "127.0.0.1")
                .toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    String baseUrl() {
        return "http://127.0.0.1:" + server.actualPort();
    }

    private void handle(HttpServerRequest in) {
        in.body().onSuccess(body -> {
            String prefiller = in.getHeader(PREFILLER_HEADER);
            if (prefiller == null) {
                forward(in, decoderPort, body, in.getHeader("x-request-id"));
                return;
            }
            ObjectNode original;
            try {
                original = (ObjectNode) Json.MAPPER.readTree(body.getBytes());
            } catch (Exception e) {
                in.response().setStatusCode(400).end();
                return;
            }
            String uuid = UUID.randomUUID().toString();
            ObjectNode prefill = original.deepCopy();
            ObjectNode params = prefill.putObject("kv_transfer_params");
            params.put("do_remote_decode", true).put("do_remote_prefill", false).putNull("remote_engine_id")
                    .putNull("remote_block_ids").putNull("remote_host").putNull("remote_port");
            prefill.put("stream", false);
            prefill.remove("stream_options");
            prefill.put("max_tokens", 1);
            prefill.put("max_completion_tokens", 1);
            String[] hostPort = prefiller.replaceFirst("^http://", "").split(":");
            client.request(HttpMethod.POST, Integer.parseInt(hostPort[1]), hostPort[0], in.uri())
                    .compose(req -> req.putHeader("content-type", "application/json").putHeader("x-request-id", uuid)
                            .send(Buffer.buffer(prefill.toString())))
                    .compose(resp -> resp.body().map(b -> new Object[] {resp.statusCode(), b}))
                    .onComplete(ar -> {
                        if (ar.failed()) {
                            in.response().setStatusCode(502).end();
                            return;
                        }
                        int status = (int) ar.result()[0];
                        if (status < 200 || status >= 300) {
                            in.response().setStatusCode(status).end();
                            return;
                        }
                        JsonNode answer;
                        try {
                            answer = Json.MAPPER.readTree(((Buffer) ar.result()[1]).getBytes());
                        } catch (Exception e) {
                            in.response().setStatusCode(400).end();
                            return;
                        }
                        lastPrefill.set(answer);
                        ObjectNode decode = original.deepCopy();
                        decode.set("kv_transfer_params", answer.get("kv_transfer_params"));
                        forward(in, decoderPort, Buffer.buffer(decode.toString()), uuid);
                    });
        });
    }

    /** Sends the body to the decoder and pipes its answer back as it comes. */
    private void forward(HttpServerRequest in, int port, Buffer body, String requestId) {
        client.request(HttpMethod.POST, port, "127.0.0.1", in.uri())
                .compose(req -> {
                    req.putHeader("content-type", "application/json");
                    if (requestId != null) {
                        req.putHeader("x-request-id", requestId);
                    }
                    return req.send(body);
                })
                .onComplete(ar -> {
                    if (ar.failed()) {
                        in.response().setStatusCode(502).end();
                        return;
                    }
                    HttpClientResponse resp = ar.result();
                    in.response().setStatusCode(resp.statusCode()).setChunked(true);
                    resp.headers().forEach((k, v) -> {
                        if (!k.equalsIgnoreCase("content-length") && !k.equalsIgnoreCase("transfer-encoding")) {
                            in.response().putHeader(k, v);
                        }
                    });
                    resp.handler(in.response()::write);
                    resp.endHandler(v -> in.response().end());
                });
    }

    @Override
    public void close() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS); // its server and client too
    }
}
