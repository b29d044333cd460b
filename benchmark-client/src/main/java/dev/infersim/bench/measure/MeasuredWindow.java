package dev.infersim.bench.measure;

import dev.infersim.common.ReadLateness;
import dev.infersim.result.ClientObservation;
import dev.infersim.result.GoodputSlo;
import dev.infersim.result.LatencyStats;
import dev.infersim.result.ReplicaLatency;
import dev.infersim.result.RequestLogWriter;
import dev.infersim.result.RequestRecord;
import dev.infersim.result.ServingStats;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Everything measured over one window of a run (the warmup or the measured part): the shared {@link ServingStats}
 * (vLLM's metrics), plus what only a real client sees: send lag (actual send minus intended send), errors by type,
 * prompt-length mismatches against the server's usage, the error of each latency against the server's ground truth,
 * and per-second bins of sends, completions, tokens and latency for the report's time charts. The event loops of a
 * run hand their requests' outcomes to the run's thread ({@code OutcomeRecorder}), which alone records them here, in
 * the order they ended; it is read once the run has drained. Recording a request allocates only its
 * {@link RequestRecord}. Not thread-safe.
 */
public final class MeasuredWindow {
    private static final int MISMATCH_EXAMPLES = 5;

    private final long startNanos;
    /** Zero of the per-request file's times: the schedule's start, shared by the warmup and the measured window. */
    private final long scheduleStartNanos;
    private final ServingStats stats;
    private final LatencyStats sendLag = new LatencyStats();
    /** Send lag of the sends scheduled at least {@link SendLagVerdict#BURST_GAP_NANOS} after the one before. */
    private final LatencyStats spacedSendLag = new LatencyStats();
    /** The part of send lag before the event loop took the request up, i.e. without the wait for a connection. */
    private final LatencyStats startLag = new LatencyStats();
    /** Send lag up to the request's bytes being in the socket (its write completed): the send side of the client's error. */
    private final LatencyStats writeLag = new LatencyStats();
    /** The lateness bound of every read that brought a chunk ({@link ReadLateness}): the client's read delay. */
    private final LatencyStats readLateness = new LatencyStats();
    /** The lateness bound of the read that brought each request's first chunk. */
    private final LatencyStats firstReadLateness = new LatencyStats();
    /** Per request, the client's own bound on its TTFT error ({@link RequestOutcome#ttftErrorBoundNanos()}). */
    private final LatencyStats ttftErrorBound = new LatencyStats();
    private final LatencyStats ttftError = new LatencyStats();
    private final LatencyStats e2elError = new LatencyStats();
    /** Requests whose ground truth gave the wire's instants, so that their error is the client's and the path's only. */
    private long truthAtWire;
    /**
     * Per request, the TTFT error beyond the client's own bound on it and the server's bound on its late read of the
     * request: what the path between the wire and the client (a gateway, the network) added.
     */
    private final LatencyStats unexplainedTtftError = new LatencyStats();
    /**
     * Consecutive tokens the server handed to the wire more than {@link StreamFindings#COALESCED_GAP_NANOS} apart
     * (judged), those that reached the client within {@link StreamFindings#COALESCED_WITHIN_NANOS} of each other
     * (coalesced on the way), and those whose bunching the client's own late read of the earlier one explains.
     */
    private long tokenPairsJudged;
    private long tokenPairsCoalesced;
    private long tokenPairsClientExplained;
    /** Requests the server answered more than once (a gateway's retries), and the most attempts of one. */
    private long retriedRequests;
    private long maxAttempts;
    private final ErrorTally errors = new ErrorTally();
    /** Sent but cut off in flight by an interrupt: neither a success nor a server failure, yet part of what was sent. */
    private long cancelled;
    /** Requests that waited for a --max-concurrency slot past their scheduled time (the client's own queue). */
    private long clientQueued;
    private long negativeErrors;
    private long promptMismatches;
    private long promptMismatchMaxTokens;
    private final List<String> promptMismatchExamples = new ArrayList<>();
    private long lastFinishNanos;
    /** The server's time scale from its ground truth (model time = wall time x this); 1 when it sent none. */
    private double timeScale = 1;
    /** Prompt tokens the server reported served from its prefix cache, over the requests that reported it. */
    private long cachedPromptTokens;
    /** Prompt tokens of the requests that reported cached tokens, and the part of them the workload shares. */
    private long cacheReportedPromptTokens;
    private long sharedPrefixTokens;
    /** Successful requests by how their per-chunk token counts were found, indexed by {@link TokenCountMethod}. */
    private final long[] tokenCountMethods = new long[TokenCountMethod.values().length];
    /**
     * What reached the client of the streams the server timed (ground truth), against the server's own account: the
     * server sends each token in its own chunk, so fewer chunks than tokens means chunks were lost on the way, and a
     * stream whose tokens reached the client over less than {@link StreamFindings#BUNCHED_SPAN} of the time the server
     * took to emit them (its decode time, of at least {@link StreamFindings#MIN_DECODE_NANOS}) was held and released
     * in bunches on the way.
     */
    private long truthChunks;
    private long truthTokens;
    private long streamsChecked;
    private long streamsBunched;
    private long lostTokenRequests;
    private long lostTokens;
    private long reorderedRequests;
    /**
     * How long after the client sent it each request reached the server that answered it (its engine's arrival, epoch
     * ms, against the send on this machine's wall clock): transport and the server's request parsing, plus whatever a
     * gateway added before it; and the requests that arrived {@link StreamFindings#LATE_ARRIVAL_NANOS} or later.
     */
    private final LatencyStats preArrival = new LatencyStats();
    private long lateArrivals;
    /** The wall clock (epoch ms) at nanoTime 0, to put send instants on the server's clock. */
    private final double epochMsAtNanoZero = System.currentTimeMillis() - System.nanoTime() / 1e6;
    /** Requests by the replica that served them ({@code infersim.replica}): how a gateway spread the load. */
    private final java.util.TreeMap<Integer, Long> requestsPerReplica = new java.util.TreeMap<>();
    /** Per replica, the server's TTFT and queue time of the requests it served, from their ground truth. */
    private final java.util.TreeMap<Integer, LatencyStats> ttftPerReplica = new java.util.TreeMap<>();
    private final java.util.TreeMap<Integer, LatencyStats> queuePerReplica = new java.util.TreeMap<>();
    private final RequestLogWriter log;
    private final boolean checkPromptLength;
    /** Actual send instants, for the arrival-process test; null unless {@link #keepSendTimes()} was called. */
    private long[] sendTimes;
    private int sendTimeCount;
    private long[] sentPerS = new long[64];
    private long[] completedPerS = new long[64];
    private long[] tokensPerS = new long[64];
    private double[] ttftSumMsPerS = new double[64];
    private double[] e2elSumMsPerS = new double[64];

    /**
     * @param checkPromptLength compare the server's usage.prompt_tokens with the prompt's length; off for chat
     *                          endpoints, whose template adds tokens the client cannot count
     */
    public MeasuredWindow(long startNanos, long scheduleStartNanos, GoodputSlo slo, RequestLogWriter log,
                   boolean checkPromptLength) {
        this.startNanos = startNanos;
        this.scheduleStartNanos = scheduleStartNanos;
        this.checkPromptLength = checkPromptLength;
        this.stats = new ServingStats(slo, startNanos);
        this.log = log;
        this.lastFinishNanos = startNanos;
    }

    /** When the window started: its first request's origin. */
    public long startNanos() {
        return startNanos;
    }

    /** Zero of the per-request file's times: the schedule's start. */
    public long scheduleStartNanos() {
        return scheduleStartNanos;
    }

    /** vLLM's metrics of the window's requests. */
    public ServingStats stats() {
        return stats;
    }

    /** Whether the requests' text is wanted: for the per-request file. */
    public boolean keepsText() {
        return log != null;
    }

    /** Actual send minus intended send, per request sent. */
    public LatencyStats sendLag() {
        return sendLag;
    }

    /** Send lag of the sends scheduled at least {@link SendLagVerdict#BURST_GAP_NANOS} after the one before. */
    LatencyStats spacedSendLag() {
        return spacedSendLag;
    }

    /** The part of send lag before the event loop took the request up. */
    LatencyStats startLag() {
        return startLag;
    }

    /** Send lag up to the request's bytes being in the socket. */
    LatencyStats writeLag() {
        return writeLag;
    }

    /** The lateness bound of every read that brought a chunk. */
    public LatencyStats readLateness() {
        return readLateness;
    }

    /** The lateness bound of the read that brought each request's first chunk. */
    LatencyStats firstReadLateness() {
        return firstReadLateness;
    }

    public ErrorTally errors() {
        return errors;
    }

    /** Requests cut off in flight by an interrupt. */
    public long cancelled() {
        return cancelled;
    }

    /** Requests that waited for a --max-concurrency slot past their scheduled time (the client's own queue). */
    public long clientQueued() {
        return clientQueued;
    }

    /** Requests whose usage.prompt_tokens differed from the prompt's length, and the largest difference. */
    public long promptMismatches() {
        return promptMismatches;
    }

    public long promptMismatchMaxTokens() {
        return promptMismatchMaxTokens;
    }

    /** The first few mismatches, in words. */
    public List<String> promptMismatchExamples() {
        return List.copyOf(promptMismatchExamples);
    }

    /** The server's time scale from its ground truth (model time = wall time x this); 1 when it sent none. */
    public double timeScale() {
        return timeScale;
    }

    /** The least trusted way any request's token counts were found, or null when none succeeded. */
    public TokenCountMethod weakestTokenCountMethod() {
        for (int i = tokenCountMethods.length - 1; i >= 0; i--) {
            if (tokenCountMethods[i] > 0) {
                return TokenCountMethod.values()[i];
            }
        }
        return null;
    }

    /**
     * Share of the prompt tokens the workload does not share between requests that the server nevertheless served from
     * its prefix cache: near 0 for fresh prompts; near 1 when the same prompts were sent before (the same --seed
     * against the same server). NaN when the server reported no cached tokens.
     */
    public double unexpectedCacheHitRate() {
        long fresh = cacheReportedPromptTokens - sharedPrefixTokens;
        return fresh <= 0 ? Double.NaN : Math.max(0, cachedPromptTokens - sharedPrefixTokens) / (double) fresh;
    }

    /** Keeps every request's actual send instant (8 bytes a request), for {@link #arrivals}: open loops only. */
    public void keepSendTimes() {
        sendTimes = new long[256];
    }

    /**
     * How the sends of this window fit the requested process ({@link ArrivalFit}); null unless send times were kept.
     * Sorts the kept instants: call once the window is complete.
     */
    ArrivalFit arrivals(double requestedRate, double burstiness) {
        return sendTimes == null ? null : ArrivalFit.test(sendTimes, sendTimeCount, requestedRate, burstiness);
    }

    /** Records one request that ended: succeeded, failed, or cancelled by an interrupt. */
    public void record(RequestOutcome x) {
        if (x.cancelled()) {
            cancelled++; // the server did not fail it: the client gave up on it
            return;
        }
        lastFinishNanos = Math.max(lastFinishNanos, x.endedNanos());
        if (x.originNanos() > x.schedule().scheduledNanos()) {
            clientQueued++;
        }
        if (x.sendNanos() >= 0 && sendTimes != null) {
            if (sendTimeCount == sendTimes.length) {
                sendTimes = Arrays.copyOf(sendTimes, 2 * sendTimeCount);
            }
            sendTimes[sendTimeCount++] = x.sendNanos();
        }
        if (x.writtenNanos() >= 0) {
            writeLag.record(Math.max(0, x.writtenNanos() - x.originNanos()));
        }
        ServerTruth truth = x.truth();
        int attempt = Math.max(x.reply().attempt(), truth == null ? -1 : truth.attempt());
        if (attempt > 1) {
            retriedRequests++;
            maxAttempts = Math.max(maxAttempts, attempt);
        }
        if (x.sendNanos() >= 0) {
            long lag = Math.max(0, x.sendNanos() - x.originNanos());
            sendLag.record(lag);
            startLag.record(Math.max(0, Math.min(x.sendNanos(), x.startNanos()) - x.originNanos()));
            if (x.schedule().gapNanos() >= SendLagVerdict.BURST_GAP_NANOS) {
                spacedSendLag.record(lag);
            }
            int b = bin(x.sendNanos()); // bin() may grow the arrays: index only after it returns
            sentPerS[b]++;
        }
        RequestRecord record = x.succeeded() ? succeededRecord(x, truth) : failedRecord(x);
        if (log != null) {
            log.write(record, scheduleStartNanos, false, observation(x, truth), x.tokens().gapArray(), x.tokens().gaps());
        }
        stats.recordRequest(record);
        if (!x.succeeded()) {
            errors.record(x.errorType(), x.errorMessage());
            return;
        }
        int out = x.outputTokens();
        TokenArrivals tokens = x.tokens();
        for (int i = 0; i < tokens.chunks(); i++) {
            if (tokens.chunkLateness(i) >= 0) {
                readLateness.record(tokens.chunkLateness(i));
            }
        }
        if (tokens.chunks() > 0 && tokens.chunkLateness(0) >= 0) {
            firstReadLateness.record(tokens.chunkLateness(0));
        }
        long bound = x.ttftErrorBoundNanos();
        if (bound >= 0) {
            ttftErrorBound.record(bound);
        }
        recordGaps(tokens);
        recordTimeBins(x, out);
        checkPromptLength(x);
        if (tokens.countMethod() != null) {
            tokenCountMethods[tokens.countMethod().ordinal()]++;
        }
        long cached = truth != null && truth.cachedPromptTokens() >= 0 ? truth.cachedPromptTokens()
                : x.reply().usageCachedPromptTokens();
        if (cached >= 0) {
            cachedPromptTokens += cached;
            cacheReportedPromptTokens += x.request().promptTokens();
            sharedPrefixTokens += x.request().firstOfPrefixGroup() ? 0 : x.request().prefixTokens();
        }
        if (truth != null) {
            timeScale = truth.timeScale();
            if (truth.replica() >= 0) {
                requestsPerReplica.merge(truth.replica(), 1L, Long::sum);
                ttftPerReplica.computeIfAbsent(truth.replica(), k -> new LatencyStats()).record(truth.ttftNanos());
                if (truth.queueNanos() >= 0) {
                    queuePerReplica.computeIfAbsent(truth.replica(), k -> new LatencyStats()).record(truth.queueNanos());
                }
            }
            if (truth.atWire()) {
                truthAtWire++;
            }
            long error = recordGroundTruthError(ttftError, x.firstTokenNanos() - x.originNanos(), truth.clientTtftNanos());
            if (error != Long.MIN_VALUE && bound >= 0) {
                // neither the client's own error nor the server's late read of the request is the path's
                unexplainedTtftError.record(Math.max(0, Math.abs(error) - bound - truth.serverReadLatenessNanos()));
            }
            recordGroundTruthError(e2elError, x.lastTokenNanos() - x.originNanos(), truth.clientE2elNanos());
            recordStream(x, truth, out, attempt);
        }
    }

    private void recordStream(RequestOutcome x, ServerTruth truth, int tokens, int attempt) {
        int chunks = x.tokens().chunks();
        truthChunks += chunks;
        truthTokens += tokens;
        if (chunks < tokens) {
            lostTokenRequests++;
            lostTokens += tokens - chunks;
        }
        if (x.tokens().reorderedChunks() > 0) {
            reorderedRequests++;
        }
        if (!Double.isNaN(truth.reachedEpochMs()) && x.sendNanos() >= 0) {
            // from the bytes being in the client's socket where it knows, so that its own late write is not counted
            long sent = x.writtenNanos() >= 0 ? x.writtenNanos() : x.sendNanos();
            long before = Math.round((truth.reachedEpochMs() - epochMsAtNanoZero) * 1e6) - sent
                    - truth.serverReadLatenessNanos(); // the server's own late read of the request is not the way's
            preArrival.record(Math.max(0, before)); // clocks of two machines may disagree by a little either way
            if (before >= StreamFindings.LATE_ARRIVAL_NANOS && attempt <= 1) {
                lateArrivals++; // a request answered more than once is named as retried, by the server's own count
            }
        }
        judgeTokenPairs(x.tokens(), truth.tokenWrittenMs(), tokens);
        long serverDecode = truth.ttftNanos() < 0 || truth.e2elNanos() < 0 ? -1 : truth.e2elNanos() - truth.ttftNanos();
        if (tokens >= 2 && serverDecode >= StreamFindings.MIN_DECODE_NANOS) {
            streamsChecked++;
            if (x.lastTokenNanos() - x.firstTokenNanos() < StreamFindings.BUNCHED_SPAN * serverDecode) {
                streamsBunched++;
            }
        }
    }

    /**
     * Each pair of consecutive tokens the server handed to the wire more than {@link StreamFindings#COALESCED_GAP_NANOS}
     * apart: coalesced when they reached the client within {@link StreamFindings#COALESCED_WITHIN_NANOS} of each other,
     * unless the client's own read of the earlier one was late enough to explain it (its lateness bound above the
     * server's gap less that window: then both may have waited in the client's socket). Judged only where the server
     * gave every token's wire instant and the client counted as many tokens.
     */
    private void judgeTokenPairs(TokenArrivals x, double[] writtenMs, int tokens) {
        if (writtenMs == null || writtenMs.length != tokens || x.countedTokens() != tokens) {
            return;
        }
        int k = 0;
        int previous = -1;
        for (int c = 0; c < x.chunks(); c++) {
            for (int t = 0; t < x.chunkTokens(c); t++, k++) {
                if (k > 0) {
                    long serverGap = Math.round((writtenMs[k] - writtenMs[k - 1]) * 1e6);
                    if (serverGap > StreamFindings.COALESCED_GAP_NANOS) {
                        tokenPairsJudged++;
                        long clientGap = x.chunkNanos(c) - x.chunkNanos(previous);
                        if (clientGap < StreamFindings.COALESCED_WITHIN_NANOS) {
                            long late = x.chunkLateness(previous);
                            if (late >= 0 && late > serverGap - StreamFindings.COALESCED_WITHIN_NANOS) {
                                tokenPairsClientExplained++;
                            } else {
                                tokenPairsCoalesced++;
                            }
                        }
                    }
                }
                previous = c;
            }
        }
    }

    private static RequestRecord succeededRecord(RequestOutcome x, ServerTruth truth) {
        return new RequestRecord(x.request().index(), x.request().requestClass(), x.schedule().scheduledNanos(),
                x.originNanos(), x.firstTokenNanos(), x.lastTokenNanos(), x.request().promptTokens(), x.outputTokens(),
                truth == null ? -1 : truth.cachedPromptTokens(), truth == null ? -1 : truth.queueNanos(),
                truth == null ? -1 : truth.prefillNanos(), truth == null ? -1 : truth.preemptions(),
                x.reply().finishReason(), null);
    }

    private static RequestRecord failedRecord(RequestOutcome x) {
        return new RequestRecord(x.request().index(), x.request().requestClass(), x.schedule().scheduledNanos(),
                x.originNanos(), -1, -1, x.request().promptTokens(), 0, -1, -1, -1, -1, x.reply().finishReason(),
                x.errorMessage() == null ? "" : x.errorMessage());
    }

    /** What the client saw beside the record, for the per-request file. */
    private static ClientObservation observation(RequestOutcome x, ServerTruth truth) {
        return new ClientObservation(x.sendNanos() < 0 ? -1 : Math.max(0, x.sendNanos() - x.originNanos()),
                x.tokens().chunks(), (int) x.reply().usagePromptTokens(), truth == null ? -1 : truth.ttftNanos(),
                truth == null ? -1 : truth.e2elNanos(), x.reply().requestId(), x.errorType(),
                x.succeeded() ? x.tokens().text() : null);
    }

    /** Per-token ITL: a chunk of k tokens after a gap g counts as k gaps of g / k; the chunk gap itself is the ICL. */
    private void recordGaps(TokenArrivals x) {
        for (int i = 0; i < x.gaps(); i++) {
            long gap = x.gapNanos(i);
            int k = x.gapTokens(i);
            stats.recordIcl(gap);
            long perToken = gap / k;
            for (int t = 0; t < k; t++) {
                stats.recordItl(perToken);
            }
        }
    }

    private void recordTimeBins(RequestOutcome x, int outputTokens) {
        stats.recordTokens(x.lastTokenNanos(), outputTokens);
        int b = bin(x.lastTokenNanos());
        completedPerS[b]++;
        tokensPerS[b] += outputTokens;
        ttftSumMsPerS[b] += (x.firstTokenNanos() - x.originNanos()) / 1e6;
        e2elSumMsPerS[b] += (x.lastTokenNanos() - x.originNanos()) / 1e6;
    }

    private void checkPromptLength(RequestOutcome x) {
        long counted = x.reply().usagePromptTokens();
        if (!checkPromptLength || counted < 0 || counted == x.request().promptTokens()) {
            return;
        }
        promptMismatches++;
        long diff = counted - x.request().promptTokens();
        promptMismatchMaxTokens = Math.max(promptMismatchMaxTokens, Math.abs(diff));
        if (promptMismatchExamples.size() < MISMATCH_EXAMPLES) {
            promptMismatchExamples.add("request " + x.request().index() + ": sent " + x.request().promptTokens()
                    + " tokens, server counted " + counted);
        }
    }

    /** Records |client - server| into {@code into}; returns the signed error, or {@link Long#MIN_VALUE} without one. */
    private long recordGroundTruthError(LatencyStats into, long clientNanos, long serverNanos) {
        if (serverNanos < 0) {
            return Long.MIN_VALUE;
        }
        long error = clientNanos - serverNanos;
        if (error < 0) {
            negativeErrors++;
        }
        into.record(Math.abs(error));
        return error;
    }

    private int bin(long nanos) {
        int b = (int) Math.max(0, (nanos - startNanos) / 1_000_000_000L);
        if (b >= completedPerS.length) {
            int n = Math.max(b + 1, completedPerS.length * 2);
            sentPerS = Arrays.copyOf(sentPerS, n);
            completedPerS = Arrays.copyOf(completedPerS, n);
            tokensPerS = Arrays.copyOf(tokensPerS, n);
            ttftSumMsPerS = Arrays.copyOf(ttftSumMsPerS, n);
            e2elSumMsPerS = Arrays.copyOf(e2elSumMsPerS, n);
        }
        return b;
    }

    /** Requests that ended, successful or not. */
    public long finished() {
        return stats.completed() + stats.failed();
    }

    /** Requests sent in this window: completed, failed or cancelled by an interrupt. */
    public long sent() {
        return finished() + cancelled;
    }

    /** Marks the end of sending: the window's last request went out at {@code nowNanos}. */
    public void sendingEnded(long nowNanos) {
        stats.sendingEnded(nowNanos);
    }

    /**
     * A closed loop's throughput by Little's law: the users in flight while sending over the mean E2EL. Counting
     * completions instead is biased by either end of the run: over the whole window it includes the drain after the
     * last send, in which fewer and fewer users remain, and up to the last send it leaves out the work of the requests
     * still in flight. With 64 users and 200 requests the simulator puts the drain's cost at 13% and the other at 22%,
     * against 1% for this figure; both grow with the number of users, so a concurrency sweep would see a knee that
     * is not there. NaN without a successful request.
     */
    public double closedLoopThroughput(double meanInFlight) {
        return stats.completed() == 0 ? Double.NaN : meanInFlight / (stats.e2el().meanMs() / 1e3);
    }

    /** Length of the measured window: from its start to the last response. */
    public long durationNanos() {
        return Math.max(1, lastFinishNanos - startNanos);
    }

    /**
     * Per-second series for the report: time_s (each bucket's start), bucket_s (its length: one second, except the
     * last, which ends with the window), and per bucket the counts sent, completed, output_tokens, and the mean_ttft_ms
     * and mean_e2el_ms of the requests that finished in it. A rate is a count over its bucket's length.
     */
    public ClientKeys.TimeSeries timeSeries() {
        double seconds = durationNanos() / 1e9;
        int n = (int) Math.min(completedPerS.length, (long) Math.ceil(seconds));
        List<Double> time = new ArrayList<>(n);
        List<Double> length = new ArrayList<>(n);
        List<Long> sent = new ArrayList<>(n);
        List<Long> completed = new ArrayList<>(n);
        List<Long> tokens = new ArrayList<>(n);
        List<Double> meanTtft = new ArrayList<>(n);
        List<Double> meanE2el = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            time.add((double) i);
            length.add(Math.min(1, seconds - i));
            sent.add(sentPerS[i]);
            completed.add(completedPerS[i]);
            tokens.add(tokensPerS[i]);
            meanTtft.add(completedPerS[i] == 0 ? null : ttftSumMsPerS[i] / completedPerS[i]);
            meanE2el.add(completedPerS[i] == 0 ? null : e2elSumMsPerS[i] / completedPerS[i]);
        }
        return new ClientKeys.TimeSeries(time, length, sent, completed, tokens, meanTtft, meanE2el);
    }

    /**
     * The client's latencies against the server's ground truth, and how the requests spread over the replicas. Read
     * once the window is complete.
     */
    public ClientKeys.TruthError truthError() {
        Map<String, Long> spread = new LinkedHashMap<>();
        requestsPerReplica.forEach((replica, n) -> spread.put(Integer.toString(replica), n));
        Map<String, ReplicaLatency> perReplica = new LinkedHashMap<>();
        ttftPerReplica.forEach((replica, ttft) -> {
            LatencyStats queue = queuePerReplica.get(replica);
            perReplica.put(Integer.toString(replica), new ReplicaLatency(requestsPerReplica.get(replica),
                    ttft.meanMs(), ttft.percentileMs(99), queue == null ? null : queue.meanMs()));
        });
        boolean wire = truthAtWire > 0;
        return new ClientKeys.TruthError(ttftError.count(), ClientKeys.LagSummary.of(ttftError),
                ClientKeys.LagSummary.of(e2elError), negativeErrors, new ClientKeys.Streams(streamsChecked,
                streamsBunched, truthChunks, truthTokens, lostTokenRequests, lostTokens,
                reorderedRequests), ClientKeys.LagSummary.of(preArrival), lateArrivals, spread, perReplica,
                wire ? truthAtWire : null, wire ? ClientKeys.LagSummary.of(ttftErrorBound) : null,
                wire ? ClientKeys.LagSummary.of(unexplainedTtftError) : null,
                wire ? new ClientKeys.TokenPairs(tokenPairsJudged, tokenPairsCoalesced, tokenPairsClientExplained,
                        StreamFindings.COALESCED_GAP_NANOS / 1e6, StreamFindings.COALESCED_WITHIN_NANOS / 1e6) : null,
                wire ? new ClientKeys.Retried(retriedRequests, maxAttempts) : null);
    }
}
