package dev.infersim.cli;

import dev.infersim.engine.Deployment;
import dev.infersim.engine.PrefixCachingHashAlgo;
import dev.infersim.engine.Profiles;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HashSeedWarningTest {

    private static Deployment deployment(PrefixCachingHashAlgo algo, String seed, boolean prefixCaching) {
        return Deployment.builder(Profiles.gpu("h100"), Profiles.model("llama-3.1-8b")).prefixCachingHashAlgo(algo)
                .hashSeed(seed).enablePrefixCaching(prefixCaching).build();
    }

    @Test
    void aCborAlgorithmWithoutASeedWarnsAsVllmDoes() {
        String m = HashSeedWarning.message(deployment(PrefixCachingHashAlgo.SHA256_CBOR, null, true), 1);
        assertTrue(m != null && m.startsWith("infersim: warning: PYTHONHASHSEED is not set") && m.contains("sha256_cbor"), m);
    }

    @Test
    void replicasWithoutASeedWarnThatTheyHashTheSamePromptDifferently() {
        String m = HashSeedWarning.message(deployment(PrefixCachingHashAlgo.SHA256, null, true), 3);
        assertTrue(m != null && m.contains("the 3 replicas hash the same prompt differently"), m);
    }

    @Test
    void aSeedNoPrefixCachingOrOneReplicaWithPickleDoNotWarn() {
        assertNull(HashSeedWarning.message(deployment(PrefixCachingHashAlgo.SHA256_CBOR, "0", true), 3));
        assertNull(HashSeedWarning.message(deployment(PrefixCachingHashAlgo.XXHASH_CBOR, null, false), 3));
        assertNull(HashSeedWarning.message(deployment(PrefixCachingHashAlgo.SHA256, null, true), 1));
    }
}
