import dev.infersim.engine.Deployment;
import dev.infersim.engine.Profiles;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.workload.FixedLength;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.PoolOptions;
import org.HdrHistogram.Histogram;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Throughput harness for the mock server (run with the JDK's single-file launcher; see README.md).
 * <ul>
 *   <li>{@code bare PORT TOKENS PERIOD_MS}: a bare Vert.x SSE server that writes one completion-shaped chunk to every
 *       open stream every PERIOD_MS (one timer per event loop, like one engine step), no engine, no JSON. Swept over
 *       periods, its best delivered rate is the SSE ceiling of this machine with the load generator beside it.</li>
 *   <li>{@code mock PORT TIME_SCALE MAX_NUM_SEQS STREAMS MEASURE_S [realtime]}: the mock server in-process (with
 *       {@code realtime}, its engine thread on SCHED_FIFO as {@code serve --realtime-engine}); once STREAMS requests
 *       run at once it measures for MEASURE_S and prints the step-lag percentiles of that window (wall us by which
 *       engine steps ended after their planned end) and the peak heap in use after GC; then serves until killed.</li>
 *   <li>{@code load PORT STREAMS TOKENS WARMUP_S MEASURE_S}: a closed-loop SSE load generator: STREAMS concurrent
 *       streaming /v1/completions requests of TOKENS tokens (ignore_eos); once all streams are open (or after 90 s)
 *       and WARMUP_S more, counts token chunks received per second over MEASURE_S.</li>
 * </ul>
 */
public final class MockServerBench {
    private static final byte[] MARK = "data: {".getBytes(StandardCharsets.US_ASCII);

    public static void main(String[] a) throws Exception {
        switch (a[0]) {
            case "bare" -> bare(Integer.parseInt(a[1]), Integer.parseInt(a[2]), Integer.parseInt(a[3]));
            case "mock" -> mock(Integer.parseInt(a[1]), Double.parseDouble(a[2]), Integer.parseInt(a[3]), Integer.parseInt(a[4]),
                    Integer.parseInt(a[5]), a.length > 6 && a[6].equals("realtime"));
            case "load" -> load(Integer.parseInt(a[1]), Integer.parseInt(a[2]), Integer.parseInt(a[3]), Integer.parseInt(a[4]),
                    Integer.parseInt(a[5]));
            default -> throw new IllegalArgumentException("bare|mock|load");
        }
    }

    /** One event loop's open streams, fed by one 1 ms timer. */
    private static final class Streams {
        final List<HttpServerResponse> open = new ArrayList<>();
        final List<int[]> sent = new ArrayList<>();
    }

    static void bare(int port, int tokens, int periodMs) throws Exception {
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2));
        Buffer chunk = Buffer.buffer("data: {\"id\":\"cmpl-0123456789abcdef0123456789abcdef\",\"object\":\"text_completion\",\"created\":1795650000,"
                + "\"model\":\"llama-3.1-8b\",\"choices\":[{\"index\":0,\"text\":\" river\",\"logprobs\":null,\"finish_reason\":null,"
                + "\"stop_reason\":null}],\"usage\":null}\n\n");
        for (int i = 0; i < 2; i++) {
            vertx.deployVerticle(new io.vertx.core.VerticleBase() {
                final Streams streams = new Streams();

                @Override
                public io.vertx.core.Future<?> start() {
                    vertx.setPeriodic(periodMs, t -> {
                        for (int s = streams.open.size() - 1; s >= 0; s--) {
                            HttpServerResponse r = streams.open.get(s);
                            int[] n = streams.sent.get(s);
                            if (++n[0] >= tokens) {
                                r.end(chunk.copy().appendString("data: [DONE]\n\n"));
                                streams.open.remove(s);
                                streams.sent.remove(s);
                            } else {
                                r.write(chunk.copy());
                            }
                        }
                    });
                    return vertx.createHttpServer(new io.vertx.core.http.HttpServerOptions().setAcceptBacklog(4096)).requestHandler(req -> req.body().onSuccess(b -> {
                        HttpServerResponse r = req.response().setChunked(true).putHeader("content-type", "text/event-stream");
                        streams.open.add(r);
                        streams.sent.add(new int[1]);
                        r.closeHandler(v -> {
                            int idx = streams.open.indexOf(r);
                            if (idx >= 0) {
                                streams.open.remove(idx);
                                streams.sent.remove(idx);
                            }
                        });
                    })).listen(port, "127.0.0.1");
                }
            }).toCompletionStage().toCompletableFuture().join();
        }
        System.out.println("bare SSE server on " + port);
        Thread.sleep(Long.MAX_VALUE);
    }

    static void mock(int port, double timeScale, int maxNumSeqs, int streams, int measureS, boolean realtime)
            throws Exception {
        Deployment d = Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).maxNumSeqs(maxNumSeqs).build();
        MockServer server = MockServer.start(ServerOptions.builder(d).port(port).timeScale(timeScale).eventLoops(2)
                .maxWaitingRequests(100_000).eosPosition(new FixedLength(100)).realtimeEngine(realtime).build())
                .toCompletionStage().toCompletableFuture().join();
        System.out.println(server.readyLine());
        long giveUp = System.nanoTime() + 120_000_000_000L;
        while (server.runningRequests() < streams * 0.95 && System.nanoTime() < giveUp) {
            Thread.sleep(100);
        }
        Thread.sleep(2000);
        Histogram before = server.stepLagNanos();
        long peakAfterGc = 0;
        long end = System.nanoTime() + measureS * 1_000_000_000L;
        while (System.nanoTime() < end) {
            Thread.sleep(1000);
            for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
                if (pool.getType() == MemoryType.HEAP && pool.getCollectionUsage() != null) {
                    peakAfterGc = Math.max(peakAfterGc, pool.getCollectionUsage().getUsed());
                }
            }
        }
        Histogram lag = server.stepLagNanos();
        lag.subtract(before);
        System.out.printf(Locale.ROOT, "steps=%d step_lag_us p50=%.1f p90=%.1f p99=%.1f p999=%.1f max=%.1f; old-gen after GC peak=%.1f MB; "
                        + "heap max=%.0f MB%n", lag.getTotalCount(), lag.getValueAtPercentile(50) / 1e3, lag.getValueAtPercentile(90) / 1e3,
                lag.getValueAtPercentile(99) / 1e3, lag.getValueAtPercentile(99.9) / 1e3, lag.getMaxValue() / 1e3, peakAfterGc / 1e6,
                Runtime.getRuntime().maxMemory() / 1e6);
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }

    static void load(int port, int streams, int tokens, int warmupS, int measureS) throws Exception {
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(2));
        HttpClient client = vertx.createHttpClient(new HttpClientOptions().setDefaultHost("127.0.0.1").setDefaultPort(port)
                .setKeepAlive(true), new PoolOptions().setHttp1MaxSize(streams).setMaxWaitQueueSize(-1));
        String body = "{\"model\":\"llama-3.1-8b\",\"prompt\":\"Write about the river\",\"max_tokens\":" + tokens
                + ",\"ignore_eos\":true,\"stream\":true}";
        LongAdder received = new LongAdder();
        LongAdder completed = new LongAdder();
        LongAdder failed = new LongAdder();
        LongAdder active = new LongAdder();
        AtomicLong stopAt = new AtomicLong(Long.MAX_VALUE);
        for (int i = 0; i < streams; i++) {
            vertx.setTimer(1 + i / 4, t -> stream(client, body, received, completed, failed, active, stopAt));
        }
        long giveUp = System.nanoTime() + 90_000_000_000L;
        while (active.sum() < streams && System.nanoTime() < giveUp) {
            Thread.sleep(100);
        }
        Thread.sleep(warmupS * 1000L);
        long t0 = System.nanoTime();
        long r0 = received.sum();
        long c0 = completed.sum();
        long activeAtStart = active.sum();
        Thread.sleep(measureS * 1000L);
        double seconds = (System.nanoTime() - t0) / 1e9;
        long tokensIn = received.sum() - r0;
        System.out.printf(Locale.ROOT, "streams=%d open at start/end=%d/%d tokens/s=%.0f completed/s=%.1f failed=%d%n", streams,
                activeAtStart, active.sum(), tokensIn / seconds, (completed.sum() - c0) / seconds, failed.sum());
        stopAt.set(System.nanoTime());
        client.close();
        vertx.close();
        System.exit(0);
    }

    private static void stream(HttpClient client, String body, LongAdder received, LongAdder completed, LongAdder failed,
                               LongAdder active, AtomicLong stopAt) {
        if (System.nanoTime() > stopAt.get()) {
            return;
        }
        int[] match = new int[1];
        client.request(HttpMethod.POST, "/v1/completions")
                .compose(req -> req.putHeader("content-type", "application/json").send(body))
                .onSuccess(resp -> {
                    active.increment();
                    resp.handler(buf -> {
                        int count = 0;
                        int m = match[0];
                        for (int i = 0; i < buf.length(); i++) {
                            byte b = buf.getByte(i);
                            m = b == MARK[m] ? m + 1 : (b == MARK[0] ? 1 : 0);
                            if (m == MARK.length) {
                                count++;
                                m = 0;
                            }
                        }
                        match[0] = m;
                        received.add(count);
                    });
                    resp.endHandler(v -> {
                        active.decrement();
                        completed.increment();
                        stream(client, body, received, completed, failed, active, stopAt);
                    });
                    resp.exceptionHandler(e -> failed.increment());
                })
                .onFailure(e -> failed.increment());
    }
}
