package dev.infersim.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.bench.BenchmarkClient;
import dev.infersim.bench.config.BenchConfig;
import dev.infersim.bench.report.BenchResult;
import dev.infersim.result.GoodputSlo;
import dev.infersim.result.RequestLogReader;
import dev.infersim.result.RequestRecord;
import dev.infersim.result.ResultJson;
import dev.infersim.server.fleet.MockServer;
import dev.infersim.server.config.ServerOptions;
import dev.infersim.server.observe.TruthLog;
import dev.infersim.workload.Workload;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.DoubleFunction;

/**
 * The demo's measured side: the mock server in-process at one time scale, with its truth log, and the benchmark client
 * driving it over HTTP. Besides what the client measured, each run keeps the server's own account of the same requests
 * (the truth log's model-time arrivals and tokens), which tells whether the engine's queue grew whatever the client's
 * timing was worth; and a calibration run measures the client's TTFT error against that truth ({@link DemoCalibration}).
 */
final class DemoMeasurement implements AutoCloseable {
    /** How long to wait for the truth log's writer to catch up with a finished run. */
    private static final long TRUTH_WAIT_NANOS = TimeUnit.SECONDS.toNanos(5);

    private final MockServer server;
    private final TruthLog truth;
    private final Path truthFile;
    private final BenchmarkClient client;
    private final double timeScale;
    private long truthSeen;

    /**
     * A measured run: the client's result, its late service per wall second, the server's account, and each measured
     * request's TTFT as the client saw it, in the order they were sent, model ms (+Infinity where it failed).
     */
    record Run(BenchResult result, LateServiceRate.Late client, ServerTruth truth, double[] ttftModelMs) {
    }

    /**
     * The server's account of a run's measured requests, in model time: the rate they arrived at, their late service in
     * the second half of their arrivals ({@link LateServiceRate}), and their TTFT p99 from arrival to first token (a
     * request that failed counts as the slowest), NaN without requests.
     */
    record ServerTruth(long requests, double arrivalRatePerS, LateServiceRate.Late late, double ttftP99Ms) {
    }

    private DemoMeasurement(MockServer server, TruthLog truth, Path truthFile, BenchmarkClient client, double timeScale) {
        this.server = server;
        this.truth = truth;
        this.truthFile = truthFile;
        this.client = client;
        this.timeScale = timeScale;
    }

    /**
     * Starts the mock (the options at {@code timeScale}, with a truth log) and a client whose send-lag limit is the
     * noise budget in wall time at this scale.
     */
    static DemoMeasurement start(DoubleFunction<ServerOptions.Builder> options, double timeScale, double budgetModelMs)
            throws Exception {
        Path file = Files.createTempFile("infersim-demo-truth-", ".jsonl");
        TruthLog truth = TruthLog.open(file, 1L << 24);
        MockServer server;
        try {
            server = MockServer.start(options.apply(timeScale).port(0).timeScale(timeScale).truthLog(truth).build())
                    .toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            truth.close();
            Files.deleteIfExists(file);
            throw e;
        }
        BenchConfig config = new BenchConfig(server.baseUrl(), "/v1/completions", server.options().servedModelName(), null,
                false, 120_000, Math.max(1, Math.round(budgetModelMs / timeScale * 1e6)),
                // overload past the knee may fail requests: that is what the sweep measures, not a broken run
                1.0, GoodputSlo.NONE, List.of("ttft", "tpot", "itl", "e2el"), List.of(50.0, 99.0), 4096, null, 500);
        return new DemoMeasurement(server, truth, file, new BenchmarkClient(config), timeScale);
    }

    double timeScale() {
        return timeScale;
    }

    MockServer server() {
        return server;
    }

    /** A calibration run: the client's TTFT error against the truth and the engine steps' lateness, p99, wall ms. */
    DemoCalibration.Round calibrate(Workload workload, int warmups) {
        Histogram before = server.stepLagNanos();
        BenchResult r = client.run(workload, warmups, 0, 0, ResultJson.mapper().createObjectNode());
        Histogram lag = server.stepLagNanos();
        lag.subtract(before);
        skipTruth();
        var error = r.keys().groundTruth() == null ? null : r.keys().groundTruth().ttftAbsErrorMs();
        return new DemoCalibration.Round(timeScale, error == null ? Double.POSITIVE_INFINITY : error.p99(),
                lag.getTotalCount() == 0 ? 0 : lag.getValueAtPercentile(99) / 1e6,
                error == null ? 0 : error.samples());
    }

