package dev.infersim.bench;

import java.util.Map;

/**
 * One thing {@code check-harness} found a harness doing that makes its numbers differ from what happened: a stable
 * {@code id} (as in {@link HarnessFindings}), a one-line {@code summary} with the measured sizes, the {@code evidence}
 * behind it (named numbers, units in the names), and its {@code cause} in one line a harness developer can act on.
 */
public record HarnessFinding(String id, String summary, Map<String, Double> evidence, String cause) {
}
