package dev.infersim.workload.length;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import java.io.IOException;
import java.util.Iterator;
import java.util.Set;

/**
 * Reads a {@link LengthDistribution} from YAML: a bare integer is a fixed length; a mapping names its
 * {@code distribution} and that distribution's parameters (see configs/workloads/README.md):
 * <pre>
 * {distribution: fixed, tokens: 256}
 * {distribution: uniform, low: 128, high: 384}        or {distribution: uniform, tokens: 256, range_ratio: 0.5}
 * {distribution: lognormal, median: 500, sigma: 0.8, min: 50, max: 4000}
 * {distribution: lognormal, mean: 500, std: 300, min: 50, max: 4000}
 * {distribution: lognormal, mean: 500, sigma: 0.8, min: 50, max: 4000}
 * {distribution: zipf, min: 16, max: 4096, exponent: 1.1}
 * {distribution: geometric, mean: 200}
 * </pre>
 * Unknown or missing parameters fail with the parser's location, so the message names the line.
 */
final class LengthDistributionDeserializer extends StdDeserializer<LengthDistribution> {

    private static final long serialVersionUID = 1L;

    LengthDistributionDeserializer() {
        super(LengthDistribution.class);
    }

    @Override
    public LengthDistribution deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
        JsonNode node = p.readValueAsTree();
        if (node.isIntegralNumber()) {
            return build(p, () -> new FixedLength(node.intValue()));
        }
        if (!node.isObject() || !node.hasNonNull("distribution")) {
            throw JsonMappingException.from(p, "a length is an integer or a mapping with 'distribution' "
                    + "(fixed, uniform, lognormal, zipf, geometric)");
        }
        String kind = node.get("distribution").asText();
        return switch (kind) {
            case "fixed" -> {
                allow(p, node, Set.of("tokens"));
                yield build(p, () -> new FixedLength(intField(p, node, "tokens")));
            }
            case "uniform" -> {
                if (node.has("range_ratio")) {
                    allow(p, node, Set.of("tokens", "range_ratio"));
                    yield build(p, () -> UniformLength.ofRangeRatio(intField(p, node, "tokens"),
                            doubleField(p, node, "range_ratio"), 0));
                }
                allow(p, node, Set.of("low", "high"));
                yield build(p, () -> new UniformLength(intField(p, node, "low"), intField(p, node, "high")));
            }
            case "lognormal" -> {
                int min = node.has("min") ? intField(p, node, "min") : 0;
                int max = node.has("max") ? intField(p, node, "max") : Integer.MAX_VALUE;
                if (node.has("median")) {
                    allow(p, node, Set.of("median", "sigma", "min", "max"));
                    yield build(p, () -> LogNormalLength.ofMedian(doubleField(p, node, "median"),
                            doubleField(p, node, "sigma"), min, max));
                }
                if (node.has("sigma")) {
                    allow(p, node, Set.of("mean", "sigma", "min", "max"));
                    yield build(p, () -> LogNormalLength.ofMean(doubleField(p, node, "mean"),
                            doubleField(p, node, "sigma"), min, max));
                }
                allow(p, node, Set.of("mean", "std", "min", "max"));
                yield build(p, () -> LogNormalLength.ofMeanAndStd(doubleField(p, node, "mean"),
                        doubleField(p, node, "std"), min, max));
            }
            case "zipf" -> {
                allow(p, node, Set.of("min", "max", "exponent"));
                yield build(p, () -> new ZipfLength(intField(p, node, "min"), intField(p, node, "max"),
                        doubleField(p, node, "exponent")));
            }
            case "geometric" -> {
                allow(p, node, Set.of("mean"));
                yield build(p, () -> new GeometricLength(doubleField(p, node, "mean")));
            }
            default -> throw JsonMappingException.from(p, "unknown distribution '" + kind
                    + "'; use fixed, uniform, lognormal, zipf or geometric");
        };
    }

    private interface Factory {
        LengthDistribution create() throws IOException;
    }

    private static LengthDistribution build(JsonParser p, Factory factory) throws IOException {
        try {
            return factory.create();
        } catch (IllegalArgumentException e) {
            throw JsonMappingException.from(p, e.getMessage(), e);
        }
    }

    private static void allow(JsonParser p, JsonNode node, Set<String> parameters) throws JsonMappingException {
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String field = it.next();
            if (!field.equals("distribution") && !parameters.contains(field)) {
                throw JsonMappingException.from(p, "distribution '" + node.get("distribution").asText()
                        + "' has no parameter '" + field + "'; it takes " + String.join(", ", parameters));
            }
        }
    }

    private static int intField(JsonParser p, JsonNode node, String field) throws JsonMappingException {
        JsonNode value = node.get(field);
        if (value == null || !value.canConvertToInt() || !value.isIntegralNumber()) {
            throw JsonMappingException.from(p, "distribution '" + node.get("distribution").asText()
                    + "' needs an integer '" + field + "'" + (value == null ? "" : ", got " + value));
        }
        return value.intValue();
    }

    private static double doubleField(JsonParser p, JsonNode node, String field) throws JsonMappingException {
        JsonNode value = node.get(field);
        if (value == null || !value.isNumber()) {
            throw JsonMappingException.from(p, "distribution '" + node.get("distribution").asText()
                    + "' needs a number '" + field + "'" + (value == null ? "" : ", got " + value));
        }
        return value.doubleValue();
    }
}
