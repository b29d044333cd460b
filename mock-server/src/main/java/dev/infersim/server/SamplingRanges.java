package dev.infersim.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.List;

/**
 * The ranges vLLM's SamplingParams checks (sampling_params.py, {@code _verify_args} and {@code verify}) for fields the
 * mock accepts without modelling: a value vLLM refuses is a 400 with vLLM's message and param, so a client meets the
 * same refusals here as on a real server. A wrong JSON type is refused earlier, as vLLM's pydantic model does, naming
 * the field.
 */
final class SamplingRanges {
    /** vLLM's default VLLM_MAX_N_SEQUENCES. */
    static final int MAX_N = 16384;
    /** vLLM treats a temperature below this as greedy sampling. */
    private static final double SAMPLING_EPS = 1e-5;

    private SamplingRanges() {
    }

    /** n: 1..VLLM_MAX_N_SEQUENCES; returns it (1 when absent). */
    static int n(ObjectNode body) {
        Integer n = RequestParser.optInt(body, "n", Integer.MIN_VALUE, Integer.MAX_VALUE);
        if (n == null) {
            return 1;
        }
        if (n < 1) {
            throw ApiException.badRequest(null, "n must be at least 1, got " + n + ".");
        }
        if (n > MAX_N) {
            throw ApiException.badRequest(null, "n must be at most " + MAX_N + ", got " + n
                    + ". To increase this limit, set the VLLM_MAX_N_SEQUENCES environment variable.");
        }
        return n;
    }

    /** Greedy sampling (temperature 0) has one answer, so vLLM refuses to return several. */
    static void greedy(Double temperature, int n) {
        if (temperature != null && temperature < SAMPLING_EPS && n > 1) {
            throw ApiException.badRequest(null, "n must be 1 when using greedy sampling, got " + n + ".");
        }
    }

    static void penalties(ObjectNode body) {
        for (String field : new String[] {"presence_penalty", "frequency_penalty"}) {
            Double p = RequestParser.optNumber(body, field, Double.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY);
            if (p != null && !(p >= -2 && p <= 2)) {
                throw ApiException.badRequest(null, field + " must be in [-2, 2], got " + PyFloat.repr(p) + ".");
            }
        }
        Double r = RequestParser.optNumber(body, "repetition_penalty", Double.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY);
        if (r != null && !Double.isFinite(r)) {
            throw ApiException.badRequest(null, "repetition_penalty must be a finite number, got " + PyFloat.repr(r) + ".");
        }
        if (r != null && r <= 0) {
            throw ApiException.badRequest(null, "repetition_penalty must be greater than zero, got " + PyFloat.repr(r) + ".");
        }
    }

    /** top_k: 0 (or -1, which vLLM quietly takes as 0) disables it, else at least 1; min_p within [0, 1]. */
    static void topKMinP(ObjectNode body) {
        Integer k = RequestParser.optInt(body, "top_k", Integer.MIN_VALUE, Integer.MAX_VALUE);
        if (k != null && k < -1) {
            throw ApiException.badRequest(null, "top_k must be 0 (disable), or at least 1, got " + k + ".");
        }
        Double minP = RequestParser.optNumber(body, "min_p", Double.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY);
        if (minP != null && !(minP >= 0 && minP <= 1)) {
            throw ApiException.badRequest(null, "min_p must be in [0, 1], got " + PyFloat.repr(minP) + ".");
        }
    }

    /**
     * allowed_token_ids: a non-empty list of ids inside the vocabulary. vLLM names the parameter and value of these
     * errors, and its error message carries both, as Python prints them.
     */
    static void allowedTokenIds(ObjectNode body) {
        JsonNode v = body.get("allowed_token_ids");
        if (v == null || v.isNull()) {
            return;
        }
        String field = "allowed_token_ids";
        if (!v.isArray()) {
            throw ApiException.badRequest(field, field + ": expected a list of token ids, got " + RequestParser.describe(v));
        }
        if (v.isEmpty()) {
            throw ApiException.badRequest(field, "allowed_token_ids is not None and empty! (parameter=allowed_token_ids, value=[])");
        }
        List<Long> outside = new ArrayList<>();
        for (JsonNode id : v) {
            if (!id.isIntegralNumber() || !id.canConvertToLong()) {
                throw ApiException.badRequest(field, field + ": expected integer token ids, got an item " + RequestParser.describe(id));
            }
            if (id.asLong() < 0 || id.asLong() >= PromptTokenizer.VOCABULARY_SIZE) {
                outside.add(id.asLong());
            }
        }
        if (!outside.isEmpty()) {
            throw ApiException.badRequest(field, "allowed_token_ids contains out-of-vocab token id! (parameter=allowed_token_ids, value="
                    + outside + ")");
        }
    }
}
