package dev.infersim.engine;

import dev.infersim.common.SplitMix64;

/**
 * Paged KV cache (Kwon et al., "PagedAttention", SOSP 2023) with automatic prefix caching as vLLM V1 does it.
 * <ul>
 *   <li>Memory is {@code numBlocks} blocks of {@code blockSize} tokens; a request holds a table of blocks.</li>
 *   <li>A full prompt block is keyed by vLLM's hash chain ({@link BlockHasher}): {@code hash(parent hash, the block's
 *       token ids, extra keys)}, so equal hashes mean equal prefixes; a request on a LoRA adapter has the adapter's
 *       name as its extra key, so prefixes on different adapters never match. The index keys blocks by the low 64
 *       bits of their hashes, the value KV events carry. Blocks are reference counted; requests sharing a prefix share
 *       its blocks.</li>
 *   <li>Unreferenced blocks sit in one free queue, oldest first. A cached block stays findable there until the queue
 *       hands it out again (LRU eviction). Freed uncached blocks go to the front, so they are reused before any
 *       cached block is evicted; a request's cached blocks are queued tail-first, so the end of a prefix is evicted
 *       before its start.</li>
 * </ul>
 * The queue is an intrusive doubly-linked list over primitive arrays: every operation is O(1) and allocation-free.
 */
public final class KvCacheManager {
    private static final int NIL = -1;

    private final int numBlocks;
    private final int blockSize;
    private final boolean prefixCaching;
    private final int[] refCount;
    private final long[] hashOf;
    private final boolean[] privateHash; // cached under a request's private chain (keepForResume): never announced
    private final int[] prev;
    private final int[] next;
    private final BlockHashIndex index;
    private final BlockHasher hasher;
    private byte[] chain = new byte[0];
    private int head = NIL;
    private int tail = NIL;
    private int freeCount;
    private long queriedTokens;
    private long hitTokens;
    private KvEventListener events;

    /** With vLLM's default hashing: SHA-256 over pickles, a random first parent. */
    public KvCacheManager(int numBlocks, int blockSize, boolean prefixCaching) {
        this(numBlocks, blockSize, prefixCaching, prefixCaching ? new BlockHasher(PrefixCachingHashAlgo.SHA256, null) : null);
    }

    /** @param hasher hashes prefix blocks; may be null without prefix caching */
    public KvCacheManager(int numBlocks, int blockSize, boolean prefixCaching, BlockHasher hasher) {
        if (numBlocks < 1 || blockSize < 1) {
            throw new IllegalArgumentException("need at least one block of at least one token, got " + numBlocks + " x " + blockSize);
        }
        this.numBlocks = numBlocks;
        this.blockSize = blockSize;
        this.prefixCaching = prefixCaching;
        if (prefixCaching && hasher == null) {
            throw new IllegalArgumentException("prefix caching needs a block hasher");
        }
        this.hasher = hasher;
        refCount = new int[numBlocks];
        hashOf = new long[numBlocks];
        privateHash = new boolean[numBlocks];
        prev = new int[numBlocks];
        next = new int[numBlocks];
        index = new BlockHashIndex(prefixCaching ? Math.min(numBlocks, 1 << 20) : 16);
        for (int b = 0; b < numBlocks; b++) {
            append(b);
        }
    }

    /** Who hears of blocks entering and leaving the prefix cache; null for nobody. */
    public void setEventListener(KvEventListener listener) {
        events = listener;
    }

    public int numBlocks() { return numBlocks; }
    public int blockSize() { return blockSize; }
    /** Blocks not referenced by any request (free or cached-but-evictable). */
    public int freeBlocks() { return freeCount; }
    public int usedBlocks() { return numBlocks - freeCount; }
    /** Fraction of blocks referenced by requests, as vLLM's kv_cache_usage_perc. */
    public double usage() { return (double) usedBlocks() / numBlocks; }
    /** Prompt tokens looked up in the prefix cache (vLLM prefix_cache_queries). */
    public long queriedTokens() { return queriedTokens; }
    /** Prompt tokens found in the prefix cache (vLLM prefix_cache_hits). */
    public long hitTokens() { return hitTokens; }
    /** Blocks currently findable by hash. */
    public int cachedBlocks() { return index.size(); }
    public int referenceCount(int block) { return refCount[block]; }

    /**
     * Number of the request's leading blocks that are in the cache: prompt blocks, and for a request resuming after a
     * preemption the blocks of the tokens it had generated too (vLLM V1 caps the hit at {@code num_tokens - 1}). At
     * least one token is always left to compute, because the engine must run the last token to sample.
     */
    public int findCachedBlocks(EngineRequest r) {
        if (!prefixCaching || (r.promptTokenIds() == null && r.blockHashes == null)) {
            return 0;
        }
        long[] hashes = blockHashes(r);
        int limit = Math.min(hashes.length, (r.totalTokens() - 1) / blockSize);
        int hits = 0;
        while (hits < limit && index.get(hashes[hits]) != NIL) {
            hits++;
        }
        return hits;
    }

