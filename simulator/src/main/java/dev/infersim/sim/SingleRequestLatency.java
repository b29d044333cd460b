package dev.infersim.sim;

import dev.infersim.engine.EngineCore;
import dev.infersim.engine.EngineRequest;
import dev.infersim.engine.StepPlan;
import dev.infersim.result.GoodputSlo;
import dev.infersim.workload.Workload;
import dev.infersim.workload.WorkloadRequest;

/**
 * The latencies of one request served alone by an idle engine: no queue, no other request's work in its steps, a cold
 * prefix cache. Its TTFT is its prefill (the steps its prompt takes under the token budget), its TPOT the decode step
 * of a batch of one at its context, its E2EL the two together; TPOT is {@code (E2EL - TTFT) / (outputs - 1)}, 0 for a
 * single output, as vLLM's {@code benchmark_serving} computes it.
 *
 * <p>Objectives stated as multiples of these ({@code --goodput ttft:4x tpot:1.5x}) are equally tight on any GPU, model
 * or profile: they bound how much of a request's latency may come from sharing the engine. Serving papers state
 * tightness this way: DistServe (Zhong et al., OSDI 2024, figures 8 and 9) multiplies each application's TTFT and
 * TPOT objectives by one common "SLO scale" to tighten them together (its artifact, github.com/LLMServe/DistServe,
 * {@code evaluation/ae-scripts/e2e/_plot.py}, {@code draw_slo_scale_plot}).
 *
 * @param promptTokens the request's prompt
 * @param outputTokens the request's outputs
 */
public record SingleRequestLatency(int promptTokens, int outputTokens, double ttftMs, double tpotMs, double e2elMs) {

    /** One request of {@code promptTokens} and {@code outputTokens} (EOS ignored) on {@code idle}, a fresh engine. */
    public static SingleRequestLatency of(EngineCore idle, int promptTokens, int outputTokens) {
        if (!idle.isIdle()) {
            throw new IllegalArgumentException("the engine must be idle to serve a request alone");
        }
        EngineRequest r = new EngineRequest(0, promptTokens, null, outputTokens, outputTokens, EngineRequest.NO_EOS, 0, 0);
        idle.submit(r);
        long now = 0;
        for (StepPlan step = idle.planStep(now); step != null; step = idle.planStep(now)) {
            now = step.endNanos();
            idle.completeStep(step);
        }
        if (!r.isFinished()) {
            throw new IllegalStateException("the engine left a request alone unfinished: " + r);
        }
        double ttftMs = r.firstTokenNanos() / 1e6;
        double e2elMs = r.finishedNanos() / 1e6;
        double tpotMs = outputTokens > 1 ? (e2elMs - ttftMs) / (outputTokens - 1) : 0;
        return new SingleRequestLatency(promptTokens, outputTokens, ttftMs, tpotMs, e2elMs);
    }

    /** The workload's mean request (mean prompt and output lengths, rounded) on {@code idle}, a fresh engine. */
    public static SingleRequestLatency ofMeanRequest(EngineCore idle, Workload workload) {
        double prompts = 0;
        double outputs = 0;
        for (WorkloadRequest w : workload) {
            prompts += w.promptTokens();
            outputs += w.outputTokens();
        }
        return of(idle, (int) Math.max(1, Math.round(prompts / workload.size())),
                (int) Math.max(1, Math.round(outputs / workload.size())));
    }

    /** These latencies as objectives, for {@link GoodputSlo#parse(java.util.List, java.util.function.Supplier)}. */
    public GoodputSlo asObjectives() {
        return new GoodputSlo(ttftMs, tpotMs, e2elMs);
    }

    /** Objectives of {@code ttftScale} times this TTFT and {@code tpotScale} times this TPOT. */
    public GoodputSlo scaled(double ttftScale, double tpotScale) {
        return new GoodputSlo(ttftScale * ttftMs, tpotScale * tpotMs, Double.NaN);
    }
}
