package dev.infersim.engine;

/**
 * The host's share of one engine step, beside the GPU's kernels: a fixed cost every step (scheduling the batch,
 * preparing its inputs, processing the last step's outputs) plus a cost per request the step takes in for the first
 * time (its sequence created, its blocks allocated, its prompt's inputs built, its output stream opened). An engine
 * either runs this work beside the GPU, one step ahead (vLLM V1's async scheduling and persistent batch: the step lasts
 * {@code max(GPU, host)}), or between the GPU's steps, which wait for it (vLLM V0: {@code GPU + host}). What each
 * engine version spends, and the published runs it was fitted to, is {@link EngineVersion}; bench/fidelity/README.md
 * gives the fit.
 *
 * @param fixedUs      host time of every step, microseconds
 * @param perRequestUs host time per request scheduled for the first time in the step, microseconds
 * @param overlapped   whether the host work runs beside the GPU's work rather than before it
 */
public record HostTime(double fixedUs, double perRequestUs, boolean overlapped) {

    /** No host time outside the GPU's step: the step is the GPU's. */
    public static final HostTime NONE = new HostTime(0, 0, true);

    public HostTime {
        if (!(fixedUs >= 0 && perRequestUs >= 0 && Double.isFinite(fixedUs) && Double.isFinite(perRequestUs))) {
            throw new IllegalArgumentException("host time must be finite and >= 0, got " + fixedUs + " us a step and "
                    + perRequestUs + " us a request");
        }
    }

    /** The host time of a step that takes in {@code newRequests} requests, in nanoseconds. */
    public long hostNanos(int newRequests) {
        return Math.round((fixedUs + perRequestUs * newRequests) * 1e3);
    }

    /** The step of this batch shape whose GPU work takes {@code gpuNanos}, the host's work added or overlapped. */
    public long stepNanos(long gpuNanos, BatchShape shape) {
        long host = hostNanos(shape.newRequests());
        return overlapped ? Math.max(gpuNanos, host) : gpuNanos + host;
    }

    /** Whether the engine spends no host time outside its GPU's work. */
    public boolean isNone() {
        return fixedUs == 0 && perRequestUs == 0;
    }

    /**
     * The cost of a whole step: {@code gpu}'s price of the batch with this host time added or overlapped; an empty
     * batch costs what {@code gpu} says (no step runs). {@code gpu} itself when there is no host time, so such an
     * engine prices its steps exactly as its GPU model does.
     */
    public CostModel over(CostModel gpu) {
        if (isNone()) {
            return gpu;
        }
        return shape -> shape.isEmpty() ? gpu.stepNanos(shape) : stepNanos(gpu.stepNanos(shape), shape);
    }
}
