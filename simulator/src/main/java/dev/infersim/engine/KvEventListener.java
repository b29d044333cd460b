package dev.infersim.engine;

/**
 * Told when the prefix cache gains or loses a block, the changes vLLM publishes as KV-cache events
 * ({@code vllm/distributed/kv_events.py}: BlockStored, BlockRemoved, AllBlocksCleared) for prefix-aware routers. Called on the engine's
 * thread, inside the step that made the change.
 */
public interface KvEventListener {
    /**
     * Full prompt blocks entered the prefix cache, consecutive blocks of one request reported together as vLLM's
     * {@code BlockStored} reports them.
     *
     * @param hashes     the request's block hashes (low 64 bits of vLLM's, never 0); {@code [first, first + count)} are
     *                   the stored ones
     * @param parentHash the hash of the block before {@code first}; 0 when {@code first} is the prompt's first block
     * @param tokenIds   the prompt: block k holds {@code tokenIds[k * blockSize, (k + 1) * blockSize)}
     * @param lora       the adapter whose request computed the blocks (its name is their extra key); null for the base model
     */
    void blockStored(long[] hashes, int first, int count, long parentHash, int[] tokenIds, int blockSize, LoraAdapter lora);

    /** A cached block was evicted (its memory went to another request). */
    void blockRemoved(long hash);

    /** The prefix cache was reset: no block is findable any more. */
    void allBlocksCleared();
}
