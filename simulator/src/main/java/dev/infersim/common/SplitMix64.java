package dev.infersim.common;

import java.util.random.RandomGenerator;

/**
 * SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014), the generator
 * behind {@link java.util.SplittableRandom}, here re-seedable in place so that every request can draw from its own
 * stream (seeded from the workload seed and the request index) without allocating a generator per request.
 * All other draws (doubles, bounded ints, Gaussians, exponentials) come from {@link RandomGenerator}'s defaults.
 */
public final class SplitMix64 implements RandomGenerator {

    private static final long GOLDEN_GAMMA = 0x9e3779b97f4a7c15L;

    private long state;

    public SplitMix64(long seed) {
        this.state = seed;
    }

    /** Restarts the stream as if newly constructed with {@code seed}. */
    public void reseed(long seed) {
        this.state = seed;
    }

    @Override
    public long nextLong() {
        state += GOLDEN_GAMMA;
        return mix64(state);
    }

    /** The SplitMix64 finaliser (Stafford variant 13): a bijective 64-bit avalanche mix. */
    public static long mix64(long z) {
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** The {@code k}-th value of the stream seeded with {@code seed}, computed without state (counter-based use). */
    public static long valueAt(long seed, long k) {
        return mix64(seed + (k + 1) * GOLDEN_GAMMA);
    }

    /** The {@code k}-th value of the stream seeded with {@code seed} as a uniform double in [0, 1). */
    public static double uniformAt(long seed, long k) {
        return (valueAt(seed, k) >>> 11) * 0x1.0p-53;
    }

    /** Lemire's multiply-shift reduction of the high 32 bits of {@code bits} to {@code [0, bound)}; bias below 2^-32 * bound. */
    public static int reduce(long bits, int bound) {
        return (int) (((bits >>> 32) * bound) >>> 32);
    }
}