    /**
     * Gives a new request its {@code cachedBlocks} cached prefix blocks plus room for {@code newTokens} more tokens, or
     * changes nothing and returns false when free blocks do not suffice.
     */
    public boolean allocateNew(EngineRequest r, int cachedBlocks, int newTokens) {
        return admit(r, cachedBlocks, newTokens) >= 0;
    }

    /**
     * As {@link #allocateNew}, returning the free blocks the allocation took (fresh ones plus cached ones it took out of
     * the free queue), or -1 when they do not suffice (nothing changed).
     */
    int admit(EngineRequest r, int cachedBlocks, int newTokens) {
        int taken = blocksToAdmit(r, cachedBlocks, newTokens);
        if (taken > freeCount) {
            return -1;
        }
        long[] hashes = cachedBlocks > 0 ? r.blockHashes : null;
        int fresh = blocksFor(cachedBlocks * blockSize + newTokens) - cachedBlocks;
        reserveBlockTable(r);
        for (int i = 0; i < cachedBlocks; i++) {
            int b = index.get(hashes[i]);
            if (refCount[b]++ == 0) {
                unlink(b);
            }
            push(r, b);
        }
        r.numCachedBlocks = cachedBlocks;
        grow(r, fresh);
        return taken;
    }

    /** Free blocks {@link #admit} takes: fresh ones plus cached ones it takes out of the free queue. */
    private int blocksToAdmit(EngineRequest r, int cachedBlocks, int newTokens) {
        int revived = 0;
        for (int i = 0; i < cachedBlocks; i++) {
            if (refCount[index.get(r.blockHashes[i])] == 0) {
                revived++;
            }
        }
        return blocksFor(cachedBlocks * blockSize + newTokens) - cachedBlocks + revived;
    }

    /** Room for {@code newTokens} more tokens of a running request, or false (nothing changed) when blocks run out. */
    public boolean allocateMore(EngineRequest r, int newTokens) {
        int fresh = blocksFor(r.computedTokens + newTokens) - r.numBlocks;
        if (fresh > freeCount) {
            return false;
        }
        grow(r, fresh);
        return true;
    }

    /**
     * Registers the request's newly completed prompt blocks in the prefix cache, and tells the listener of them in one
     * event per unbroken run, as vLLM's {@code BlockPool.cache_full_blocks} reports the blocks of one call together:
     * the run's hashes, the hash before it (none for a prompt's first block) and the run's token ids.
     */
    public void cacheComputedBlocks(EngineRequest r) {
        if (!prefixCaching || (r.promptTokenIds() == null && r.blockHashes == null)) {
            return;
        }
        long[] hashes = blockHashes(r);
        int full = Math.min(r.computedTokens / blockSize, hashes.length);
        boolean announce = r.promptTokenIds() != null; // a private chain (keepForResume) has no tokens to announce
        int runStart = -1;
        for (int i = r.numCachedBlocks; i < full; i++) {
            int b = r.blocks[i];
            boolean stored = hashOf[b] == 0 && index.get(hashes[i]) == NIL;
            if (stored) {
                hashOf[b] = hashes[i];
                index.put(hashes[i], b);
                privateHash[b] = !announce;
                runStart = runStart < 0 && announce ? i : runStart;
            } else {
                runStart = reportStored(r, hashes, runStart, i);
            }
        }
        reportStored(r, hashes, runStart, full);
        r.numCachedBlocks = Math.max(r.numCachedBlocks, full);
    }

    /**
     * Keeps the computed prompt blocks of a request about to be preempted findable for its resume, as vLLM V1 does: V1
     * hashes the full blocks of every request (with prefix caching on, its default), so the blocks
     * {@code Scheduler._preempt_request} frees through {@code kv_cache_manager.free} stay in the cache until the free
     * queue hands them out again, and the resumed request's {@code get_computed_blocks} finds them. A request that came
     * without token ids (nothing to share) gets a private hash chain from its id the first time, over its prompt and
     * output blocks (V1 caches the full blocks of generated tokens too); the blocks cached under it are not announced
     * as KV events, having no tokens to announce. A request with token ids keeps only its prompt blocks: the engine
     * knows no output token ids to hash. Call before {@link #free}.
     */
    public void keepForResume(EngineRequest r) {
        if (!prefixCaching || r.promptTokenIds() != null) {
            return; // with token ids its blocks were cached as they were computed
        }
        if (r.blockHashes == null) {
            long[] chain = new long[(r.promptTokens() + r.outputLimit) / blockSize];
            long parent = SplitMix64.mix64(0xC2B2AE3D27D4EB4FL ^ r.id());
            for (int i = 0; i < chain.length; i++) {
                parent = SplitMix64.mix64(parent + i);
                chain[i] = parent == 0 ? 1 : parent;
            }
            r.blockHashes = chain;
        }
        cacheComputedBlocks(r);
    }

