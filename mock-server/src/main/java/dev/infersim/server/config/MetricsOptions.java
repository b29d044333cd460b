package dev.infersim.server.config;

import dev.infersim.server.observe.FakeMetrics;
import dev.infersim.server.observe.LoraRequestStates;

/**
 * How {@code /metrics} renders the vLLM series a router or autoscaler reads.
 *
 * @param loraByQueue fill {@code vllm:lora_requests_info}'s waiting and running lists from the scheduler's queues, as
 *                    vLLM did before its PR #26801 and llm-d-inference-sim does, instead of both from every adapter with
 *                    an unfinished request, as current vLLM does ({@link LoraRequestStates})
 * @param legacy      also serve what vLLM 0.10 and older served and older endpoint pickers scrape:
 *                    {@code vllm:gpu_cache_usage_perc} and {@code vllm:time_per_output_token_seconds}
 * @param fake        fixed values in place of the engine's ({@code --fake-metrics}, as llm-d-inference-sim); null for none
 */
public record MetricsOptions(boolean loraByQueue, boolean legacy, FakeMetrics fake) {
    /** As current vLLM renders them. */
    public static final MetricsOptions VLLM = new MetricsOptions(false, false, null);

    /** The queue-based LoRA lists or not, the rest as current vLLM. */
    public MetricsOptions(boolean loraByQueue) {
        this(loraByQueue, false, null);
    }
}
