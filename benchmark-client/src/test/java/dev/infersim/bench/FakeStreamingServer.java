package dev.infersim.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;

import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A small OpenAI-style streaming server for client tests: first token after a fixed delay, then chunks of a fixed
 * number of tokens at a fixed interval, continuous usage stats, and the server's own timeline in an {@code infersim}
 * object in the last chunk. Every {@code failEvery}-th request answers 429, every {@code hangEvery}-th never answers,
 * every {@code resetEvery}-th has its connection closed after the first chunk, and every one from the
 * {@code failFrom}-th on answers 429 too. Counts requests in flight, and the
 * connections clients opened.
 */
public final class FakeStreamingServer implements AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    final AtomicInteger inFlight = new AtomicInteger();
    final AtomicInteger maxInFlight = new AtomicInteger();
    public final AtomicLong received = new AtomicLong();
    final AtomicInteger connectionsOpened = new AtomicInteger();
    final AtomicInteger maxConnectionsOpen = new AtomicInteger();
    /** Requests numbered up to this one answer 503: a server (or front door) with nothing ready yet. */
    final AtomicLong unreadyThrough = new AtomicLong();
    /** The number of the first request to refuse along with all after it: a server that broke mid-benchmark. */
    public final AtomicLong failFrom = new AtomicLong(Long.MAX_VALUE);
    private final AtomicInteger connectionsOpen = new AtomicInteger();
    private final Vertx vertx = Vertx.vertx();
    private final long ttftMillis;
    private final long chunkMillis;
    private final int tokensPerChunk;
    private final int failEvery;
    private final int hangEvery;
    private final int resetEvery;
    private final HttpServer server;

    public FakeStreamingServer(long ttftMillis, long chunkMillis, int tokensPerChunk, int failEvery, int hangEvery,
                        int resetEvery) {
        this.ttftMillis = ttftMillis;
        this.chunkMillis = chunkMillis;
        this.tokensPerChunk = tokensPerChunk;
        this.failEvery = failEvery;
        this.hangEvery = hangEvery;
        this.resetEvery = resetEvery;
        this.server = vertx.createHttpServer().requestHandler(this::handle).connectionHandler(c -> {
            connectionsOpened.incrementAndGet();
            maxConnectionsOpen.accumulateAndGet(connectionsOpen.incrementAndGet(), Math::max);
            c.closeHandler(v -> connectionsOpen.decrementAndGet());
        }).listen(0, "127.0.0.1").await();
    }

    public String baseUrl() {
        return "http://127.0.0.1:" + server.actualPort();
    }

    private void handle(HttpServerRequest req) {
        if (req.path().equals("/metrics")) {
            req.response().end("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{model_name=\"m\"} "
                    + inFlight.get() + "\nvllm:num_requests_waiting{model_name=\"m\"} 0\n"
                    + "vllm:kv_cache_usage_perc{model_name=\"m\"} 0.25\n");
            return;
        }
        req.body().onSuccess(body -> {
            long receivedNanos = System.nanoTime();
            long n = received.incrementAndGet();
            if (n <= unreadyThrough.get()) {
                req.response().setStatusCode(503).end("{\"error\":{\"message\":\"No replica is ready\",\"code\":503}}");
                return;
            }
            if (failEvery > 0 && n % failEvery == 0 || n >= failFrom.get()) {
                req.response().setStatusCode(429).end("{\"error\":{\"message\":\"too many requests\",\"code\":429}}");
                return;
            }
            if (hangEvery > 0 && n % hangEvery == 0) {
                return;
            }
            JsonNode json;
            try {
                json = JSON.readTree(body.getBytes());
            } catch (java.io.IOException e) {
                req.response().setStatusCode(400).end();
                return;
            }
            int maxTokens = json.path("max_tokens").asInt(json.path("max_completion_tokens").asInt(16));
            int promptTokens = countWords(json.path("prompt").asText(""));
            HttpServerResponse resp = req.response().setChunked(true).putHeader("content-type", "text/event-stream")
                    .putHeader("x-request-id", "req-" + n);
            int now = inFlight.incrementAndGet();
            maxInFlight.accumulateAndGet(now, Math::max);
            boolean reset = resetEvery > 0 && n % resetEvery == 0;
            vertx.setTimer(Math.max(1, ttftMillis), id -> stream(resp, 0, maxTokens, promptTokens, receivedNanos, -1, reset));
        });
    }

    private void stream(HttpServerResponse resp, int sent, int maxTokens, int promptTokens, long receivedNanos,
                        long firstNanos, boolean reset) {
        int k = Math.min(tokensPerChunk, maxTokens - sent);
        int total = sent + k;
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < k; i++) {
            text.append(" tok");
        }
        long now = System.nanoTime();
        long first = firstNanos < 0 ? now : firstNanos;
        String chunk = "data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\""
                + text + "\",\"finish_reason\":" + (total == maxTokens ? "\"length\"" : "null") + "}],\"usage\":"
                + usage(promptTokens, total) + "}\n\n";
        resp.write(chunk);
        if (reset) {
            resp.reset();
            inFlight.decrementAndGet();
            return;
        }
        if (total < maxTokens) {
            vertx.setTimer(Math.max(1, chunkMillis), id -> stream(resp, total, maxTokens, promptTokens, receivedNanos,
                    first, false));
            return;
        }
        String truth = String.format(Locale.ROOT, "{\"ttft_ms\":%.6f,\"e2el_ms\":%.6f,\"queue_ms\":0.0}",
                (first - receivedNanos) / 1e6, (now - receivedNanos) / 1e6);
        resp.write("data: {\"id\":\"cmpl-1\",\"object\":\"text_completion\",\"choices\":[],\"usage\":"
                + usage(promptTokens, total) + ",\"infersim\":" + truth + "}\n\n");
        resp.end("data: [DONE]\n\n");
        inFlight.decrementAndGet();
    }

    /** Prompts rendered by PromptRenderer are one token per space-led word. */
    private static int countWords(String prompt) {
        int n = 0;
        for (int i = 0; i < prompt.length(); i++) {
            if (prompt.charAt(i) == ' ') {
                n++;
            }
        }
        return n;
    }

    private static String usage(int prompt, int completion) {
        return "{\"prompt_tokens\":" + prompt + ",\"completion_tokens\":" + completion + ",\"total_tokens\":"
                + (prompt + completion) + "}";
    }

    @Override
    public void close() {
        vertx.close().await();
    }
}