    /** Reports blocks {@code [start, end)} as stored, if {@code start >= 0}; returns -1 (no run open). */
    private int reportStored(EngineRequest r, long[] hashes, int start, int end) {
        if (start >= 0 && events != null) {
            events.blockStored(hashes, start, end - start, start == 0 ? 0 : hashes[start - 1], r.promptTokenIds(), blockSize,
                    r.lora());
        }
        return -1;
    }

    /** Counts a prefix-cache lookup of a request being admitted. */
    void recordQuery(int promptTokens, int hitTokens) {
        queriedTokens += promptTokens;
        this.hitTokens += hitTokens;
    }

    /**
     * Forgets every cached block, as vLLM's {@code BlockPool.reset_prefix_cache}: only when no request holds a block
     * (else nothing changes and the answer is false). Blocks keep their place in the free queue.
     */
    public boolean resetPrefixCache() {
        if (freeCount != numBlocks) {
            return false;
        }
        for (int b = 0; b < numBlocks; b++) {
            if (hashOf[b] != 0) {
                index.remove(hashOf[b]);
                hashOf[b] = 0;
                privateHash[b] = false;
            }
        }
        if (events != null) {
            events.allBlocksCleared();
        }
        return true;
    }

    /** Releases all of the request's blocks. */
    public void free(EngineRequest r) {
        for (int i = r.numBlocks - 1; i >= 0; i--) {
            int b = r.blocks[i];
            if (--refCount[b] == 0) {
                if (hashOf[b] != 0) {
                    append(b);
                } else {
                    prepend(b);
                }
            }
        }
        r.numBlocks = 0;
        r.numCachedBlocks = 0;
    }

    private void grow(EngineRequest r, int fresh) {
        for (int i = 0; i < fresh; i++) {
            int b = head;
            unlink(b);
            if (hashOf[b] != 0) {
                index.remove(hashOf[b]);
                if (events != null && !privateHash[b]) {
                    events.blockRemoved(hashOf[b]);
                }
                hashOf[b] = 0;
                privateHash[b] = false;
            }
            refCount[b] = 1;
            push(r, b);
        }
    }

    /** Sizes an empty block table for the request's longest possible life, so decoding never regrows it. */
    private void reserveBlockTable(EngineRequest r) {
        int lifetimeBlocks = blocksFor(r.promptTokens() + r.outputLimit);
        if (r.numBlocks == 0 && r.blocks.length < lifetimeBlocks) {
            r.blocks = new int[lifetimeBlocks];
        }
    }

    private void push(EngineRequest r, int block) {
        if (r.numBlocks == r.blocks.length) {
            r.blocks = java.util.Arrays.copyOf(r.blocks, r.blocks.length * 2);
        }
        r.blocks[r.numBlocks++] = block;
    }

    private int blocksFor(int tokens) {
        return (tokens + blockSize - 1) / blockSize;
    }

    /**
     * The request's full prompt blocks' hashes, computed once: vLLM's chain over the whole digests, kept as their low
     * 64 bits (0, which the index reserves, becomes 1).
     */
    private long[] blockHashes(EngineRequest r) {
        if (r.blockHashes == null) {
            int[] ids = r.promptTokenIds();
            long[] hashes = new long[ids.length / blockSize];
            int width = hasher.digestBytes();
            if (chain.length < 2 * width) {
                chain = new byte[2 * width];
            }
            String lora = r.lora() == null ? null : r.lora().name();
            for (int i = 0; i < hashes.length; i++) {
                int out = (i & 1) * width; // two halves: the parent's digest and this block's
                hasher.hash(i == 0 ? null : chain, width - out, ids, i * blockSize, blockSize, lora, chain, out);
                long h = BlockHasher.low64(chain, out, width);
                hashes[i] = h == 0 ? 1 : h;
            }
            r.blockHashes = hashes;
        }
        return r.blockHashes;
    }

    private void append(int b) {
        prev[b] = tail;
        next[b] = NIL;
        if (tail == NIL) {
            head = b;
        } else {
            next[tail] = b;
        }
        tail = b;
        freeCount++;
    }

    private void prepend(int b) {
        next[b] = head;
        prev[b] = NIL;
        if (head == NIL) {
            tail = b;
        } else {
            prev[head] = b;
        }
        head = b;
        freeCount++;
    }

    private void unlink(int b) {
        if (prev[b] == NIL) {
            head = next[b];
        } else {
            next[prev[b]] = next[b];
        }
        if (next[b] == NIL) {
            tail = prev[b];
        } else {
            prev[next[b]] = prev[b];
        }
        freeCount--;
    }
}
