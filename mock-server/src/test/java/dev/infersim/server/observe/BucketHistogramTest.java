package dev.infersim.server.observe;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

/** The Prometheus histogram buckets the token-count series use, as vLLM's {@code build_1_2_5_buckets} makes them. */
class BucketHistogramTest {
    @Test
    void vllmTokenCountBucketsAreOneTwoFiveUpToMaxModelLen() {
        assertArrayEquals(new double[] {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000}, BucketHistogram.oneTwoFive(8192).bounds());
    }
}
