package dev.infersim.engine;

import dev.infersim.common.ConfigException;

import java.util.Arrays;
import java.util.Locale;

/**
 * vLLM's {@code --prefix-caching-hash-algo}: how a KV block's key {@code (parent hash, token ids, extra keys)} is
 * serialized and digested ({@code vllm-project/vllm@9aaf83ef5}: {@code vllm/config/cache.py}
 * {@code PrefixCachingHashAlgo}, default {@code sha256}; {@code vllm/utils/hashing.py}).
 */
public enum PrefixCachingHashAlgo {
    /** Python's pickle (highest protocol), then SHA-256: 32-byte hashes. vLLM's default. */
    SHA256("sha256", false, false),
    /** Canonical CBOR, then SHA-256: reproducible outside Python. */
    SHA256_CBOR("sha256_cbor", true, false),
    /** Pickle, then XXH3-128: 16-byte hashes. */
    XXHASH("xxhash", false, true),
    /** Canonical CBOR, then XXH3-128. */
    XXHASH_CBOR("xxhash_cbor", true, true);

    private final String vllmName;
    private final boolean cbor;
    private final boolean xxh3;

    PrefixCachingHashAlgo(String vllmName, boolean cbor, boolean xxh3) {
        this.vllmName = vllmName;
        this.cbor = cbor;
        this.xxh3 = xxh3;
    }

    /** The name vLLM's flag takes. */
    public String vllmName() {
        return vllmName;
    }

    /** Whether keys are serialized as canonical CBOR (else as a pickle). */
    public boolean cbor() {
        return cbor;
    }

    /** Whether the digest is XXH3-128 (else SHA-256). */
    boolean xxh3() {
        return xxh3;
    }

    /** Parses vLLM's name for the algorithm, naming {@code flag} when it is not one. */
    public static PrefixCachingHashAlgo parse(String flag, String value) {
        String v = value.toLowerCase(Locale.ROOT);
        for (PrefixCachingHashAlgo a : values()) {
            if (a.vllmName.equals(v)) {
                return a;
            }
        }
        throw new ConfigException(flag + ": unknown hash algorithm '" + value + "'; use one of "
                + String.join(", ", Arrays.stream(values()).map(PrefixCachingHashAlgo::vllmName).toList()));
    }

    @Override
    public String toString() {
        return vllmName;
    }
}
