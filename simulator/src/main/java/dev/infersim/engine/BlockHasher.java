package dev.infersim.engine;

import net.openhft.hashing.LongTupleHashFunction;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;

/**
 * vLLM's prefix-cache block hash ({@code vllm-project/vllm@9aaf83ef5}, {@code vllm/v1/core/kv_cache_utils.py}
 * {@code hash_block_tokens}): {@code hash_fn((parent_hash, tuple(token_ids), extra_keys))}, where the first block's
 * parent is {@code NONE_HASH} and {@code extra_keys} is {@code (lora_name,)} for a request on a LoRA adapter, else
 * {@code None}. {@code hash_fn} is one of {@link PrefixCachingHashAlgo} ({@code vllm/utils/hashing.py}): Python's
 * pickle at its highest protocol (5, one frame) or canonical CBOR ({@code cbor2.dumps(x, canonical=True)}), digested by
 * SHA-256 (32 bytes) or XXH3-128 (16 bytes, canonical big-endian). {@code NONE_HASH} is {@code hash_fn(seed)} when the
 * seed ({@code PYTHONHASHSEED}, as a string) is set, else 32 random bytes ({@code init_none_hash}), so without a seed
 * two engines never produce the same hashes. KV events carry the low 64 bits ({@link #low64}), as vLLM's
 * {@code maybe_convert_block_hash} does.
 *
 * <p>Both serializations are written by hand into one reused buffer: only the handful of types a block key holds
 * (bytes, non-negative ints, str, None, tuples) occur. Not thread-safe: one per KV cache.
 */
public final class BlockHasher {
    private static final int FRAME_HEADER = 9;

    private final PrefixCachingHashAlgo algo;
    private final MessageDigest sha256;
    private final LongTupleHashFunction xxh3 = LongTupleHashFunction.xx128();
    private final long[] xxh3Out = new long[2];
    private final byte[] noneHash;
    private byte[] buf = new byte[512];
    private int len;

