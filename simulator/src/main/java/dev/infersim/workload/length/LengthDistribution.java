package dev.infersim.workload.length;

import java.util.random.RandomGenerator;

/**
 * A distribution of token counts (prompt, output or EOS position), sampled per request. Implementations are
 * immutable and allocate nothing per sample, so one instance may serve any number of streams. The laws are named
 * (in YAML and on a command line) by {@link LengthLaws}, so that this interface knows none of its implementations.
 */
public interface LengthDistribution {

    /** One length, at least {@link #min()}. */
    int sample(RandomGenerator rng);

    /** The exact mean of {@link #sample}, in tokens. */
    double mean();

    /** The smallest length {@link #sample} can return. */
    int min();

    /** The largest length {@link #sample} can return ({@code Integer.MAX_VALUE} when unbounded). */
    int max();
}
