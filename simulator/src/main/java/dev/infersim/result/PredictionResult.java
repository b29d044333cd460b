package dev.infersim.result;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

import java.nio.file.Path;

/**
 * A closed-form prediction in the result schema ({@code predict --save-result}): vLLM's run keys, the predicted
 * throughputs and latencies under vLLM's keys where the model gives them, then the model's own keys, each prefixed
 * {@code infersim_}. Past saturation a model has no throughput or latency to give, and the file holds none.
 *
 * @param timing     {@code "fixed"} for {@code --timing fixed}'s queue (written before the predicted values); null
 *                   (not written) for the engine model's
 * @param throughput null past saturation (nothing written)
 * @param latencies  the latency keys the model gives (none past saturation)
 * @param model      the model's own keys, written prefixed {@code infersim_}
 * @param <E>        the model's keys
 */
@JsonDeserialize(using = FlatRecordReader.class)
public record PredictionResult<E>(
        @JsonUnwrapped RunHeader run,
        @JsonProperty(ServingResult.INFERSIM + "timing") @JsonInclude(JsonInclude.Include.NON_NULL) String timing,
        @JsonUnwrapped Throughput throughput,
        @JsonUnwrapped MetricSummaries latencies,
        @JsonUnwrapped(prefix = ServingResult.INFERSIM) E model) {

    /** vLLM's throughput keys of a prediction at a request rate: requests, output tokens and all tokens per second. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    public record Throughput(double requestThroughput, double outputThroughput, double totalTokenThroughput) {

        /** {@code requestsPerS} of requests with these mean prompt and output lengths. */
        public static Throughput of(double requestsPerS, double meanPromptTokens, double meanOutputTokens) {
            return new Throughput(requestsPerS, requestsPerS * meanOutputTokens,
                    requestsPerS * (meanOutputTokens + meanPromptTokens));
        }
    }

    /** A prediction file read back, the model's keys as {@code modelType}. */
    public static <E> PredictionResult<E> read(Path file, Class<E> modelType) {
        return ResultJson.read(file, ResultJson.mapper().getTypeFactory()
                .constructParametricType(PredictionResult.class, modelType));
    }
}
