package dev.infersim.result;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import dev.infersim.workload.arrival.RampStrategy;
import dev.infersim.workload.arrival.RampUp;

import java.io.IOException;
import java.util.List;
import java.util.Locale;

/**
 * vLLM's run keys at the top of a result, as {@code vllm bench serve --save-result} writes them (vllm/benchmarks/serve.py,
 * v0.10): date, backend, model_id, tokenizer_id, num_prompts, request_rate ({@code "inf"} for all at once),
 * burstiness, max_concurrency (null for none) and, with a ramp, ramp_up_strategy, ramp_up_start_rps and
 * ramp_up_end_rps. What a producer knows of its run is {@link RunInfo}; this is what the file holds of it.
 *
 * @param burstiness null only in a file that lacks it (older vLLM results)
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
public record RunHeader(String date, String backend, String modelId, String tokenizerId, long numPrompts,
                        @JsonSerialize(using = RequestRateWriter.class) @JsonDeserialize(using = RequestRateReader.class)
                        double requestRate,
                        Double burstiness, Integer maxConcurrency,
                        @JsonInclude(JsonInclude.Include.NON_NULL) String rampUpStrategy,
                        @JsonInclude(JsonInclude.Include.NON_NULL) Double rampUpStartRps,
                        @JsonInclude(JsonInclude.Include.NON_NULL) Double rampUpEndRps) {

    /** The keys of a run: its parameters as a producer knows them. */
    public static RunHeader of(RunInfo info) {
        RampUp ramp = info.rampUp();
        return new RunHeader(info.date(), info.backend(), info.modelId(), info.tokenizerId(), info.numPrompts(),
                info.requestRatePerS(), info.burstiness(), info.maxConcurrency() > 0 ? info.maxConcurrency() : null,
                ramp == null ? null : ramp.strategy().name().toLowerCase(Locale.ROOT),
                ramp == null ? null : ramp.startRps(), ramp == null ? null : ramp.endRps());
    }

    /** The same run with {@code numPrompts} requests (the shards of one run, merged). */
    public RunHeader withNumPrompts(long n) {
        return new RunHeader(date, backend, modelId, tokenizerId, n, requestRate, burstiness, maxConcurrency,
                rampUpStrategy, rampUpStartRps, rampUpEndRps);
    }

    /**
     * The run's parameters back, with the percentile choices its latency keys show (a ramp over the request count, as
     * vLLM's is).
     */
    public RunInfo runInfo(List<String> percentileMetrics, List<Double> metricPercentiles) {
        RampUp ramp = rampUpStrategy == null ? null : RampUp.overRequests(
                RampStrategy.valueOf(rampUpStrategy.toUpperCase(Locale.ROOT)), rampUpStartRps, rampUpEndRps);
        return new RunInfo(date, backend, modelId, tokenizerId, numPrompts, requestRate,
                burstiness == null ? 1 : burstiness, maxConcurrency == null ? 0 : maxConcurrency, percentileMetrics,
                metricPercentiles, ramp);
    }

    /** vLLM's request_rate: a number, or {@code "inf"} for all at once. */
    public static final class RequestRateWriter extends JsonSerializer<Double> {
        @Override
        public void serialize(Double rate, JsonGenerator out, SerializerProvider provider) throws IOException {
            if (Double.isInfinite(rate)) {
                out.writeString("inf");
            } else {
                out.writeNumber(rate);
            }
        }
    }

    /** A number, {@code "inf"} as infinity; anything else is no rate (NaN). */
    public static final class RequestRateReader extends JsonDeserializer<Double> {
        @Override
        public Double deserialize(JsonParser in, DeserializationContext context) throws IOException {
            JsonNode rate = in.readValueAsTree();
            return rate.isNumber() ? rate.asDouble() : "inf".equals(rate.asText()) ? Double.POSITIVE_INFINITY : Double.NaN;
        }

        @Override
        public Double getNullValue(DeserializationContext context) {
            return Double.NaN;
        }
    }
}