    /** Measures a run, keeping the client's per-request detail for its service windows and the server's account. */
    Run run(Workload workload, int warmups, ObjectNode metadata, double meanOutputTokens) throws IOException {
        Path detail = Files.createTempFile("infersim-demo-", ".jsonl");
        try {
            BenchResult measured = client.run(workload, warmups, 0, 0, metadata, detail);
            Set<String> ids = new HashSet<>();
            List<RequestRecord> records = new ArrayList<>();
            new RequestLogReader(detail).forEach(false, row -> {
                if (!row.warmup()) {
                    records.add(row.record());
                    if (row.client() != null && row.client().requestId() != null) {
                        ids.add(row.client().requestId());
                    }
                }
            });
            double[] ttft = records.stream().sorted(Comparator.comparingLong(RequestRecord::scheduledNanos))
                    .mapToDouble(r -> r.succeeded() ? r.ttftNanos() / 1e6 * timeScale : Double.POSITIVE_INFINITY)
                    .toArray();
            return new Run(measured, LateServiceRate.Late.of(LateServiceRate.served(detail), meanOutputTokens),
                    serverTruth(ids, meanOutputTokens), ttft);
        } finally {
            Files.deleteIfExists(detail);
        }
    }

    /** The truth log's rows of these requests, once its writer has caught up, in model time. */
    private ServerTruth serverTruth(Set<String> ids, double meanOutputTokens) {
        List<LateServiceRate.Served> served = new ArrayList<>();
        long deadline = System.nanoTime() + TRUTH_WAIT_NANOS;
        while (true) {
            TruthLog.Page page = truth.since(truthSeen, Integer.MAX_VALUE);
            truthSeen = page.next();
            for (String line : page.body().split("\n")) {
                if (!line.isBlank()) {
                    LateServiceRate.Served s = served(line, ids);
                    if (s != null) {
                        served.add(s);
                    }
                }
            }
            if (served.size() >= ids.size() || System.nanoTime() > deadline) {
                break;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
        return new ServerTruth(served.size(), LateServiceRate.sendRate(served),
                LateServiceRate.Late.of(served, meanOutputTokens), ttftP99Ms(served));
    }

    /** The nearest-rank 99th percentile of the requests' TTFTs, ms; a failed request is +Infinity; NaN if none. */
    static double ttftP99Ms(List<LateServiceRate.Served> served) {
        double[] ttft = served.stream().mapToDouble(s -> s.succeeded() ? (s.firstTokenNanos() - s.sentNanos()) / 1e6
                : Double.POSITIVE_INFINITY).sorted().toArray();
        return ttft.length == 0 ? Double.NaN : ttft[(int) Math.ceil(0.99 * ttft.length) - 1];
    }

    /** A truth-log row of one of {@code ids} in model nanoseconds (arrival as its send), or null. */
    private static LateServiceRate.Served served(String line, Set<String> ids) {
        try {
            JsonNode row = ResultJson.mapper().readTree(line);
            if (!ids.contains(row.path("request_id").asText())) {
                return null;
            }
            JsonNode m = row.path("model");
            return new LateServiceRate.Served(nanos(m, "arrival_ms"), nanos(m, "first_token_ms"),
                    nanos(m, "finished_ms"), row.path("completion_tokens").asInt(),
                    !"abort".equals(row.path("finish_reason").asText()) && m.path("first_token_ms").isNumber());
        } catch (IOException e) {
            throw new UncheckedIOException("demo: the mock's truth log has a row that is not JSON", e);
        }
    }

    private static long nanos(JsonNode node, String ms) {
        return Math.round(node.path(ms).asDouble() * 1e6);
    }

    /** Moves past the rows of a run whose truth is not needed (a calibration's). */
    private void skipTruth() {
        truthSeen = truth.since(truthSeen, Integer.MAX_VALUE).next();
    }

    @Override
    public void close() throws Exception {
        try {
            client.close();
            server.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        } finally {
            truth.close();
            Files.deleteIfExists(truthFile);
        }
    }
}
