package dev.infersim.workload.length;

import java.util.random.RandomGenerator;

/**
 * The rule that turns a request's {@code max_tokens} and an EOS model into the number of tokens the model generates,
 * the way a serving engine behaves: generation stops at the first EOS or at {@code max_tokens}, whichever comes first,
 * and {@code --ignore-eos} disables the EOS stop. Without an EOS model the EOS never comes before {@code max_tokens}.
 *
 * @param eosPosition distribution of the position of the first EOS token, or null for none
 * @param ignoreEos   vLLM's {@code ignore_eos}: generate exactly {@code max_tokens}
 */
public record OutputLength(LengthDistribution eosPosition, boolean ignoreEos) {

    /** Always {@code max_tokens}. */
    public static final OutputLength AT_MAX_TOKENS = new OutputLength(null, false);

    /**
     * The generated length for a request with {@code maxTokens}. The EOS position is drawn even when ignored, so that
     * toggling {@code --ignore-eos} changes no other draw of the stream.
     */
    public int outputTokens(int maxTokens, RandomGenerator rng) {
        if (eosPosition == null) {
            return maxTokens;
        }
        int eos = eosPosition.sample(rng);
        return ignoreEos ? maxTokens : Math.max(1, Math.min(eos, maxTokens));
    }

    /** The same rule with {@code eosPosition} replaced where {@code override} is non-null. */
    public OutputLength withEosPosition(LengthDistribution override) {
        return override == null ? this : new OutputLength(override, ignoreEos);
    }
}
