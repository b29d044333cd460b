package dev.infersim.sim;

/**
 * What a {@link Router} reads of a replica: the simulator's {@link Replica} in virtual time, and a live fleet's replica
 * behind {@code infersim serve --router} on the real clock, so both route with the same code.
 */
public interface RoutingTarget {

    /** The replica's stable identity (its index in the fleet), which placement on a hash ring follows. */
    int id();

    /** Requests running or waiting there: what a least-loaded router balances. */
    int load();

    /** Fraction of its KV-cache blocks in use, vLLM's {@code kv_cache_usage_perc}. */
    double kvCacheUsage();

    /** Its unfinished requests on the named LoRA adapter. */
    int requestsOnAdapter(String name);

    /** LoRA adapters with an unfinished request there. */
    int activeAdapters();

    /** Its GPU adapter slots ({@code --max-loras}); 0 without LoRA. */
    int maxLoras();

    /** Tokens per KV-cache block. */
    int blockSize();

    /** The model's vocabulary size, for prompts whose token ids are derived from a seed. */
    int vocabSize();
}
