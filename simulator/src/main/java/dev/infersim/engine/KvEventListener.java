package dev.infersim.engine;

/**
 * Told when the prefix cache gains or loses a block, the changes vLLM publishes as KV-cache events
 * ({@code vllm/distributed/kv_events.py}: BlockStored, BlockRemoved, AllBlocksCleared) for prefix-aware routers. Called on the engine's
 * thread, inside the step that made the change.
 */
public interface KvEventListener {
    /**
     * A full prompt block entered the prefix cache.
     *
     * @param hash       the block's chain hash (never 0)
     * @param parentHash the previous block's hash; 0 for a prompt's first block
     * @param tokenIds   the prompt, of which this block holds {@code tokenIds[from, from + blockSize)}
     * @param lora       the adapter whose request computed the block (its name is part of the hash); null for the base model
     */
    void blockStored(long hash, long parentHash, int[] tokenIds, int from, int blockSize, LoraAdapter lora);

    /** A cached block was evicted (its memory went to another request). */
    void blockRemoved(long hash);

    /** The prefix cache was reset: no block is findable any more. */
    void allBlocksCleared();
}
