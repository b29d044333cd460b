package dev.infersim.bench.harness;

import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import dev.infersim.result.NonFiniteAsNull;

import java.util.Map;

/**
 * One thing {@code check-harness} found a harness doing that makes its numbers differ from what happened: a stable
 * {@code id} (as in {@link HarnessFindings}), a one-line {@code summary} with the measured sizes, the {@code evidence}
 * behind it (named numbers, units in the names; NaN null in JSON), and its {@code cause} in one line a harness developer can act on.
 */
public record HarnessFinding(String id, String summary,
                             @JsonSerialize(contentUsing = NonFiniteAsNull.Writer.class)
                             @JsonDeserialize(contentUsing = NonFiniteAsNull.Reader.class)
                             Map<String, Double> evidence, String cause) {
}
