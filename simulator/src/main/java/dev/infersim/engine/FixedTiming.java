package dev.infersim.engine;

import dev.infersim.common.ConfigException;

/**
 * Fixed per-request latencies in place of the cost model: the "mock vLLM" timing of llm-d-inference-sim, under its flag
 * names. Each running request keeps its own timeline: its first token comes {@code TTFT} after it is admitted, each
 * later token {@code ITL} after the one before, whatever else runs, up to {@code --max-num-seqs} requests at once.
 * <ul>
 *   <li>TTFT ~ N((time-to-first-token + uncached prompt tokens x prefill-time-per-token) x f, time-to-first-token-std-dev)</li>
 *   <li>ITL ~ N(inter-token-latency x f, inter-token-latency-std-dev)</li>
 *   <li>f = 1 + (time-factor-under-load - 1) (running - 1) / (max-num-seqs - 1), with {@code running} counting the
 *       request itself at the moment the latency is drawn (llm-d-inference-sim's {@code getCurrLoadFactor}).</li>
 * </ul>
 * Each normal is truncated at zero (redrawn while negative). Unlike llm-d-inference-sim, which uses the per-token prefill
 * only when time-to-first-token is 0, the two add up.
 *
 * @param timeToFirstTokenMs          mean TTFT of a prompt served fully from the prefix cache, at light load
 * @param timeToFirstTokenStdDevMs    standard deviation of TTFT
 * @param interTokenLatencyMs         mean gap between output tokens at light load
 * @param interTokenLatencyStdDevMs   standard deviation of each gap
 * @param prefillTimePerTokenMs       TTFT added per prompt token not found in the prefix cache
 * @param timeFactorUnderLoad         latency multiplier with max-num-seqs requests running (at least 1)
 */
public record FixedTiming(double timeToFirstTokenMs, double timeToFirstTokenStdDevMs, double interTokenLatencyMs,
                          double interTokenLatencyStdDevMs, double prefillTimePerTokenMs, double timeFactorUnderLoad) {

    /** No step runs longer than this with no token due, so a request arriving during it starts within this much. */
    static final long MIN_LOOKAHEAD_NANOS = 1_000_000;

    public FixedTiming {
        nonNegative("--time-to-first-token", timeToFirstTokenMs);
        nonNegative("--time-to-first-token-std-dev", timeToFirstTokenStdDevMs);
        nonNegative("--inter-token-latency", interTokenLatencyMs);
        nonNegative("--inter-token-latency-std-dev", interTokenLatencyStdDevMs);
        nonNegative("--prefill-time-per-token", prefillTimePerTokenMs);
        ConfigException.check(timeFactorUnderLoad >= 1 && Double.isFinite(timeFactorUnderLoad),
                "--time-factor-under-load must be a number >= 1, got %s", timeFactorUnderLoad);
    }

    /** The seed's mock: TTFT 100 ms and ITL 50 ms, no jitter, no prompt or load dependence. */
    public static FixedTiming of(double timeToFirstTokenMs, double interTokenLatencyMs) {
        return new FixedTiming(timeToFirstTokenMs, 0, interTokenLatencyMs, 0, 0, 1);
    }

    /** The load factor f with {@code running} requests running (the one being timed included). */
    public double loadFactor(int running, int maxNumSeqs) {
        if (maxNumSeqs <= 1) {
            return 1;
        }
        return 1 + (timeFactorUnderLoad - 1) * Math.max(0, running - 1) / (maxNumSeqs - 1);
    }

    /** Mean of the TTFT normal (before truncation) for {@code uncachedTokens} to compute, at load factor {@code f}. */
    public double firstTokenMs(int uncachedTokens, double f) {
        return (timeToFirstTokenMs + prefillTimePerTokenMs * uncachedTokens) * f;
    }

    /** Mean of the ITL normal (before truncation) at load factor {@code f}. */
    public double interTokenMs(double f) {
        return interTokenLatencyMs * f;
    }

    /**
     * The longest step with no token due: the shortest first token the settings make likely (one uncached token, light
     * load, 4 standard deviations below the mean), at least {@value #MIN_LOOKAHEAD_NANOS} ns. A request that arrives
     * during such a step is admitted at its end with its clock started at its arrival, so its first token is on time.
     */
    long lookaheadNanos() {
        double shortestMs = firstTokenMs(1, 1) - 4 * timeToFirstTokenStdDevMs;
        return Math.max(MIN_LOOKAHEAD_NANOS, Math.round(shortestMs * 1e6));
    }

    private static void nonNegative(String flag, double ms) {
        ConfigException.check(ms >= 0 && Double.isFinite(ms), "%s must be a number of ms >= 0, got %s", flag, ms);
    }
}
