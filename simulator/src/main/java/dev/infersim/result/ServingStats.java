package dev.infersim.result;

/**
 * Accumulates the measured window of a serving benchmark, the way {@code vllm bench serve} computes its metrics
 * ({@code calculate_metrics} in vllm/benchmarks/serve.py): per-request TTFT, TPOT and E2EL, per-token ITL, token counts,
 * goodput against {@link GoodputSlo}, and the per-second peaks. Also the server-side ground truth when the caller knows
 * it (queue and prefill time, cached prompt tokens, preemptions) and the client-side semaphore wait.
 *
 * <p>Engine-independent: the simulator feeds it virtual times, the benchmark client measured ones. Memory is constant
 * in the number of requests (histograms, no per-request lists). Per-token recording allocates nothing. Not thread-safe.
 */
public final class ServingStats implements ServingSummary {
    private final GoodputSlo slo;
    private final PeakRates peaks;
    private final SteadyRates steady;
    private final LatencyStats ttft = new LatencyStats();
    private final LatencyStats tpot = new LatencyStats();
    private final LatencyStats itl = new LatencyStats();
    private final LatencyStats icl = new LatencyStats();
    private final LatencyStats e2el = new LatencyStats();
    private final LatencyStats queue = new LatencyStats();
    private final LatencyStats prefill = new LatencyStats();
    private final LatencyStats clientQueue = new LatencyStats();
    private long completed;
    private long failed;
    private long inputTokens;
    private long outputTokens;
    private long cachedPromptTokens;
    private long preemptions;
    private long good;

    /**
     * @param slo               goodput objectives ({@link GoodputSlo#NONE} for none)
     * @param windowStartNanos  start of the measured window: origin of the per-second bins
     */
    public ServingStats(GoodputSlo slo, long windowStartNanos) {
        this.slo = slo;
        this.peaks = new PeakRates(windowStartNanos);
        this.steady = new SteadyRates(windowStartNanos);
    }

    /** One gap between successive tokens of a measured request (a chunk of k tokens gives k gaps of gap / k). */
    public void recordItl(long nanos) {
        itl.record(nanos);
    }

    /** {@code gaps} equal inter-token gaps, as one batch step gives its decoding requests. */
    public void recordItl(long nanos, int gaps) {
        itl.record(nanos, gaps);
    }

    /** One gap between successive response chunks (vLLM's ITL); only clients that see chunks record it. */
    public void recordIcl(long nanos) {
        icl.record(nanos);
    }

    /** {@code count} output tokens of measured requests arrived at {@code nanos}. */
    public void recordTokens(long nanos, int count) {
        peaks.recordTokens(nanos, count);
    }

    /** A finished request of the measured window. */
    public void recordRequest(RequestRecord r) {
        steady.recordSend(r.startNanos());
        if (!r.succeeded()) {
            failed++;
            return;
        }
        completed++;
        steady.recordFirstToken(r.firstTokenNanos());
        inputTokens += r.promptTokens();
        outputTokens += r.outputTokens();
        long ttftNanos = r.ttftNanos();
        long tpotNanos = r.tpotNanos();
        long e2elNanos = r.e2elNanos();
        ttft.record(ttftNanos);
        if (r.outputTokens() > 1) {
            tpot.record(tpotNanos);
        }
        e2el.record(e2elNanos);
        clientQueue.record(r.clientQueueNanos());
        if (r.queueNanos() >= 0) {
            queue.record(r.queueNanos());
        }
        if (r.prefillNanos() >= 0) {
            prefill.record(r.prefillNanos());
        }
        if (r.cachedPromptTokens() >= 0) {
            cachedPromptTokens += r.cachedPromptTokens();
        }
        if (r.preemptions() > 0) {
            preemptions += r.preemptions();
        }
        if (slo.isSet() && slo.isMetBy(ttftNanos, tpotNanos, e2elNanos)) {
            good++;
        }
        peaks.recordRequest(r.startNanos(), r.lastTokenNanos());
    }

    /** The window's last request has gone out at {@code nanos}: the end of the span the steady rates cover. */
    public void sendingEnded(long nanos) {
        steady.sendingEnded(nanos);
    }

    /** Requests offered per second while sending, by intended send time ({@link SteadyRates}); NaN before sending ended. */
    public double steadySendRate() {
        return steady.sendRate();
    }

    /** Requests taken in per second while sending, by first token ({@link SteadyRates}); NaN if unknown. */
    public double steadyRequestThroughput() {
        return completed == 0 ? Double.NaN : steady.requestThroughput(ttft.medianMs());
    }

    /**
     * Output tokens per second of the steady state: the steady request throughput times the mean output length. The
     * rate a long run would show, and what a queueing model predicts; NaN if unknown.
     */
    public double steadyOutputThroughput() {
        return steadyRequestThroughput() * meanOutputTokens();
    }

    /** Output tokens per successful request; NaN without one. */
    public double meanOutputTokens() {
        return completed == 0 ? Double.NaN : (double) outputTokens / completed;
    }

    public GoodputSlo slo() { return slo; }
    @Override
    public boolean measuresGoodput() { return slo.isSet(); }
    @Override
    public long completed() { return completed; }
    @Override
    public long failed() { return failed; }
    @Override
    public long inputTokens() { return inputTokens; }
    @Override
    public long outputTokens() { return outputTokens; }
    /** Prompt tokens served from the server's prefix cache, over measured requests. */
    @Override
    public long cachedPromptTokens() { return cachedPromptTokens; }
    @Override
    public long preemptions() { return preemptions; }
    /** Requests that met every goodput objective. */
    @Override
    public long goodRequests() { return good; }
    public PeakRates peaks() { return peaks; }
    public LatencyStats ttft() { return ttft; }
    public LatencyStats tpot() { return tpot; }
    public LatencyStats itl() { return itl; }
    @Override
    public LatencyStats icl() { return icl; }
    public LatencyStats e2el() { return e2el; }
    @Override
    public LatencyStats queueTime() { return queue; }
    @Override
    public LatencyStats prefillTime() { return prefill; }
    @Override
    public LatencyStats clientQueueTime() { return clientQueue; }

    @Override
    public long maxOutputTokensPerS() {
        return peaks.maxOutputTokensPerS();
    }

    @Override
    public int maxConcurrentRequests() {
        return peaks.maxConcurrentRequests();
    }

    @Override
    public LatencyStats metric(String name) {
        return switch (name) {
            case "ttft" -> ttft;
            case "tpot" -> tpot;
            case "itl" -> itl;
            case "e2el" -> e2el;
            default -> throw new IllegalArgumentException("unknown metric '" + name + "'; use ttft, tpot, itl or e2el");
        };
    }
}
