package dev.infersim.cli;

import dev.infersim.engine.Deployment;

/**
 * The warning {@code serve} prints when prefix-cache block hashes will not be reproducible. Without
 * {@code PYTHONHASHSEED} each engine draws a random {@code NONE_HASH} (the first block's parent), as every vLLM process
 * does, so the same prompt hashes differently on each replica and in each run: KV events from two replicas then never
 * share a block hash and an indexer cannot match a prompt it hashed itself. vLLM warns where the hash is meant to be
 * reproduced outside the process, the CBOR algorithms ({@code vllm/v1/core/kv_cache_utils.py},
 * {@code init_none_hash}); a fleet of replicas in one process is the same situation, so infersim warns there too.
 */
final class HashSeedWarning {
    private HashSeedWarning() {
    }

    /** The warning for {@code deployment} served by {@code replicas} replicas, or null when hashes are reproducible. */
    static String message(Deployment deployment, int replicas) {
        if (!deployment.enablePrefixCaching() || deployment.hashSeed() != null) {
            return null;
        }
        boolean cbor = deployment.prefixCachingHashAlgo().cbor();
        if (!cbor && replicas < 2) {
            return null;
        }
        return "infersim: warning: PYTHONHASHSEED is not set, so each engine draws a random NONE_HASH and block hashes "
                + "are not reproducible" + (replicas > 1 ? ": the " + replicas + " replicas hash the same prompt differently, "
                + "as separate vLLM processes do" : " across runs (--prefix-caching-hash-algo "
                + deployment.prefixCachingHashAlgo().vllmName() + ")") + "; set PYTHONHASHSEED to a fixed value to make them so";
    }
}
