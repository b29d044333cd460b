package dev.infersim.engine;

/**
 * The host's share of one engine step, beside the GPU's kernels: a fixed cost every time the engine schedules
 * (scheduling the batch, preparing its inputs, processing the last step's outputs), a cost per forward pass (the
 * engine's step loop driving the pass and taking its samples back) plus a cost per request the step takes in for the
 * first time (its sequence created, its blocks allocated, its prompt's inputs built, its output stream opened). A step
 * is one forward pass, or with vLLM V0's multi-step scheduling a round of several scheduled once
 * ({@link MultiStepScheduler}), which pays the fixed cost once and the per-pass cost each pass. An engine either runs
 * this work beside the GPU, one step ahead (vLLM V1's async scheduling and persistent batch: the step lasts
 * {@code max(GPU, host)}), or between the GPU's steps, which wait for it (vLLM V0: {@code GPU + host}). What each
 * engine version spends, and the published runs it was fitted to, is {@link EngineVersion}; bench/fidelity/README.md
 * gives the fit.
 *
 * @param fixedUs      host time each time the engine schedules (a step, or a multi-step round), microseconds
 * @param perPassUs    host time per forward pass, microseconds
 * @param perRequestUs host time per request scheduled for the first time in the step, microseconds
 * @param overlapped   whether the host work runs beside the GPU's work rather than before it
 */
public record HostTime(double fixedUs, double perPassUs, double perRequestUs, boolean overlapped) {

    /** No host time outside the GPU's step: the step is the GPU's. */
    public static final HostTime NONE = new HostTime(0, 0, 0, true);

    public HostTime {
        if (!(fixedUs >= 0 && perPassUs >= 0 && perRequestUs >= 0 && Double.isFinite(fixedUs) && Double.isFinite(perPassUs)
                && Double.isFinite(perRequestUs))) {
            throw new IllegalArgumentException("host time must be finite and >= 0, got " + fixedUs + " us a schedule, "
                    + perPassUs + " us a pass and " + perRequestUs + " us a request");
        }
    }

    /** The host time of a step of {@code passes} forward passes that takes in {@code newRequests} requests, in ns. */
    public long hostNanos(int newRequests, int passes) {
        return Math.round((fixedUs + perPassUs * passes + perRequestUs * newRequests) * 1e3);
    }

    /**
     * The step of this batch shape, run for {@code passes} forward passes, whose GPU work takes {@code gpuNanos}, the
     * host's work added or overlapped.
     */
    public long stepNanos(long gpuNanos, BatchShape shape, int passes) {
        long host = hostNanos(shape.newRequests(), passes);
        return overlapped ? Math.max(gpuNanos, host) : gpuNanos + host;
    }

    /** Whether the engine spends no host time outside its GPU's work. */
    public boolean isNone() {
        return fixedUs == 0 && perPassUs == 0 && perRequestUs == 0;
    }

    /**
     * The cost of a whole one-pass step: {@code gpu}'s price of the batch with this host time added or overlapped; an
     * empty batch costs what {@code gpu} says (no step runs). {@code gpu} itself when there is no host time, so such an
     * engine prices its steps exactly as its GPU model does.
     */
    public CostModel over(CostModel gpu) {
        if (isNone()) {
            return gpu;
        }
        return shape -> shape.isEmpty() ? gpu.stepNanos(shape) : stepNanos(gpu.stepNanos(shape), shape, 1);
    }
}
