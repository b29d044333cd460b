package dev.infersim.workload.length;

import java.util.random.RandomGenerator;

/**
 * Lengths uniform on the integers of [low, high]. {@link #ofRangeRatio} builds vLLM's {@code --random-range-ratio}
 * interval [floor(len (1 - r)), ceil(len (1 + r))] (vllm/benchmarks/datasets.py, RandomDataset.get_sampling_params).
 */
public record UniformLength(int low, int high) implements LengthDistribution {

    public UniformLength {
        if (low < 0 || high < low) {
            throw new IllegalArgumentException("uniform length needs 0 <= low <= high, got [" + low + ", " + high + "]");
        }
    }

    /**
     * vLLM's symmetric range around {@code tokens}.
     *
     * @param tokens     the nominal length
     * @param rangeRatio r in [0, 1)
     * @param floor      the smallest allowed low end (vLLM uses 1 for output lengths, 0 for input lengths)
     */
    public static UniformLength ofRangeRatio(int tokens, double rangeRatio, int floor) {
        if (!(rangeRatio >= 0 && rangeRatio < 1)) {
            throw new IllegalArgumentException("range ratio must be in [0, 1), got " + rangeRatio);
        }
        if (tokens < 0) {
            throw new IllegalArgumentException("length must be >= 0 tokens, got " + tokens);
        }
        int low = (int) Math.floor(tokens * (1 - rangeRatio));
        int high = (int) Math.ceil(tokens * (1 + rangeRatio));
        return new UniformLength(Math.max(low, floor), Math.max(high, floor));
    }

    @Override
    public int sample(RandomGenerator rng) {
        return low == high ? low : low + rng.nextInt(high - low + 1);
    }

    @Override
    public double mean() {
        return (low + (double) high) / 2;
    }

    @Override
    public int min() {
        return low;
    }

    @Override
    public int max() {
        return high;
    }
}
