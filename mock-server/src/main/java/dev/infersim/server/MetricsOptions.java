package dev.infersim.server;

/**
 * How {@code /metrics} renders the vLLM series a router or autoscaler reads.
 *
 * @param loraByQueue fill {@code vllm:lora_requests_info}'s waiting and running lists from the scheduler's queues, as
 *                    vLLM did before its PR #26801 and llm-d-inference-sim does, instead of both from every adapter with
 *                    an unfinished request, as current vLLM does ({@link LoraRequestStates})
 */
public record MetricsOptions(boolean loraByQueue) {
    /** As current vLLM renders them. */
    public static final MetricsOptions VLLM = new MetricsOptions(false);
}
