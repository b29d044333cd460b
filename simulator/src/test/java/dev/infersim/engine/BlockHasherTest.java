package dev.infersim.engine;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.infersim.common.ConfigException;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.util.HexFormat;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Checks every prefix-caching hash algorithm against hashes Python computed as vLLM's {@code hash_block_tokens} does,
 * with the libraries vLLM calls: {@code vllm-block-hashes.json} was written by CPython 3.11's pickle and hashlib,
 * cbor2 5.4.6 and python-xxhash 3.2.0 (Debian's packages) for three seeds, with and without a LoRA name among the
 * extra keys, over blocks whose token ids cross every width pickle and CBOR encode differently.
 */
class BlockHasherTest {

    @Test
    void everyAlgorithmHashesBlockChainsExactlyAsPythonDoes() throws Exception {
        JsonNode gold;
        try (InputStream in = getClass().getResourceAsStream("vllm-block-hashes.json")) {
            gold = new ObjectMapper().readTree(in);
        }
        HexFormat hex = HexFormat.of();
        int checked = 0;
        for (JsonNode c : gold.get("cases")) {
            BlockHasher hasher = new BlockHasher(PrefixCachingHashAlgo.parse("--prefix-caching-hash-algo",
                    c.get("algo").asText()), c.get("seed").asText());
            String lora = c.get("lora").isNull() ? null : c.get("lora").asText();
            assertEquals(c.get("none_hash").asText(), hex.formatHex(hasher.noneHash()), c.toString());
            byte[] parent = null;
            for (int b = 0; b < c.get("blocks").size(); b++) {
                JsonNode block = c.get("blocks").get(b);
                int[] tokens = new int[block.size() + 3];
                for (int i = 0; i < block.size(); i++) {
                    tokens[i + 3] = block.get(i).asInt(); // an offset, as blocks sit inside a prompt
                }
                byte[] out = new byte[hasher.digestBytes() + 1];
                hasher.hash(parent, 0, tokens, 3, block.size(), lora, out, 1);
                byte[] digest = java.util.Arrays.copyOfRange(out, 1, out.length);
                JsonNode want = c.get("hashes").get(b);
                assertEquals(want.get("hex").asText(), hex.formatHex(digest), c.get("algo") + " seed " + c.get("seed")
                        + " lora " + lora + " block " + b);
                assertEquals(Long.parseUnsignedLong(want.get("low64").asText()), BlockHasher.low64(digest, 0, digest.length));
                parent = digest;
                checked++;
            }
        }
        assertEquals(4 * 3 * 2 * 3, checked);
    }

    @Test
    void withoutASeedTwoHashersNeverAgree() {
        BlockHasher a = new BlockHasher(PrefixCachingHashAlgo.SHA256, null);
        BlockHasher b = new BlockHasher(PrefixCachingHashAlgo.SHA256, null);
        assertEquals(32, a.noneHash().length, "vLLM draws 32 random bytes (os.urandom(32))");
        assertFalse(java.util.Arrays.equals(a.noneHash(), b.noneHash()));
        byte[] ha = new byte[32];
        byte[] hb = new byte[32];
        int[] tokens = {1, 2, 3, 4};
        a.hash(null, 0, tokens, 0, 4, null, ha, 0);
        b.hash(null, 0, tokens, 0, 4, null, hb, 0);
        assertFalse(java.util.Arrays.equals(ha, hb));
        BlockHasher c = new BlockHasher(PrefixCachingHashAlgo.SHA256, "7");
        BlockHasher d = new BlockHasher(PrefixCachingHashAlgo.SHA256, "7");
        assertArrayEquals(c.noneHash(), d.noneHash());
    }

    @Test
    void unknownAlgorithmNamesTheFlagAndTheChoices() {
        ConfigException e = assertThrows(ConfigException.class,
                () -> PrefixCachingHashAlgo.parse("--prefix-caching-hash-algo", "md5"));
        assertEquals("--prefix-caching-hash-algo: unknown hash algorithm 'md5'; use one of sha256, sha256_cbor, xxhash, "
                + "xxhash_cbor", e.getMessage());
    }
}
