package dev.infersim.workload.arrival;

import dev.infersim.common.SplitMix64;

/**
 * When requests are sent, in the terms of {@code vllm bench serve}.
 *
 * <p>Every request gets an open-loop arrival time from {@link #arrivals(long, long)}; a driver sends request i no
 * earlier than its arrival time and, when {@code maxConcurrency > 0}, only while fewer than {@code maxConcurrency}
 * requests are in flight (a semaphore, as vLLM's {@code --max-concurrency}); waiting requests go in stream order.
 * With an infinite rate every arrival time is 0, so a concurrency cap of N is a closed loop of N users, each sending
 * its next request when its previous one finishes ({@link #closedLoop(int)}). Like vLLM, a driver measures latency
 * from the moment it actually sends, after the semaphore.
 *
 * @param requestRatePerS   mean arrival rate (vLLM {@code --request-rate}); {@code Double.POSITIVE_INFINITY} sends
 *                          everything at time 0 (vLLM's default)
 * @param burstiness        gamma shape of the gaps (vLLM {@code --burstiness}); 1 = Poisson, infinity = evenly spaced
 * @param maxConcurrency    cap on requests in flight (vLLM {@code --max-concurrency}); 0 = no cap
 * @param rampUp            a rate ramp instead of a fixed rate, or null; needs {@code requestRatePerS} infinite, as vLLM
 * @param normalizeDuration for a finite fixed rate: scale the schedule so the last of N requests arrives at exactly
 *                          N / rate, as vLLM does (true); false keeps the raw renewal process, which queueing
 *                          cross-checks want
 * @param schedule          a diurnal swing and bursts around the finite {@code requestRatePerS}, or null; the times
 *                          are not normalised
 */
public record LoadPattern(double requestRatePerS, double burstiness, int maxConcurrency, RampUp rampUp,
                          boolean normalizeDuration, RateSchedule schedule) {

    public LoadPattern {
        if (!(requestRatePerS > 0)) {
            throw new IllegalArgumentException("request rate must be > 0 req/s (or inf), got " + requestRatePerS);
        }
        if (!(burstiness > 0)) {
            throw new IllegalArgumentException("burstiness must be > 0 (or inf), got " + burstiness);
        }
        if (maxConcurrency < 0) {
            throw new IllegalArgumentException("max concurrency must be >= 0 (0 = unlimited), got " + maxConcurrency);
        }
        if (rampUp != null && !Double.isInfinite(requestRatePerS)) {
            throw new IllegalArgumentException("a ramp-up sets the rate itself; leave the request rate at inf, got "
                    + requestRatePerS + " req/s");
        }
        if (schedule != null && (Double.isInfinite(requestRatePerS) || rampUp != null)) {
            throw new IllegalArgumentException("a diurnal swing or bursts need a finite base request rate and no ramp");
        }
    }

    public LoadPattern(double requestRatePerS, double burstiness, int maxConcurrency, RampUp rampUp,
                       boolean normalizeDuration) {
        this(requestRatePerS, burstiness, maxConcurrency, rampUp, normalizeDuration, null);
    }

    /** Everything at time 0, no concurrency cap (vLLM's defaults). */
    public static LoadPattern immediate() {
        return new LoadPattern(Double.POSITIVE_INFINITY, 1.0, 0, null, true);
    }

    /** Poisson arrivals at {@code ratePerS}, scaled to N / rate like vLLM. */
    public static LoadPattern poisson(double ratePerS) {
        return new LoadPattern(ratePerS, 1.0, 0, null, true);
    }

    /** Gamma-gap arrivals at {@code ratePerS} with shape {@code burstiness}, scaled to N / rate like vLLM. */
    public static LoadPattern gamma(double ratePerS, double burstiness) {
        return new LoadPattern(ratePerS, burstiness, 0, null, true);
    }

    /** Evenly spaced arrivals, one every 1 / rate. */
    public static LoadPattern constant(double ratePerS) {
        return new LoadPattern(ratePerS, Double.POSITIVE_INFINITY, 0, null, true);
    }

    /** A closed loop of {@code users} concurrent users ({@code --request-rate inf --max-concurrency users}). */
    public static LoadPattern closedLoop(int users) {
        if (users < 1) {
            throw new IllegalArgumentException("a closed loop needs >= 1 user, got " + users);
        }
        return new LoadPattern(Double.POSITIVE_INFINITY, 1.0, users, null, true);
    }

    /** A rate ramp with gamma gaps of shape {@code burstiness}. */
    public static LoadPattern ramp(RampUp rampUp, double burstiness) {
        return new LoadPattern(Double.POSITIVE_INFINITY, burstiness, 0, rampUp, true);
    }

    public LoadPattern withNormalizeDuration(boolean normalize) {
        return new LoadPattern(requestRatePerS, burstiness, maxConcurrency, rampUp, normalize, schedule);
    }

    /** True when every request is released at time 0 and a concurrency cap paces them: N users in a closed loop. */
    public boolean isClosedLoop() {
        return Double.isInfinite(requestRatePerS) && rampUp == null && maxConcurrency > 0;
    }

    /**
     * The arrival process for a run of {@code totalRequests} requests. The same {@code seed} gives the same times.
     *
     * @param totalRequests N, used by count-based ramps and by the vLLM duration normalisation
     * @param seed          seed of the gap stream
     */
    public ArrivalProcess arrivals(long totalRequests, long seed) {
        if (totalRequests < 1) {
            throw new IllegalArgumentException("totalRequests must be >= 1, got " + totalRequests);
        }
        if (rampUp != null) {
            return rampUp.durationNanos() == 0
                    ? new CountRampArrivals(rampUp, totalRequests, burstiness, new SplitMix64(seed))
                    : new TimedRampArrivals(rampUp, burstiness, new SplitMix64(seed));
        }
        if (schedule != null) {
            return new ScheduledArrivals(requestRatePerS, schedule, burstiness, new SplitMix64(seed));
        }
        if (Double.isInfinite(requestRatePerS)) {
            return new ImmediateArrivals();
        }
        if (Double.isInfinite(burstiness)) {
            return new ConstantArrivals(requestRatePerS);
        }
        if (!normalizeDuration) {
            return new GammaArrivals(requestRatePerS, burstiness, new SplitMix64(seed));
        }
        // vLLM draws all gaps first, then rescales; replaying the seeded stream twice does the same in O(1) memory.
        ArrivalProcess probe = new GammaArrivals(requestRatePerS, burstiness, new SplitMix64(seed));
        long last = 0;
        for (long i = 0; i < totalRequests; i++) {
            last = probe.nextArrivalNanos();
        }
        ArrivalProcess replay = new GammaArrivals(requestRatePerS, burstiness, new SplitMix64(seed));
        return last == 0 ? replay : new ScaledArrivals(replay, totalRequests * 1e9 / requestRatePerS / last);
    }
}
