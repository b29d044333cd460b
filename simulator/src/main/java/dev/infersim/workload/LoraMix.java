package dev.infersim.workload;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.infersim.common.SplitMix64;

import java.util.List;

/**
 * The LoRA adapters a request class runs on, each with a relative weight: a workload profile's {@code lora_adapters}.
 * A request's adapter is drawn from its own content seed, so adding adapters to a profile leaves every other draw (class,
 * lengths, prompt) as it was.
 */
public final class LoraMix {
    private final String[] names;
    private final double[] cumulative;

    /** One adapter of a mix: its name (the model name a client sends) and relative weight (default 1). */
    public record Share(@JsonProperty("name") String name, @JsonProperty("weight") Double weight) {
        public Share {
            if (name == null || name.isBlank()) {
                throw new IllegalArgumentException("a lora_adapters entry needs a 'name'");
            }
            if (weight != null && (!(weight > 0) || Double.isInfinite(weight))) {
                throw new IllegalArgumentException("lora adapter '" + name + "': weight must be finite and > 0, got " + weight);
            }
        }
    }

    public LoraMix(List<Share> shares) {
        if (shares == null || shares.isEmpty()) {
            throw new IllegalArgumentException("lora_adapters needs at least one adapter");
        }
        names = new String[shares.size()];
        cumulative = new double[shares.size()];
        double sum = 0;
        for (int i = 0; i < names.length; i++) {
            Share s = shares.get(i);
            for (int j = 0; j < i; j++) {
                if (names[j].equals(s.name())) {
                    throw new IllegalArgumentException("lora adapter '" + s.name() + "' is listed twice");
                }
            }
            names[i] = s.name();
            sum += s.weight() == null ? 1 : s.weight();
            cumulative[i] = sum;
        }
    }

    /** The adapter of the request whose content seed is {@code contentSeed}. */
    public String pick(long contentSeed) {
        double u = SplitMix64.uniformAt(contentSeed, 0x10AA) * cumulative[cumulative.length - 1];
        for (int i = 0; i < cumulative.length - 1; i++) {
            if (u < cumulative[i]) {
                return names[i];
            }
        }
        return names[names.length - 1];
    }
}
