package dev.infersim.result;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import com.fasterxml.jackson.databind.util.NameTransformer;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The latency keys of a result, flat at its top level as vLLM writes them: per metric, in order,
 * {@code mean_M_ms}, {@code median_M_ms}, {@code std_M_ms} and {@code pP_M_ms} for each percentile P (see
 * {@link MetricSummary}). Written where a result holds it with {@code @JsonUnwrapped} (whose prefix, such as
 * {@code infersim_} for infersim's server-side latencies, goes before every key); read back from the same object by
 * {@link #read}.
 */
@JsonSerialize(using = MetricSummaries.Writer.class)
@JsonDeserialize(using = MetricSummaries.Reader.class)
public record MetricSummaries(List<MetricSummary> metrics) {
    /** vLLM's latency metrics, as {@code --percentile-metrics} names them. */
    public static final List<String> VLLM_METRICS = List.of("ttft", "tpot", "itl", "e2el");

    private static final Pattern STATISTIC = Pattern.compile("(mean|median|std|p([0-9]+(?:\\.[0-9]+)?))_(.+)_ms");

    public static final MetricSummaries NONE = new MetricSummaries(List.of());

    public MetricSummaries {
        metrics = List.copyOf(metrics);
    }

    /** The named metric; null when the result has none of its keys. */
    public MetricSummary metric(String name) {
        for (MetricSummary m : metrics) {
            if (m.metric().equals(name)) {
                return m;
            }
        }
        return null;
    }

    /** The metrics' names, in order. */
    public List<String> names() {
        return metrics.stream().map(MetricSummary::metric).toList();
    }

    /**
     * The summaries of {@code names} in a flat result object, from their keys after {@code prefix}, in the order the
     * object lists them; a metric without keys is left out, and a key that is not a number is not read.
     */
    public static MetricSummaries read(JsonNode flat, String prefix, List<String> names) {
        Map<String, Builder> found = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = flat.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            Matcher m = e.getKey().startsWith(prefix) ? STATISTIC.matcher(e.getKey().substring(prefix.length())) : null;
            if (m == null || !m.matches() || !names.contains(m.group(3)) || !isNumber(e.getValue())) {
                continue;
            }
            Builder b = found.computeIfAbsent(m.group(3), Builder::new);
            double v = e.getValue().isNumber() ? e.getValue().asDouble() : Double.parseDouble(e.getValue().asText());
            switch (m.group(1)) {
                case "mean" -> b.mean = v;
                case "median" -> b.median = v;
                case "std" -> b.std = v;
                default -> b.percentiles.add(new MetricSummary.Percentile(Double.parseDouble(m.group(2)), v));
            }
        }
        return new MetricSummaries(found.values().stream().map(Builder::build).toList());
    }

    /** A number, or one Jackson wrote as a string (NaN, Infinity). */
    private static boolean isNumber(JsonNode v) {
        return v.isNumber() || v.isTextual() && NON_FINITE.contains(v.asText());
    }

    private static final java.util.Set<String> NON_FINITE = java.util.Set.of("NaN", "Infinity", "-Infinity");

    private static final class Builder {
        final String metric;
        Double mean;
        Double median;
        Double std;
        final List<MetricSummary.Percentile> percentiles = new ArrayList<>();

        Builder(String metric) {
            this.metric = metric;
        }

        MetricSummary build() {
            return new MetricSummary(metric, mean, median, std, percentiles);
        }
    }

    /** Reads the summaries of every metric infersim knows from the (flat, unprefixed) object of the enclosing result. */
    static final class Reader extends JsonDeserializer<MetricSummaries> {
        private static final List<String> KNOWN = Stream.concat(VLLM_METRICS.stream(),
                ServingResult.SERVER_METRICS.stream()).toList();

        @Override
        public MetricSummaries deserialize(JsonParser in, DeserializationContext context) throws IOException {
            return read(in.readValueAsTree(), "", KNOWN);
        }
    }

    /** Writes the keys into the enclosing object (this part is always unwrapped), each after the unwrapping prefix. */
    static final class Writer extends UnwrappingWriter<MetricSummaries> {
        @Override
        void write(MetricSummaries summaries, JsonGenerator out, NameTransformer names) throws IOException {
            for (MetricSummary m : summaries.metrics()) {
                number(out, names, MetricSummary.key("mean", m.metric()), m.meanMs());
                number(out, names, MetricSummary.key("median", m.metric()), m.medianMs());
                number(out, names, MetricSummary.key("std", m.metric()), m.stdMs());
                for (MetricSummary.Percentile p : m.percentiles()) {
                    number(out, names, MetricSummary.percentileKey(p.percentile(), m.metric()), p.valueMs());
                }
            }
        }

        private static void number(JsonGenerator out, NameTransformer names, String key, Double value)
                throws IOException {
            if (value != null) {
                out.writeFieldName(names.transform(key));
                out.writeNumber(value);
            }
        }
    }
}