    /**
     * @param seed {@code PYTHONHASHSEED} as vLLM reads it (any string), or null for a random {@code NONE_HASH}
     */
    public BlockHasher(PrefixCachingHashAlgo algo, String seed) {
        this.algo = algo;
        try {
            this.sha256 = algo.xxh3() ? null : MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
        if (seed == null) {
            noneHash = new byte[32];
            new SecureRandom().nextBytes(noneHash);
        } else {
            len = 0;
            if (algo.cbor()) {
                cborText(seed);
            } else {
                pickleStart();
                pickleStr(seed);
                pickleEnd();
            }
            noneHash = new byte[digestBytes()];
            digest(noneHash, 0);
        }
    }

    public PrefixCachingHashAlgo algo() {
        return algo;
    }

    /** Bytes of one block hash: 32 for SHA-256, 16 for XXH3-128. */
    public int digestBytes() {
        return algo.xxh3() ? 16 : 32;
    }

    /** A copy of {@code NONE_HASH}, the first block's parent. */
    public byte[] noneHash() {
        return noneHash.clone();
    }

    /**
     * Hashes one block into {@code out[outOffset, outOffset + digestBytes())}.
     *
     * @param parent       the previous block's hash, or null for the first block ({@code NONE_HASH} is used)
     * @param parentOffset where the parent's {@link #digestBytes()} bytes start
     * @param tokens       holds the block's ids at {@code [from, from + count)}
     * @param loraName     the request's LoRA adapter (the block's extra key), or null
     */
    public void hash(byte[] parent, int parentOffset, int[] tokens, int from, int count, String loraName, byte[] out,
                     int outOffset) {
        byte[] p = parent == null ? noneHash : parent;
        int pOff = parent == null ? 0 : parentOffset;
        int pLen = parent == null ? noneHash.length : digestBytes();
        len = 0;
        if (algo.cbor()) {
            cborHead(4, 3);
            cborHead(2, pLen);
            put(p, pOff, pLen);
            cborHead(4, count);
            for (int i = from; i < from + count; i++) {
                cborHead(0, tokens[i]);
            }
            if (loraName == null) {
                putByte(0xf6);
            } else {
                cborHead(4, 1);
                cborText(loraName);
            }
        } else {
            pickleStart();
            pickleBytes(p, pOff, pLen);
            if (count > 3) {
                putByte('(');
            }
            for (int i = from; i < from + count; i++) {
                pickleInt(tokens[i]);
            }
            pickleTupleEnd(count);
            if (loraName == null) {
                putByte('N');
            } else {
                pickleStr(loraName);
                pickleTupleEnd(1);
            }
            pickleTupleEnd(3);
            pickleEnd();
        }
        digest(out, outOffset);
    }

    /** The low 64 bits of a hash read as a big-endian integer: {@code int.from_bytes(h, "big") & (2**64 - 1)}. */
    public static long low64(byte[] hash, int offset, int length) {
        long v = 0;
        for (int i = offset + length - 8; i < offset + length; i++) {
            v = (v << 8) | (hash[i] & 0xff);
        }
        return v;
    }

    private void digest(byte[] out, int offset) {
        if (sha256 != null) {
            sha256.update(buf, 0, len);
            try {
                sha256.digest(out, offset, 32);
            } catch (java.security.DigestException e) {
                throw new IllegalStateException(e);
            }
            return;
        }
        xxh3.hashBytes(buf, 0, len, xxh3Out);
        putLong(out, offset, xxh3Out[1]);
        putLong(out, offset + 8, xxh3Out[0]);
    }

    private static void putLong(byte[] out, int offset, long v) {
        for (int i = 7; i >= 0; i--) {
            out[offset + i] = (byte) v;
            v >>>= 8;
        }
    }

    // --- pickle, protocol 5 (CPython's _pickle.c): PROTO, one FRAME around everything up to STOP, MEMOIZE after each
    // bytes, str and tuple; TUPLE1..3 for short tuples, MARK ... TUPLE for longer ones.

    private void pickleStart() {
        putByte(0x80);
        putByte(5);
        putByte(0x95);
        ensure(8);
        len += 8; // the frame's length, written by pickleEnd
    }

    private void pickleEnd() {
        putByte('.');
        long frame = len - 2 - FRAME_HEADER;
        for (int i = 0; i < 8; i++) {
            buf[3 + i] = (byte) (frame >>> (8 * i));
        }
    }

    private void pickleBytes(byte[] b, int off, int n) {
        if (n < 256) {
            putByte('C');
            putByte(n);
        } else {
            putByte('B');
            putIntLe(n);
        }
        put(b, off, n);
        putByte(0x94);
    }

    private void pickleStr(String s) {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        if (utf8.length < 256) {
            putByte(0x8c);
            putByte(utf8.length);
        } else {
            putByte('X');
            putIntLe(utf8.length);
        }
        put(utf8, 0, utf8.length);
        putByte(0x94);
    }

    private void pickleInt(int v) {
        if (v >= 0 && v <= 0xff) {
            putByte('K');
            putByte(v);
        } else if (v >= 0 && v <= 0xffff) {
            putByte('M');
            putByte(v);
            putByte(v >>> 8);
        } else {
            putByte('J');
            putIntLe(v);
        }
    }

    private void pickleTupleEnd(int size) {
        putByte(size > 3 ? 't' : 0x84 + size);
        putByte(0x94);
    }

    // --- canonical CBOR (RFC 8949, section 4.2.1): the shortest head for every length and integer.

    private void cborHead(int major, long value) {
        int m = major << 5;
        if (value < 24) {
            putByte(m | (int) value);
        } else if (value < 0x100) {
            putByte(m | 24);
            putByte((int) value);
        } else if (value < 0x10000) {
            putByte(m | 25);
            putByte((int) (value >>> 8));
            putByte((int) value);
        } else {
            putByte(m | 26);
            for (int shift = 24; shift >= 0; shift -= 8) {
                putByte((int) (value >>> shift));
            }
        }
    }

    private void cborText(String s) {
        byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
        cborHead(3, utf8.length);
        put(utf8, 0, utf8.length);
    }

    private void putIntLe(int v) {
        for (int i = 0; i < 4; i++) {
            putByte(v >>> (8 * i));
        }
    }

    private void putByte(int b) {
        ensure(1);
        buf[len++] = (byte) b;
    }

    private void put(byte[] b, int off, int n) {
        ensure(n);
        System.arraycopy(b, off, buf, len, n);
        len += n;
    }

    private void ensure(int more) {
        if (len + more > buf.length) {
            buf = java.util.Arrays.copyOf(buf, Math.max(buf.length * 2, len + more));
        }
    }
}
