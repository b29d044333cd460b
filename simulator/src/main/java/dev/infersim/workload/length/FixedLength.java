package dev.infersim.workload.length;

import java.util.random.RandomGenerator;

/** Every sample is the same length. */
public record FixedLength(int tokens) implements LengthDistribution {

    public FixedLength {
        if (tokens < 0) {
            throw new IllegalArgumentException("fixed length must be >= 0 tokens, got " + tokens);
        }
    }

    @Override
    public int sample(RandomGenerator rng) {
        return tokens;
    }

    @Override
    public double mean() {
        return tokens;
    }

    @Override
    public int min() {
        return tokens;
    }

    @Override
    public int max() {
        return tokens;
    }
}
