package dev.infersim.server;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.Profiles;
import dev.infersim.engine.RooflineCostModel;
import dev.infersim.server.config.ModelFeatures;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.fleet.MockServer;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;

import java.net.http.HttpClient;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The servers the hostile-body corpus ({@link HostileCorpus}) is replayed against, in this JVM, both on one event loop
 * that an {@link EventLoopStallDetector} watches: a generating model with tool calls on (Hermes' parser, auto tool
 * choice) and a pooling model for {@code /v1/embeddings}, at time scale 100 so that a request's model time is short.
 */
final class HostileServers implements AutoCloseable {
    /** The longest the event loop may work at a stretch while a hostile body is answered. */
    static final double STALL_LIMIT_MS = 100;
    /**
     * The longest a hostile body's answer may take to begin (a large body then comes as fast as the client reads it):
     * a second, the bound the server promises. On CI's 2 cores under Jazzer's instrumentation the heaviest seeds took
     * 520-540 ms, cold ones up to 1.1 s before the JIT (the wall-clock profile reruns those).
     */
    static final double ANSWER_LIMIT_MS = 1_000;

    private final Vertx vertx;
    private final MockServer generating;
    private final MockServer pooling;
    final EventLoopStallDetector stalls;
    final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5)).build();

    private HostileServers(Vertx vertx, MockServer generating, MockServer pooling) {
        this.vertx = vertx;
        this.generating = generating;
        this.pooling = pooling;
        this.stalls = new EventLoopStallDetector(vertx);
    }

    static HostileServers start() throws Exception {
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1));
        MockServer generating = start(vertx, TestServers.options(TestServers.llama8b(256), 100).eventLoops(1)
                .features(ModelFeatures.NONE.withTools("hermes", true, 1.0)).build());
        Deployment e5 = Deployment.builder(Profiles.gpu("h100"), Profiles.model("e5-mistral-7b")).maxNumSeqs(256).build();
        MockServer pooling = start(vertx, TestServers.options(e5, 100).eventLoops(1)
                .features(ModelFeatures.NONE.withRunner("pooling")).build());
        HostileServers s = new HostileServers(vertx, generating, pooling);
        // first requests load classes and compile: not what the limits are about
        for (int i = 0; i < 20; i++) {
            TestServers.post(generating, "/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                    + "\"max_tokens\":4,\"n\":20,\"temperature\":1,\"response_format\":{\"type\":\"json_schema\",\"json_schema\":"
                    + "{\"name\":\"x\",\"schema\":{\"type\":\"array\",\"items\":{\"type\":\"string\",\"pattern\":\"[a-z]{3}\"}}}}}");
            TestServers.stream(generating, "/v1/chat/completions", "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                    + "\"max_tokens\":16,\"n\":20,\"temperature\":1,\"stream\":true,\"logprobs\":true,\"top_logprobs\":20}");
            TestServers.post(pooling, "/v1/embeddings", "{\"input\":[\"warm\",\"up\"]}");
        }
        return s;
    }

    private static MockServer start(Vertx vertx, ServerOptions o) throws Exception {
        return MockServer.start(vertx, o, new RooflineCostModel(o.deployment())).toCompletionStage().toCompletableFuture()
                .get(30, TimeUnit.SECONDS);
    }

    /** The base URL of the server that serves {@code e}'s route. */
    String baseUrl(HostileCorpus.Entry e) {
        return (e.pooling() ? pooling : generating).baseUrl();
    }

    /**
     * Waits until the servers have let go of the requests before (a stream the client left is aborted a moment later;
     * its choices would otherwise still fill the waiting queue).
     */
    void awaitIdle() throws InterruptedException {
        TestServers.eventually(30, () -> generating.runningRequests() + generating.waitingRequests() == 0
                && pooling.runningRequests() + pooling.waitingRequests() == 0);
    }

    /** Sends {@code e}, waiting at most a minute (a body that hangs the server fails its test rather than the build). */
    HostileCorpus.Answer send(HostileCorpus.Entry e) throws Exception {
        return HostileCorpus.send(http, baseUrl(e), e, Duration.ofSeconds(60));
    }

    @Override
    public void close() throws Exception {
        stalls.close();
        TestServers.close(generating);
        TestServers.close(pooling);
        vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
}
