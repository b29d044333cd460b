package dev.infersim.server.fleet;

import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.observe.TruthLog;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code serve --warmup}: runs the server's own code hot before the real server reports ready, so that the first
 * measured run does not measure the JIT compiler (on a fresh mock it took 1.4-1.8 s of CPU in the first 3.6 s of a
 * 40-stream run and made the event loops hand tokens to the wire up to 24 ms late; after 1,500 requests that fell to
 * 2-5 ms). The requests go to a throwaway server of the same model, timing, tokenizer and features on a free
 * loopback port, not to the real one, so nothing of them is left where a run would see it: no metrics, truth-log rows,
 * prefix-cache blocks or request numbers (which seed the output text). The mix is what clients send: streamed and
 * whole completions and chat completions, with and without usage per chunk and token times, prompts of 8 to 256 words
 * and 4 to 32 output tokens, {@value #IN_FLIGHT} in flight. The throwaway server runs at least {@value #MIN_TIME_SCALE}
 * times faster than the modelled GPU, as its timing is not what is being warmed.
 */
public final class JitWarmup {
    /** The default number of requests: the run after which the mock's write lateness settled. */
    public static final int DEFAULT_REQUESTS = 1_500;
    static final int IN_FLIGHT = 32;
    static final double MIN_TIME_SCALE = 50;
    private static final String[] WORDS = {"the", "model", "serves", "tokens", "quickly", "while", "a", "gateway",
            "waits", "for", "every", "stream", "to", "finish", "and", "report"};

    /**
     * What the warm-up did.
     *
     * @param requests the requests sent
     * @param failed   those that did not end with status 200
     * @param seconds  how long it took (wall)
     */
    public record Result(int requests, int failed, double seconds) {
        public String describe() {
            return String.format(java.util.Locale.ROOT, "infersim warmed up its JIT with %d internal requests in %.1f s%s",
                    requests, seconds, failed == 0 ? "" : " (" + failed + " failed)");
        }
    }

    private JitWarmup() {
    }

    /** Sends {@code requests} requests to a throwaway server like {@code options} and closes it. */
    public static Result run(ServerOptions options, int requests) throws IOException, InterruptedException {
        long start = System.nanoTime();
        Path truth = options.truthLog() == null ? null : Files.createTempFile("infersim-warmup-truth", ".jsonl");
        TruthLog log = truth == null ? null : TruthLog.open(truth, 1 << 20);
        MockServer server;
        try {
            server = MockServer.start(throwaway(options, log)).toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            closeLog(log, truth);
            throw new IllegalStateException("the warm-up server did not start: " + e.getMessage(), e);
        }
        int failed;
        try {
            failed = send(server, options, requests);
        } finally {
            try {
                server.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                // the warm-up is done either way; a server that did not close holds only a loopback port
            }
            closeLog(log, truth);
        }
        return new Result(requests, failed, (System.nanoTime() - start) / 1e9);
    }

    private static void closeLog(TruthLog log, Path truth) throws IOException {
        if (log != null) {
            log.close();
            Files.deleteIfExists(truth);
        }
    }

    /** The real server's model and code paths; loopback, any free port, fast, and nothing that binds other ports. */
    static ServerOptions throwaway(ServerOptions o, TruthLog log) {
        return ServerOptions.builder(o.deployment()).schedulingPolicy(o.schedulingPolicy())
                .servedModelNames(o.servedModelNames()).host("127.0.0.1").port(0).apiKey(o.apiKey())
                .timeScale(Math.max(MIN_TIME_SCALE, o.timeScale())).maxWaitingRequests(o.maxWaitingRequests())
                .outputMode(o.outputMode()).seed(o.seed()).eosPosition(o.eosPosition()).maxBodyBytes(o.maxBodyBytes())
                .eventLoops(o.eventLoops()).dataParallelSize(o.dataParallelSize()).fixedTiming(o.fixedTiming())
                .loraModules(o.loraModules()).features(o.features()).metrics(o.metrics()).tokenizer(o.tokenizer())
                .timeouts(o.timeouts()).truthLog(log).build();
    }

    private static int send(MockServer server, ServerOptions options, int requests) throws InterruptedException {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).version(HttpClient.Version.HTTP_1_1).build();
        Semaphore slots = new Semaphore(IN_FLIGHT);
        AtomicInteger failed = new AtomicInteger();
        CompletableFuture<?>[] sent = new CompletableFuture<?>[requests];
        for (int i = 0; i < requests; i++) {
            slots.acquire();
            HttpRequest.Builder r = HttpRequest.newBuilder(URI.create(server.baseUrl() + (i % 4 == 1 ? "/v1/chat/completions"
                    : "/v1/completions"))).timeout(Duration.ofSeconds(60)).header("content-type", "application/json")
                    .header("x-request-id", "infersim-warmup-" + i).POST(HttpRequest.BodyPublishers.ofString(body(options, i)));
            if (options.apiKey() != null) {
                r.header("authorization", "Bearer " + options.apiKey());
            }
            sent[i] = http.sendAsync(r.build(), HttpResponse.BodyHandlers.ofString()).whenComplete((response, error) -> {
                if (error != null || response.statusCode() != 200) {
                    failed.incrementAndGet();
                }
                slots.release();
            });
        }
        CompletableFuture.allOf(sent).exceptionally(e -> null).join();
        return failed.get();
    }

    /** Request {@code i} of the mix: every 4th whole, every 2nd streamed with usage per chunk, every 8th with token times. */
    static String body(ServerOptions options, int i) {
        StringBuilder prompt = new StringBuilder();
        int words = 8 << (i % 6);
        for (int w = 0; w < words; w++) {
            prompt.append(w == 0 ? "" : " ").append(WORDS[(i * 7 + w) % WORDS.length]);
        }
        boolean chat = i % 4 == 1;
        StringBuilder b = new StringBuilder(prompt.length() + 256).append("{\"model\":\"").append(options.servedModelName())
                .append("\",");
        if (chat) {
            b.append("\"messages\":[{\"role\":\"user\",\"content\":\"").append(prompt).append("\"}],");
        } else {
            b.append("\"prompt\":\"").append(prompt).append("\",");
        }
        b.append("\"max_tokens\":").append(4 << (i % 4)).append(",\"ignore_eos\":true,\"temperature\":0");
        if (i % 4 != 3) {
            b.append(",\"stream\":true");
            if (i % 2 == 0) {
                b.append(",\"stream_options\":{\"include_usage\":true,\"continuous_usage_stats\":true}");
            }
        }
        if (i % 8 == 0) {
            b.append(",\"infersim\":{\"token_times\":true}");
        }
        return b.append('}').toString();
    }
}
