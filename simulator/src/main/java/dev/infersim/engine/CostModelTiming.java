package dev.infersim.engine;

/**
 * A planned step priced by a {@link CostModel} (the GPU's work), with the engine version's {@link HostTime} added to (or
 * overlapped with) it. LoRA: before the step runs, each of its adapters not in a GPU slot is loaded ({@link LoraSlots}),
 * which lengthens the step by the load time ({@link StepLoras#load}); the host time covers the adapter loads too. A
 * speed factor scales the GPU's work only. A multi-step decode round ({@link MultiStepScheduler}) runs its batch's
 * forward pass {@link StepPlan#gpuSteps} times and pays the host's fixed time once: vLLM V0 schedules and prepares the
 * round's inputs once, then advances them on the GPU ({@code advance_step}); its per-pass time each pass. Each pass is priced at the round's first shape:
 * the few tokens of context a round adds are well under 1% of a decode's attention.
 */
final class CostModelTiming implements StepTiming {
    private final CostModel costModel;
    private final HostTime hostTime;
    /** The GPU's slowdown ({@link #latencyScale}); the host's time is the CPU's and keeps its length. */
    private double scale = 1;

    /** Steps priced by {@code costModel} (the GPU's work), {@code hostTime} added or overlapped. */
    CostModelTiming(CostModel costModel, HostTime hostTime) {
        this.costModel = costModel;
        this.hostTime = hostTime;
    }

    @Override
    public void latencyScale(double scale) {
        this.scale = scale;
    }

    @Override
    public long stepNanos(StepPlan plan) {
        plan.shape.loraAdapters(plan.loras.count());
        plan.loraLoadNanos = plan.loras.load();
        long gpu = Math.max(1, costModel.stepNanos(plan.shape)) * plan.gpuSteps + plan.loraLoadNanos;
        if (scale != 1) {
            gpu = Math.max(1, Math.round(gpu * scale));
        }
        return hostTime.isNone() ? gpu : hostTime.stepNanos(gpu, plan.shape, plan.gpuSteps);
    }
}
