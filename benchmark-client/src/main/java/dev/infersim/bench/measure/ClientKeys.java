package dev.infersim.bench.measure;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.infersim.result.FlatRecordReader;
import dev.infersim.result.LatencyStats;
import dev.infersim.result.ReplicaLatency;
import dev.infersim.result.ResultJson;
import dev.infersim.result.RunHeader;
import dev.infersim.result.ServingResult;
import dev.infersim.result.VllmDetailArrays;

import java.nio.file.Path;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The keys only the benchmark client writes into a result, each prefixed {@code infersim_} there, in the order they
 * are written: the backend and endpoint, the load mode, the validity ({@link RunValidity}), send lag and read delay,
 * the machine's noise, the client's GC and event-loop CPU, in-flight and steady-state throughput, requests sent and
 * cancelled, errors by type, prompt-length mismatches, the ground-truth comparison and its findings
 * ({@link StreamFindings}), model time, warnings, the warm-up, the interrupt, percentile curves, time series, scraped
 * server metrics, the machine, and a shard's keys for {@code infersim merge}. After them, as vLLM writes
 * {@code --metadata}, the run's metadata (user keys and infersim's own, unprefixed, a key a measurement already wrote
 * left out); then, when there is one, the direct baseline run ({@code --baseline-url}) and the files the run could not
 * write.
 *
 * @param maxSendLagMs      the send-lag limit, judged only with --strict-timing (null without)
 * @param sendLagVerdict    null without --strict-timing
 * @param clientLoopsMs     null where the event loops' CPU time is unknown
 * @param modelTimeMs       the latencies in the server's model time by metric; null when it runs at wall-clock speed
 * @param serverMetrics     what --scrape-metrics got; null without
 * @param shard             a shard's keys (not written for an unsharded run)
 * @param metadata          the run's metadata, written after the measured keys without the prefix
 * @param baseline          the direct run beside a gateway run (not written without --baseline-url)
 * @param outputErrors      the files the run could not write, one line each (not written until the command asks)
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
@JsonDeserialize(using = FlatRecordReader.class)
public record ClientKeys(String backend, String baseUrl, String endpoint, String loadMode, boolean valid,
                         List<String> invalidReasons, LagSummary sendLagMs, LagSummary readDelayMs,
                         RunValidity.Validity validity, Double maxSendLagMs, RunValidity.LagJudgement sendLagVerdict,
                         NoiseMs schedulingNoiseMs, ClientGc.Collections clientGc, LoopsMs clientLoopsMs,
                         int maxInFlight, double meanInFlight, Double steadyRequestThroughput,
                         Double steadyOutputThroughput, Double steadySendRate, long sent, long cancelled,
                         Map<String, ErrorTally.Quoted> errors, long promptTokenMismatches,
                         long promptTokenMismatchMaxTokens, List<String> promptTokenMismatchExamples,
                         TruthError groundTruth, List<StreamFindings.Finding> findings, double timeScale,
                         Map<String, ModelTime> modelTimeMs, String tokenCountMethod, List<String> warnings,
                         Warmup warmup, boolean interrupted, String error, String detailedFile,
                         PercentileCurves percentileCurves, TimeSeries timeseries,
                         MetricsScraper.Timeline serverMetrics, Machine machine,
                         @JsonInclude(JsonInclude.Include.NON_NULL) ShardKeys shard,
                         @JsonUnwrapped RunMetadata metadata,
                         @JsonInclude(JsonInclude.Include.NON_NULL) Baseline baseline,
                         @JsonInclude(JsonInclude.Include.NON_NULL) List<String> outputErrors) {

    private static final JavaType RESULT = ResultJson.mapper().getTypeFactory()
            .constructParametricType(ServingResult.class, ClientKeys.class);

    public ClientKeys {
        metadata = metadata == null ? RunMetadata.NONE : metadata;
    }

    /**
     * A bench result file read back whole: {@link ServingResult#read} with the run's metadata, which the typed parts
     * do not hold (its keys are the user's own), taken from the keys of the file that the typed result does not write.
     */
    public static ServingResult<ClientKeys> read(Path file) {
        ObjectNode flat = ResultJson.readObject(file);
        return withMetadata(ResultJson.read(file, flat, RESULT), flat);
    }

    /** A bench result read back whole from its JSON object (as a sweep's result lists its runs); see {@link #read(Path)}. */
    public static ServingResult<ClientKeys> read(ObjectNode flat) {
        return withMetadata(ResultJson.mapper().convertValue(flat, RESULT), flat);
    }

    private static ServingResult<ClientKeys> withMetadata(ServingResult<ClientKeys> typed, ObjectNode flat) {
        Set<String> written = ResultJson.tree(typed).properties().stream().map(Map.Entry::getKey)
                .collect(java.util.stream.Collectors.toSet());
        ObjectNode rest = ResultJson.mapper().createObjectNode();
        for (Iterator<Map.Entry<String, JsonNode>> it = flat.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (!written.contains(e.getKey()) && !VllmDetailArrays.KEYS.contains(e.getKey())) {
                rest.set(e.getKey(), e.getValue());
            }
        }
        return typed.withProducer(typed.producer().withMetadata(RunMetadata.of(rest)));
    }

    /** These keys with the run judged invalid for one more reason. */
    public ClientKeys invalidatedBy(String reason) {
        List<String> reasons = new java.util.ArrayList<>(invalidReasons);
        reasons.add(reason);
        return after(false, List.copyOf(reasons), findings, detailedFile, metadata, baseline, outputErrors);
    }

    /** These keys naming the run's per-request file (null: none was written). */
    public ClientKeys withDetailedFile(String file) {
        return after(valid, invalidReasons, findings, file, metadata, baseline, outputErrors);
    }

    /** These keys with the run's metadata. */
    public ClientKeys withMetadata(RunMetadata m) {
        return after(valid, invalidReasons, findings, detailedFile, m, baseline, outputErrors);
    }

    /** These keys judged against a direct baseline run: the baseline, and the findings drawn again with it. */
    public ClientKeys withBaseline(Baseline b, List<StreamFindings.Finding> redrawn) {
        return after(valid, invalidReasons, redrawn, detailedFile, metadata, b, outputErrors);
    }

    /** These keys with one more file the run could not write ({@code null}: the list, empty if it was absent). */
    public ClientKeys withOutputError(String failure) {
        List<String> failures = new java.util.ArrayList<>(outputErrors == null ? List.of() : outputErrors);
        if (failure != null) {
            failures.add(failure);
        }
        return after(valid, invalidReasons, findings, detailedFile, metadata, baseline, List.copyOf(failures));
    }

    /** These keys with what can change once the run is measured (its verdict, findings and files); the rest kept. */
    private ClientKeys after(boolean valid, List<String> invalidReasons, List<StreamFindings.Finding> findings,
                             String detailedFile, RunMetadata metadata, Baseline baseline, List<String> outputErrors) {
        return new ClientKeys(backend, baseUrl, endpoint, loadMode, valid, invalidReasons, sendLagMs, readDelayMs,
                validity, maxSendLagMs, sendLagVerdict, schedulingNoiseMs, clientGc, clientLoopsMs, maxInFlight,
                meanInFlight, steadyRequestThroughput, steadyOutputThroughput, steadySendRate, sent, cancelled, errors,
                promptTokenMismatches, promptTokenMismatchMaxTokens, promptTokenMismatchExamples, groundTruth,
                findings, timeScale, modelTimeMs, tokenCountMethod, warnings, warmup, interrupted, error,
                detailedFile, percentileCurves, timeseries, serverMetrics, machine, shard, metadata, baseline,
                outputErrors);
    }

    /** A latency-like sample's summary in ms: count, mean, median, p99 and max. */
    public record LagSummary(long samples, double mean, double p50, double p99, double max) {
        public static LagSummary of(LatencyStats s) {
            return new LagSummary(s.count(), s.meanMs(), s.medianMs(), s.percentileMs(99), s.maxMs());
        }
    }

    /** The machine's scheduling noise (an idle probe thread's wake-up lateness) before the first run and during it. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record NoiseMs(LagSummary calibration, LagSummary duringRun) {
    }

    /** The client's event loops' time on a CPU and waiting for one during the run ({@link LoopCpu}). */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record LoopsMs(double onCpu, double waitingForCpu) {
    }

    /** A latency in the server's model time: mean, median and p99 in ms. */
    public record ModelTime(double mean, double median, double p99) {
    }

    /** The warm-up requests (sent, not measured): ended, failed, cut off, and their span. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Warmup(long requests, long failed, long cancelled, double durationS) {
    }

    /** vLLM's four metrics, chunk ICL and send lag at the same percentiles, for the report's curves. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record PercentileCurves(List<Double> percentiles, List<Double> ttftMs, List<Double> tpotMs,
                                   List<Double> itlMs, List<Double> e2elMs, List<Double> iclMs,
                                   List<Double> sendLagMs) {
    }

    /**
     * Per-second series: each bucket's start and length (one second, except the last, which ends with the window), the
     * requests sent and completed, output tokens, and the mean TTFT and E2EL of the requests that finished in it (null
     * where none did).
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record TimeSeries(List<Double> timeS, List<Double> bucketS, List<Long> sent, List<Long> completed,
                             List<Long> outputTokens, List<Double> meanTtftMs, List<Double> meanE2elMs) {
    }

    /** The machine the client ran on. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Machine(String os, String arch, int cpus, long maxHeapBytes, String java) {
        public static Machine current() {
            return new Machine(System.getProperty("os.name") + " " + System.getProperty("os.version"),
                    System.getProperty("os.arch"), Runtime.getRuntime().availableProcessors(),
                    Runtime.getRuntime().maxMemory(),
                    System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
        }
    }

    /**
     * The client's latencies against the server's ground truth: TTFT and E2EL error, what reached the client of the
     * streams, send-to-arrival time, and how the requests spread over the replicas. Results of servers that say what
     * reached the wire add (null, and not written, before them): how many requests were checked at the wire, the
     * client's own bound on each TTFT error and the error beyond it, consecutive tokens judged for coalescing, and the
     * requests the server answered more than once.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record TruthError(long requests, LagSummary ttftAbsErrorMs, LagSummary e2elAbsErrorMs, long negativeErrors,
                             Streams streams, LagSummary preArrivalMs, long lateArrivals,
                             Map<String, Long> requestsPerReplica, Map<String, ReplicaLatency> perReplica,
                             @JsonInclude(JsonInclude.Include.NON_NULL) Long requestsAtWire,
                             @JsonInclude(JsonInclude.Include.NON_NULL) LagSummary ttftErrorBoundMs,
                             @JsonInclude(JsonInclude.Include.NON_NULL) LagSummary unexplainedTtftErrorMs,
                             @JsonInclude(JsonInclude.Include.NON_NULL) TokenPairs tokenPairs,
                             @JsonInclude(JsonInclude.Include.NON_NULL) Retried retried) {
    }

    /**
     * Consecutive tokens the server handed to the wire more than {@code gap_over_ms} apart ({@code judged}); of them,
     * those that reached the client within {@code within_ms} of each other, held on the way ({@code coalesced}), and
     * those the client's own late read explains ({@code client_explained}).
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record TokenPairs(long judged, long coalesced, long clientExplained, double gapOverMs, double withinMs) {
    }

    /** Requests the server answered more than once ({@code x-infersim-attempt} 2 or more), and the most attempts of one. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Retried(long requests, long maxAttempts) {
    }

    /** What reached the client of the streams the server timed, against the server's own account. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Streams(long checked, long bunched, long chunks, long tokens, long lostTokenRequests,
                          long lostTokens, long reorderedRequests) {
    }

    /**
     * What {@code infersim merge} needs of a shard beyond vLLM's keys: which shard, its measured window on the wall
     * clock, its exact good-request count, and each latency's exact count, mean and deviation.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record ShardKeys(int index, int count, long scheduleStartEpochMs, double windowStartS, double windowEndS,
                            long goodRequests, Map<String, Moments> latencyMoments) {
    }

    /** A latency's exact count, mean and standard deviation (ms). */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Moments(long count, double meanMs, double stdMs) {
        public static Moments of(LatencyStats s) {
            return new Moments(s.count(), s.meanMs(), s.stdMs());
        }
    }

    /**
     * The direct run to one replica beside a gateway run ({@code --baseline-url}): its URL, then either what it
     * measured or why it failed.
     *
     * @param run   null when it failed
     * @param error null when it ran
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    @JsonDeserialize(using = FlatRecordReader.class)
    public record Baseline(String baseUrl, @JsonUnwrapped BaselineRun run,
                           @JsonInclude(JsonInclude.Include.NON_NULL) String error) {
    }

    /**
     * What the direct run measured: its request rate ({@code "inf"} for all at once), completed requests, validity and
     * ground-truth error, and the gateway's added TTFT at p50 and p99 (null without requests on either side).
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record BaselineRun(@JsonSerialize(using = RunHeader.RequestRateWriter.class)
                              @JsonDeserialize(using = RunHeader.RequestRateReader.class) double requestRate,
                              Long completed, boolean valid,
                              @JsonProperty("infersim_ground_truth") TruthError groundTruth,
                              Double addedTtftP50Ms, Double addedTtftP99Ms) {
    }

    /**
     * A run's metadata as vLLM writes {@code --metadata}: keys of the user's and infersim's own (version, workload),
     * each written as given after the measured keys. JSON plumbing: the keys are the user's, so they have no type.
     */
    public record RunMetadata(@JsonAnyGetter Map<String, JsonNode> keys) {
        public static final RunMetadata NONE = new RunMetadata(Map.of());

        /**
         * The keys of {@code json}, in order, each as its JSON text reads back (a long that fits an int is an int), so
         * that metadata given and metadata read from a file are equal.
         */
        public static RunMetadata of(ObjectNode json) {
            Map<String, JsonNode> keys = new LinkedHashMap<>();
            try {
                ResultJson.mapper().readTree(ResultJson.text(json)).fields()
                        .forEachRemaining(e -> keys.put(e.getKey(), e.getValue()));
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                throw new java.io.UncheckedIOException(e); // text Jackson wrote itself
            }
            return new RunMetadata(java.util.Collections.unmodifiableMap(keys));
        }

        /** These keys without those {@code written} already holds: as in vLLM, what was measured wins. */
        public RunMetadata without(Set<String> written) {
            Map<String, JsonNode> kept = new LinkedHashMap<>(keys);
            kept.keySet().removeAll(written);
            return new RunMetadata(java.util.Collections.unmodifiableMap(kept));
        }
    }
}
