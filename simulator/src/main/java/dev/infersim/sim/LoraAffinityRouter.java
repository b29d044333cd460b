package dev.infersim.sim;

/**
 * Routes a request on a LoRA adapter to a replica that already serves that adapter, else to one with room for another
 * adapter, else to any; least outstanding requests (running plus waiting) decides within the best of those tiers, and
 * remaining ties as {@link TieBreak} says. Base-model requests go to the least loaded replica.
 *
 * <p>The tiers are the Gateway API Inference Extension's LoRA-affinity scorer
 * ({@code kubernetes-sigs/gateway-api-inference-extension@bc202fc},
 * {@code pkg/epp/scheduling/framework/plugins/scorer/lora_affinity.go}): 1.0 where the adapter is active, 0.8 where
 * the active and waiting adapters number fewer than {@code max_lora}, 0.6 where it is only waiting, 0 elsewhere. The
 * scorer reads those sets from {@code vllm:lora_requests_info}, whose running and waiting labels current vLLM fills
 * from one source, every adapter with an unfinished request ({@code vllm/v1/metrics/stats.py}); here a replica's own
 * unfinished requests give that set exactly, without a scrape interval's lag, so "active" and "waiting" are one tier.
 * The Extension weighs the scorer against load scorers; this router ranks affinity first and load second. Each
 * replica's tier and load are read once per decision ({@link SignalReads}).
 */
public final class LoraAffinityRouter implements Router {
    private final TieBreak.Ties ties;
    private final SignalReads reads = new SignalReads();

    public LoraAffinityRouter(TieBreak tieBreak) {
        ties = new TieBreak.Ties(tieBreak);
    }

    /** Ties broken round robin. */
    public LoraAffinityRouter() {
        this(TieBreak.ROUND_ROBIN);
    }

    @Override
    public int route(RoutedRequest request, RoutingTarget[] replicas) {
        String adapter = request == null ? null : request.lora();
        int n = replicas.length;
        int[] loads = reads.loads(replicas);
        int[] tiers = reads.scratch(n);
        int best = 0;
        for (int i = 0; i < n; i++) {
            tiers[i] = adapter == null ? 0 : tier(replicas[i], adapter);
            if (tiers[i] > tiers[best] || (tiers[i] == tiers[best] && loads[i] < loads[best])) {
                best = i;
            }
        }
        ties.reset(n);
        for (int i = 0; i < n; i++) {
            if (tiers[i] == tiers[best] && loads[i] == loads[best]) {
                ties.tie(i);
            }
        }
        return ties.pick();
    }

    /** 2: the adapter is active there; 1: the replica has a free adapter slot; 0: neither. */
    private static int tier(RoutingTarget replica, String adapter) {
        if (replica.requestsOnAdapter(adapter) > 0) {
            return 2;
        }
        return replica.activeAdapters() < replica.maxLoras() ? 1 : 0;
    }
}
